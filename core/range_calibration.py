"""The likely ranges against measurements: their spreads sized on residuals, and their coverage.

`core.ranges` holds the ranges an estimate carries; the spreads it ships were sized here
on held-out rows (`range_spreads`), and `coverage` says how many rows fall inside them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from core.calibration import predict, predicted
from core.estimate import estimate
from core.measurements import Measurement
from core.ranges import (
    MIN_ROWS,
    MIN_SOURCES,
    QUANTITIES,
    REGIMES,
    SIZING_LEVEL,
    LikelyRange,
    Spread,
    likely_range,
    regime,
)
from core.units import S_PER_MS


def quantity_of(measurement: Measurement) -> str:
    """What a row measures for the ranges: the TTFT, or a time per output token (every other metric)."""
    return "ttft" if measurement.metric == "ttft_ms" else "tpot"


def log_residual(measurement: Measurement, estimated: float) -> float:
    """log(measured time ÷ estimated time): > 0 when the real server is slower (throughputs inverted)."""
    ratio = math.log(measurement.value / estimated)
    return -ratio if measurement.metric.endswith("_per_s") else ratio


def range_spreads(measurements: Iterable[Measurement], level: float = SIZING_LEVEL) -> dict[tuple[str, str], Spread]:
    """The (1 - level)/2 and (1 + level)/2 quantiles of the rows' log residuals per (regime, quantity), to 0.01.

    A cell with fewer than MIN_ROWS rows from MIN_SOURCES sources takes its quantity's
    spread over every regime. Each bound is kept on its side of 0 (low ≤ estimate ≤ high).
    """
    return _spreads([(m, log_residual(m, predict(m))) for m in measurements], level)


def _spreads(residuals: list[tuple[Measurement, float]], level: float) -> dict[tuple[str, str], Spread]:
    cells: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for m, residual in residuals:
        cells[(regime(m.scenario), quantity_of(m))].append((residual, m.source_id))
        cells[("all", quantity_of(m))].append((residual, m.source_id))

    def spread_of(rows: list[tuple[float, str]]) -> Spread:
        tail = (1 - level) / 2
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
    return _tally((m, likely_range(estimate(m.scenario))) for m in measurements)


def _tally(judged: Iterable[tuple[Measurement, LikelyRange]]) -> list[Coverage]:
    """How many rows fall in their likely range: all, per regime, per confidence, per quantity."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for m, likely in judged:
        inside = in_range(m, likely)
        for group in ("all", likely.regime, likely.confidence, quantity_of(m)):
            groups[group].append(inside)
    order = ["all", *REGIMES, "calibrated", "extrapolated", *QUANTITIES]
    return [Coverage(g, len(groups[g]), sum(groups[g])) for g in order if g in groups]


def leave_one_set_out(sets: dict[str, list[Measurement]], level: float = SIZING_LEVEL) -> list[Coverage]:
    """How many rows fall inside ranges sized on the other sets alone: the coverage a new set should see.

    Each set in turn is judged by spreads sized (at `level`) on every other set, with the
    shipped calibrated cells; the counts, summed over the sets, come per group as `coverage`'s.
    """
    results = {name: [(m, estimate(m.scenario)) for m in rows] for name, rows in sets.items()}
    residuals = {
        name: [(m, log_residual(m, predicted(result, m.metric))) for m, result in judged]
        for name, judged in results.items()
    }

    def judged() -> Iterable[tuple[Measurement, LikelyRange]]:
        for held, rows in results.items():
            spreads = _spreads([r for name, rs in residuals.items() if name != held for r in rs], level)
            yield from ((m, likely_range(result, spreads)) for m, result in rows)

    return _tally(judged())
