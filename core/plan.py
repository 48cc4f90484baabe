"""The deployment search: which GPUs, how many, at what precision — and the bill beside the API's.

For every candidate (`core.candidates`: GPU × GPUs per replica × weight precision, on the
scenario's engine and efficiency):

1. Memory: the most requests whose KV cache fits beside the weights; none → "does not fit".
   The replica runs at most C = min(that, the plan's cap) at once (its max_num_seqs).
2. Frontier: the closed loop over a geometric grid of concurrencies up to C (InferenceX's
   chart). A lone request already slower than the tokens/s target → "too slow to stream".
3. Rate: the open loop's goodput — the largest Poisson arrival rate per replica at which
   TTFT at the plan's percentile (queue included) and the mean TPOT meet the targets; the
   requests in flight there (rate × end-to-end latency) are the most concurrency a replica
   holds within the targets. A lone request already misses → "misses TTFT".
4. Fleet: replicas at peak = max(floor, ⌈peak rate / goodput⌉); at the peak each replica then
   takes peak / replicas, where the open loop gives the reported TTFT, TPOT and throughput.
5. Money: the peak fleet all month; the fleet following the daily curve (`core.daily_curve`);
   $ per million output tokens at the peak; and the API's bill for the same replies.

Nothing in a candidate's model depends on the targets (the cap, the rates searched), and each
check only gets easier as a target loosens, so a looser target never costs more. Candidates
meeting every target (and with a price) are ranked by the autoscaled monthly cost, then the
peak-sized one, the GPUs and the candidates' order: a plan is deterministic. The others stay
in the result with their reason. Lengths are the workload's, varied as the `RequestLengths`
given say; the load model assumes no prefix-cache hits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from core.arraymath import Quantity
from core.billing import SECONDS_PER_DAY, reply_cost
from core.candidates import Setup, setups, split_problem
from core.closed_loop import ClosedLoop, closed_loop
from core.daily_curve import DailyCurve, peak_replicas
from core.lengths import RequestLengths
from core.memory import kv_cache_bytes, weight_bytes
from core.open_loop import OpenLoopModel
from core.plan_options import Frontier, Option, Problem
from core.plan_spec import Plan
from core.replica import Replica
from core.scenario import Scenario
from core.units import BYTES_PER_GB, S_PER_HOUR, TOKENS_PER_MILLION

GRID_STEP = 2 ** (1 / 4)  # the concurrency grid: 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 16, 19, ...


@dataclass(frozen=True, slots=True)
class CapacityPlan:
    """Every candidate's outcome: those meeting the targets first (cheapest first), then the rest."""

    scenario: Scenario
    spec: Plan
    lengths: RequestLengths
    mean_requests_per_s: float
    peak_requests_per_s: float
    api_cost_per_reply_usd: float
    api_monthly_usd: float
    options: tuple[Option, ...]

    @property
    def ranked(self) -> tuple[Option, ...]:
        return tuple(o for o in self.options if o.meets_targets)

    @property
    def failures(self) -> tuple[Option, ...]:
        return tuple(o for o in self.options if not o.meets_targets)

    @property
    def best(self) -> Option | None:
        """The cheapest candidate that meets every target, or None."""
        return self.ranked[0] if self.ranked else None


def monthly_usd_at(result: CapacityPlan, replies_per_day: Quantity) -> np.ndarray:
    """The cheapest ranked candidate's autoscaled monthly cost at each traffic level; NaN where none ranks.

    A candidate's goodput per replica depends on its targets, never on the traffic (each
    replica takes at most its goodput however many there are), so the plan's ranked
    candidates price any traffic: replica-months × the autoscaler's mean replicas, at the
    plan's peak ratio and floor, the cheapest at each level. At the plan's own traffic this
    is its best candidate's `monthly_cost_usd`.
    """
    spec, pricing = result.spec, result.scenario.pricing
    rates = np.asarray(replies_per_day, dtype=float) / SECONDS_PER_DAY
    curve = DailyCurve(spec.peak_to_average)
    month_h = pricing.days_per_month * SECONDS_PER_DAY / S_PER_HOUR
    ranked = result.ranked
    if not ranked:
        return np.full(rates.shape, np.nan)
    # Every candidate at every traffic level in one call: (candidates, levels) replicas on average.
    usd = np.array([(o.setup.gpu.price_usd_per_hour or 0.0) * o.setup.gpus_per_replica * month_h for o in ranked])
    per = np.array([o.requests_per_s_per_replica or math.inf for o in ranked])
    shape = (len(ranked),) + (1,) * rates.ndim
    replicas = curve.mean_replicas(rates, per.reshape(shape), spec.min_replicas)
    return np.asarray(np.min(usd.reshape(shape) * replicas, axis=0))


def concurrency_grid(cap: int) -> np.ndarray:
    """Whole concurrencies growing by 2^(1/4) from 1, and `cap` itself. Example: 10 → 1..8, 10."""
    steps = np.floor(np.log(max(cap, 1)) / np.log(GRID_STEP)) + 1
    grid = np.unique(np.round(GRID_STEP ** np.arange(steps)))
    return np.unique(np.append(grid[grid <= cap], cap)).astype(float)


def plan(scenario: Scenario, spec: Plan, lengths: RequestLengths | None = None, frontiers: bool = True) -> CapacityPlan:
    """Search every candidate for `scenario`'s model, traffic and prices under `spec`'s targets.

    `lengths`: the workload's prompt and reply, fixed unless given (`Load.lengths` varies them).
    Example: tests/core/test_plan.py — Llama 3.1 70B at 2,000,000 replies a day.
    """
    workload, pricing = scenario.workload, scenario.pricing
    lengths = lengths or RequestLengths(workload.prompt_tokens, workload.output_tokens)
    mean_rate = pricing.replies_per_day / SECONDS_PER_DAY
    cached = min(workload.cached_prompt_tokens, lengths.mean_prompt_tokens)
    per_reply = reply_cost(pricing, lengths.mean_prompt_tokens, lengths.mean_output_tokens, cached).total_usd
    options = [_option(scenario, spec, lengths, setup, mean_rate, frontiers) for setup in setups(scenario, spec)]
    return CapacityPlan(
        scenario=scenario,
        spec=spec,
        lengths=lengths,
        mean_requests_per_s=mean_rate,
        peak_requests_per_s=mean_rate * spec.peak_to_average,
        api_cost_per_reply_usd=per_reply,
        api_monthly_usd=per_reply * pricing.replies_per_day * pricing.days_per_month,
        options=_ranked(options),
    )


def _ranked(options: list[Option]) -> tuple[Option, ...]:
    order = {id(o): i for i, o in enumerate(options)}
    meeting = sorted(
        (o for o in options if o.meets_targets),
        key=lambda o: (o.monthly_cost_usd, o.monthly_cost_peak_usd, o.total_gpus_at_peak, order[id(o)]),
    )
    return (*meeting, *(o for o in options if not o.meets_targets))


def _replica(scenario: Scenario, setup: Setup, most: int | None = None) -> Replica:
    engine = scenario.engine if most is None else replace(scenario.engine, max_sequences=most)
    return Replica(
        scenario.model, setup.precision, setup.gpu, setup.gpus_per_replica, engine, efficiency=scenario.efficiency
    )


def _option(
    scenario: Scenario, spec: Plan, lengths: RequestLengths, setup: Setup, mean_rate: float, frontiers: bool = True
) -> Option:
    """One candidate through steps 1-5 of the module docstring."""
    split = split_problem(scenario.model, setup.gpus_per_replica)
    if split is not None:
        return Option(setup, Problem.CANNOT_SPLIT, split)
    replica = _replica(scenario, setup)
    fits = replica.max_concurrency_that_fits(lengths)
    if fits == 0:
        return Option(setup, Problem.DOES_NOT_FIT, fit_problem(replica, lengths))
    cap = min(fits, spec.max_concurrency)
    # The frontier's closed loops are half a plan's time; without them only the lone request is needed.
    closed = closed_loop(replica, lengths, concurrency_grid(cap) if frontiers else np.array([1.0]))
    found = Option(setup, None, "", fits, _frontier(setup, closed) if frontiers else None, max_running_per_replica=cap)
    alone = float(closed.tokens_per_s_per_user[0])
    if alone < spec.tokens_per_s_per_user:
        reason = f"streams {alone:.2f} tokens/s even alone, below the {spec.tokens_per_s_per_user:g} asked"
        return replace(found, problem=Problem.TOO_SLOW, reason=reason)
    if setup.gpu.price_usd_per_hour is None:
        # Nothing to rank it by: its frontier stands, the open-loop sizing is not spent on it.
        reason = f"no rental price for {setup.gpu.name}: give it one (as the scenario's GPU) to size and cost a fleet"
        return replace(found, problem=Problem.NO_PRICE, reason=reason)
    return _sized(scenario, spec, lengths, found, mean_rate)


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


def _sized(scenario: Scenario, spec: Plan, lengths: RequestLengths, found: Option, mean_rate: float) -> Option:
    """Steps 3-5: the goodput, the fleet at the peak and what it costs."""
    setup, cap = found.setup, found.max_running_per_replica or 1
    engine = scenario.engine
    model = OpenLoopModel.build(_replica(scenario, setup, cap if cap < engine.max_sequences else None), lengths)
    goodput = model.goodput_rate_per_s(spec.ttft_target_s, spec.tpot_target_s, spec.ttft_quantile)
    if goodput is None:
        return replace(found, problem=Problem.MISSES_TTFT, reason=_lone_miss(spec, model))
    capacity = model.capacity_per_s(at_least=goodput)
    replicas = peak_replicas(mean_rate * spec.peak_to_average, goodput, spec.min_replicas)
    # No traffic (or a floor of 0 replicas): the point is a trickle, where nothing waits.
    per_replica = mean_rate * spec.peak_to_average / replicas if replicas and mean_rate else 1e-9 * goodput
    edge, at_peak = model.points((goodput, per_replica), capacity)
    sized = replace(
        found,
        requests_per_s_per_replica=goodput,
        concurrency_per_replica=float(edge.mean_in_flight),
        replicas_at_peak=replicas,
        mean_replicas=DailyCurve(spec.peak_to_average).mean_replicas(mean_rate, goodput, spec.min_replicas),
        point=at_peak,
    )
    return _priced(scenario, sized, setup.gpu.price_usd_per_hour or 0.0)


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


def _priced(scenario: Scenario, sized: Option, price: float) -> Option:
    """Monthly costs (the peak fleet all month; following the daily curve) and $ per million output tokens."""
    setup = sized.setup
    month_h = scenario.pricing.days_per_month * SECONDS_PER_DAY / S_PER_HOUR
    per_replica_usd = price * setup.gpus_per_replica * month_h
    per_gpu = sized.output_tokens_per_s_per_gpu or 0.0
    return replace(
        sized,
        monthly_cost_peak_usd=per_replica_usd * (sized.replicas_at_peak or 0),
        monthly_cost_usd=per_replica_usd * (sized.mean_replicas or 0.0),
        usd_per_million_output_tokens=price / (per_gpu * S_PER_HOUR) * TOKENS_PER_MILLION if per_gpu else math.inf,
    )


def frontier(result: CapacityPlan, option: Option) -> Frontier | None:
    """An option's frontier, computed now when the plan was searched without them (`frontiers=False`).

    The same closed loop over the same grid as the search draws: a page that shows a few
    candidates' frontiers need not pay for every candidate's. None for a candidate that does
    not fit (or cannot be split), which has no frontier either way.
    """
    if option.frontier is not None or option.max_running_per_replica is None:
        return option.frontier
    replica = _replica(result.scenario, option.setup)
    closed = closed_loop(replica, result.lengths, concurrency_grid(option.max_running_per_replica))
    return _frontier(option.setup, closed)


def _frontier(setup: Setup, closed: ClosedLoop) -> Frontier:
    """The closed loop over the grid: InferenceX's axes, and the same in $ per million output tokens."""
    per_gpu = np.asarray(closed.output_tokens_per_s_per_gpu, dtype=float)
    price = setup.gpu.price_usd_per_hour
    return Frontier(
        concurrency=tuple(int(c) for c in np.asarray(closed.concurrency)),
        output_tokens_per_s_per_gpu=tuple(float(x) for x in per_gpu),
        tokens_per_s_per_user=tuple(float(x) for x in np.asarray(closed.tokens_per_s_per_user)),
        ttft_s=tuple(float(x) for x in np.asarray(closed.ttft_s)),
        usd_per_million_output_tokens=None
        if price is None
        else tuple(float(price / (x * S_PER_HOUR) * TOKENS_PER_MILLION) for x in per_gpu),
    )
