"""An honest range on every figure: where ~80 % of real measurements of a scenario's kind fall.

The estimate is one number; real servers scatter around it. How far they scatter was
measured on published measurements the model was never fitted on (`SIZED_ON`: the
validation set and every set gathered after it, 677 rows from 71 sources): for each regime — an
eager engine (its host launches every kernel: `Efficiency.launches_overlap`), else a mixture of
experts, else batch 1 or batch > 1 — and each quantity — the time to first token, or the time per output token
— the 7.5th and 92.5th percentiles of log(measured ÷ estimated) (`SPREADS`; the level at which
ranges sized without a set hold 80 % of that set's rows, `SIZING_LEVEL`). The likely range
of a figure is its estimate times e^(low) to e^(high); each bound is
kept on its side of the estimate (low ≤ estimate ≤ high), and no low bound is below the same
scenario on the datasheet's physics (`physics_floor`: no server is faster than its peaks).

- TTFT's spread comes from TTFT rows; TPOT's from TPOT rows and from whole-request rows
  (static-batch throughput, which decode dominates), read as time per output token. A
  regime with fewer than `MIN_ROWS` rows from `MIN_SOURCES` sources takes the spread of
  its quantity over every regime.
- The total is TTFT + the decode steps, each at its own bound (the widest combination);
  throughput is batch × output tokens over the total's range.
- `confidence` is "calibrated" when the scenario's engine has rows in its regime in any
  set (fitted or held out) (`CALIBRATED_CELLS`) and "extrapolated" otherwise (an engine never measured
  there, the lesson's ideal machine): then the spread is `EXTRAPOLATION_WIDENING` times
  wider on each side.

`python -m core calibrate` prints the spreads and the ranges' coverage on every set; a test
recomputes `SPREADS` and `CALIBRATED_CELLS` from the data, so they cannot drift from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from core.efficiency import IDEAL
from core.estimate import Estimate, estimate
from core.scenario import Scenario

Confidence = Literal["calibrated", "extrapolated"]
REGIMES = ("batch 1", "batch > 1", "MoE", "eager")
QUANTITIES = ("ttft", "tpot")
COVERAGE = 0.8  # the share of a new set's measurements a range should hold
# The percentiles a spread spans: the 7.5th to the 92.5th, not the 10th to the 90th. A new source's
# setups scatter wider than the sets the spreads are sized on: leaving each sized-on set out in
# turn and sizing on the others, the 10th-90th held 76.2 % of the left-out rows, this level 80.4 %
# (`range_calibration.leave_one_set_out`, printed by `python -m core calibrate`). It was 0.84 (80.7 %)
# until no low bound could reach below the datasheet's physics (`physics_floor`), which took 8 of the
# 677 rows out (measured faster than the peaks allow: GeForce cards at their fp16-accumulate rate,
# one source's MoE prompts) and left 0.84 at 79.5 %.
SIZING_LEVEL = 0.85
MIN_ROWS = 8
MIN_SOURCES = 2
EXTRAPOLATION_WIDENING = 1.5
# Every set the fit never saw: 677 rows from 71 sources. The validation set alone (149 rows, 16
# sources) gave ranges that held 58-68 % of each later set's rows.
SIZED_ON = ("validation", "test", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6")


@dataclass(frozen=True, slots=True)
class Spread:
    """The 7.5th and 92.5th percentiles of log(measured ÷ estimated) (`SIZING_LEVEL`), each kept on its side of 0."""

    low: float
    high: float


# Sized on the SIZED_ON sets by `core.range_calibration.range_spreads` (regime, quantity) → spread.
SPREADS: dict[tuple[str, str], Spread] = {
    ("batch 1", "ttft"): Spread(-0.34, 1.78),
    ("batch 1", "tpot"): Spread(-0.19, 0.69),
    ("batch > 1", "ttft"): Spread(-0.26, 0.36),
    ("batch > 1", "tpot"): Spread(-0.15, 0.97),
    ("MoE", "ttft"): Spread(-0.89, 1.11),
    ("MoE", "tpot"): Spread(-0.46, 0.95),
    ("eager", "ttft"): Spread(0.0, 1.09),
    ("eager", "tpot"): Spread(-0.65, 0.84),
}
# (engine, regime) with rows in the fit or SIZED_ON sets: `core.range_calibration.calibrated_cells`.
CALIBRATED_CELLS: frozenset[tuple[str, str]] = frozenset(
    {
        ("hf-transformers", "eager"),
        ("llama.cpp", "MoE"),
        ("llama.cpp", "batch 1"),
        ("llama.cpp", "batch > 1"),
        ("llama.cpp-metal", "MoE"),
        ("llama.cpp-metal", "batch 1"),
        ("llama.cpp-metal", "batch > 1"),
        ("llama.cpp-radeon", "MoE"),
        ("llama.cpp-radeon", "batch 1"),
        ("mlx", "MoE"),
        ("mlx", "batch 1"),
        ("sglang", "MoE"),
        ("sglang", "batch 1"),
        ("sglang", "batch > 1"),
        ("trtllm", "MoE"),
        ("trtllm", "batch 1"),
        ("trtllm", "batch > 1"),
        ("typical", "MoE"),
        ("typical", "batch 1"),
        ("typical", "batch > 1"),
        ("vllm", "MoE"),
        ("vllm", "batch 1"),
        ("vllm", "batch > 1"),
    }
)


@dataclass(frozen=True, slots=True)
class LikelyRange:
    """Where ~80 % of real measurements of this scenario's kind fall, in SI units."""

    ttft_low_s: float
    ttft_high_s: float
    tpot_low_s: float
    tpot_high_s: float
    total_low_s: float
    total_high_s: float
    output_tokens_per_s_low: float
    output_tokens_per_s_high: float
    regime: str
    confidence: Confidence


def regime(scenario: Scenario) -> str:
    """The kind of scenario a range is sized on: "eager" when its host launches every kernel, else "MoE"
    for a mixture of experts, else by the batch.

    An eager engine's step is often its host's launches, whose speed is the machine's CPU (measured
    hosts launch a layer 2.6× faster or slower than one another), so it scatters as no batch or model
    does: sized with the others, its rows widened every regime's range and still fell outside theirs.
    """
    if scenario.efficiency.launches_overlap:
        return "eager"
    if scenario.model.is_moe:
        return "MoE"
    return "batch 1" if scenario.workload.batch_size == 1 else "batch > 1"


def confidence(scenario: Scenario) -> Confidence:
    """ "calibrated" when the scenario's engine was measured in its regime, else "extrapolated"."""
    known = (scenario.efficiency.label, regime(scenario)) in CALIBRATED_CELLS
    return "calibrated" if known else "extrapolated"


def spread(scenario: Scenario, quantity: str, spreads: Mapping[tuple[str, str], Spread] | None = None) -> Spread:
    """The log spread of `quantity` (ttft or tpot) for this scenario, widened when extrapolated.

    `spreads`: other spreads than the shipped ones (sizing them afresh, `range_calibration`).
    """
    base = (SPREADS if spreads is None else spreads)[(regime(scenario), quantity)]
    if confidence(scenario) == "calibrated":
        return base
    return Spread(base.low * EXTRAPOLATION_WIDENING, base.high * EXTRAPOLATION_WIDENING)


def physics_floor(result: Estimate) -> Estimate:
    """The same scenario on the datasheet's physics (`IDEAL`: every byte at the peak bandwidth, every
    FLOP at the peak rate, nothing fixed): no server is faster, so no likely range reaches below it.

    A spread sized on log(measured ÷ estimated) reached below it where engines' fixed costs dominate
    the estimate (Qwen3-30B-A3B's 8k-token prompt on an H100: "likely" from 41 ms, where its 79.6 TFLOP
    take 79.6 ms at the 989.5 TFLOP/s peak)."""
    if result.scenario.efficiency == IDEAL:
        return result
    return estimate(replace(result.scenario, efficiency=IDEAL))


def _above(low: float, floor: float, value: float) -> float:
    """A low bound no lower than the physics allows, and (as before) no higher than the estimate."""
    return min(max(low, floor), value)


def likely_range(result: Estimate, spreads: Mapping[tuple[str, str], Spread] | None = None) -> LikelyRange:
    """The estimate's likely range: each figure × e^(its spread's low) to × e^(its spread's high).

    Example: an estimate of TTFT 100 ms and TPOT 10 ms over 500 tokens (total 5.1 s) at batch
    1, calibrated: TTFT 74.1 to 505 ms, TPOT 8.78 to 25.1 ms, total 0.0741 + 4.39 = 4.46 s
    to 0.505 + 12.55 = 13.05 s, throughput 500 / 13.05 = 38.3 to 500 / 4.46 = 112 tokens/s.
    `spreads`: other spreads than the shipped ones (sizing them afresh, `range_calibration`).
    """
    scenario = result.scenario
    ttft, tpot = spread(scenario, "ttft", spreads), spread(scenario, "tpot", spreads)
    floor = physics_floor(result)
    ttft_low = _above(result.ttft_s * math.exp(ttft.low), floor.ttft_s, result.ttft_s)
    ttft_high = result.ttft_s * math.exp(ttft.high)
    decode_s = result.latency.decode_s
    total_low = ttft_low + _above(decode_s * math.exp(tpot.low), floor.latency.decode_s, decode_s)
    total_high = ttft_high + decode_s * math.exp(tpot.high)
    tokens = scenario.workload.batch_size * scenario.workload.output_tokens
    return LikelyRange(
        ttft_low_s=ttft_low,
        ttft_high_s=ttft_high,
        tpot_low_s=_above(result.tpot_s * math.exp(tpot.low), floor.tpot_s, result.tpot_s),
        tpot_high_s=result.tpot_s * math.exp(tpot.high),
        total_low_s=total_low,
        total_high_s=total_high,
        output_tokens_per_s_low=tokens / total_high,
        output_tokens_per_s_high=tokens / total_low,
        regime=regime(scenario),
        confidence=confidence(scenario),
    )
