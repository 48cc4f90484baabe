"""The open-loop model: requests arrive as a Poisson process at λ per second, as real traffic does.

A birth-death queue over n, the requests holding a KV-cache slot (n ≤ c, the concurrency
that fits), whose service rates come from the same iterations as the closed loop:

    μ(n) = n / (prefill with n-1 others decoding + M × TPOT(n)),
    TPOT(n) = decode(n) / (1 - λ × stall(n))        (others' prompts ride in the iterations)

Arrivals see the stationary distribution π (PASTA). A request that finds all c slots
taken waits for one: P(wait) = P(n ≥ c), and the wait is exponential with rate μ(c) - λ,
halved for near-deterministic replies (Allen-Cunneen, (1 + cs²)/2). Prompts also queue for
the prefill (M/G/1, ρ = λ × prefill). TTFT = the server's path + the iteration in progress
+ both waits + the request's own prefill (the server's path grows with the requests already
streaming: `stream_overhead_s` per other an arrival finds in flight); its percentiles treat the total wait as 0 or
exponential (`queueing.wait_quantile_s`) and take the prefill at that quantile of prompt
length, a slight overestimate.

Capacity is the largest λ with a steady state: the slots' (λ = μ(c; λ)) or the prefill's
(λ × prefill = 1), whichever is smaller. As λ approaches it, P(wait) → 1 and the wait's
scale → ∞, so every percentile grows without bound; as λ → 0 nothing waits and TTFT is
one prefill on an idle engine (`estimate`'s TTFT plus the server path).
Assumptions as the closed loop's: no prefix-cache hits, speculative decoding or
disaggregated prefill; means for the step times, distributions only for the waits.

`OpenLoopModel` builds the per-slot step times once per setup; every evaluation then takes
an array of arrival rates (one row each against the slots' columns), so `core.open_loop`
accepts many rates at once and `goodput` bisects a grid of rates, every setup's step at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from core.arraymath import Quantity
from core.iteration import RequestSteps, lone_prefill_s, request_steps
from core.lengths import RequestLengths
from core.queueing import (
    batch_wait_iterations,
    birth_death_distribution,
    kingman_wait_s,
    prompts_per_iteration,
    wait_quantile_s,
)
from core.rate_search import last_passing_rates, root_below, roots_below
from core.replica import Replica

PERCENTILES = (0.5, 0.9, 0.95, 0.99)
# Goodput-search rates whose states a model keeps: a search checks about 13 (the trickle, then a
# bisection of each pass's 16-rate grid), its first steps the same at any target; ~100 B each.
GRIDS_KEPT = 64
# Rows × slots of one stacked evaluation (`_stackable`): 2 MB per array, ~40 MB for a pass's temporaries.
STACKED_ENTRIES = 2**18


@dataclass(frozen=True, slots=True)
class OpenLoop:
    """Poisson arrivals at `request_rate_per_s`: latencies (means and TTFT percentiles) and throughput.

    Floats for one rate; numpy arrays (one entry per rate) when `open_loop` is given many.
    """

    request_rate_per_s: Quantity
    capacity_requests_per_s: float
    utilisation: Quantity  # λ / capacity; latencies are infinite at ≥ 1
    max_concurrency_that_fits: int
    ttft_s: Quantity  # mean
    ttft_p50_s: Quantity
    ttft_p90_s: Quantity
    ttft_p95_s: Quantity
    ttft_p99_s: Quantity
    tpot_s: Quantity  # mean over requests
    e2e_s: Quantity  # mean
    queue_wait_s: Quantity  # mean wait for a slot and for the prefill, part of TTFT
    mean_in_flight: Quantity  # requests in the system (Little: λ × e2e)
    tokens_per_s_per_user: Quantity
    output_tokens_per_s_per_gpu: Quantity
    total_tokens_per_s_per_gpu: Quantity

    def ttft_quantile_field(self, percentile: float) -> Quantity:
        return getattr(self, f"ttft_p{round(percentile * 100)}_s")


@dataclass(frozen=True, slots=True)
class _State:
    """The stationary state at K rates (arrays of length K): what an arriving request sees."""

    idle: np.ndarray  # P(admitted beside no other request)
    full: np.ndarray  # P(all c slots busy)
    slot_ratio: np.ndarray  # λ / μ(c): ≥ 1 means the slots cannot keep up
    slot_wait_s: np.ndarray  # mean wait for a slot
    prefill_s: np.ndarray  # mean own prefill
    prefill_load: np.ndarray  # share of time in iterations carrying prompts (< 1 for a steady state)
    carry_s: np.ndarray  # an iteration carrying prompts: the prefill queue's service time
    tpot_s: np.ndarray
    decode_s: np.ndarray  # mean decode iteration an arrival meets
    others: np.ndarray  # mean others decoding beside a new arrival

    @property
    def steady(self) -> np.ndarray:
        return np.asarray((self.slot_ratio < 1) & (self.prefill_load < 1))


@dataclass(frozen=True, slots=True)
class OpenLoopModel:
    """One setup's open loop: step times for k = 0..c-1 others holding slots, built once.

    Entry k: a request admitted beside k others prefills with k decoding and replies in a
    batch of k + 1, which is also state n = k + 1 of the birth-death queue.
    """

    replica: Replica
    lengths: RequestLengths
    steps: RequestSteps
    n: np.ndarray  # k + 1
    fits: int  # the concurrency that fits (0: not even the weights)
    # Setups stacked beside one with more slots (`_stack`): each row's own slot count c; None: len(n) for every row.
    slots: np.ndarray | None = field(default=None, repr=False, compare=False)
    # The states at the goodput search's grids, by the grid's rates: they do not depend on the targets,
    # and the grids depend only on this setup, so a search at other targets finds most of them here.
    _grids: dict[bytes, _State | tuple[_State, int, int]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    # Its steps padded to another setup's slot count (`_stack`), by that count: a search stacks the same ones each pass.
    _padded: dict[int, RequestSteps] = field(default_factory=dict, init=False, repr=False, compare=False)

    def steps_for(self, entries: int) -> RequestSteps:
        """Its steps over `entries` slots: its own, or padded at its last slot (kept for the next pass)."""
        if entries == len(self.n):
            return self.steps
        padded = self._padded.get(entries)
        if padded is None:
            padded = self._padded[entries] = self.steps.padded(entries)
        return padded

    @classmethod
    def build(cls, replica: Replica, lengths: RequestLengths) -> OpenLoopModel:
        c = replica.max_concurrency_that_fits(lengths)
        n = np.arange(1, max(c, 1) + 1, dtype=float)
        steps = request_steps(replica, lengths.mean_prompt_tokens, lengths.mean_decode_context_tokens, n, n - 1)
        return cls(replica, lengths, steps, n, c)

    def _at(self, rate: np.ndarray, steps: RequestSteps | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per rate (rows) and entry (columns): prompts per carrying iteration, TPOT, own prefill.

        `steps`: other entries than this model's (a few rows of stacked steps), else its own.
        """
        steps = self.steps if steps is None else steps
        prompts = prompts_per_iteration(rate * steps.decode_s, steps.most_prompts)
        tpot = steps.decode_s / np.maximum(1 - rate * steps.stall_s(prompts), 1e-12)
        return prompts, tpot, steps.prefill_s(prompts)

    def slot_limit_upper_per_s(self) -> float:
        """c / (M × decode(c)): even replies with no prefill and no stall free slots no faster."""
        return float(self.n[-1] / (self.lengths.mean_output_tokens * float(self.steps.decode_s[-1])))

    def capacity_per_s(self) -> float:
        """The smaller of the slots' limit (the root of λ − μ(c; λ)) and the prefill's (load = 1); 0 if nothing fits."""
        return capacities((self,))[0]

    def _prefill_bound(self, slots: float) -> float:
        """The capacity given the slots' limit: it, unless the prefill saturates first (load = 1 below it)."""
        if self._state(np.array([slots * (1 - 1e-9)])).prefill_load[0] < 1:
            return slots
        return root_below(lambda rate: self._state(rate).prefill_load - 1, slots)

    def _state(self, rates: np.ndarray) -> _State:
        """The state at each of `rates` (shape (K,)); rows past the slots' limit are marked, not steady.

        Rows of setups stacked beside one with more slots (`slots`) run past their own c as its
        queue does: every padded state serves at μ(c), admits nobody, and decodes c at a time.
        """
        steps = self.steps
        prompts, tpot, prefill = self._at(rates[:, None])
        mu = self.n / (prefill + self.lengths.mean_output_tokens * tpot)
        rows = np.arange(len(rates))
        c = np.full(len(rates), len(self.n)) if self.slots is None else self.slots
        own = self.n <= c[:, None]  # entries k < c (the states n = k + 1 ≤ c)
        mu_c = mu[rows, c - 1]
        if self.slots is not None:
            mu = np.where(own, mu, mu_c[:, None])  # past c every departure frees a slot at μ(c)
        slot_ratio = rates / mu_c
        # Past the slots' limit there is no stationary distribution: compute at a steady rate, then mark.
        steady_rate = np.where(slot_ratio < 1, rates, 0.5 * mu_c)[:, None]
        pi, beyond, ratio = birth_death_distribution(steady_rate, mu)
        pi_c = pi[rows, c]
        full = pi_c + beyond if self.slots is None else np.sum(np.where(own, 0.0, pi[:, 1:]), axis=1) + pi_c + beyond
        # Entry k: admitted beside k others; an arrival that finds all c busy waits, then joins c - 1.
        admitted = pi[:, :-1].copy() if self.slots is None else np.where(own, pi[:, :-1], 0.0)
        admitted[rows, c - 1] += full
        # A request queued for a slot waits j + 1 departures at μ(c) when j are ahead;
        # near-deterministic replies halve that (Allen-Cunneen).
        slot_wait = pi_c / (mu_c * (1 - ratio) ** 2) * (1 + self.lengths.squared_variation) / 2
        # States past c decode c at a time (and at c's step times: the padded entries repeat it).
        weights = (self.n if self.slots is None else np.minimum(self.n, c[:, None])) * pi[:, 1:]
        weights[:, -1] += c * beyond
        carry = steps.chunks * steps.mixed_s(prompts)
        return _State(
            idle=admitted[:, 0].copy(),  # not a view: a kept grid state must not hold the (K, c) array
            full=full,
            slot_ratio=slot_ratio,
            slot_wait_s=slot_wait,
            prefill_s=np.sum(admitted * prefill, axis=1),
            prefill_load=rates * np.sum(admitted * (carry / prompts), axis=1),
            carry_s=np.sum(admitted * carry, axis=1),
            tpot_s=np.sum(weights * tpot, axis=1) / weights.sum(axis=1),
            # A row sum, not `@`: the same bits for a row whatever other rows are stacked with it.
            decode_s=np.sum(pi[:, 1:] * steps.decode_s, axis=-1) + beyond * steps.decode_s[..., -1],
            others=admitted @ (self.n - 1),
        )

    def _stack_key(self) -> tuple[object, ...] | None:
        """What setups evaluated in one pass must share (`stacked_points`, `goodput_rates`); None: alone."""
        if self.lengths.low_fraction != 1 or not self.fits:
            return None
        engine = self.replica.engine
        machine = self.replica.machine
        overhead = (machine.request_overhead_s, machine.stream_overhead_s)
        return self.lengths, overhead, engine.prefill_batch_wait_iterations  # any slot counts: `_stack` pads

    def _grid_state(self, rates: np.ndarray) -> _State:
        """`_state(rates)`, kept for the next search: the rates are a step of the goodput search.

        The grids depend on this setup alone (`rate_search.last_passing_rates` from its slots'
        bound), so a search at new targets evaluates only the rates it has not met: its first
        steps (the trickle, each grid's middle) are here, and the next while its edge lies near the
        last search's. The state is (K,) arrays; at most GRIDS_KEPT are kept. Two threads may
        both compute one; the results are equal.
        """
        state = self._kept(rates)
        if state is None:
            state = self._state(rates)
            self._keep(rates, state)
        return state

    def _keep(self, rates: np.ndarray, state: _State | tuple[_State, int, int]) -> None:
        """Keep the state at `rates`: its own, or (a stacked pass's state, its rows) sliced when read."""
        if len(self._grids) < GRIDS_KEPT:
            self._grids[rates.tobytes()] = state

    def _kept(self, rates: np.ndarray) -> _State | None:
        kept = self._grids.get(rates.tobytes())
        return kept if kept is None or isinstance(kept, _State) else _sliced(*kept)

    def _ttfts(self, rates: np.ndarray, state: _State, percentiles: tuple[float, ...]) -> tuple[Any, ...]:
        """TTFT at each of `percentiles`, its mean, and the mean wait, at each rate."""
        lengths, engine = self.lengths, self.replica.engine
        # Prompts wait for the iterations carrying earlier prompts (M/G/1 on those iterations).
        prefill_wait = kingman_wait_s(state.prefill_load, state.carry_s, 1.0, lengths.squared_variation)
        busy = 1 - state.idle
        hold = 0.0
        if engine.prefill_batch_wait_iterations:
            window = engine.prefill_batch_wait_iterations
            hold = busy * batch_wait_iterations(window, rates * state.tpot_s) * state.tpot_s
        machine = self.replica.machine
        path = machine.request_overhead_s + machine.stream_overhead_s * state.others  # longer the more others stream
        fixed = path + busy * state.decode_s / 2 + hold
        wait = state.slot_wait_s + prefill_wait
        waiting = 1 - (1 - state.full) * (1 - np.minimum(state.prefill_load, 1.0))
        prefills = self._prefill_quantiles_s(state, percentiles)
        quantiles = [fixed + p + wait_quantile_s(q, waiting, wait) for q, p in zip(percentiles, prefills, strict=True)]
        return quantiles, fixed + state.prefill_s + wait, wait

    def _prefill_quantiles_s(self, state: _State, percentiles: tuple[float, ...]) -> list[np.ndarray]:
        """The own prefill at each quantile of prompt length, the mean number of others decoding."""
        lengths = self.lengths
        if lengths.low_fraction == 1:
            return [state.prefill_s] * len(percentiles)  # every prompt has the nominal length
        tokens = np.array([*(lengths.prompt_tokens_quantile(q) for q in percentiles), lengths.mean_prompt_tokens])
        alone = lone_prefill_s(self.replica, tokens, lengths.mean_decode_context_tokens, state.others[:, None])
        alone = np.broadcast_to(alone, (len(state.others), len(tokens)))
        return [state.prefill_s * alone[:, i] / alone[:, -1] for i in range(len(percentiles))]

    def evaluate(self, rates: np.ndarray, capacity: float | None = None) -> OpenLoop:
        """The open loop at each of `rates` (shape (K,)); rows without a steady state are infinite.

        `capacity`: `capacity_per_s()` if already known (it sets `utilisation`, and rates at or
        above it have no steady state).
        """
        capacity = self.capacity_per_s() if capacity is None else capacity
        return self._evaluate(rates, capacity, self.replica.gpu_count)

    def _evaluate(self, rates: np.ndarray, capacity: Quantity, gpus: Quantity) -> OpenLoop:
        """`evaluate`, with the capacity and GPU count per rate when rows are several setups (`stacked_points`)."""
        lengths = self.lengths
        prompt, output = lengths.mean_prompt_tokens, lengths.mean_output_tokens
        state = self._state(rates)
        steady = state.steady & (rates < capacity) & (self.fits > 0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ttft_q, ttft, wait = self._ttfts(rates, state, PERCENTILES)
            e2e = ttft + output * state.tpot_s

        served = np.where(self.fits > 0, np.minimum(rates, capacity), 0.0)  # what leaves the server per second

        def finite(values: np.ndarray, otherwise: Quantity = math.inf) -> np.ndarray:
            return np.where(steady, values, otherwise)

        return OpenLoop(
            request_rate_per_s=rates,
            capacity_requests_per_s=capacity,
            utilisation=np.where(np.greater(capacity, 0), rates / np.maximum(capacity, 1e-300), math.inf),
            max_concurrency_that_fits=self.fits,
            ttft_s=finite(ttft),
            ttft_p50_s=finite(ttft_q[0]),
            ttft_p90_s=finite(ttft_q[1]),
            ttft_p95_s=finite(ttft_q[2]),
            ttft_p99_s=finite(ttft_q[3]),
            tpot_s=finite(state.tpot_s),
            e2e_s=finite(e2e),
            queue_wait_s=finite(wait),
            mean_in_flight=finite(rates * e2e),
            tokens_per_s_per_user=finite(1 / state.tpot_s, 0.0),
            # Past its capacity a server still emits at its capacity (the queue, not the output, grows):
            # 20 requests/s offered to one that serves 19.14 is 19.14 × the reply's tokens, not 0.
            output_tokens_per_s_per_gpu=finite(rates * output / gpus, served * output / gpus),
            total_tokens_per_s_per_gpu=finite(rates * (prompt + output) / gpus, served * (prompt + output) / gpus),
        )

    def point(self, rate: float, capacity: float | None = None) -> OpenLoop:
        """The open loop at one rate, as floats."""
        return self.points((rate,), capacity)[0]

    def points(self, rates: tuple[float, ...], capacity: float | None = None) -> tuple[OpenLoop, ...]:
        """The open loop at a few rates, each as floats: one evaluation for all of them."""
        evaluated = self.evaluate(np.array(rates, dtype=float), capacity)
        return tuple(_row(evaluated, i) for i in range(len(rates)))

    def meets(self, rates: np.ndarray, ttft_target_s: float, tpot_target_s: float, percentile: float) -> np.ndarray:
        """Whether TTFT at `percentile` and the mean TPOT meet their targets at each of `rates`."""
        return self._meets_state(rates, self._state(rates), ttft_target_s, tpot_target_s, percentile)

    def _meets_state(
        self, rates: np.ndarray, state: _State, ttft_target_s: float, tpot_target_s: float, percentile: float
    ) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            (ttft,), _, _ = self._ttfts(rates, state, (percentile,))
        return np.asarray(state.steady & (ttft <= ttft_target_s) & (state.tpot_s <= tpot_target_s))

    def goodput_rate_per_s(
        self, ttft_target_s: float, tpot_target_s: float, percentile: float = 0.95, highest: float | None = None
    ) -> float | None:
        """The largest λ meeting both targets; None when even a trickle misses one.

        Both latencies grow with λ: `rate_search.last_passing_rates` up to the slots' upper
        bound lands within 0.41 % below the edge, on a rate evaluated and meeting both; looser
        targets never return a lower rate. `highest`: the grids' top instead of this setup's
        bound (≥ it), so that setups compared with one another search the same rates.
        """
        return goodput_rates((self,), ttft_target_s, tpot_target_s, percentile, highest)[0]


def capacities(models: Sequence[OpenLoopModel]) -> list[float]:
    """Each model's `capacity_per_s`: the slots' roots of models with the same lengths found in step.

    The slots' limit needs μ(c) alone, the last entry of each model's steps (`RequestSteps.last`):
    one row per model, every Illinois step of every model in one evaluation (`roots_below`).
    """
    found = [0.0] * len(models)
    groups: dict[RequestLengths, list[int]] = {}
    for i, model in enumerate(models):
        if model.fits:
            groups.setdefault(model.lengths, []).append(i)
    for members in groups.values():
        limits = _slots_limits([models[i] for i in members])
        for i, capacity in zip(members, _prefill_bounds([models[i] for i in members], limits), strict=True):
            found[i] = capacity
    return found


def _prefill_bounds(models: list[OpenLoopModel], limits: list[float]) -> list[float]:
    """Each model's `_prefill_bound`, setups of one shape together (`_shape_prefill_bounds`)."""
    bounds = list(limits)
    for members in _stackable([(model, 1) for model in models]):
        if len(members) == 1:
            bounds[members[0]] = models[members[0]]._prefill_bound(limits[members[0]])
            continue
        found = _shape_prefill_bounds([models[i] for i in members], [limits[i] for i in members])
        for i, bound in zip(members, found, strict=True):
            bounds[i] = bound
    return bounds


def _shape_prefill_bounds(group: list[OpenLoopModel], limits: list[float]) -> list[float]:
    """`_prefill_bound` of setups of one shape, stacked (`_Pool`): the load just below each slots' limit in
    one pass, then the roots of those whose prefill saturates first, in step (`roots_below`)."""
    pool = _Pool.of(group)

    def load(rates: np.ndarray, which: np.ndarray) -> np.ndarray:
        return pool.stack([group[j] for j in which], [1] * len(which))._state(rates).prefill_load

    below = load(np.array(limits) * (1 - 1e-9), np.arange(len(group)))
    saturated = np.flatnonzero(below >= 1)
    bounds = list(limits)
    if saturated.size:
        roots = roots_below(lambda rates, which: load(rates, saturated[which]) - 1, [limits[j] for j in saturated])
        for j, root in zip(saturated, roots, strict=True):
            bounds[j] = root
    return bounds


def _slots_limits(models: list[OpenLoopModel]) -> list[float]:
    """Each model's slots' limit, the root of λ − μ(c; λ), for models of one lengths: Illinois in step."""
    last = RequestSteps.stacked([model.steps.last() for model in models], np.arange(len(models)))
    slots = np.array([model.n[-1] for model in models])
    first, replies = models[0], models[0].lengths.mean_output_tokens

    def excess(rates: np.ndarray, which: np.ndarray) -> np.ndarray:
        _, tpot, prefill = first._at(rates[:, None], last.rows(which))
        return np.asarray(rates - slots[which] / (prefill + replies * tpot)[:, 0])

    return roots_below(excess, [model.slot_limit_upper_per_s() for model in models])


def goodput_rates(
    models: Sequence[OpenLoopModel],
    ttft_target_s: float,
    tpot_target_s: float,
    percentile: float = 0.95,
    highest: float | None = None,
) -> list[float | None]:
    """Each model's `goodput_rate_per_s`, the searches in step: each pass of every setup in one evaluation.

    Setups of one shape (`_stack_key`) share one `_state` over rows of all their grids not
    already kept (`_grid_state`), and one TTFT; the rates found are each setup's alone.
    """
    fitting = [i for i, model in enumerate(models) if model.fits]
    tops = [max(highest or 0.0, models[i].slot_limit_upper_per_s()) for i in fitting]
    # Every setup of one shape stacked once: each pass takes the rows of the setups it evaluates.
    shapes: dict[object, list[OpenLoopModel]] = {}
    for i in fitting:
        key = models[i]._stack_key()
        if key is not None:
            shapes.setdefault(key, []).append(models[i])
    pools = {key: _Pool.of(members) for key, members in shapes.items() if len(members) > 1}

    def passes(searches: list[int], grids: list[np.ndarray]) -> list[np.ndarray]:
        asked = [(models[fitting[i]], grid) for i, grid in zip(searches, grids, strict=True)]
        return _meets_together(asked, ttft_target_s, tpot_target_s, percentile, pools)

    found = dict(zip(fitting, last_passing_rates(passes, tops), strict=True))
    return [found.get(i) for i in range(len(models))]


def _meets_together(
    asked: list[tuple[OpenLoopModel, np.ndarray]],
    ttft_target_s: float,
    tpot_target_s: float,
    percentile: float,
    pools: dict[object, _Pool] | None = None,
) -> list[np.ndarray]:
    """Each (model, rates)'s `meets`: the grids of setups of one shape in one `_state` and one `_ttfts`.

    `pools`: setups of each shape already stacked (`_Pool`), which a pass takes rows of.
    """
    met: list[np.ndarray | None] = [None] * len(asked)
    for members in _stackable([(model, len(rates)) for model, rates in asked]):
        first = asked[members[0]][0]
        if len(members) == 1:
            model, rates = asked[members[0]]
            met[members[0]] = model._meets_state(
                rates, model._grid_state(rates), ttft_target_s, tpot_target_s, percentile
            )
            continue
        states: list[_State | None] = [asked[i][0]._kept(asked[i][1]) for i in members]
        missing = [j for j, state in enumerate(states) if state is None]
        computed: _State | None = None
        if missing:
            counts = [len(asked[members[j]][1]) for j in missing]
            pool = (pools or {}).get(first._stack_key())
            needed = [asked[members[j]][0] for j in missing]
            stack = (pool if pool is not None and pool.holds(needed) else _Pool.of(needed)).stack(needed, counts)
            computed = stack._state(np.concatenate([asked[members[j]][1] for j in missing]))
            for j, (start, stop) in zip(missing, _spans(counts), strict=True):
                model, rates = asked[members[j]]
                model._keep(rates, (computed, start, stop))  # sliced when a later search reads it
                if len(missing) < len(members):
                    states[j] = _sliced(computed, start, stop)
        rates = np.concatenate([asked[i][1] for i in members])
        if computed is not None and len(missing) == len(members):
            state = computed  # every member computed in this pass, in their order: nothing to join
        else:
            state = _joined([s for s in states if s is not None])
        passing = first._meets_state(rates, state, ttft_target_s, tpot_target_s, percentile)
        for i, (start, stop) in zip(members, _spans([len(asked[i][1]) for i in members]), strict=True):
            met[i] = passing[start:stop]
    return [m for m in met if m is not None]


def _stack(models: list[OpenLoopModel], counts: list[int]) -> tuple[OpenLoopModel, np.ndarray]:
    """Setups of one shape (`_stack_key`) as one model, `counts[i]` rows of models[i]'s steps; and each row's setup.

    Its `_state` and `_evaluate` take one rate per row: every setup's rates in one pass.
    """
    return _Pool.of(models).stack(models, counts), np.repeat(np.arange(len(models)), counts)


@dataclass(frozen=True, slots=True)
class _Pool:
    """Setups of one shape stacked once, a row each: what a search's passes take rows of.

    Setups with fewer slots than the widest are padded at their last slot (`RequestSteps.padded`)
    and keep their own slot count (`OpenLoopModel.slots`), so one array holds them all.
    """

    row: dict[int, int]  # id(setup) → its row
    steps: RequestSteps  # (setups, widest slots)
    n: np.ndarray  # the widest setup's 1..c
    slots: np.ndarray | None  # each setup's own c; None: every setup has the widest's

    @classmethod
    def of(cls, models: list[OpenLoopModel]) -> _Pool:
        widest = max(models, key=lambda model: len(model.n))
        entries = len(widest.n)
        steps = RequestSteps.stacked([model.steps_for(entries) for model in models], np.arange(len(models)))
        counts = np.array([len(model.n) for model in models])
        slots = None if np.all(counts == entries) else counts
        return cls({id(model): i for i, model in enumerate(models)}, steps, widest.n, slots)

    def holds(self, models: list[OpenLoopModel]) -> bool:
        return all(id(model) in self.row for model in models)

    def stack(self, models: list[OpenLoopModel], counts: list[int]) -> OpenLoopModel:
        """`models` as one model, `counts[i]` rows of models[i]'s steps."""
        which = np.repeat([self.row[id(model)] for model in models], counts)
        slots = None if self.slots is None else self.slots[which]
        first = models[0]
        return OpenLoopModel(first.replica, first.lengths, self.steps.rows(which), self.n, first.fits, slots)


def _spans(counts: list[int]) -> list[tuple[int, int]]:
    """The rows each of a stack's setups holds, in order: counts 2, 3 → (0, 2), (2, 5)."""
    stops = np.cumsum(counts)
    return [(int(stop - count), int(stop)) for count, stop in zip(counts, stops, strict=True)]


def _stackable(asked: list[tuple[OpenLoopModel, int]]) -> list[list[int]]:
    """The indices of `asked` (model, rows) in groups to evaluate together: one shape (`_stack_key`) each,
    at most STACKED_ENTRIES rows × slots per group, so that a pass over many setups with thousands of
    slots stays a few MB per array (a setup that cannot be stacked is a group of its own)."""
    shapes: dict[object, list[int]] = {}
    for i, (model, _) in enumerate(asked):
        shapes.setdefault(model._stack_key() or ("alone", i), []).append(i)
    groups = []
    for members in shapes.values():
        width = max(max(len(asked[i][0].n) for i in members), 1)
        group: list[int] = []
        rows = 0
        for i in members:
            if group and (rows + asked[i][1]) * width > STACKED_ENTRIES:
                groups.append(group)
                group, rows = [], 0
            group.append(i)
            rows += asked[i][1]
        groups.append(group)
    return groups


def _sliced(state: _State, start: int, stop: int) -> _State:
    """Rows start..stop: views into the pass's K-long arrays (a few KB a pass), never into a (K, slots) one."""
    return _State(*(getattr(state, name)[start:stop] for name in _STATE_FIELDS))


def _joined(states: list[_State]) -> _State:
    return _State(*(np.concatenate([getattr(s, name) for s in states]) for name in _STATE_FIELDS))


_STATE_FIELDS = tuple(f.name for f in fields(_State))  # `_sliced` and `_joined` run hundreds of times a search


def stacked_points(
    asked: Sequence[tuple[OpenLoopModel, tuple[float, ...], float]],
) -> list[tuple[OpenLoop, ...]]:
    """Each (model, rates, capacity)'s `points(rates, capacity)`: setups of one shape evaluated in one pass.

    A plan prices dozens of setups, each at a couple of rates: evaluated one by one, numpy's
    per-call overhead on arrays of a few hundred entries is most of the time. Setups with the
    same slots, lengths and server path share one `_state` over rows of every setup's
    steps (`RequestSteps.stacked`); the numbers are those of `points` (a test checks).
    Varied lengths (whose prompt quantiles need each setup's replica) are evaluated one by one.
    """
    found: list[tuple[OpenLoop, ...] | None] = [None] * len(asked)
    for members in _stackable([(model, len(rates)) for model, rates, _ in asked]):
        if len(members) == 1:
            alone, its_rates, its_capacity = asked[members[0]]
            found[members[0]] = alone.points(its_rates, its_capacity)
            continue
        models = [asked[i][0] for i in members]
        counts = [len(asked[i][1]) for i in members]
        stack, rows = _stack(models, counts)
        rates = np.concatenate([np.asarray(asked[i][1], dtype=float) for i in members])
        capacity = np.array([asked[i][2] for i in members])[rows]
        gpus = np.array([m.replica.gpu_count for m in models], dtype=float)[rows]
        evaluated = stack._evaluate(rates, capacity, gpus)
        for i, (start, stop) in zip(members, _spans(counts), strict=True):
            fits = asked[i][0].fits  # the stack's own is its widest setup's
            found[i] = tuple(replace(_row(evaluated, r), max_concurrency_that_fits=fits) for r in range(start, stop))
    return [points for points in found if points is not None]


def _row(evaluated: OpenLoop, i: int) -> OpenLoop:
    """Rate i's entries as floats."""
    values: dict[str, Any] = {}
    for name in OpenLoop.__slots__:
        value = getattr(evaluated, name)
        values[name] = value if isinstance(value, (int, float)) else float(np.asarray(value).reshape(-1)[i])
    return OpenLoop(**values)
