"""Calibration: the estimator against published measurements, per set and per slice.

The measurements (`core.measurements`) are split by source into fit, validation and test.
Each row is predicted with its engine's profile (`core.engine`); engines without a profile
of their own run on `typical`. `python -m core calibrate` prints every row and the median
absolute error of each set and of each slice (batch 1, batch > 1, MoE, weights below 8
bits, engine family, vendor, metric); `--fit` refits the engines' costs on the fit set
(`core.engine_fit`). The likely ranges are sized and checked on the same rows
(`core.range_calibration`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from statistics import median

from core.engine import EngineProfile
from core.estimate import Estimate, estimate
from core.measurements import Measurement
from core.scenario import Scenario
from core.slices import slice_groups
from core.units import S_PER_MS


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
        efficiency = efficiency.in_process()
    return replace(measurement.scenario, efficiency=efficiency)


def predict(measurement: Measurement, profiles: Mapping[str, EngineProfile] | None = None) -> float:
    """The estimator's value for the row: on its engine's shipped profile, or on `profiles[its family]`."""
    if profiles is None or measurement.profile not in profiles:
        scenario = measurement.scenario
    else:
        scenario = scenario_on(measurement, profiles[measurement.profile])
    return predicted(estimate(scenario), measurement.metric)


def percentage_error(estimated: float, measured: float) -> float:
    """(estimated - measured) / measured × 100: positive means the estimate is too high."""
    return (estimated - measured) / measured * 100


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
    rows = zip(measurements, errors_pct, strict=True)
    return [
        SliceError(name, value, len(group), len({m.source_id for m, _ in group}), median(abs(e) for _, e in group))
        for name, value, group in slice_groups(rows, SLICES, of=lambda row: row[0])
    ]
