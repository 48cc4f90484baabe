"""Calibration: the estimator against published measurements, per set and per slice, and the fit.

The measurements (`core.measurements`) are split by source into fit, validation and test.
Each row is predicted with its engine's profile (`core.engine`); engines without a profile
of their own run on `typical`. `python -m core calibrate` prints every row and the median
absolute error of each set and of each slice (batch 1, batch > 1, MoE, weights below 8
bits, engine family, vendor, metric); `--fit` refits the engines' costs on the fit set.

Fitting: each engine family's costs on its own fit rows only, by coordinate descent over
grids (every 5th grid value, then the neighbours of the best), minimising the mean absolute
log error with every source weighing the same (a 48-row source must not outvote a 2-row
one: sources, not rows, are the independent unit). Which costs a family may move depends on
what its fit rows can tell apart (`FITTED`); the rest come from `typical`. vLLM's and
TensorRT-LLM's core costs were fitted on the load measurements (`core.serving_calibration`)
and stay: only the knobs those rows cannot see (dequantising kernels, MoE) are fitted here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from statistics import median

import numpy as np

from core.engine import ENGINES, EngineProfile
from core.estimate import Estimate, estimate
from core.measurements import Measurement
from core.ranges import COVERAGE, MIN_ROWS, MIN_SOURCES, QUANTITIES, REGIMES, LikelyRange, Spread, likely_range, regime
from core.scenario import Scenario
from core.units import S_PER_MS

# Grids the fit searches, in SI units.
GRIDS: dict[str, list[float]] = {
    # Written as integer ratios, so a grid value equals the decimal literal it prints as.
    "mbu": [x / 100 for x in range(20, 96)],
    "mfu": [x / 100 for x in range(10, 96)],
    "launch_overhead_per_layer_s": [x / 500_000 for x in range(0, 151)],  # 0-300 µs in 2 µs steps
    "sequence_overhead_s": [x / 500_000 for x in range(0, 51)],  # 0-100 µs
    "allreduce_latency_s": [x / 500_000 for x in range(0, 51)],  # 0-100 µs
    "request_overhead_s": [x / 500 for x in range(0, 51)],  # 0-100 ms in 2 ms steps
    "moe_layer_overhead_s": [x / 200_000 for x in range(0, 61)],  # 0-300 µs in 5 µs steps
    "expert_overhead_s": [x / 4_000_000 for x in range(0, 41)],  # 0-10 µs in 0.25 µs steps
    "dequant_bandwidth": [x / 100 for x in range(30, 101)],
    "dequant_compute": [x / 100 for x in range(30, 101)],
}
# What each family's fit rows can tell apart. vLLM and TensorRT-LLM keep the costs the
# load measurements gave them; MLX and HF transformers have two fit rows each (one
# source), enough for the one cost that sets them apart (the per-layer launch path).
FITTED: dict[str, tuple[str, ...]] = {
    "typical": (
        "mbu",
        "mfu",
        "launch_overhead_per_layer_s",
        "sequence_overhead_s",
        "allreduce_latency_s",
        "dequant_bandwidth",
        "dequant_compute",
    ),
    "vllm": ("dequant_bandwidth", "dequant_compute"),
    "trtllm": ("dequant_bandwidth", "dequant_compute"),
    "sglang": (),
    "llama.cpp": ("mbu", "mfu", "launch_overhead_per_layer_s", "dequant_bandwidth", "dequant_compute"),
    "mlx": ("launch_overhead_per_layer_s", "request_overhead_s"),
    "hf-transformers": ("launch_overhead_per_layer_s",),
}


LOAD_FITTED = ("vllm", "trtllm")  # their core costs come from `core.serving_calibration`
SHARED = ("moe_layer_overhead_s", "expert_overhead_s")  # one value for every engine, on all MoE rows
SWEEPS = 2
# A row more than 2× off counts as 2× off: the fit must not bend the engines' costs towards
# a broken build or a setup the row does not describe (truncated L1, robust to outliers).
OUTLIER_LOG = math.log(2)


def predicted(result: Estimate, metric: str) -> float:
    """The estimate's value for a measured metric, in the metric's own unit."""
    if metric == "tpot_ms":
        return result.tpot_s / S_PER_MS
    if metric == "ttft_ms":
        return result.ttft_s / S_PER_MS
    if metric == "decode_tokens_per_s":
        return result.scenario.workload.batch_size / result.tpot_s
    return result.output_tokens_per_s


def scenario_on(measurement: Measurement, profile: EngineProfile) -> Scenario:
    """The row's scenario on `profile`'s costs (no server path for an engine run in-process)."""
    efficiency = profile.efficiency(measurement.scenario.model)
    if not measurement.server:
        efficiency = replace(efficiency, request_overhead_s=0.0)
    return replace(measurement.scenario, efficiency=efficiency)


def predict(measurement: Measurement, profiles: Mapping[str, EngineProfile] | None = None) -> float:
    """The estimator's value for the row: on its engine's shipped profile, or on `profiles[its family]`."""
    if profiles is None or measurement.profile not in profiles:
        scenario = measurement.scenario
    else:
        scenario = scenario_on(measurement, profiles[measurement.profile])
    return predicted(estimate(scenario), measurement.metric)


def ideal_profiles() -> dict[str, EngineProfile]:
    """Every engine as the lesson's ideal machine: MBU = MFU = 1, nothing added, nothing lost."""
    ideal = dict.fromkeys(("scheduler_overhead_s", *START_COSTS), 0.0)
    ideal.update(mbu=1.0, mfu=1.0, dequant_bandwidth=1.0, dequant_compute=1.0)
    return {engine_id: replace(profile, **ideal) for engine_id, profile in ENGINES.items()}  # type: ignore[arg-type]


def percentage_error(estimated: float, measured: float) -> float:
    """(estimated - measured) / measured × 100: positive means the estimate is too high."""
    return (estimated - measured) / measured * 100


def log_error(measurement: Measurement, estimated: float) -> float:
    """log(estimated / measured) for times; for throughputs the sign is flipped, so > 0 always means too slow."""
    ratio = math.log(estimated / measurement.value)
    return -ratio if measurement.metric.endswith("_per_s") else ratio


def median_absolute_error_pct(
    measurements: Iterable[Measurement], profiles: Mapping[str, EngineProfile] | None = None
) -> float:
    return median(abs(percentage_error(predict(m, profiles), m.value)) for m in measurements)


# --- slices -------------------------------------------------------------------------------

SLICES: dict[str, Callable[[Measurement], str | None]] = {
    "batch": lambda m: "batch 1" if m.batch == 1 else "batch > 1",
    "moe": lambda m: "MoE" if m.is_moe else None,
    "bits": lambda m: "weights < 8 bits" if m.quantised_below_8_bits else None,
    "engine": lambda m: m.profile,
    "vendor": lambda m: m.vendor,
    "metric": lambda m: m.metric,
}


@dataclass(frozen=True, slots=True)
class SliceError:
    """Median absolute % error of one slice of a set's rows."""

    slice: str
    value: str
    rows: int
    sources: int
    median_abs_pct: float


def slice_errors(measurements: Iterable[Measurement], errors_pct: Iterable[float]) -> list[SliceError]:
    """The whole set, then every value of every slice (in SLICES order)."""
    groups: dict[tuple[str, str], list[tuple[Measurement, float]]] = defaultdict(list)
    for m, error in zip(measurements, errors_pct, strict=True):
        groups[("all", "all")].append((m, error))
        for name, key in SLICES.items():
            value = key(m)
            if value is not None:
                groups[(name, value)].append((m, error))
    order = ["all", *SLICES]
    return [
        SliceError(
            name,
            value,
            len(group),
            len({m.source_id for m, _ in group}),
            median(abs(error) for _, error in group),
        )
        for (name, value), group in sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1]))
    ]


# --- fitting ------------------------------------------------------------------------------


def source_weighted_loss(measurements: list[Measurement], profiles: Mapping[str, EngineProfile]) -> float:
    """Σ over sources of √rows × the source's mean |log(estimated / measured)|, ÷ Σ √rows.

    A source is the independent unit (its rows share a machine, a harness, an author), so
    a 48-row source must not outvote the others 48 to 1; nor should a one-row source weigh
    as much as a 40-row one. √rows is the usual middle way.
    """
    by_source: dict[str, list[float]] = defaultdict(list)
    for m in measurements:
        estimated = predicted(estimate(scenario_on(m, profiles[m.profile])), m.metric)
        by_source[m.source_id].append(min(abs(math.log(estimated / m.value)), OUTLIER_LOG))
    weights = {source: math.sqrt(len(errors)) for source, errors in by_source.items()}
    total = sum(weights[s] * sum(e) / len(e) for s, e in by_source.items())
    return total / sum(weights.values())


def _descend(
    measurements: list[Measurement],
    profiles: dict[str, EngineProfile],
    families: tuple[str, ...],
    knobs: Iterable[str],
) -> dict[str, EngineProfile]:
    """Coordinate descent of `knobs`, each set to the same value in every one of `families`.

    Each knob: every 5th grid value, then every value within 4 steps of the best of those;
    a knob moves only when the loss strictly improves (a knob the rows cannot see stays).
    """

    def with_value(knob: str, value: float) -> dict[str, EngineProfile]:
        return {**profiles, **{f: replace(profiles[f], **{knob: value}) for f in families}}  # type: ignore[arg-type]

    best_loss = source_weighted_loss(measurements, profiles)
    for _ in range(SWEEPS):
        for knob in knobs:
            grid = GRIDS[knob]

            def score(i: int, knob: str = knob, grid: list[float] = grid) -> float:
                return source_weighted_loss(measurements, with_value(knob, grid[i]))

            pick = min(range(0, len(grid), 5), key=score)
            pick = min(range(max(pick - 4, 0), min(pick + 5, len(grid))), key=score)
            loss = score(pick)
            if loss < best_loss - 1e-12:
                profiles, best_loss = with_value(knob, grid[pick]), loss
    return profiles


# Where every fit starts (the earlier calibrated defaults, no MoE cost, full-speed dequantising,
# no server path), so that a refit does not depend on the values it replaces.
START_COSTS = {
    "mbu": 0.85,
    "mfu": 0.56,
    "launch_overhead_per_layer_s": 30e-6,
    "sequence_overhead_s": 14e-6,
    "allreduce_latency_s": 24e-6,
    "request_overhead_s": 0.0,
    "moe_layer_overhead_s": 0.0,
    "expert_overhead_s": 0.0,
    "dequant_bandwidth": 1.0,
    "dequant_compute": 1.0,
}


def start_profiles() -> dict[str, EngineProfile]:
    """The shipped engines with every cost `calibrate --fit` moves reset to START_COSTS.

    vLLM and TensorRT-LLM keep the costs the load measurements gave them (and SGLang its
    server path, which none of its fit rows measures).
    """
    starts = {}
    for family, profile in ENGINES.items():
        moved = set(FITTED[family]) | set(SHARED) | (set(FITTED["typical"]) if family not in LOAD_FITTED else set())
        costs = {k: START_COSTS[k] for k in moved}
        starts[family] = replace(profile, scheduler_overhead_s=0.0, **costs)  # type: ignore[arg-type]
    return starts


def fit_profiles(
    measurements: list[Measurement], start: Mapping[str, EngineProfile] | None = None
) -> dict[str, EngineProfile]:
    """Every family's costs on its own fit rows, then the shared MoE cost on every MoE row.

    `typical` is fitted first; the families without load measurements start from its costs;
    then the per-expert cost (`SHARED`), one value for every engine, on all MoE rows with
    each row's own engine; then each family once more with it in place.
    """
    profiles = dict(start or start_profiles())
    by_family: dict[str, list[Measurement]] = defaultdict(list)
    for m in measurements:
        by_family[m.profile].append(m)
    moe = [m for m in measurements if m.is_moe]
    for _ in range(2):
        profiles = _descend(by_family["typical"], profiles, ("typical",), FITTED["typical"])
        profiles = _inherit_typical(profiles)
        for family, rows in by_family.items():
            if family != "typical":
                profiles = _descend(rows, profiles, (family,), FITTED[family])
        profiles = _descend(moe, profiles, tuple(profiles), SHARED)
    return profiles


def _inherit_typical(profiles: dict[str, EngineProfile]) -> dict[str, EngineProfile]:
    """Families without load measurements take typical's costs for every knob they do not fit themselves."""
    typical = profiles["typical"]
    return {
        family: profile
        if family in ("typical", *LOAD_FITTED)
        else replace(profile, **{k: getattr(typical, k) for k in FITTED["typical"] if k not in FITTED[family]})
        for family, profile in profiles.items()
    }


# --- likely ranges: sized on held-out residuals (core.ranges) ----------------------------


def quantity_of(measurement: Measurement) -> str:
    """What a row measures for the ranges: the TTFT, or a time per output token (every other metric)."""
    return "ttft" if measurement.metric == "ttft_ms" else "tpot"


def log_residual(measurement: Measurement, estimated: float) -> float:
    """log(measured time ÷ estimated time): > 0 when the real server is slower (throughputs inverted)."""
    ratio = math.log(measurement.value / estimated)
    return -ratio if measurement.metric.endswith("_per_s") else ratio


def range_spreads(measurements: Iterable[Measurement]) -> dict[tuple[str, str], Spread]:
    """The 10th and 90th percentiles of the rows' log residuals per (regime, quantity), rounded to 0.01.

    A cell with fewer than MIN_ROWS rows from MIN_SOURCES sources takes its quantity's
    spread over every regime. Each bound is kept on its side of 0 (low ≤ estimate ≤ high).
    """
    cells: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for m in measurements:
        residual = log_residual(m, predict(m))
        cells[(regime(m.scenario), quantity_of(m))].append((residual, m.source_id))
        cells[("all", quantity_of(m))].append((residual, m.source_id))

    def spread_of(rows: list[tuple[float, str]]) -> Spread:
        tail = (1 - COVERAGE) / 2
        low, high = np.quantile([r for r, _ in rows], [tail, 1 - tail])
        return Spread(round(min(float(low), 0.0), 2), round(max(float(high), 0.0), 2))

    spreads = {}
    for cell in ((r, q) for r in REGIMES for q in QUANTITIES):
        rows = cells.get(cell, [])
        enough = len(rows) >= MIN_ROWS and len({s for _, s in rows}) >= MIN_SOURCES
        spreads[cell] = spread_of(rows if enough else cells[("all", cell[1])])
    return spreads


def calibrated_cells(measurements: Iterable[Measurement]) -> frozenset[tuple[str, str]]:
    """(engine, regime) pairs with at least one row: where a range is "calibrated"."""
    return frozenset((m.profile, regime(m.scenario)) for m in measurements)


def in_range(measurement: Measurement, likely: LikelyRange) -> bool:
    """Whether the measured value lies in the estimate's likely range for its metric."""
    low, high = {
        "ttft_ms": (likely.ttft_low_s / S_PER_MS, likely.ttft_high_s / S_PER_MS),
        "tpot_ms": (likely.tpot_low_s / S_PER_MS, likely.tpot_high_s / S_PER_MS),
        "output_tokens_per_s": (likely.output_tokens_per_s_low, likely.output_tokens_per_s_high),
        "decode_tokens_per_s": (measurement.batch / likely.tpot_high_s, measurement.batch / likely.tpot_low_s),
    }[measurement.metric]
    return low * (1 - 1e-9) <= measurement.value <= high * (1 + 1e-9)


@dataclass(frozen=True, slots=True)
class Coverage:
    """The share of one group's measurements that fall in their likely range."""

    group: str
    rows: int
    inside: int

    @property
    def share(self) -> float:
        return self.inside / self.rows


def coverage(measurements: Iterable[Measurement]) -> list[Coverage]:
    """Coverage of the likely ranges: all rows, per regime, per confidence, per quantity."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for m in measurements:
        likely = likely_range(estimate(m.scenario))
        inside = in_range(m, likely)
        for group in ("all", likely.regime, likely.confidence, quantity_of(m)):
            groups[group].append(inside)
    order = ["all", *REGIMES, "calibrated", "extrapolated", *QUANTITIES]
    return [Coverage(g, len(groups[g]), sum(groups[g])) for g in order if g in groups]
