"""The deployment search's second stage: each candidate against the targets, whatever the traffic.

From the candidates' capabilities (`core.plan_capability`): a lone request already slower than
the tokens/s target → "too slow to stream"; a GPU without a price → "no price"; else the
open loop's goodput — the largest Poisson arrival rate per replica at which TTFT at the plan's
percentile (queue included) and the mean TPOT meet the targets — or "misses TTFT" when even a
trickle misses. Every candidate's goodput search runs in step with the others'
(`open_loop_model.goodput_rates`: each pass of the setups of one shape in one evaluation).

None of it depends on replies a day, the peak-to-average ratio, the floor of replicas or the
GPU discount: a `Search` is made once per model, lengths, targets and candidates, and `core.plan.plan` sizes
and prices the fleet from it for any traffic (a change of replies a day costs one stacked
open-loop pass over the candidates, not a search).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from core.lengths import RequestLengths
from core.open_loop import OpenLoopModel
from core.open_loop_model import goodput_rates
from core.plan_capability import FLEET_FIELDS, Capabilities, Capability, capabilities, open_loops, without
from core.plan_options import Option, Problem
from core.plan_spec import Plan
from core.rate_search import TRICKLE
from core.scenario import Scenario


@dataclass(frozen=True, slots=True)
class Searched:
    """One candidate searched: its outcome so far, and for one that meets the targets its open loop.

    `option` carries a problem and its reason, or (problem None) what fits, the frontier if
    computed and the goodput (`requests_per_s_per_replica`); the fleet fields are the plan's.
    """

    option: Option
    model: OpenLoopModel | None = None  # the replica's open loop, built once, for the plan's points
    capacity_per_s: float = 0.0  # the largest rate with a steady state (sets the points' utilisation)
    capability: Capability | None = field(default=None, compare=False, repr=False)  # its frontier, built once


@dataclass(frozen=True, slots=True)
class Search:
    """Every candidate for one model, lengths, targets and candidate lists, in the candidates' order."""

    scenario: Scenario  # as searched: what no stage reads at its defaults (`traffic_free`)
    spec: Plan  # as searched: the peak ratio, floor and discount at their defaults
    lengths: RequestLengths
    candidates: tuple[Searched, ...]

    def serves(self, scenario: Scenario, spec: Plan, lengths: RequestLengths) -> bool:
        """Whether a plan for these inputs may use this search: the same, traffic and prices aside."""
        return lengths == self.lengths and traffic_free(scenario, spec) == (self.scenario, self.spec)


def traffic_free(scenario: Scenario, spec: Plan) -> tuple[Scenario, Plan]:
    """The inputs with what a search ignores at its defaults: the traffic, prices, peak ratio, floor and discount.

    Two inputs that differ only there (replies a day, an API's prices, the GPU discount, …)
    get the same search: the key a cache of searches uses.
    """
    return without(scenario, spec, FLEET_FIELDS)


def search(
    scenario: Scenario,
    spec: Plan,
    lengths: RequestLengths | None = None,
    frontiers: bool = True,
    capable: Capabilities | None = None,
) -> Search:
    """Every candidate of `spec` on `scenario`'s model and engine, against `spec`'s targets.

    `lengths`: the workload's prompt and reply, fixed unless given. `frontiers=False` skips
    the closed loops over the concurrency grid. `capable`: `capabilities` already evaluated
    for these inputs, whatever their targets (ValueError if for another model, lengths or
    candidates); their frontiers are whatever they were made with (`frontiers` is then unused).
    """
    lengths = lengths or RequestLengths.of(scenario.workload)
    if capable is None:
        capable = capabilities(scenario, spec, lengths, frontiers)
    elif not capable.serves(scenario, spec, lengths):
        raise ValueError("capable: those capabilities were for another model, lengths or candidates")
    bare, targets = traffic_free(scenario, spec)
    return Search(bare, targets, lengths, _every_searched(targets, capable.candidates))


def _every_searched(spec: Plan, capable: tuple[Capability, ...]) -> tuple[Searched, ...]:
    """Every candidate against the targets; the goodput searches of all that need one in step (`goodput_rates`)."""
    found = [_screened(spec, capability) for capability in capable]
    pending = [i for i, searched in enumerate(found) if searched is None]
    built = open_loops([capable[i] for i in pending])
    rates = goodput_rates([model for model, _ in built], spec.ttft_target_s, spec.tpot_target_s, spec.ttft_quantile)
    for i, (model, capacity), goodput in zip(pending, built, rates, strict=True):
        option, capability = capable[i].option, capable[i]
        if goodput is None:
            reason = _lone_miss(spec, model, capacity)
            found[i] = Searched(replace(option, problem=Problem.MISSES_TTFT, reason=reason), capability=capability)
        else:
            found[i] = Searched(replace(option, requests_per_s_per_replica=goodput), model, capacity, capability)
    return tuple(searched for searched in found if searched is not None)


def _screened(spec: Plan, capability: Capability) -> Searched | None:
    """A candidate's outcome decided before any rate is searched (a problem, too slow, no price); None: search it."""
    found = capability.option
    if found.problem is not None:
        return Searched(found, capability=capability)  # cannot split, does not fit: no target changes that
    if capability.alone_tokens_per_s < spec.tokens_per_s_per_user:
        reason = (
            f"streams {capability.alone_tokens_per_s:.2f} tokens/s even alone, "
            f"below the {spec.tokens_per_s_per_user:g} asked"
        )
        return Searched(replace(found, problem=Problem.TOO_SLOW, reason=reason), capability=capability)
    if capability.replica is None:
        # Nothing to rank it by: its frontier stands, the open-loop sizing is not spent on it.
        gpu = found.setup.gpu.name
        reason = f"no rental price for {gpu}: give it one (as the scenario's GPU) to size and cost a fleet"
        return Searched(replace(found, problem=Problem.NO_PRICE, reason=reason), capability=capability)
    return None


def _lone_miss(spec: Plan, model: OpenLoopModel, capacity: float) -> str:
    """What a lone request misses at a trickle: the TTFT (its prefill) or, rarely, the mean TPOT."""
    alone = model.point(TRICKLE * model.slot_limit_upper_per_s(), capacity)
    ttft = float(alone.ttft_quantile_field(spec.ttft_quantile))
    if ttft > spec.ttft_target_s:
        return (
            f"p{spec.ttft_percentile} TTFT is {ttft * 1e3:,.0f} ms even alone, "
            f"above the {spec.ttft_target_s * 1e3:,.0f} ms asked"
        )
    return f"streams {float(alone.tokens_per_s_per_user):.2f} tokens/s even alone under Poisson arrivals"
