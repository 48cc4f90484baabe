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

Three modules, each reading less: `core.plan_capability` does steps 1-2 without the targets
(what fits, the frontier, the lone request's speed, each replica's open loop); `core.plan_search`
checks them against the targets ("too slow to stream", "no price", "misses TTFT") and finds the
goodput of step 3; this module sizes and bills the fleet (the rest of step 3, 4-5) for the
traffic. `plan(..., searched=...)` reuses a search for another number of replies a day, peak
ratio, floor or GPU discount, and `search(..., capable=...)` the capabilities for other targets
(what a page caches); `frontiers` is unused when a search is given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from core.arraymath import Quantity
from core.billing import SECONDS_PER_DAY, mean_reply_cost_usd
from core.daily_curve import DailyCurve, peak_replicas
from core.lengths import RequestLengths
from core.open_loop_model import OpenLoopModel, stacked_points
from core.plan_capability import Capability, build_frontiers
from core.plan_options import Frontier, Option
from core.plan_search import Search, Searched, search
from core.plan_spec import Plan
from core.rate_search import TRICKLE
from core.scenario import Scenario
from core.units import S_PER_HOUR, TOKENS_PER_MILLION


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
    # The search it sized: each candidate's capability, whose frontier `frontier` builds once and keeps.
    search: Search = field(compare=False, repr=False)

    @property
    def api_usd_per_million_output_tokens(self) -> float:
        """The API's bill per reply (its prompt included) over the reply's mean output tokens, × 1e6: what the
        GPUs' dollars per million output tokens compare with. Example: $0.00125 a reply of 500 → $2.50."""
        return self.api_cost_per_reply_usd / self.lengths.mean_output_tokens * TOKENS_PER_MILLION

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
    usd = np.array([(spec.gpu_usd_per_hour(o.setup.gpu) or 0.0) * o.setup.gpus_per_replica * month_h for o in ranked])
    per = np.array([o.requests_per_s_per_replica or math.inf for o in ranked])
    shape = (len(ranked),) + (1,) * rates.ndim
    replicas = curve.mean_replicas(rates, per.reshape(shape), spec.min_replicas)
    return np.asarray(np.min(usd.reshape(shape) * replicas, axis=0))


def plan(
    scenario: Scenario,
    spec: Plan,
    lengths: RequestLengths | None = None,
    frontiers: bool = True,
    searched: Search | None = None,
) -> CapacityPlan:
    """Search every candidate for `scenario`'s model, traffic and prices under `spec`'s targets.

    `lengths`: the workload's prompt and reply, fixed unless given (`Load.lengths` varies them).
    `searched`: `core.plan_search.search` already run on these inputs, whatever their traffic
    (raises ValueError if it was for another model, lengths, targets or candidates).
    Example: tests/core/test_plan.py — Llama 3.1 70B at 2,000,000 replies a day.
    """
    workload, pricing = scenario.workload, scenario.pricing
    lengths = lengths or RequestLengths.of(workload)
    if searched is None:
        searched = search(scenario, spec, lengths, frontiers)
    elif not searched.serves(scenario, spec, lengths):
        raise ValueError("searched: that search was for another model, lengths, targets or candidates")
    mean_rate = pricing.replies_per_day / SECONDS_PER_DAY
    per_reply = mean_reply_cost_usd(pricing, lengths, workload.cached_prompt_tokens, workload.cache_write_tokens)
    options = [_billed(option, spec) for option in _fleets(scenario, spec, searched.candidates, mean_rate)]
    return CapacityPlan(
        scenario=scenario,
        spec=spec,
        lengths=lengths,
        mean_requests_per_s=mean_rate,
        peak_requests_per_s=mean_rate * spec.peak_to_average,
        api_cost_per_reply_usd=per_reply,
        api_monthly_usd=per_reply * pricing.replies_per_day * pricing.days_per_month,
        options=_ranked(options),
        search=searched,
    )


def _ranked(options: list[Option]) -> tuple[Option, ...]:
    order = {id(o): i for i, o in enumerate(options)}
    meeting = sorted(
        (o for o in options if o.meets_targets),
        key=lambda o: (o.monthly_cost_usd, o.monthly_cost_peak_usd, o.total_gpus_at_peak, order[id(o)]),
    )
    return (*meeting, *(o for o in options if not o.meets_targets))


def _fleets(scenario: Scenario, spec: Plan, candidates: tuple[Searched, ...], mean_rate: float) -> list[Option]:
    """Steps 4-5 for every candidate that meets the targets: the fleet at the peak and what it costs.

    Each needs its open loop at two rates (its goodput, and the peak's share of a replica):
    all of them in one pass (`open_loop_model.stacked_points`), the same numbers as one by one.
    """
    peak = mean_rate * spec.peak_to_average
    asked: list[tuple[OpenLoopModel, tuple[float, float], float]] = []
    sized: list[tuple[int, int, float]] = []  # (candidate, replicas at the peak, its goodput)
    for i, candidate in enumerate(candidates):
        goodput = candidate.option.requests_per_s_per_replica
        if candidate.model is None or goodput is None:
            continue  # a problem found by the search: nothing to size
        replicas = peak_replicas(peak, goodput, spec.min_replicas)
        # No traffic (or a floor of 0 replicas): the point is a trickle, where nothing waits.
        per_replica = peak / replicas if replicas and mean_rate else TRICKLE * goodput
        # The capacity is a root found to 1e-13 of the rate; the goodput met the targets, so it is steady.
        capacity = max(candidate.capacity_per_s, goodput * (1 + 1e-12))
        asked.append((candidate.model, (goodput, per_replica), capacity))
        sized.append((i, replicas, goodput))
    options = [candidate.option for candidate in candidates]
    curve = DailyCurve(spec.peak_to_average)
    for (i, replicas, goodput), (edge, at_peak) in zip(sized, stacked_points(asked), strict=True):
        found = options[i]
        fleet = replace(
            found,
            concurrency_per_replica=float(edge.mean_in_flight),
            replicas_at_peak=replicas,
            mean_replicas=curve.mean_replicas(mean_rate, goodput, spec.min_replicas),
            point=at_peak,
        )
        options[i] = _priced(scenario, fleet, spec.gpu_usd_per_hour(found.setup.gpu) or 0.0)
    return options


def _billed(option: Option, spec: Plan) -> Option:
    """The option with its frontier in dollars as this plan bills a GPU-hour (`_billed_frontier`)."""
    frontier = _billed_frontier(option.frontier, spec)
    return option if frontier is option.frontier else replace(option, frontier=frontier)


def _billed_frontier(frontier: Frontier | None, spec: Plan) -> Frontier | None:
    """A frontier in dollars as this plan bills a GPU-hour: the search draws it at on-demand prices."""
    if frontier is None or frontier.usd_per_million_output_tokens is None or not spec.gpu_discount:
        return frontier
    usd = tuple(x * (1 - spec.gpu_discount) for x in frontier.usd_per_million_output_tokens)
    return replace(frontier, usd_per_million_output_tokens=usd)


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

    The same closed loop over the same grid as the search draws, built once by the option's
    capability (`Capability.frontier`) and kept there: a page that shows a few candidates'
    frontiers need not pay for every candidate's, nor again at new targets or traffic. None
    for a candidate that does not fit (or cannot be split), which has no frontier either way.
    """
    return frontiers(result, (option,))[0]


def frontiers(result: CapacityPlan, options: Sequence[Option]) -> list[Frontier | None]:
    """`frontier` of each of `options`, those not yet built computed in one pass (`build_frontiers`)."""
    capable = [_capability(result, option) for option in options]
    build_frontiers([c for c in capable if c is not None])
    return [
        option.frontier if c is None else _billed_frontier(c.frontier, result.spec)
        for option, c in zip(options, capable, strict=True)
    ]


def _capability(result: CapacityPlan, option: Option) -> Capability | None:
    """The capability behind an option without a frontier yet; None when the option holds it, or has none."""
    if option.frontier is not None or option.max_running_per_replica is None:
        return None
    searched = result.search.candidates
    # The same setup object, as the search handed it on (or an equal one, for an option rebuilt elsewhere).
    capability = next((c.capability for c in searched if c.option.setup is option.setup), None) or next(
        (c.capability for c in searched if c.option.setup == option.setup), None
    )
    if capability is None:
        raise ValueError(f"option: {option.setup.gpu.name} × {option.setup.gpus_per_replica} is not in this plan")
    return capability
