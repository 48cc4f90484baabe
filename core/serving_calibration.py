"""The load model against measured servers: fit the engines' costs on part, judge on the rest.

The split is never by row: by GPU (fit on H100 + H200, judge on B200 — a newer chip, and
the only one with NVFP4 — and the reverse) and by engine (fit one engine's costs, judge
them on the other engine's rows, with the other engine's own documented scheduling).
Only the engines' costs are fitted (`FITTED` below); their scheduling, the benchmark's
flags and every hardware number come from documents (see `core.serving_data`).

Fitting minimises the mean absolute log error of TPOT and TTFT together (symmetric in
too-fast and too-slow) by coordinate descent over grids, a few sweeps, from the same
neutral start every time (`START_COSTS`), as `core.engine_fit` does (`core.grid_fit`). Each split's fit is
frozen in `SPLIT_COSTS` so the report is instant; `refit_split` recomputes it. The
shipped `VLLM` and `TRTLLM` profiles are fitted on all 441 rows (`ALL_ROWS`), after the
splits had shown how well the procedure carries to hardware and engines it has not seen.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from statistics import median

import numpy as np

from core.engine import ENGINES, EngineProfile
from core.grid_fit import NEUTRAL_COSTS, best_on_grid
from core.one_wave import benchmark_run
from core.open_loop import open_loop
from core.serving_data import ServingMeasurement, replica_for
from core.slices import slice_groups

# The costs a fit may move, each over a grid of plausible values (SI units).
GRIDS: dict[str, list[float]] = {
    "mbu": [x / 100 for x in range(50, 101)],
    "mfu": [x / 100 for x in range(20, 91)],
    "launch_overhead_per_layer_s": [x * 1e-6 for x in range(0, 101)],
    "sequence_overhead_s": [x * 1e-6 for x in range(0, 81)],
    "allreduce_latency_s": [x * 1e-6 for x in range(0, 41)],
    "request_overhead_s": [x * 1e-3 for x in range(0, 151, 2)],
    "stream_overhead_s": [x * 1e-5 for x in range(0, 201)],  # 0-2 ms per request in flight, 10 µs steps
}
FITTED = tuple(GRIDS)
# Where every fit starts: the neutral costs every fit shares, and 50 ms per request.
START_COSTS = {**NEUTRAL_COSTS, "request_overhead_s": 50e-3, "stream_overhead_s": 0.0}
# Each split's fit, frozen from `refit_split` (grid values, so exact): what the report judges.
SPLIT_COSTS: dict[str, dict[str, dict[str, float]]] = {
    "gpu": {
        "trtllm": {
            "mbu": 0.87,
            "mfu": 0.57,
            "launch_overhead_per_layer_s": 11e-6,
            "sequence_overhead_s": 63e-6,
            "allreduce_latency_s": 16e-6,
            "request_overhead_s": 46e-3,
            "stream_overhead_s": 70e-5,
        },
        "vllm": {
            "mbu": 0.77,
            "mfu": 0.49,
            "launch_overhead_per_layer_s": 24e-6,
            "sequence_overhead_s": 72e-6,
            "allreduce_latency_s": 19e-6,
            "request_overhead_s": 28e-3,
            "stream_overhead_s": 44e-5,
        },
    },
    "gpu-reverse": {
        "trtllm": {
            "mbu": 0.72,
            "mfu": 0.46,
            "launch_overhead_per_layer_s": 18e-6,
            "sequence_overhead_s": 25e-6,
            "allreduce_latency_s": 20e-6,
            "request_overhead_s": 42e-3,
            "stream_overhead_s": 49e-5,
        },
        "vllm": {
            "mbu": 0.68,
            "mfu": 0.39,
            "launch_overhead_per_layer_s": 23e-6,
            "sequence_overhead_s": 37e-6,
            "allreduce_latency_s": 21e-6,
            "request_overhead_s": 64e-3,
            "stream_overhead_s": 82e-5,
        },
    },
    "engine": {
        "vllm": {
            "mbu": 0.73,
            "mfu": 0.50,
            "launch_overhead_per_layer_s": 25e-6,
            "sequence_overhead_s": 59e-6,
            "allreduce_latency_s": 19e-6,
            "request_overhead_s": 54e-3,
            "stream_overhead_s": 82e-5,
        },
    },
    "engine-reverse": {
        "trtllm": {
            "mbu": 0.82,
            "mfu": 0.51,
            "launch_overhead_per_layer_s": 25e-6,
            "sequence_overhead_s": 39e-6,
            "allreduce_latency_s": 13e-6,
            "request_overhead_s": 46e-3,
            "stream_overhead_s": 51e-5,
        },
    },
}
SLICES: dict[str, Callable[[ServingMeasurement], object]] = {
    "model": lambda m: m.model,
    "gpu": lambda m: m.gpu,
    "engine": lambda m: m.engine,
    "precision": lambda m: m.weights,
    "isl/osl": lambda m: f"{m.isl}/{m.osl}",
    "tp": lambda m: f"TP{m.tp}",
    "load": lambda m: m.load,
}


@dataclass(frozen=True, slots=True)
class Prediction:
    measurement: ServingMeasurement
    ttft_ms: float
    tpot_ms: float
    fits: int  # the concurrency whose KV cache fits

    @property
    def ttft_error_pct(self) -> float:
        return (self.ttft_ms / self.measurement.ttft_ms - 1) * 100

    @property
    def tpot_error_pct(self) -> float:
        return (self.tpot_ms / self.measurement.tpot_ms - 1) * 100


@dataclass(frozen=True, slots=True)
class SliceError:
    """Median absolute % error of one slice of the judged rows."""

    slice: str
    value: str
    rows: int
    tpot_median_abs_pct: float
    ttft_median_abs_pct: float


@dataclass(frozen=True, slots=True)
class Split:
    """A way to cut the data: which rows fit each engine's costs, which rows judge them."""

    name: str
    description: str
    fit_rows: Callable[[ServingMeasurement], bool]
    judged_rows: Callable[[ServingMeasurement], bool]
    # Engine whose fitted costs predict each engine's judged rows (itself, unless transferred).
    costs_from: dict[str, str]


SPLITS = (
    Split(
        "gpu",
        "fit on H100 + H200, judge on B200 (both engines; fp8 and the never-seen NVFP4)",
        lambda m: m.gpu != "B200",
        lambda m: m.gpu == "B200",
        {"vllm": "vllm", "trtllm": "trtllm"},
    ),
    Split(
        "gpu-reverse",
        "fit on B200, judge on H100 + H200",
        lambda m: m.gpu == "B200",
        lambda m: m.gpu != "B200",
        {"vllm": "vllm", "trtllm": "trtllm"},
    ),
    Split(
        "engine",
        "fit vLLM's costs, judge them on every TensorRT-LLM row (with TRT-LLM's own scheduling)",
        lambda m: m.engine == "vllm",
        lambda m: m.engine == "trtllm",
        {"trtllm": "vllm"},
    ),
    Split(
        "engine-reverse",
        "fit TensorRT-LLM's costs, judge them on every vLLM row (with vLLM's own scheduling)",
        lambda m: m.engine == "trtllm",
        lambda m: m.engine == "vllm",
        {"vllm": "trtllm"},
    ),
)


def predict(
    measurements: Iterable[ServingMeasurement], profiles: dict[str, EngineProfile] | None = None
) -> list[Prediction]:
    """The load model at each measured point, one vectorised call per setup and kind of loop.

    A closed-loop row (at most C in flight) is the closed loop as the benchmark ran it, its
    means: n × C requests, the first C at once (n = 10 unless the row gives `num_prompts`), or
    one wave (`core.one_wave`) when the benchmark sent only C; an open-loop row (Poisson
    arrivals at its request rate) the open loop, its TTFT at p50 where the row's statistic is
    the median (else the mean) and its mean TPOT. Past the
    open loop's capacity the latencies are infinite, as a queue that grows without bound is.
    """
    by_setup: dict[tuple, list[ServingMeasurement]] = defaultdict(list)
    for m in measurements:
        closed = m.request_rate is None
        by_setup[(m.model, m.setup, m.precision, closed, m.lengths, m.requests_per_slot if closed else None)].append(m)
    out = []
    for (model_id, setup, precision, closed, lengths, per_slot), rows in by_setup.items():
        replica = replica_for(setup, profiles, model_id, precision)
        ttfts: np.ndarray
        tpots: np.ndarray
        if closed:
            c = np.array([m.concurrency for m in rows], dtype=float)
            result = benchmark_run(replica, lengths, c, per_slot)
            ttfts, tpots = np.asarray(result.ttft_s), np.asarray(result.tpot_s)
            fits = result.max_concurrency_that_fits
        else:
            loop = open_loop(replica, lengths, np.array([m.request_rate for m in rows], dtype=float))
            medians = np.array([m.ttft_stat == "median" for m in rows])
            ttfts = np.asarray(np.where(medians, loop.ttft_p50_s, loop.ttft_s), dtype=float)
            tpots = np.asarray(loop.tpot_s)
            fits = loop.max_concurrency_that_fits
        for i, m in enumerate(rows):
            out.append(Prediction(m, float(ttfts[i]) * 1e3, float(tpots[i]) * 1e3, fits))
    return out


def loss(predictions: Iterable[Prediction]) -> float:
    """Mean absolute log error of TPOT and TTFT over the rows (each metric weighs the same)."""
    terms = [
        abs(math.log(p.tpot_ms / p.measurement.tpot_ms)) + abs(math.log(p.ttft_ms / p.measurement.ttft_ms))
        for p in predictions
    ]
    return sum(terms) / (2 * len(terms))


def with_costs(engine_id: str, costs: dict[str, float]) -> EngineProfile:
    """The named engine's scheduling with these costs."""
    return replace(ENGINES[engine_id], scheduler_overhead_s=0.0, **costs)  # type: ignore[arg-type]


def fit_engine(rows: list[ServingMeasurement], start: EngineProfile, sweeps: int = 3) -> EngineProfile:
    """The engine's costs that minimise `loss` on `rows` (one engine's rows), by coordinate descent.

    Each knob: every 5th grid value, then every value within 4 steps of the best of those
    (`grid_fit.best_on_grid`); unlike `engine_fit`, a knob moves to the best even on a tie.
    """
    best = start

    def score(profile: EngineProfile) -> float:
        return loss(predict(rows, {profile.id: profile}))

    for _ in range(sweeps):
        for knob, grid in GRIDS.items():

            def at(i: int, knob: str = knob, grid: list[float] = grid, start: EngineProfile = best) -> float:
                return score(replace(start, **{knob: grid[i]}))  # type: ignore[arg-type]

            best = replace(best, **{knob: grid[best_on_grid(len(grid), at)]})  # type: ignore[arg-type]
    return best


def fit_split(rows: list[ServingMeasurement], split: Split) -> dict[str, EngineProfile]:
    """Each engine's costs fitted on the split's fitting rows of that engine."""
    fitted = {}
    for engine_id in sorted({m.engine for m in rows if split.fit_rows(m)}):
        own = [m for m in rows if split.fit_rows(m) and m.engine == engine_id]
        fitted[engine_id] = fit_engine(own, with_costs(engine_id, START_COSTS))
    return fitted


def judged_profiles(split: Split, fitted: dict[str, EngineProfile]) -> dict[str, EngineProfile]:
    """Per judged engine: its own scheduling with the costs the split fitted (maybe on another engine)."""
    return {
        engine_id: with_costs(engine_id, {knob: getattr(fitted[source], knob) for knob in FITTED})
        for engine_id, source in split.costs_from.items()
    }


@dataclass(frozen=True, slots=True)
class SplitReport:
    """One split: the costs fitted on its fitting rows, and the model on the rows it did not fit."""

    split: Split
    fitted: dict[str, EngineProfile]
    judged: list[Prediction]

    @property
    def errors(self) -> list[SliceError]:
        return slice_errors(self.judged)


def split_report(split: Split, rows: list[ServingMeasurement], refit: bool = False) -> SplitReport:
    """The split judged with its frozen costs, or with costs fitted afresh (`refit`, minutes)."""
    if refit:
        fitted = fit_split(rows, split)
    else:
        fitted = {engine_id: with_costs(engine_id, costs) for engine_id, costs in SPLIT_COSTS[split.name].items()}
    judged = [m for m in rows if split.judged_rows(m)]
    return SplitReport(split, fitted, predict(judged, judged_profiles(split, fitted)))


def slice_errors(predictions: list[Prediction]) -> list[SliceError]:
    """Median absolute errors for all judged rows, then per value of every slice."""
    groups = slice_groups(predictions, SLICES, of=lambda p: p.measurement, value_order=_natural)
    return [
        SliceError(
            name,
            value,
            len(group),
            median(abs(p.tpot_error_pct) for p in group),
            median(abs(p.ttft_error_pct) for p in group),
        )
        for name, value, group in groups
    ]


def _natural(text: str) -> tuple:
    digits = "".join(ch for ch in text if ch.isdigit())
    return (int(digits) if digits else -1, text)
