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
    "unpack_flop_per_weight": [x / 2 for x in range(0, 81)],  # 0-40 FLOP per weight in steps of 0.5
}
# A family whose cost lives on another scale searches its own grid: HF transformers' per-layer cost
# is the host's, issuing each layer's kernels from Python while the GPU runs (`launches_overlap`), an
# order of magnitude above the GPU-side gaps a CUDA-graph engine pays: 0-3 ms in 10 µs steps.
OWN_GRIDS: dict[str, dict[str, list[float]]] = {
    "hf-transformers": {"launch_overhead_per_layer_s": [x / 100_000 for x in range(0, 301)]},
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
    "llama.cpp-radeon": ("mbu", "mfu", "launch_overhead_per_layer_s", "dequant_bandwidth", "dequant_compute"),
    "mlx": ("launch_overhead_per_layer_s", "request_overhead_s"),
    "hf-transformers": ("launch_overhead_per_layer_s",),
}


# Profiles that share a family's fitted costs and differ only in costs fitted elsewhere: llama.cpp's
# Metal and Radeon backends (`LATER_FITTED`; Metal has no expert padding).
SHARES_COSTS_OF = {"llama.cpp-metal": "llama.cpp", "llama.cpp-radeon": "llama.cpp"}
LOAD_FITTED = ("vllm", "trtllm")  # their core costs come from `core.serving_calibration`
SHARED = ("moe_layer_overhead_s", "expert_overhead_s")  # one value for every engine, on all MoE rows
# One value for every engine, on every row whose weights are dequantised: unpacking a weight is the
# same few instructions whoever launches the kernel (shift, mask, convert, scale), and no family's
# fit rows span enough GPUs to tell its own value apart.
SHARED_UNPACKING = ("unpack_flop_per_weight",)
# Costs a profile holds of its own, fitted on its rows of the later sets (`fit_later`), which the
# fit set cannot tell apart; `fit_profiles` keeps them as given and fits the knob for the others
# without their rows. llama.cpp off Apple: its cost per MoE layer (CUDA, ROCm and Vulkan launch an
# MoE layer as a dense one, an indexed matmul per projection behind a fused top-k, where vLLM's
# fused-MoE path sorts tokens by expert first; one value for its two profiles, `OWN_MOE_LAYER`) and
# its expert padding (per backend); on Radeon, its dequantising matmuls' share of MFU too. Metal
# keeps the shared cost per MoE layer: its own, 105 µs, did not predict a left-out source better;
# it reads at its own MBU (its decode rows of the later sets want 0.80 where llama.cpp's elsewhere
# want 0.95; the fit set has four).
LATER_FITTED: dict[str, tuple[str, ...]] = {
    "llama.cpp": ("moe_layer_overhead_s", "expert_padding_tokens"),
    "llama.cpp-metal": ("mbu",),
    "llama.cpp-radeon": ("moe_layer_overhead_s", "expert_padding_tokens", "dequant_compute"),
}
OWN_MOE_LAYER = tuple(f for f, knobs in LATER_FITTED.items() if "moe_layer_overhead_s" in knobs)
SWEEPS = 2
# A row more than 2× off counts as 2× off: the fit must not bend the engines' costs towards
# a broken build or a setup the row does not describe (truncated L1, robust to outliers).
OUTLIER_LOG = math.log(2)


def ideal_profiles() -> dict[str, EngineProfile]:
    """Every engine as the lesson's ideal machine: MBU = MFU = 1, nothing added, nothing lost."""
    ideal = dict.fromkeys(("scheduler_overhead_s", *START_COSTS), 0.0)
    ideal.update(mbu=1.0, mfu=1.0, dequant_bandwidth=1.0, dequant_compute=1.0, unpack_flop_per_weight=0.0)
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
    later: bool = False,
) -> dict[str, EngineProfile]:
    """Coordinate descent of `knobs`, each set to the same value in every one of `families`.

    Each knob: every 5th grid value, then every value within 4 steps of the best of those;
    a knob moves only when the loss strictly improves (a knob the rows cannot see stays).
    Unless fitting the later sets' costs (`later`), a knob a family holds of its own
    (`LATER_FITTED`) is neither moved in that family nor judged on its rows.
    """

    def owns(family: str, knob: str) -> bool:
        return not later and knob in LATER_FITTED.get(family, ())

    for _ in range(SWEEPS):
        for knob in knobs:
            members = tuple(f for f in families if not owns(f, knob))
            rows = [m for m in measurements if not owns(m.profile, knob)]
            if not members or not rows:
                continue
            grid = OWN_GRIDS.get(members[0], {}).get(knob, GRIDS[knob]) if len(members) == 1 else GRIDS[knob]

            def with_value(
                value: float, knob: str = knob, members: tuple[str, ...] = members, base: dict = profiles
            ) -> dict[str, EngineProfile]:
                return {**base, **{f: replace(base[f], **{knob: value}) for f in members}}

            def score(i: int, grid: list[float] = grid, rows: list[Measurement] = rows) -> float:
                return source_weighted_loss(rows, with_value(grid[i]))

            pick = best_on_grid(len(grid), score)
            if score(pick) < source_weighted_loss(rows, profiles) - 1e-12:
                profiles = with_value(grid[pick])
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
    "unpack_flop_per_weight": 0.0,
}


def start_profiles() -> dict[str, EngineProfile]:
    """The shipped engines with every cost `calibrate --fit` moves reset to START_COSTS.

    vLLM and TensorRT-LLM keep the costs the load measurements gave them (and SGLang its
    server path, which none of its fit rows measures).
    """
    starts = {}
    for family, profile in ENGINES.items():
        moved = (
            set(FITTED[family])
            | set(SHARED)
            | set(SHARED_UNPACKING)
            | (set(FITTED["typical"]) if family not in LOAD_FITTED else set())
        )
        moved -= set(LATER_FITTED.get(family, ()))  # fitted on the later sets, not here
        costs = {k: START_COSTS[k] for k in moved}
        starts[family] = replace(profile, scheduler_overhead_s=0.0, **costs)  # type: ignore[arg-type]
    return starts


def fit_profiles(
    measurements: list[Measurement], start: Mapping[str, EngineProfile] | None = None
) -> dict[str, EngineProfile]:
    """Every family's costs on its own fit rows, then the shared MoE cost on every MoE row.

    `typical` is fitted first; the families without load measurements start from its costs
    (a profile in `SHARES_COSTS_OF` is fitted with its family, on both's rows, to one value);
    then the MoE costs (`SHARED`), one value for every engine, on all MoE rows with each
    row's own engine (a profile's own costs, `LATER_FITTED`, kept as given); then each family
    once more with them in place.
    """
    profiles = dict(start or start_profiles())
    by_family: dict[str, list[Measurement]] = defaultdict(list)
    for m in measurements:
        by_family[SHARES_COSTS_OF.get(m.profile, m.profile)].append(m)
    moe = [m for m in measurements if m.is_moe]
    dequantised = [m for m in measurements if m.scenario.precision.dequantises]
    for _ in range(2):
        profiles = _descend(by_family["typical"], profiles, ("typical",), FITTED["typical"])
        profiles = _inherit_typical(profiles)
        for family, rows in by_family.items():
            if family != "typical":
                members = (family, *(p for p, f in SHARES_COSTS_OF.items() if f == family and p in profiles))
                profiles = _descend(rows, profiles, members, FITTED[family])
        profiles = _descend(moe, profiles, tuple(profiles), SHARED)
        profiles = _descend(dequantised, profiles, tuple(profiles), SHARED_UNPACKING)
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


# The later sets hold what the fit set cannot tell apart for llama.cpp's backends (`LATER_FITTED`):
# every set up to fresh14 (all of them, since fresh14 judged the cost per MoE layer). The next
# set gathered judges them.
LATER_FITTED_ON = SETS[: SETS.index("fresh14") + 1]
# The expert padding is fitted robustly (a median of the sources' medians: one source's broken
# ROCm build, 25-50× off, must not move it).
PADDING_GRID = [10.0 * x for x in range(0, 101)]  # 0-1,000 tokens


def padding_rows(measurements: Iterable[Measurement], family: str = "llama.cpp") -> list[Measurement]:
    """The rows that see a backend's padding: a mixture of experts' prefill (TTFT) on it."""
    return [m for m in measurements if m.profile == family and m.is_moe and m.metric == "ttft_ms"]


def estimated_with_padding(measurement: Measurement, padding_tokens: float) -> float:
    """The row's estimate on its shipped profile with the expert padding set to `padding_tokens`."""
    profile = replace(ENGINES[measurement.profile], expert_padding_tokens=padding_tokens)
    return predicted(estimate(scenario_on(measurement, profile)), measurement.metric)


def own_padding_tokens(measurement: Measurement) -> float:
    """The grid's padding at which the row's estimate comes closest to what it measured."""

    def log_error(padding: float) -> float:
        return abs(math.log(estimated_with_padding(measurement, padding) / measurement.value))

    return min(PADDING_GRID, key=log_error)


def fit_expert_padding(measurements: Iterable[Measurement], family: str = "llama.cpp") -> float:
    """The median over sources of each source's median own padding (`own_padding_tokens`), on the grid."""
    by_source: dict[str, list[float]] = defaultdict(list)
    for m in padding_rows(measurements, family):
        by_source[m.source_id].append(own_padding_tokens(m))
    return statistics.median_low([statistics.median_low(values) for values in by_source.values()])


def own_moe_rows(measurements: Iterable[Measurement], families: tuple[str, ...] = OWN_MOE_LAYER) -> list[Measurement]:
    """The rows that see a cost per MoE layer: a mixture of experts decoding on one of `families`."""
    return [m for m in measurements if m.profile in families and m.is_moe and m.metric != "ttft_ms"]


def fit_own_moe_layer_overhead(measurements: Iterable[Measurement], families: tuple[str, ...] = OWN_MOE_LAYER) -> float:
    """One cost per MoE layer for `families`, minimising `source_weighted_loss` on their MoE decode rows."""
    return _fit_later_knob(own_moe_rows(measurements, families), families, "moe_layer_overhead_s", 0.0)


def radeon_dequant_rows(measurements: Iterable[Measurement]) -> list[Measurement]:
    """The rows that see Radeon's dequantising matmuls alone: a dense model's prefill on llama.cpp-radeon."""
    return [m for m in measurements if m.profile == "llama.cpp-radeon" and not m.is_moe and m.metric == "ttft_ms"]


def fit_radeon_dequant_compute(measurements: Iterable[Measurement]) -> float:
    """llama.cpp-radeon's dequantising share of MFU minimising `source_weighted_loss` on its dense prefill rows."""
    return _fit_later_knob(radeon_dequant_rows(measurements), ("llama.cpp-radeon",), "dequant_compute", 1.0)


def metal_decode_rows(measurements: Iterable[Measurement]) -> list[Measurement]:
    """The rows that see llama.cpp's Metal kernels read: its decode (TPOT, throughput) on Apple silicon."""
    return [m for m in measurements if m.profile == "llama.cpp-metal" and m.metric != "ttft_ms"]


def fit_metal_mbu(measurements: Iterable[Measurement]) -> float:
    """llama.cpp-metal's MBU minimising `source_weighted_loss` on its decode rows, from the neutral 0.85."""
    return _fit_later_knob(metal_decode_rows(measurements), ("llama.cpp-metal",), "mbu", 0.85)


def _fit_later_knob(rows: list[Measurement], families: tuple[str, ...], knob: str, start: float) -> float:
    """One value of `knob` for `families` minimising `source_weighted_loss` on `rows`, every other
    cost as shipped; the descent starts from `start` (no cost, full share), so the value does not
    depend on the one it replaces."""
    profiles = {**ENGINES, **{f: replace(ENGINES[f], **{knob: start}) for f in families}}  # type: ignore[arg-type]
    return float(getattr(_descend(rows, profiles, families, (knob,), later=True)[families[0]], knob))


def fit_later(measurements: Iterable[Measurement]) -> dict[str, dict[str, float]]:
    """Every `LATER_FITTED` cost on `measurements`, each with the shipped others in place.

    In the order each is seen alone: the cost per MoE layer on decode, Radeon's dequantising
    share on dense prefill, each backend's padding on MoE prefill, Metal's MBU on its decode.
    """
    rows = list(measurements)
    moe_layer = fit_own_moe_layer_overhead(rows)
    return {
        "llama.cpp": {"moe_layer_overhead_s": moe_layer, "expert_padding_tokens": fit_expert_padding(rows)},
        "llama.cpp-metal": {"mbu": fit_metal_mbu(rows)},
        "llama.cpp-radeon": {
            "moe_layer_overhead_s": moe_layer,
            "expert_padding_tokens": fit_expert_padding(rows, "llama.cpp-radeon"),
            "dequant_compute": fit_radeon_dequant_compute(rows),
        },
    }
