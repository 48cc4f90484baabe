"""The lesson's lab (Day 36), computed by the same physics every other estimate uses.

`lab_run()` reproduces the seed's reference run: Part 1 (prefill vs decode and the
fitted latency line), Part 2 (the memory wall and the batch table), Part 3 (the token
bill), the scoreboard for the four predictions, and the drills D1–D5. The CLI's
`python -m core lab` and the app's lesson page both print these values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from core import presets
from core.batching import BatchSweep, critical_batch, sweep_batch_sizes
from core.billing import monthly_cost_usd, ratio, reply_cost
from core.efficiency import IDEAL
from core.fit import LineFit, fit_latency_line
from core.parallel import Machine, effective_machine
from core.phases import Step, decode_step, prefill
from core.roofline import compute_idle_fraction
from core.specs import Model, Precision, Pricing
from core.validation import check_number

SEED = 36
JITTER = 0.05  # each simulated decode step is off by up to ±5 %
PART1_PROMPT_TOKENS = 500
PART1_OUTPUT_TOKENS = (1, 25, 50, 100, 200, 400, 800)
PART2_BATCH_SIZES = (1, 8, 16, 64, 150, 300)
PART3_PROMPT_TOKENS = 200
PART3_REPLIES = (50, 500)
PART3_PRICING = Pricing()  # $0.50 in, $1.50 out per million; 100,000 replies a day; 30 days
# The predictions the reference run was printed with (the lab's PREDICTIONS block).
REFERENCE_PREDICTIONS = (7.0, 150.0, 1.0, 10.0)
CLOSE_ENOUGH = (0.7, 1.4)
# A guess at a latency, a ratio or an intensity, never past these; 0 means no guess. A guess of 5e-324
# divided the verdict by zero, 1e-300 printed a 300-digit "x too LOW" (the CLI and the lesson page).
PREDICTION_LOW, PREDICTION_HIGH = 1e-6, 1e9


def toy_setup() -> tuple[Model, Precision, Machine]:
    """The lesson's machine: 7B fp16 on a 2 TB/s, 300 TFLOP/s GPU, ideal efficiency."""
    gpu = presets.gpu(presets.TOY_GPU_ID)
    precision = Precision(weight_bits=16, kv_bits=16)
    return presets.model(presets.TOY_MODEL_ID), precision, effective_machine(gpu, 1, IDEAL, precision)


def simulated_latency_s(ttft_s: float, tpot_s: float, output_tokens: int, rng: random.Random) -> float:
    """One simulated measurement: TTFT plus each decode step jittered by 1 + U(-5 %, +5 %).

    Consumes one draw per decode step from `rng`, in order, exactly as the lesson's lab.
    `rng.uniform(a, b)` is `a + (b - a) * rng.random()`; writing it out gives the same floats
    without a method call per step, which the app's long simulated replies notice.
    """
    draw, low, span = rng.random, -JITTER, JITTER - -JITTER
    return ttft_s + sum(tpot_s * (1 + (low + span * draw())) for _ in range(output_tokens))


def simulate_measurements(
    ttft_s: float, tpot_s: float, output_tokens: tuple[int, ...], seed: int = SEED
) -> list[float]:
    rng = random.Random(seed)
    return [simulated_latency_s(ttft_s, tpot_s, m, rng) for m in output_tokens]


@dataclass(frozen=True, slots=True)
class Part1:
    prefill: Step
    decode: Step
    output_tokens: tuple[int, ...]
    measured_latency_s: tuple[float, ...]
    fit: LineFit

    @property
    def prompt_as_input_s(self) -> float:
        return self.prefill.time_s

    @property
    def prompt_as_output_s(self) -> float:
        return PART1_PROMPT_TOKENS * self.decode.time_s

    @property
    def output_vs_input(self) -> float:
        """How many prompt tokens' worth of time one output token costs (the lesson's 150x)."""
        return self.decode.time_s / (self.prefill.time_s / PART1_PROMPT_TOKENS)


@dataclass(frozen=True, slots=True)
class Part2:
    step: Step
    idle_fraction: float
    sweep: BatchSweep
    critical_batch: int | None


@dataclass(frozen=True, slots=True)
class Reply:
    output_tokens: int
    latency_s: float
    cost_usd: float
    monthly_usd: float


@dataclass(frozen=True, slots=True)
class Part3:
    ttft_s: float
    tpot_s: float
    short: Reply
    long: Reply

    @property
    def latency_ratio(self) -> float:
        return ratio(self.long.latency_s, self.short.latency_s)

    @property
    def cost_ratio(self) -> float:
        return ratio(self.long.cost_usd, self.short.cost_usd)


@dataclass(frozen=True, slots=True)
class Prediction:
    label: str
    unit: str
    guess: float
    actual: float

    @property
    def verdict(self) -> str:
        """The lesson's rule: within 0.7–1.4× of the actual is close enough, else how far off."""
        if self.guess <= 0:
            return "no guess"
        factor = self.guess / self.actual
        if CLOSE_ENOUGH[0] <= factor <= CLOSE_ENOUGH[1]:
            return "close enough"
        if factor < 1:
            return f"{1 / factor:.1f}x too LOW"
        return f"{factor:.1f}x too HIGH"


@dataclass(frozen=True, slots=True)
class LabRun:
    part1: Part1
    part2: Part2
    part3: Part3
    scoreboard: tuple[Prediction, ...]


def part1() -> Part1:
    model, precision, machine = toy_setup()
    first = prefill(model, precision, machine, PART1_PROMPT_TOKENS)
    step = decode_step(model, precision, machine)
    measured = simulate_measurements(first.time_s, step.time_s, PART1_OUTPUT_TOKENS)
    fit = fit_latency_line(PART1_OUTPUT_TOKENS, measured)
    return Part1(first, step, PART1_OUTPUT_TOKENS, tuple(measured), fit)


def part2() -> Part2:
    model, precision, machine = toy_setup()
    step = decode_step(model, precision, machine)
    sweep = sweep_batch_sizes(
        model, precision, machine, PART2_BATCH_SIZES, 0, 0, presets.gpu(presets.TOY_GPU_ID).memory_bytes
    )
    return Part2(
        step=step,
        idle_fraction=float(compute_idle_fraction(step.intensity_flop_per_byte, step.balance_flop_per_byte)),
        sweep=sweep,
        critical_batch=critical_batch(model, precision, machine, 0),
    )


def part3(pricing: Pricing = PART3_PRICING) -> Part3:
    model, precision, machine = toy_setup()
    ttft = prefill(model, precision, machine, PART3_PROMPT_TOKENS).time_s
    tpot = decode_step(model, precision, machine).time_s
    rng = random.Random(SEED)  # a fresh generator, as in the lab
    replies = []
    for output_tokens in PART3_REPLIES:
        cost = reply_cost(pricing, PART3_PROMPT_TOKENS, output_tokens).total_usd
        replies.append(
            Reply(
                output_tokens=output_tokens,
                latency_s=simulated_latency_s(ttft, tpot, output_tokens, rng),
                cost_usd=cost,
                monthly_usd=monthly_cost_usd(cost, pricing.replies_per_day, pricing.days_per_month),
            )
        )
    return Part3(ttft, tpot, replies[0], replies[1])


def scoreboard(
    p1: Part1, p2: Part2, p3: Part3, guesses: tuple[float, ...] = REFERENCE_PREDICTIONS
) -> tuple[Prediction, ...]:
    """P1 TPOT (ms), P2 output vs input token (x), P3 decode intensity (FLOP/byte), P4 long vs short reply (x)."""
    if len(guesses) != 4:
        raise ValueError(f"the lab scores four predictions, P1-P4, got {len(guesses)}")
    for i, guess in enumerate(guesses, 1):
        if guess != 0:  # (a non-number is not 0, and is refused below)
            check_number(f"P{i}", guess, PREDICTION_LOW, PREDICTION_HIGH)
    actual = (p1.decode.time_s * 1e3, p1.output_vs_input, p2.step.intensity_flop_per_byte, p3.latency_ratio)
    labels = (
        ("P1 TPOT per output token", "ms"),
        ("P2 output vs input token", "x"),
        ("P3 decode arithmetic intensity", "FLOP/byte"),
        ("P4 500-token vs 50-token reply", "x"),
    )
    return tuple(Prediction(label, unit, g, a) for (label, unit), g, a in zip(labels, guesses, actual, strict=True))


def lab_run(guesses: tuple[float, ...] = REFERENCE_PREDICTIONS) -> LabRun:
    p1, p2, p3 = part1(), part2(), part3()
    return LabRun(p1, p2, p3, scoreboard(p1, p2, p3, guesses))


@dataclass(frozen=True, slots=True)
class Drills:
    """D1–D5 on the toy machine, by the same functions (the lesson's answers in brackets)."""

    d1_prefill: Step  # 1,000-token prompt: compute 46.7 ms vs memory 7 ms → TTFT 46.7 ms
    d2_total_s: float  # 46.7 + 300 × 7 = 2,146.7 ms
    d2_decode_share: float  # 2,100 / 2,146.7 = 97.8 %
    d3_step: Step  # 1 FLOP/byte against 150: idle 99.3 %
    d3_idle_fraction: float
    d4_critical_batch: int | None  # 150
    d4_tokens_per_s: tuple[float, float]  # batch 1 → 143, batch 64 → 9,143
    d5_latency_s: tuple[float, float]  # 746.7 ms and 7,046.7 ms
    d5_cost_units: tuple[float, float]  # output priced 3× input: 1,300 and 4,000 units

    @property
    def d5_latency_ratio(self) -> float:
        return ratio(self.d5_latency_s[1], self.d5_latency_s[0])

    @property
    def d5_cost_ratio(self) -> float:
        return ratio(self.d5_cost_units[1], self.d5_cost_units[0])


def drills() -> Drills:
    model, precision, machine = toy_setup()
    d1 = prefill(model, precision, machine, 1000)
    step = decode_step(model, precision, machine)
    decode_300 = 300 * step.time_s
    sweep = sweep_batch_sizes(model, precision, machine, (1, 64), 0, 0, presets.gpu(presets.TOY_GPU_ID).memory_bytes)
    # D5 prices in "units": one input token costs 1, one output token 3.
    units = Pricing(
        input_usd_per_million_tokens=1, cached_input_usd_per_million_tokens=1, output_usd_per_million_tokens=3
    )
    replies = (100, 1000)
    return Drills(
        d1_prefill=d1,
        d2_total_s=d1.time_s + decode_300,
        d2_decode_share=decode_300 / (d1.time_s + decode_300),
        d3_step=step,
        d3_idle_fraction=float(compute_idle_fraction(step.intensity_flop_per_byte, step.balance_flop_per_byte)),
        d4_critical_batch=critical_batch(model, precision, machine, 0),
        d4_tokens_per_s=(float(sweep.output_tokens_per_s[0]), float(sweep.output_tokens_per_s[1])),
        d5_latency_s=tuple(d1.time_s + m * step.time_s for m in replies),  # type: ignore[arg-type]
        d5_cost_units=tuple(reply_cost(units, 1000, m).total_usd * 1e6 for m in replies),  # type: ignore[arg-type]
    )
