"""What each candidate deployment can do before any target is asked: the search's first stage.

For every candidate (`core.candidates`: GPU × GPUs per replica × weight precision, on the
scenario's engine and efficiency): whether the model splits over its GPUs, the concurrency
whose KV cache fits (capped by the plan's `max_num_seqs`), the lone request's speed, the
frontier (closed loops over a concurrency grid, when asked) and, for a GPU with a price, the
replica's open loop and its capacity (the largest arrival rate with a steady state), built
the first time a search needs them.

None of it depends on the targets or the traffic: `Capabilities` are made once per model,
lengths and candidate lists, and `core.plan_search.search` finds each candidate's goodput
for any targets from them (a change of TTFT or tokens/s target searches rates only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from core.candidates import Setup, expert_split, setups, split_problem
from core.closed_loop import ClosedLoop, closed_loops
from core.iteration import iteration
from core.lengths import RequestLengths
from core.open_loop import OpenLoopModel
from core.open_loop_model import capacities
from core.plan_options import Frontier, Option, Problem
from core.plan_spec import Plan
from core.precision import Precision
from core.pricing import Pricing
from core.replica import Replica, fit_problem
from core.scenario import Scenario
from core.units import S_PER_HOUR, TOKENS_PER_MILLION
from core.workload import Workload

GRID_STEP = 2 ** (1 / 4)  # the concurrency grid: 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 16, 19, ...
_DEFAULTS = Plan()
# The spec's fields a stage ignores, set to their defaults in its key: what only the fleet and
# its bill read (peak ratio, floor, GPU discount) for a search, and the targets too for the
# capabilities. A new Plan field a stage reads must not be listed here.
FLEET_FIELDS = ("peak_to_average", "min_replicas", "gpu_discount")
TARGET_FIELDS = ("ttft_target_s", "ttft_percentile", "tokens_per_s_per_user")


@dataclass(frozen=True, slots=True)
class Capability:
    """One candidate before any target: a problem (cannot split, does not fit), or what it can do.

    `option` carries the problem and its reason, or (problem None) what fits, the replica's
    cap and the frontier if computed (its dollars at the on-demand price: the plan applies its
    discount). `replica` is None without a rental price (nothing to size).
    """

    option: Option
    alone_tokens_per_s: float = 0.0  # one request alone: 1 / its TPOT
    replica: Replica | None = None  # as the plan runs it: at most the cap in flight
    lengths: RequestLengths | None = None
    grid_replica: Replica | None = None  # the frontier's closed loops run on (what fits; None: it does not)
    # (model, capacity) once built. Capabilities are shared by every session (a resource cache);
    # a plain slot set once rather than functools.cached_property, whose lock in Python 3.11 is one
    # for all instances and would make every session's build wait for any other's.
    _built: tuple[OpenLoopModel, float] | None = field(default=None, init=False, repr=False, compare=False)
    _frontier: Frontier | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def frontier(self) -> Frontier | None:
        """The closed loop over the concurrency grid, at the on-demand price; None if nothing fits.

        The option's when evaluated with frontiers, else built on first use and kept: a page
        draws a few candidates' frontiers, and a search at new targets draws the same ones.
        """
        if self.option.frontier is not None or self.grid_replica is None or self.lengths is None:
            return self.option.frontier
        if self._frontier is None:
            build_frontiers((self,))
        return self._frontier


def build_frontiers(capable: Sequence[Capability]) -> None:
    """Build and keep the frontiers of those of `capable` that have none yet: their closed loops in one pass.

    A page draws a few candidates' frontiers, and at targets no candidate meets it looks at every
    candidate's (to draw each GPU's fastest): one pass (`closed_loops`) rather than one each.
    """
    groups: dict[RequestLengths, list[tuple[Capability, Replica, np.ndarray]]] = {}
    for c in capable:
        cap = c.option.max_running_per_replica
        if c.option.frontier is None and c._frontier is None and c.grid_replica and c.lengths and cap:
            groups.setdefault(c.lengths, []).append((c, c.grid_replica, concurrency_grid(cap)))
    for lengths, group in groups.items():
        loops = closed_loops([(replica, grid) for _, replica, grid in group], lengths)
        for (c, _, _), closed in zip(group, loops, strict=True):
            object.__setattr__(c, "_frontier", frontier_of(c.option.setup, closed))


def open_loops(capable: Sequence[Capability]) -> list[tuple[OpenLoopModel, float]]:
    """Each capability's (open loop, capacity): built on first use and kept, those missing built together.

    A candidate too slow for a search's tokens/s target never pays for one, and a search at
    other targets reuses what an earlier one built; the capacities are found in step
    (`open_loop_model.capacities`). Two sessions asking at once may both build one; the results
    are equal. ValueError for a candidate without a replica (no price: nothing to size).
    """
    missing = [c for c in capable if c._built is None]
    for c in missing:
        if c.replica is None or c.lengths is None:
            raise ValueError(f"{c.option.setup.gpu.name} has no open loop: it is not sized")
    models = [OpenLoopModel.build(c.replica, c.lengths) for c in missing if c.replica and c.lengths]
    for c, model, capacity in zip(missing, models, capacities(models), strict=True):
        object.__setattr__(c, "_built", (model, capacity))
    return [c._built for c in capable if c._built is not None]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Every candidate's capability for one model, lengths and candidate lists, in the candidates' order."""

    scenario: Scenario  # as evaluated: what no stage reads at its defaults (`without`)
    spec: Plan  # as evaluated: targets, peak ratio, floor and discount at their defaults
    lengths: RequestLengths
    candidates: tuple[Capability, ...]

    def serves(self, scenario: Scenario, spec: Plan, lengths: RequestLengths) -> bool:
        """Whether a search for these inputs may use them: the same, targets, traffic and prices aside."""
        return lengths == self.lengths and without(scenario, spec, FLEET_FIELDS + TARGET_FIELDS) == (
            self.scenario,
            self.spec,
        )


def without(scenario: Scenario, spec: Plan, ignored: tuple[str, ...]) -> tuple[Scenario, Plan]:
    """The inputs with what no search stage reads at its defaults, and the spec's `ignored` fields too.

    A search reads the scenario's model, GPU, efficiency (engine) and KV-cache bits, the
    lengths it is given, and the spec's candidate lists and cap (and targets, unless ignored);
    never the pricing, the rest of the workload or the weights' precision (the candidates
    choose those), but for experts stored narrower than the rest, which a 4-bit candidate
    keeps (`candidates.expert_split`). Two inputs equal here get the same result from the
    stage: a cache's key.
    """
    kept = expert_split(scenario.precision) or Precision(kv_bits=scenario.precision.kv_bits)
    bare = replace(scenario, workload=Workload(), pricing=Pricing(), precision=kept)
    return bare, replace(spec, **{name: getattr(_DEFAULTS, name) for name in ignored})


def capabilities(
    scenario: Scenario, spec: Plan, lengths: RequestLengths | None = None, frontiers: bool = True
) -> Capabilities:
    """Every candidate of `spec` on `scenario`'s model and engine, before any target.

    `lengths`: the workload's prompt and reply, fixed unless given. `frontiers=False` skips
    the closed loops over the concurrency grid (`core.plan.frontier` computes one on demand).
    """
    lengths = lengths or RequestLengths.of(scenario.workload)
    bare, kept = without(scenario, spec, FLEET_FIELDS + TARGET_FIELDS)
    return Capabilities(bare, kept, lengths, _every_capability(bare, kept, lengths, frontiers))


def concurrency_grid(cap: int) -> np.ndarray:
    """Whole concurrencies growing by 2^(1/4) from 1, and `cap` itself. Example: 10 → 1..8, 10."""
    steps = np.floor(np.log(max(cap, 1)) / np.log(GRID_STEP)) + 1
    grid = np.unique(np.round(GRID_STEP ** np.arange(steps)))
    return np.unique(np.append(grid[grid <= cap], cap)).astype(float)


def replica_of(scenario: Scenario, setup: Setup, most: int | None = None) -> Replica:
    """The candidate's replica on the scenario's engine and efficiency; `most`: its max_num_seqs."""
    engine = scenario.engine if most is None else replace(scenario.engine, max_sequences=most)
    return Replica(
        scenario.model, setup.precision, setup.gpu, setup.gpus_per_replica, engine, efficiency=scenario.efficiency
    )


def _every_capability(
    scenario: Scenario, spec: Plan, lengths: RequestLengths, frontiers: bool
) -> tuple[Capability, ...]:
    """Each setup's capability, in the setups' order: the closed loops of all that fit in one pass."""
    found: list[Capability | None] = []
    fitting: list[tuple[int, Setup, Replica, int]] = []
    for setup in setups(scenario, spec):
        split = split_problem(scenario.model, setup.gpus_per_replica)
        if split is not None:
            found.append(Capability(Option(setup, Problem.CANNOT_SPLIT, split)))
            continue
        replica = replica_of(scenario, setup)
        fits = replica.max_concurrency_that_fits(lengths)
        if fits == 0:
            found.append(Capability(Option(setup, Problem.DOES_NOT_FIT, fit_problem(replica, lengths))))
        else:
            fitting.append((len(found), setup, replica, fits))
            found.append(None)
    # The frontier's closed loops are most of the time; without them only the lone request is needed,
    # whose time per token is one decode iteration of one sequence (the closed loop at C = 1, exactly).
    caps = [min(fits, spec.max_concurrency) for *_, fits in fitting]
    found_frontiers: list[Frontier | None]
    if frontiers:
        grids = [concurrency_grid(cap) for cap in caps]
        loops = closed_loops(
            [(replica, grid) for (_, _, replica, _), grid in zip(fitting, grids, strict=True)], lengths
        )
        alones = [float(closed.tokens_per_s_per_user[0]) for closed in loops]
        found_frontiers = [frontier_of(setup, closed) for (_, setup, _, _), closed in zip(fitting, loops, strict=True)]
    else:
        context = lengths.mean_decode_context_tokens
        alones = [1 / float(iteration(replica, 1.0, context).time_s) for _, _, replica, _ in fitting]
        found_frontiers = [None] * len(fitting)
    for (i, setup, replica, fits), cap, alone, frontier in zip(fitting, caps, alones, found_frontiers, strict=True):
        option = Option(setup, None, "", fits, frontier, max_running_per_replica=cap)
        if setup.gpu.price_usd_per_hour is None:
            # Nothing to rank it by: the open loop is not spent on it.
            found[i] = Capability(option, alone, lengths=lengths, grid_replica=replica)
        else:
            # Capped below the engine's own limit: the open loop's replica runs at most `cap` (else the same one).
            sized = replica_of(scenario, setup, cap) if cap < scenario.engine.max_sequences else replica
            found[i] = Capability(option, alone, sized, lengths, replica)
    return tuple(c for c in found if c is not None)


def frontier_of(setup: Setup, closed: ClosedLoop) -> Frontier:
    """The closed loop over the grid: InferenceX's axes, and the same in $ per million output tokens.

    The dollars at the GPU's on-demand price (the plan applies its discount, `core.plan._billed`);
    None for a GPU without a price.
    """
    price = setup.gpu.price_usd_per_hour
    per_gpu = np.asarray(closed.output_tokens_per_s_per_gpu, dtype=float)
    return Frontier(
        concurrency=tuple(int(c) for c in np.asarray(closed.concurrency)),
        output_tokens_per_s_per_gpu=tuple(float(x) for x in per_gpu),
        tokens_per_s_per_user=tuple(float(x) for x in np.asarray(closed.tokens_per_s_per_user)),
        ttft_s=tuple(float(x) for x in np.asarray(closed.ttft_s)),
        usd_per_million_output_tokens=None
        if price is None
        else tuple(float(price / (x * S_PER_HOUR) * TOKENS_PER_MILLION) for x in per_gpu),
    )
