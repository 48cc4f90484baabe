"""Open loop: requests arrive as a Poisson process at λ per second, as real traffic does.

A birth-death queue over n, the requests holding a KV-cache slot (n ≤ c, the concurrency
that fits), whose service rates come from the same iterations as the closed loop:

    μ(n) = n / (prefill with n-1 others decoding + M × TPOT(n)),
    TPOT(n) = decode(n) / (1 - λ × stall(n))        (others' prompts ride in the iterations)

Arrivals see the stationary distribution π (PASTA). A request that finds all c slots
taken waits for one: P(wait) = P(n ≥ c), and the wait is exponential with rate μ(c) - λ,
halved for near-deterministic replies (Allen-Cunneen, (1 + cs²)/2). Prompts also queue for
the prefill (M/G/1, ρ = λ × prefill). TTFT = the server's path + the iteration in progress
+ both waits + the request's own prefill; its percentiles treat the total wait as 0 or
exponential (`queueing.wait_quantile_s`) and take the prefill at that quantile of prompt
length, a slight overestimate.

Capacity is the largest λ with a steady state: the slots' (λ = μ(c; λ), a quadratic) or
the prefill's (λ × prefill = 1), whichever is smaller. As λ approaches it, P(wait) → 1
and the wait's scale → ∞, so every percentile grows without bound; as λ → 0 nothing
waits and TTFT is one prefill on an idle engine (`estimate`'s TTFT plus the server path).
Assumptions as the closed loop's: no prefix-cache hits, speculative decoding or
disaggregated prefill; means for the step times, distributions only for the waits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.iteration import RequestSteps, request_steps
from core.lengths import RequestLengths
from core.queueing import (
    batch_wait_iterations,
    birth_death_distribution,
    kingman_wait_s,
    prompts_per_iteration,
    wait_quantile_s,
)
from core.replica import Replica
from core.validation import check_number

PERCENTILES = (0.5, 0.9, 0.95, 0.99)
_BISECTIONS = 40


@dataclass(frozen=True, slots=True)
class OpenLoop:
    """Poisson arrivals at `request_rate_per_s`: latencies (means and TTFT percentiles) and throughput."""

    request_rate_per_s: float
    capacity_requests_per_s: float
    utilisation: float  # λ / capacity; latencies are infinite at ≥ 1
    max_concurrency_that_fits: int
    ttft_s: float  # mean
    ttft_p50_s: float
    ttft_p90_s: float
    ttft_p95_s: float
    ttft_p99_s: float
    tpot_s: float  # mean over requests
    e2e_s: float  # mean
    queue_wait_s: float  # mean wait for a slot and for the prefill, part of TTFT
    mean_in_flight: float  # requests in the system (Little: λ × e2e)
    tokens_per_s_per_user: float
    output_tokens_per_s_per_gpu: float
    total_tokens_per_s_per_gpu: float

    def ttft_quantile_field(self, percentile: float) -> float:
        return float(getattr(self, f"ttft_p{round(percentile * 100)}_s"))


@dataclass(frozen=True, slots=True)
class _Slots:
    """Step times for k = 0..c-1 others holding slots (arrays of length c), built once per setup.

    Entry k: a request admitted beside k others prefills with k decoding and replies in a
    batch of k + 1, which is also state n = k + 1 of the birth-death queue.
    """

    replica: Replica
    lengths: RequestLengths
    steps: RequestSteps
    n: np.ndarray  # k + 1

    @classmethod
    def build(cls, replica: Replica, lengths: RequestLengths) -> _Slots:
        c = replica.max_concurrency_that_fits(lengths)
        n = np.arange(1, max(c, 1) + 1, dtype=float)
        steps = request_steps(replica, lengths.mean_prompt_tokens, lengths.mean_decode_context_tokens, n, n - 1)
        return cls(replica, lengths, steps, n)

    def at(self, rate: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per entry at arrival rate λ: prompts per carrying iteration, TPOT, own prefill."""
        steps = self.steps
        prompts = prompts_per_iteration(rate * steps.decode_s, steps.most_prompts)
        tpot = steps.decode_s / np.maximum(1 - rate * steps.stall_s(prompts), 1e-12)
        return prompts, tpot, steps.prefill_s(prompts)

    def service_rates_per_s(self, rate: float) -> np.ndarray:
        _, tpot, prefill = self.at(rate)
        return self.n / (prefill + self.lengths.mean_output_tokens * tpot)

    def slot_capacity_per_s(self) -> float:
        """The λ at which arrivals match what c full slots serve: λ = μ(c; λ), by bisection.

        λ − μ(c; λ) is negative at 0 and positive at c / (M × decode(c)), where even a reply
        with no prefill and no stall could not free slots faster.
        """
        c, output = float(self.n[-1]), self.lengths.mean_output_tokens
        low, high = 0.0, c / (output * float(self.steps.decode_s[-1]))
        for _ in range(_BISECTIONS):
            middle = (low + high) / 2
            if middle < float(self.service_rates_per_s(middle)[-1]):
                low = middle
            else:
                high = middle
        return low


@dataclass(frozen=True, slots=True)
class _State:
    """The stationary state at one λ: what an arriving request sees."""

    seen: np.ndarray  # P(admitted beside k = 0..c-1 others)
    full: float  # P(all c slots busy)
    slot_wait_s: float  # mean wait for a slot
    prefill_s: float  # mean own prefill
    prefill_load: float  # share of time in iterations carrying prompts (< 1)
    carry_s: float  # an iteration carrying prompts: the prefill queue's service time
    tpot_s: float
    decode_s: float  # mean decode iteration an arrival meets
    others: float  # mean others decoding beside a new arrival


def _state(slots: _Slots, rate: float) -> _State:
    steps = slots.steps
    prompts, tpot, prefill = slots.at(rate)
    mu = slots.n / (prefill + slots.lengths.mean_output_tokens * tpot)
    pi, beyond, ratio = birth_death_distribution(rate, mu)
    full = float(pi[-1] + beyond)
    # Entry k: admitted beside k others; an arrival that finds all c busy waits, then joins c - 1.
    admitted = pi[:-1].copy()
    admitted[-1] += full
    # A request queued for a slot waits j + 1 departures at μ(c) when j are ahead;
    # near-deterministic replies halve that (Allen-Cunneen).
    slot_wait = float(pi[-1] / (mu[-1] * (1 - ratio) ** 2)) * (1 + slots.lengths.squared_variation) / 2
    weights = slots.n * pi[1:]
    weights[-1] += slots.n[-1] * beyond
    carry = steps.chunks * steps.mixed_s(prompts)
    return _State(
        seen=admitted,
        full=full,
        slot_wait_s=slot_wait,
        prefill_s=float(admitted @ prefill),
        prefill_load=rate * float(admitted @ (carry / prompts)),
        carry_s=float(admitted @ carry),
        tpot_s=float(weights @ tpot / weights.sum()),
        decode_s=float(pi[1:] @ steps.decode_s + beyond * steps.decode_s[-1]),
        others=float(admitted @ (slots.n - 1)),
    )


def _capacity_per_s(slots: _Slots) -> float:
    """The smaller of the slots' and the prefill's limits (see the module docstring)."""
    limit = slots.slot_capacity_per_s()
    if _state(slots, limit * (1 - 1e-9)).prefill_load < 1:
        return limit
    low, high = 0.0, limit
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if _state(slots, middle).prefill_load < 1:
            low = middle
        else:
            high = middle
    return low


def _evaluate(slots: _Slots, rate: float, capacity: float) -> OpenLoop:
    replica, lengths = slots.replica, slots.lengths
    prompt, output, gpus = lengths.mean_prompt_tokens, lengths.mean_output_tokens, replica.gpu_count
    fits = int(slots.n[-1]) if replica.max_concurrency_that_fits(lengths) > 0 else 0
    if rate >= capacity or fits == 0:
        return _saturated(rate, capacity, fits)
    state = _state(slots, rate)
    # Prompts wait for the iterations carrying earlier prompts (M/G/1 on those iterations).
    prefill_wait = float(kingman_wait_s(state.prefill_load, state.carry_s, 1.0, lengths.squared_variation))
    busy = 1 - float(state.seen[0])
    engine = replica.engine
    hold = 0.0
    if engine.prefill_batch_wait_iterations:
        window = engine.prefill_batch_wait_iterations
        hold = busy * float(batch_wait_iterations(window, rate * state.tpot_s)) * state.tpot_s
    fixed = replica.machine.request_overhead_s + busy * state.decode_s / 2 + hold
    wait = state.slot_wait_s + prefill_wait
    waiting = 1 - (1 - state.full) * (1 - min(state.prefill_load, 1.0))
    # The prefill at each quantile of prompt length, with the mean number of others decoding.
    tokens = np.array([*(lengths.prompt_tokens_quantile(q) for q in PERCENTILES), prompt])
    alone = np.asarray(
        request_steps(replica, tokens, lengths.mean_decode_context_tokens, state.others + 1, state.others).prefill_one_s
    )
    prefill_q = state.prefill_s * alone[:-1] / alone[-1]
    ttft_q = [
        fixed + float(p) + float(wait_quantile_s(q, waiting, wait)) for q, p in zip(PERCENTILES, prefill_q, strict=True)
    ]
    ttft = fixed + state.prefill_s + wait
    e2e = ttft + output * state.tpot_s
    return OpenLoop(
        request_rate_per_s=rate,
        capacity_requests_per_s=capacity,
        utilisation=rate / capacity,
        max_concurrency_that_fits=fits,
        ttft_s=ttft,
        ttft_p50_s=ttft_q[0],
        ttft_p90_s=ttft_q[1],
        ttft_p95_s=ttft_q[2],
        ttft_p99_s=ttft_q[3],
        tpot_s=state.tpot_s,
        e2e_s=e2e,
        queue_wait_s=wait,
        mean_in_flight=rate * e2e,
        tokens_per_s_per_user=1 / state.tpot_s,
        output_tokens_per_s_per_gpu=rate * output / gpus,
        total_tokens_per_s_per_gpu=rate * (prompt + output) / gpus,
    )


def _saturated(rate: float, capacity: float, fits: int) -> OpenLoop:
    """At or beyond capacity the queue grows for ever: every latency is infinite."""
    inf = math.inf
    latencies = dict.fromkeys(("ttft_s", "ttft_p50_s", "ttft_p90_s", "ttft_p95_s", "ttft_p99_s"), inf)
    return OpenLoop(
        request_rate_per_s=rate,
        capacity_requests_per_s=capacity,
        utilisation=rate / capacity if capacity > 0 else inf,
        max_concurrency_that_fits=fits,
        **latencies,
        tpot_s=inf,
        e2e_s=inf,
        queue_wait_s=inf,
        mean_in_flight=inf,
        tokens_per_s_per_user=0.0,
        output_tokens_per_s_per_gpu=0.0,
        total_tokens_per_s_per_gpu=0.0,
    )


def open_loop(replica: Replica, lengths: RequestLengths, request_rate_per_s: float) -> OpenLoop:
    """Latency and throughput under Poisson arrivals at `request_rate_per_s` (> 0).

    Example: the lesson's toy at a trickle in tests/core/test_open_loop.py — TTFT is the
    unloaded prefill, and p95 passes any bound as λ nears capacity.
    """
    check_number("request_rate_per_s", request_rate_per_s, 0, 1e9, low_open=True)
    slots = _Slots.build(replica, lengths)
    return _evaluate(slots, request_rate_per_s, _capacity_per_s(slots))


def capacity_requests_per_s(replica: Replica, lengths: RequestLengths) -> float:
    """The largest arrival rate with a steady state (see the module docstring)."""
    return _capacity_per_s(_Slots.build(replica, lengths))


def goodput(
    replica: Replica,
    lengths: RequestLengths,
    ttft_target_s: float,
    tpot_target_s: float,
    percentile: float = 0.95,
) -> OpenLoop | None:
    """The open loop at the largest λ whose TTFT at `percentile` and mean TPOT meet the targets.

    Latency only grows with λ, so a bisection on (0, capacity) finds it. None when even a
    trickle misses a target (the prefill or the TPOT alone is too slow).
    """
    if percentile not in PERCENTILES:
        raise ValueError(f"percentile must be one of {', '.join(str(p) for p in PERCENTILES)}, got {percentile!r}")
    check_number("ttft_target_s", ttft_target_s, 0, 1e6, low_open=True)
    check_number("tpot_target_s", tpot_target_s, 0, 1e6, low_open=True)
    slots = _Slots.build(replica, lengths)
    capacity = _capacity_per_s(slots)

    def meets(rate: float) -> OpenLoop | None:
        point = _evaluate(slots, rate, capacity)
        ok = point.ttft_quantile_field(percentile) <= ttft_target_s and point.tpot_s <= tpot_target_s
        return point if ok else None

    low, high = capacity * 1e-9, capacity
    best = meets(low)
    if best is None:
        return None
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        point = meets(middle)
        if point is None:
            high = middle
        else:
            low, best = middle, point
    return best
