"""Closed loop: at most C requests in flight, a new one sent as soon as one finishes.

This is how vLLM's `benchmark_serving --max-concurrency C` and InferenceX measure a server.
The model is a steady state over the iterations of `core.iteration`, vectorised over C:

- Running R = min(C, the concurrency whose KV cache fits); the other C - R wait for a slot.
- A reply's token takes a decode iteration of the R sequences decoding, stretched by the
  other requests' prompts riding along: TPOT = decode / (1 - X_o × stall), where X_o is
  the others' arrival rate and stall = what one prompt adds to the iterations it rides in.
  An iteration takes every prompt that arrived during the last one (up to the token
  budget), so under load several prompts share one iteration's fixed costs and decodes.
- TTFT = the server's per-request path (`request_overhead_s`)
  + one decode iteration already launched when the request arrives (none at C = 1)
  + waiting for iterations that carry earlier prompts (Kingman, ca² = 1), which becomes a
    queue once even budget-full iterations cannot keep up
  + the engine's batch-wait hold, if any + its own prefill (chunked, the others decoding).
- Throughput X solves Little's law, X × (TTFT + M × TPOT) = R (bisection; every term
  grows with X); the C - R waiting requests add (C - R) / X to TTFT, so X × e2e = C holds.
- Optionally the benchmark's start: `requests_per_slot` = n sends n × C requests, the first
  C at once, so 1/n of the TTFTs queue behind a burst of C prefills.

Assumptions: no prefix-cache hits, no speculative decoding, no disaggregated prefill;
prompts of others arrive spread out (not in lock-step); means, not distributions.
At C = 1 with fixed lengths this is `estimate` exactly, plus the engine's per-request path
on the TTFT (0 for `TYPICAL`), when the prompt fits one chunk (else: one iteration per chunk).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.arraymath import Quantity
from core.iteration import RequestSteps, iteration, request_steps
from core.lengths import RequestLengths
from core.queueing import batch_wait_iterations, prompts_per_iteration
from core.replica import Replica

_BISECTIONS = 6  # then regula falsi: X × e2e(X) is smooth, so a dozen steps reach 1e-12
_SECANTS = 12
_BATCH_PASSES = 6  # the first is all it takes unless prompts queue


@dataclass(frozen=True, slots=True)
class ClosedLoop:
    """Means over requests at each concurrency (numpy arrays, one entry per C; floats for one C)."""

    concurrency: Quantity
    running: Quantity  # requests holding KV cache: min(C, max_concurrency_that_fits)
    max_concurrency_that_fits: int
    ttft_s: Quantity
    tpot_s: Quantity
    e2e_s: Quantity
    queue_wait_s: Quantity  # part of TTFT spent waiting for a KV-cache slot (C above the fit)
    requests_per_s: Quantity
    tokens_per_s_per_user: Quantity
    output_tokens_per_s_per_gpu: Quantity
    total_tokens_per_s_per_gpu: Quantity


class _Cycle:
    """One running request's cycle as a function of the throughput X (arrays over C)."""

    def __init__(self, replica: Replica, steps: RequestSteps, running: np.ndarray, output_tokens: float) -> None:
        self.others = running - 1
        self.busy = np.minimum(self.others, 1.0)  # 0 at C = 1: nobody else keeps the engine busy
        self.share = self.others / running  # of the throughput, the others' arrivals
        self.steps, self.output_tokens = steps, output_tokens
        self.window = replica.engine.prefill_batch_wait_iterations
        # Mixed and prefill times are linear in the prompts an iteration carries (1..most).
        span = np.maximum(steps.most_prompts - 1, 1e-12)
        self.carry_one_s = steps.chunks * steps.mixed_one_s
        self.carry_slope_s = steps.chunks * (steps.mixed_most_s - steps.mixed_one_s) / span
        self.stall_one_s = self.carry_one_s - steps.chunks * steps.decode_s
        self.prefill_slope_s = (steps.prefill_most_s - steps.prefill_one_s) / span
        # What no X changes: the server's path in and the iteration already launched.
        self.fixed_s = replica.machine.request_overhead_s + self.busy * steps.decode_s

    def tpot_s(self, rate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """TPOT, and the prompts an iteration carries, at throughput X."""
        arrivals = rate * self.share
        prompts = prompts_per_iteration(arrivals * self.steps.decode_s, self.steps.most_prompts)
        # One prompt's stall: the carrying iteration's extra time, shared by the prompts in it.
        stall = (self.stall_one_s + self.carry_slope_s * (prompts - 1)) / prompts
        return np.asarray(self.steps.decode_s / np.maximum(1 - arrivals * stall, 1e-12), dtype=float), prompts

    def ttft_s(self, rate: np.ndarray, tpot: np.ndarray, prompts: np.ndarray) -> np.ndarray:
        arrivals = rate * self.share
        prefill = self.steps.prefill_one_s + self.prefill_slope_s * (prompts - 1)
        # Prompts wait for the iterations carrying earlier prompts (Kingman, ca² = 1, deterministic
        # service): light at one prompt per iteration, a queue once even budget-full ones cannot
        # keep up. At most every other running request is ahead.
        carry = self.carry_one_s + self.carry_slope_s * (prompts - 1)
        load = np.minimum(arrivals * carry / prompts, 1 - 1e-12)
        wait = np.minimum(load / (1 - load) * carry / 2, self.others * prefill)
        if self.window:
            wait = wait + self.busy * batch_wait_iterations(self.window, arrivals * tpot) * tpot
        return np.asarray(self.fixed_s + wait + prefill, dtype=float)

    def excess(self, rate: np.ndarray) -> np.ndarray:
        """X × e2e(X) − R: negative below the throughput Little's law allows, positive above."""
        tpot, prompts = self.tpot_s(rate)
        return np.asarray(rate * (self.ttft_s(rate, tpot, prompts) + self.output_tokens * tpot) - (self.others + 1))


def _solve_rate(cycle: _Cycle) -> np.ndarray:
    """The X where X × e2e(X) = R: a few bisections, then Illinois (regula falsi) steps.

    X × e2e(X) grows with X from 0, and at X = R / e2e(0) it is already ≥ R (e2e only grows).
    """
    running = cycle.others + 1
    lone = cycle.fixed_s + cycle.steps.prefill_one_s + cycle.output_tokens * cycle.steps.decode_s
    if not np.any(cycle.others):
        # Alone (C = 1) nothing else arrives, so no term depends on X: Little's law is exact at
        # once. A plan asks this of every candidate (can it stream fast enough even alone?).
        return np.asarray(running / lone, dtype=float)
    low, high = np.zeros_like(running), running / lone
    f_low, f_high = -running, cycle.excess(high)
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        f_middle = cycle.excess(middle)
        above = f_middle > 0
        low, f_low = np.where(above, low, middle), np.where(above, f_low, f_middle)
        high, f_high = np.where(above, middle, high), np.where(above, f_middle, f_high)
    for _ in range(_SECANTS):
        span = f_high - f_low
        guess = np.where(span > 0, (low * f_high - high * f_low) / np.where(span > 0, span, 1.0), low)
        f_guess = cycle.excess(guess)
        above = f_guess > 0
        # Illinois: halve the stale end's value so the bracket keeps shrinking from both sides.
        f_low = np.where(above, f_low / 2, f_guess)
        low = np.where(above, low, guess)
        f_high = np.where(above, f_guess, f_high / 2)
        high = np.where(above, guess, high)
    weight = np.where(f_high - f_low > 0, -f_low / np.where(f_high > f_low, f_high - f_low, 1.0), 0.0)
    return np.asarray(low + (high - low) * weight, dtype=float)


def _burst_ttft_s(
    replica: Replica, lengths: RequestLengths, running: np.ndarray, first_prefill_s: np.ndarray
) -> np.ndarray:
    """Mean TTFT of R requests sent at once to an idle engine: own prefill + (R-1)/2 prompts ahead.

    Prompts are packed FCFS into iterations of the engine's token budget (whole prompts
    when it does not chunk), the already-prefilled ones decoding alongside (R/2 on average).
    """
    engine, prompt = replica.engine, lengths.mean_prompt_tokens
    decoding = running / 2
    room = np.maximum(engine.max_batched_tokens - decoding, 1.0)
    per_iteration = room / prompt if engine.chunked_prefill else np.maximum(np.floor(room / prompt), 1.0)
    tokens = per_iteration * prompt
    chunks = np.maximum(1 / per_iteration, 1.0)
    burst = iteration(
        replica,
        decoding,
        prompt,
        tokens,
        prompt * (chunks - 1) / (2 * chunks),
        np.maximum(per_iteration, 1.0),
    ).time_s
    return np.asarray(replica.machine.request_overhead_s + first_prefill_s + (running - 1) / 2 * burst / per_iteration)


def closed_loop(
    replica: Replica, lengths: RequestLengths, concurrency: Quantity, requests_per_slot: float | None = None
) -> ClosedLoop:
    """Mean TTFT, TPOT, e2e and throughput with at most `concurrency` requests in flight.

    `concurrency`: an int or an array of them (one vectorised evaluation). Example: the
    lesson's toy worked in tests/core/test_serving.py (C = 8, fixed lengths).
    """
    scalar = np.ndim(concurrency) == 0
    c = np.atleast_1d(np.asarray(concurrency, dtype=float))
    if np.any(c < 1):
        raise ValueError(f"concurrency must be >= 1, got {concurrency!r}")
    fits = replica.max_concurrency_that_fits(lengths)
    running = np.minimum(c, max(fits, 0))
    if fits == 0:
        return _nothing_fits(replica, c, scalar)
    prompt, output = lengths.mean_prompt_tokens, lengths.mean_output_tokens
    context = lengths.mean_decode_context_tokens
    # Beside a running request the others decode, except while they wait for their prefill: a
    # share that matters only when prompts queue (then the decode batch is smaller). Where the
    # share is below 98 %, the batch b solves b = (R − 1) × share(b) by secant steps
    # (share falls as b grows: more decodes leave less of the token budget to prompts).
    others = running - 1
    decoding, previous, gap_before = others, others, np.zeros_like(others)
    for _ in range(_BATCH_PASSES):
        steps = request_steps(replica, prompt, context, decoding + 1, decoding)
        cycle = _Cycle(replica, steps, running, output)
        rate = _solve_rate(cycle)
        tpot, prompts = cycle.tpot_s(rate)
        running_ttft = cycle.ttft_s(rate, tpot, prompts)
        share = output * tpot / (running_ttft + output * tpot)
        gap = others * share - decoding  # ≤ 0: fewer decode than assumed
        if np.all((share >= 0.98) | (np.abs(gap) <= 1e-3 * np.maximum(others, 1))):
            break
        slope = np.where(
            decoding != previous, (gap - gap_before) / np.where(decoding != previous, decoding - previous, 1), -1.0
        )
        step = np.where(slope < 0, -gap / slope, gap)
        previous, gap_before = decoding, gap
        decoding = np.where(share >= 0.98, others, np.clip(decoding + step, 0.0, others))
    rate = running / (running_ttft + output * tpot)  # exactly Little's, whatever the solver's last digit
    queue_wait = (c - running) / rate
    ttft = running_ttft + queue_wait
    if requests_per_slot is not None:
        if requests_per_slot < 1:
            raise ValueError(f"requests_per_slot must be >= 1, got {requests_per_slot!r}")
        burst = _burst_ttft_s(replica, lengths, running, _lone_prefill_s(replica, lengths))
        first_wave = (running * burst + (c - running) * ttft) / c
        ttft = first_wave / requests_per_slot + ttft * (1 - 1 / requests_per_slot)
    e2e = ttft + output * tpot
    rate = c / e2e  # Little's law over everyone in flight, waiting or running
    gpus = replica.gpu_count
    result = ClosedLoop(
        concurrency=c,
        running=running,
        max_concurrency_that_fits=fits,
        ttft_s=ttft,
        tpot_s=tpot,
        e2e_s=e2e,
        queue_wait_s=queue_wait,
        requests_per_s=rate,
        tokens_per_s_per_user=1 / tpot,
        output_tokens_per_s_per_gpu=rate * output / gpus,
        total_tokens_per_s_per_gpu=rate * (prompt + output) / gpus,
    )
    return _squeezed(result) if scalar else result


def _lone_prefill_s(replica: Replica, lengths: RequestLengths) -> np.ndarray:
    """The prompt's prefill on an otherwise idle engine (the first request of a burst)."""
    steps = request_steps(replica, lengths.mean_prompt_tokens, lengths.mean_decode_context_tokens, 1.0, 0.0)
    return np.asarray(steps.prefill_one_s, dtype=float)


def _nothing_fits(replica: Replica, c: np.ndarray, scalar: bool) -> ClosedLoop:
    inf, zero = np.full_like(c, np.inf), np.zeros_like(c)
    result = ClosedLoop(c, zero, 0, inf, inf, inf, inf, zero, zero, zero, zero)
    return _squeezed(result) if scalar else result


def _squeezed(result: ClosedLoop) -> ClosedLoop:
    values: dict[str, Any] = {}
    for name in ClosedLoop.__slots__:
        value = getattr(result, name)
        values[name] = value if isinstance(value, int) else float(np.asarray(value)[0])
    return ClosedLoop(**values)
