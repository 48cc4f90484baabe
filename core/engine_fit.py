"""Fitting the engines' costs on the fit set's single-request and static-batch measurements.

Each engine family's costs on its own fit rows only, by coordinate descent over grids
(`core.grid_fit`: every 5th grid value, then the neighbours of the best), minimising the
mean absolute log error with every source weighing the same (a 48-row source must not
outvote a 2-row one: sources, not rows, are the independent unit). Which costs a family
may move depends on what its fit rows can tell apart (`FITTED`); the rest come from
`typical`. vLLM's and TensorRT-LLM's core costs were fitted on the load measurements
(`core.serving_calibration`) and stay: only the knobs those rows cannot see (dequantising
kernels, MoE) are fitted here. `python -m core calibrate --fit` runs it.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace

from core.calibration import predicted, scenario_on
from core.engine import ENGINES, EngineProfile
from core.estimate import estimate
from core.grid_fit import NEUTRAL_COSTS, best_on_grid
from core.measurements import SETS, Measurement

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
    "llama.cpp-metal": ("mbu", "mfu", "launch_overhead_per_layer_s", "dequant_bandwidth", "dequant_compute"),
    "mlx": ("launch_overhead_per_layer_s", "request_overhead_s"),
    "hf-transformers": ("launch_overhead_per_layer_s",),
}


# Profiles that share a family's fitted costs and differ only in a cost fitted elsewhere:
# llama.cpp on Apple's Metal is llama.cpp without the expert padding of its other backends.
SHARES_COSTS_OF = {"llama.cpp-metal": "llama.cpp"}
LOAD_FITTED = ("vllm", "trtllm")  # their core costs come from `core.serving_calibration`
SHARED = ("moe_layer_overhead_s", "expert_overhead_s")  # one value for every engine, on all MoE rows
# Engines whose cost per MoE layer is their own, fitted on their rows of the later sets
# (`fit_own_moe_layer_overhead`): llama.cpp's CUDA, ROCm and Vulkan backends launch an MoE layer
# as a dense one (an indexed matmul per projection) behind a fused top-k, where vLLM's fused-MoE
# path sorts tokens by expert first. Every other engine, llama.cpp's Metal backend included (its
# own value, 105 µs, did not predict a left-out source better), shares one value, fitted on the
# fit set's MoE rows.
OWN_MOE_LAYER = ("llama.cpp",)
SWEEPS = 2
# A row more than 2× off counts as 2× off: the fit must not bend the engines' costs towards
# a broken build or a setup the row does not describe (truncated L1, robust to outliers).
OUTLIER_LOG = math.log(2)


def ideal_profiles() -> dict[str, EngineProfile]:
    """Every engine as the lesson's ideal machine: MBU = MFU = 1, nothing added, nothing lost."""
    ideal = dict.fromkeys(("scheduler_overhead_s", *START_COSTS), 0.0)
    ideal.update(mbu=1.0, mfu=1.0, dequant_bandwidth=1.0, dequant_compute=1.0)
    return {engine_id: replace(profile, **ideal) for engine_id, profile in ENGINES.items()}  # type: ignore[arg-type]


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

            pick = best_on_grid(len(grid), score)
            loss = score(pick)
            if loss < best_loss - 1e-12:
                profiles, best_loss = with_value(knob, grid[pick]), loss
    return profiles


# Where every fit starts (the neutral costs, no MoE cost, full-speed dequantising, no server
# path), so that a refit does not depend on the values it replaces.
START_COSTS = {
    **NEUTRAL_COSTS,
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
        if family in OWN_MOE_LAYER:
            moved.discard("moe_layer_overhead_s")  # fitted on the later sets, not here
        costs = {k: START_COSTS[k] for k in moved}
        starts[family] = replace(profile, scheduler_overhead_s=0.0, **costs)  # type: ignore[arg-type]
    return starts


def fit_profiles(
    measurements: list[Measurement], start: Mapping[str, EngineProfile] | None = None
) -> dict[str, EngineProfile]:
    """Every family's costs on its own fit rows, then the shared MoE cost on every MoE row.

    `typical` is fitted first; the families without load measurements start from its costs
    (a profile in `SHARES_COSTS_OF` is fitted with its family, on both's rows, to one value);
    then the MoE costs (`SHARED`) on all MoE rows with each row's own engine — the cost per
    MoE layer one value for every engine but `OWN_MOE_LAYER`'s (kept as given) and on their
    rows only, the cost per expert one value for all; then each family once more with them in place.
    """
    profiles = dict(start or start_profiles())
    by_family: dict[str, list[Measurement]] = defaultdict(list)
    for m in measurements:
        by_family[SHARES_COSTS_OF.get(m.profile, m.profile)].append(m)
    moe = [m for m in measurements if m.is_moe]
    moe_shared = [m for m in moe if m.profile not in OWN_MOE_LAYER]
    shared_families = tuple(f for f in profiles if f not in OWN_MOE_LAYER)
    for _ in range(2):
        profiles = _descend(by_family["typical"], profiles, ("typical",), FITTED["typical"])
        profiles = _inherit_typical(profiles)
        for family, rows in by_family.items():
            if family != "typical":
                members = (family, *(p for p, f in SHARES_COSTS_OF.items() if f == family and p in profiles))
                profiles = _descend(rows, profiles, members, FITTED[family])
        profiles = _descend(moe_shared, profiles, shared_families, ("moe_layer_overhead_s",))
        profiles = _descend(moe, profiles, tuple(profiles), ("expert_overhead_s",))
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


# The expert padding of llama.cpp's CUDA, ROCm and Vulkan backends (`core.engine`): no fit-set
# row measures it, so it is fitted on its own rows of the later sets, robustly (a median of the
# sources' medians: one source's broken ROCm build, 25-50× off, must not move it).
PADDING_GRID = [10.0 * x for x in range(0, 101)]  # 0-1,000 tokens
# The sets it was fitted on: every set up to fresh12 (its rows are in fresh4-fresh12). fresh13 was
# gathered after, to judge it.
PADDING_FITTED_ON = SETS[: SETS.index("fresh12") + 1]


def padding_rows(measurements: Iterable[Measurement]) -> list[Measurement]:
    """The rows that see the padding: a mixture of experts' prefill (TTFT) on llama.cpp off Apple."""
    return [m for m in measurements if m.profile == "llama.cpp" and m.is_moe and m.metric == "ttft_ms"]


def estimated_with_padding(measurement: Measurement, padding_tokens: float) -> float:
    """The row's estimate on its shipped profile with the expert padding set to `padding_tokens`."""
    profile = replace(ENGINES[measurement.profile], expert_padding_tokens=padding_tokens)
    return predicted(estimate(scenario_on(measurement, profile)), measurement.metric)


def own_padding_tokens(measurement: Measurement) -> float:
    """The grid's padding at which the row's estimate comes closest to what it measured."""

    def log_error(padding: float) -> float:
        return abs(math.log(estimated_with_padding(measurement, padding) / measurement.value))

    return min(PADDING_GRID, key=log_error)


def fit_expert_padding(measurements: Iterable[Measurement]) -> float:
    """The median over sources of each source's median own padding (`own_padding_tokens`), on the grid."""
    by_source: dict[str, list[float]] = defaultdict(list)
    for m in padding_rows(measurements):
        by_source[m.source_id].append(own_padding_tokens(m))
    return statistics.median_low([statistics.median_low(values) for values in by_source.values()])


# llama.cpp's own cost per MoE layer (`OWN_MOE_LAYER`), per backend: the fit set has three such
# rows, so it is fitted on every MoE decode row of that backend in the sets up to fresh13 (which
# makes them in-sample for it), with the fit's own loss. The first set gathered after judges it.
OWN_MOE_FITTED_ON = SETS[: SETS.index("fresh13") + 1]


def own_moe_rows(measurements: Iterable[Measurement], family: str) -> list[Measurement]:
    """The rows that see a backend's cost per MoE layer: a mixture of experts decoding on it."""
    return [m for m in measurements if m.profile == family and m.is_moe and m.metric != "ttft_ms"]


def fit_own_moe_layer_overhead(measurements: Iterable[Measurement], family: str) -> float:
    """The family's cost per MoE layer that minimises `source_weighted_loss` on its MoE decode rows.

    Every other cost as shipped; the descent starts from no cost, so the value does not
    depend on the one it replaces.
    """
    profiles = {**ENGINES, family: replace(ENGINES[family], moe_layer_overhead_s=0.0)}
    fitted = _descend(own_moe_rows(measurements, family), profiles, (family,), ("moe_layer_overhead_s",))
    return fitted[family].moe_layer_overhead_s
