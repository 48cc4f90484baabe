"""The deployment search's half that no traffic changes: which candidates fit, stream and meet TTFT, and how fast.

Steps 1-3 of `core.plan` for every candidate (`core.candidates`): memory (the concurrency
that fits, capped by the plan), the frontier (closed loops over a concurrency grid, when
asked), the lone request against the tokens/s target, and the open loop's goodput — the
largest Poisson rate per replica meeting the targets — with the replica's capacity.

None of it depends on replies a day, the peak-to-average ratio or the floor of replicas:
a `Search` is made once per model, lengths, targets and candidates, and `core.plan.plan`
sizes and prices the fleet from it for any traffic (a change of replies a day costs one
open-loop evaluation per candidate, not a search).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.candidates import Setup, setups, split_problem
from core.closed_loop import ClosedLoop, closed_loop
from core.lengths import RequestLengths
from core.memory import kv_cache_bytes, weight_bytes
from core.open_loop import OpenLoopModel
from core.plan_options import Frontier, Option, Problem
from core.plan_spec import Plan
from core.pricing import Pricing
from core.replica import Replica
from core.scenario import Scenario
from core.units import BYTES_PER_GB, S_PER_HOUR, TOKENS_PER_MILLION

GRID_STEP = 2 ** (1 / 4)  # the concurrency grid: 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 16, 19, ...
_TRAFFIC_DEFAULTS = Plan()  # the spec's traffic fields a search ignores, at their defaults


@dataclass(frozen=True, slots=True)
class Searched:
    """One candidate searched: its outcome so far, and for one that meets the targets its open loop.

    `option` carries a problem and its reason, or (problem None) what fits, the frontier if
    computed and the goodput (`requests_per_s_per_replica`); the fleet fields are the plan's.
    """

    option: Option
    model: OpenLoopModel | None = None  # the replica's open loop, built once, for the plan's points
    capacity_per_s: float = 0.0  # the largest rate with a steady state (sets the points' utilisation)


@dataclass(frozen=True, slots=True)
class Search:
    """Every candidate for one model, lengths, targets and candidate lists, in the candidates' order."""

    scenario: Scenario  # as searched: the pricing is at its defaults (`traffic_free`)
    spec: Plan  # as searched: the peak ratio and floor are at their defaults
    lengths: RequestLengths
    candidates: tuple[Searched, ...]

    def serves(self, scenario: Scenario, spec: Plan, lengths: RequestLengths) -> bool:
        """Whether a plan for these inputs may use this search: the same, traffic and prices aside."""
        return lengths == self.lengths and traffic_free(scenario, spec) == (self.scenario, self.spec)


def traffic_free(scenario: Scenario, spec: Plan) -> tuple[Scenario, Plan]:
    """The inputs with what a search ignores at its defaults: the pricing, the peak ratio and the floor.

    Equal results for two scenarios that differ only in replies a day (or prices) mean one
    search serves both: the key a cache of searches uses.
    """
    return replace(scenario, pricing=Pricing()), replace(
        spec, peak_to_average=_TRAFFIC_DEFAULTS.peak_to_average, min_replicas=_TRAFFIC_DEFAULTS.min_replicas
    )


def search(scenario: Scenario, spec: Plan, lengths: RequestLengths | None = None, frontiers: bool = True) -> Search:
    """Steps 1-3 for every candidate of `spec` on `scenario`'s model and engine.

    `lengths`: the workload's prompt and reply, fixed unless given. `frontiers=False` skips
    the closed loops over the concurrency grid (half a search's time; `core.plan.frontier`
    computes one on demand).
    """
    workload = scenario.workload
    lengths = lengths or RequestLengths(workload.prompt_tokens, workload.output_tokens)
    bare, targets = traffic_free(scenario, spec)
    candidates = tuple(_searched(bare, targets, lengths, setup, frontiers) for setup in setups(bare, targets))
    return Search(bare, targets, lengths, candidates)


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


def _searched(scenario: Scenario, spec: Plan, lengths: RequestLengths, setup: Setup, frontiers: bool) -> Searched:
    """One candidate through steps 1-3."""
    split = split_problem(scenario.model, setup.gpus_per_replica)
    if split is not None:
        return Searched(Option(setup, Problem.CANNOT_SPLIT, split))
    replica = replica_of(scenario, setup)
    fits = replica.max_concurrency_that_fits(lengths)
    if fits == 0:
        return Searched(Option(setup, Problem.DOES_NOT_FIT, fit_problem(replica, lengths)))
    cap = min(fits, spec.max_concurrency)
    # The frontier's closed loops are half a search's time; without them only the lone request is needed.
    closed = closed_loop(replica, lengths, concurrency_grid(cap) if frontiers else np.array([1.0]))
    found = Option(
        setup,
        None,
        "",
        fits,
        frontier_of(setup, closed, spec.gpu_usd_per_hour(setup.gpu)) if frontiers else None,
        max_running_per_replica=cap,
    )
    alone = float(closed.tokens_per_s_per_user[0])
    if alone < spec.tokens_per_s_per_user:
        reason = f"streams {alone:.2f} tokens/s even alone, below the {spec.tokens_per_s_per_user:g} asked"
        return Searched(replace(found, problem=Problem.TOO_SLOW, reason=reason))
    if setup.gpu.price_usd_per_hour is None:
        # Nothing to rank it by: its frontier stands, the open-loop sizing is not spent on it.
        reason = f"no rental price for {setup.gpu.name}: give it one (as the scenario's GPU) to size and cost a fleet"
        return Searched(replace(found, problem=Problem.NO_PRICE, reason=reason))
    engine = scenario.engine
    model = OpenLoopModel.build(replica_of(scenario, setup, cap if cap < engine.max_sequences else None), lengths)
    goodput = model.goodput_rate_per_s(spec.ttft_target_s, spec.tpot_target_s, spec.ttft_quantile)
    if goodput is None:
        return Searched(replace(found, problem=Problem.MISSES_TTFT, reason=_lone_miss(spec, model)))
    return Searched(replace(found, requests_per_s_per_replica=goodput), model, model.capacity_per_s(at_least=goodput))


def fit_problem(replica: Replica, lengths: RequestLengths) -> str:
    """Why not even one request fits: the weights fill what the engine may use, or one KV cache is too big.

    Example: Llama 3.1 70B in 8 bits (70.6 GB) on one H100 under vLLM: 80 × 0.9 − 3.2 = 68.8 GB usable.
    """
    engine, n = replica.engine, replica.gpu_count
    usable = (replica.gpu.memory_bytes * engine.memory_utilization - engine.reserved_bytes_per_gpu) * n
    weights = weight_bytes(replica.model, replica.precision)
    if replica.kv_budget_bytes <= 0:
        return (
            f"{weights / BYTES_PER_GB:,.1f} GB of weights fill the {usable / BYTES_PER_GB:,.1f} GB "
            f"{engine.name} may use on {n} × {replica.gpu.memory_bytes / BYTES_PER_GB:,.0f} GB"
        )
    tokens = lengths.mean_tokens_reserved if engine.reserves_full_sequence else lengths.mean_tokens_held
    one = float(kv_cache_bytes(replica.model, replica.precision, tokens))
    return (
        f"one request's KV cache ({one / BYTES_PER_GB:,.2f} GB) does not fit in the "
        f"{replica.kv_budget_bytes / BYTES_PER_GB:,.2f} GB left beside the weights"
    )


def _lone_miss(spec: Plan, model: OpenLoopModel) -> str:
    """What a lone request misses at a trickle: the TTFT (its prefill) or, rarely, the mean TPOT."""
    alone = model.point(1e-9 * model.slot_limit_upper_per_s())
    ttft = float(alone.ttft_quantile_field(spec.ttft_quantile))
    if ttft > spec.ttft_target_s:
        return (
            f"p{spec.ttft_percentile} TTFT is {ttft * 1e3:,.0f} ms even alone, "
            f"above the {spec.ttft_target_s * 1e3:,.0f} ms asked"
        )
    return f"streams {float(alone.tokens_per_s_per_user):.2f} tokens/s even alone under Poisson arrivals"


def frontier_of(setup: Setup, closed: ClosedLoop, price: float | None) -> Frontier:
    """The closed loop over the grid: InferenceX's axes, and the same in $ per million output tokens.

    `price`: one GPU-hour as the plan bills it (`Plan.gpu_usd_per_hour`); None: no dollars.
    """
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
