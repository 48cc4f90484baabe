"""Closed loop: at most C requests in flight, a new one sent as soon as one finishes.

This is how vLLM's `benchmark_serving --max-concurrency C` and InferenceX measure a server.
The model is a steady state over the iterations of `core.iteration`, vectorised over C:

- Running R = min(C, the concurrency whose KV cache fits); the other C - R wait for a slot.
- A reply's token takes a decode iteration of the R sequences decoding, stretched by the
  other requests' prompts riding along: TPOT = decode / (1 - X_o × stall), where X_o is
  the others' arrival rate and stall = what one prompt adds to the iterations it rides in.
  An iteration takes every prompt that arrived during the last one (up to the token
  budget), so under load several prompts share one iteration's fixed costs and decodes.
- TTFT = the server's per-request path (`request_overhead_s`, plus `stream_overhead_s` for
    each of the R - 1 others streaming: its first token leaves through the same server loop)
  + one decode iteration already launched when the request arrives (none at C = 1)
  + waiting for iterations that carry earlier prompts (Kingman, ca² = 1), which becomes a
    queue once even budget-full iterations cannot keep up
  + the engine's batch-wait hold, if any + its own prefill (chunked, the others decoding).
- Throughput X solves Little's law, X × (TTFT + M × TPOT) = R (bisection; every term
  grows with X); the C - R waiting requests add (C - R) / X to TTFT, so X × e2e = C holds.
- Optionally the benchmark's start: `requests_per_slot` = n sends n × C requests, the first
  C at once, so 1/n of the TTFTs queue behind a burst of C prefills. A run of C requests
  alone (n = 1) is no steady state at all: `core.one_wave` simulates it.

Assumptions: no prefix-cache hits, no speculative decoding, no disaggregated prefill;
prompts of others arrive spread out (not in lock-step); means, not distributions.
Many setups at once (a plan's frontiers): `closed_loops`, one pass, the same numbers to the bit.
At C = 1 with fixed lengths this is `estimate` exactly, plus the engine's per-request path
on the TTFT (0 for `TYPICAL`), when the prompt fits one chunk (else: one iteration per chunk),
but for an eager engine's reply that crosses its host's floor midway (`Machine.host_time_s`):
the loop times a decode iteration at the mean context, max(GPU, host) of the mean, where
`estimate` averages each step's max (a reply wholly on either side of the floor agrees).
"""

from __future__ import annotations

from collections.abc import Sequence
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
_SUBSTITUTIONS = 2  # prompts per iteration ↔ TPOT, a call: from the last call's TPOT, the solve converges them too


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

    def __init__(self, paths: _Paths, steps: RequestSteps, running: np.ndarray, output_tokens: float) -> None:
        self.others = running - 1
        self.busy = np.minimum(self.others, 1.0)  # 0 at C = 1: nobody else keeps the engine busy
        self.share = self.others / running  # of the throughput, the others' arrivals
        self.steps, self.output_tokens = steps, output_tokens
        self.window, self.windowed = paths.window, bool(np.any(paths.window))
        # Mixed and prefill times are linear in the prompts an iteration carries (1..most).
        span = np.maximum(steps.most_prompts - 1, 1e-12)
        self.carry_one_s = steps.chunks * steps.mixed_one_s
        self.carry_slope_s = steps.chunks * (steps.mixed_most_s - steps.mixed_one_s) / span
        self.stall_one_s = self.carry_one_s - steps.chunks * steps.decode_s
        self.prefill_slope_s = (steps.prefill_most_s - steps.prefill_one_s) / span
        # What no X changes: the server's path in (longer the more others stream) and the iteration already launched.
        self.fixed_s = paths.overhead_s + paths.per_stream_s * self.others + self.busy * steps.decode_s
        self._tpot = steps.decode_s  # where `tpot_s`'s substitutions start

    def tpot_s(self, rate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """TPOT, and the prompts an iteration carries, at throughput X.

        An iteration takes the prompts that arrived during the last one, and the mean iteration is a TPOT
        (every running sequence gains a token in each): prompts = P(arrivals × TPOT), TPOT = decode ÷
        (1 − arrivals × stall(prompts)), solved together: two substitutions a call, each call starting
        from the last one's TPOT (the first from a plain decode's), so the pair converges as the solve's
        rates do (to the fixed point twelve substitutions from scratch reach). Sized on a plain decode alone, an 8B model on an H200 at 768 in flight carried 2.1 prompts
        an iteration where its budget-full ones carry 7.4, so its prompts queued for 9.4 s (a simulation
        of the same iterations: 0.1 s) and its TPOT read 55 ms (99 ms).
        """
        arrivals = rate * self.share
        tpot = self._tpot  # the last call's: the solver asks at rates ever closer, so a couple a call converge
        for _ in range(_SUBSTITUTIONS):
            prompts = prompts_per_iteration(arrivals * tpot, self.steps.most_prompts)
            # One prompt's stall: the carrying iteration's extra time, shared by the prompts in it.
            stall = (self.stall_one_s + self.carry_slope_s * (prompts - 1)) / prompts
            tpot = self.steps.decode_s / np.maximum(1 - arrivals * stall, 1e-12)
        self._tpot = tpot
        return np.asarray(tpot, dtype=float), np.asarray(prompts, dtype=float)

    def ttft_s(self, rate: np.ndarray, tpot: np.ndarray, prompts: np.ndarray) -> np.ndarray:
        arrivals = rate * self.share
        prefill = self.steps.prefill_one_s + self.prefill_slope_s * (prompts - 1)
        # Prompts wait for the iterations carrying earlier prompts (Kingman, ca² = 1, deterministic
        # service): light at one prompt per iteration, a queue once even budget-full ones cannot
        # keep up. At most every other running request is ahead.
        carry = self.carry_one_s + self.carry_slope_s * (prompts - 1)
        load = np.minimum(arrivals * carry / prompts, 1 - 1e-12)
        wait = np.minimum(load / (1 - load) * carry / 2, self.others * prefill)
        if self.windowed:  # a window of 0 adds exactly 0 where setups are stacked
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
    # Alone (C = 1) nothing else arrives, so no term depends on X: Little's law is exact at
    # once. A plan asks this of every candidate (can it stream fast enough even alone?).
    alone = np.asarray(running / lone, dtype=float)
    if not np.any(cycle.others):
        return alone
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
    return np.asarray(np.where(cycle.others == 0, alone, low + (high - low) * weight), dtype=float)


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
    machine = replica.machine
    path = machine.request_overhead_s + machine.stream_overhead_s * (running - 1)
    return np.asarray(path + first_prefill_s + (running - 1) / 2 * burst / per_iteration)


def closed_loop(
    replica: Replica, lengths: RequestLengths, concurrency: Quantity, requests_per_slot: float | None = None
) -> ClosedLoop:
    """Mean TTFT, TPOT, e2e and throughput with at most `concurrency` requests in flight.

    `concurrency`: an int or an array of them (one vectorised evaluation). Example: the
    lesson's toy worked in tests/core/test_serving.py (C = 8, fixed lengths).
    """
    scalar = np.ndim(concurrency) == 0
    (result,) = closed_loops([(replica, concurrency)], lengths)
    if requests_per_slot is not None and result.max_concurrency_that_fits:
        if requests_per_slot < 1:
            raise ValueError(f"requests_per_slot must be >= 1, got {requests_per_slot!r}")
        result = _benchmark_start(replica, lengths, result, requests_per_slot)
    return _squeezed(result) if scalar else result


def closed_loops(asked: Sequence[tuple[Replica, Quantity]], lengths: RequestLengths) -> list[ClosedLoop]:
    """Each (replica, concurrencies)'s `closed_loop` (arrays), every setup's solve in one pass.

    A plan's frontiers are a closed loop over a grid of ~25 concurrencies for each of dozens
    of setups: one by one, numpy's per-call overhead on arrays that small is most of the
    time. Here every setup's entries are one array through Little's law, and each setup takes
    the batch passes it would take alone (`_steady`), so the numbers are `closed_loop`'s.
    """
    found: list[ClosedLoop | None] = [None] * len(asked)
    live: list[tuple[int, Replica, np.ndarray, np.ndarray, int]] = []
    for i, (replica, concurrency) in enumerate(asked):
        c = np.atleast_1d(np.asarray(concurrency, dtype=float))
        if np.any(c < 1):
            raise ValueError(f"concurrency must be >= 1, got {concurrency!r}")
        fits = replica.max_concurrency_that_fits(lengths)
        if fits == 0:
            found[i] = _nothing_fits(c)
        else:
            live.append((i, replica, c, np.minimum(c, fits), fits))
    solved = _steady([(replica, running) for _, replica, _, running, _ in live], lengths)
    prompt, output = lengths.mean_prompt_tokens, lengths.mean_output_tokens
    for (i, replica, c, running, fits), (tpot, running_ttft) in zip(live, solved, strict=True):
        rate = running / (running_ttft + output * tpot)  # exactly Little's, whatever the solver's last digit
        queue_wait = (c - running) / rate
        ttft = running_ttft + queue_wait
        e2e = ttft + output * tpot
        rate = c / e2e  # Little's law over everyone in flight, waiting or running
        gpus = replica.gpu_count
        found[i] = ClosedLoop(
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
    return [result for result in found if result is not None]


@dataclass(frozen=True, slots=True)
class _Paths:
    """Per entry, what a setup's engine adds to every TTFT: its server path (alone, and per other stream) and its batch-wait window."""

    overhead_s: np.ndarray
    per_stream_s: np.ndarray
    window: np.ndarray


def _steady(asked: list[tuple[Replica, np.ndarray]], lengths: RequestLengths) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each (replica, running)'s (TPOT, TTFT of a running request): the setups' batch passes in step.

    Beside a running request the others decode, except while they wait for their prefill: a
    share that matters only when prompts queue (then the decode batch is smaller). Where the
    share is below 98 %, the batch b solves b = (R − 1) × share(b) by secant steps (share falls
    as b grows: more decodes leave less of the token budget to prompts). A setup stops when all
    its entries have settled, as it would alone; the others go on.
    """
    if not asked:
        return []
    prompt, output = lengths.mean_prompt_tokens, lengths.mean_output_tokens
    context = lengths.mean_decode_context_tokens
    spans = [slice(start, stop) for start, stop in _spans([len(running) for _, running in asked])]
    running = np.concatenate([r for _, r in asked])
    owner = np.repeat(np.arange(len(asked)), [len(r) for _, r in asked])
    paths = _Paths(
        overhead_s=np.array([replica.machine.request_overhead_s for replica, _ in asked])[owner],
        per_stream_s=np.array([replica.machine.stream_overhead_s for replica, _ in asked])[owner],
        window=np.array([replica.engine.prefill_batch_wait_iterations for replica, _ in asked], dtype=float)[owner],
    )
    others = running - 1
    decoding, previous, gap_before = others.copy(), others.copy(), np.zeros_like(others)
    tpot, ttft = np.empty_like(running), np.empty_like(running)
    going = np.arange(len(asked))
    rows: slice | np.ndarray = slice(None)  # every entry (a view, not a copy) until a setup has settled
    for _ in range(_BATCH_PASSES):
        each = [request_steps(asked[j][0], prompt, context, decoding[spans[j]] + 1, decoding[spans[j]]) for j in going]
        steps = each[0] if len(each) == 1 else RequestSteps.joined(each)
        cycle = _Cycle(
            _Paths(paths.overhead_s[rows], paths.per_stream_s[rows], paths.window[rows]), steps, running[rows], output
        )
        rate = _solve_rate(cycle)
        tpot[rows], prompts = cycle.tpot_s(rate)
        ttft[rows] = cycle.ttft_s(rate, tpot[rows], prompts)
        share = output * tpot[rows] / (ttft[rows] + output * tpot[rows])
        gap = others[rows] * share - decoding[rows]  # ≤ 0: fewer decode than assumed
        settled = (share >= 0.98) | (np.abs(gap) <= 1e-3 * np.maximum(others[rows], 1))
        if np.all(settled):
            break
        unsettled = np.bincount(owner[rows], weights=~settled, minlength=len(asked)) > 0
        keep = unsettled[owner[rows]]  # entries of the setups that go on
        going = np.flatnonzero(unsettled)
        rows, share, gap = np.arange(len(running))[rows][keep], share[keep], gap[keep]
        d, p = decoding[rows], previous[rows]
        slope = np.where(d != p, (gap - gap_before[rows]) / np.where(d != p, d - p, 1), -1.0)
        step = np.where(slope < 0, -gap / np.where(slope < 0, slope, -1.0), gap)  # a secant step only where it falls
        previous[rows], gap_before[rows] = d, gap
        decoding[rows] = np.where(share >= 0.98, others[rows], np.clip(d + step, 0.0, others[rows]))
    return [(tpot[span], ttft[span]) for span in spans]


def _spans(counts: list[int]) -> list[tuple[int, int]]:
    """The entries each of the joined setups holds, in order: counts 2, 3 → (0, 2), (2, 5)."""
    stops = np.cumsum(counts)
    return [(int(stop - count), int(stop)) for count, stop in zip(counts, stops, strict=True)]


def _benchmark_start(
    replica: Replica, lengths: RequestLengths, result: ClosedLoop, requests_per_slot: float
) -> ClosedLoop:
    """The benchmark's start: n × C requests sent, the first C at once, so 1/n of the TTFTs queue behind a burst."""
    c, running, output = result.concurrency, result.running, lengths.mean_output_tokens
    burst = _burst_ttft_s(replica, lengths, running, _lone_prefill_s(replica, lengths))
    first_wave = (running * burst + (c - running) * result.ttft_s) / c
    ttft = first_wave / requests_per_slot + result.ttft_s * (1 - 1 / requests_per_slot)
    # The wait for a slot mixes the same way: the first wave's `running` start at once, its others wait as
    # any later request does (the steady state's wait alone was 55 s beside a 32 s TTFT at C = 2,000, n ≈ 1).
    wait = result.queue_wait_s * ((c - running) / c / requests_per_slot + (1 - 1 / requests_per_slot))
    e2e = ttft + output * result.tpot_s
    rate = c / e2e
    gpus = replica.gpu_count
    return ClosedLoop(
        concurrency=c,
        running=running,
        max_concurrency_that_fits=result.max_concurrency_that_fits,
        ttft_s=ttft,
        tpot_s=result.tpot_s,
        e2e_s=e2e,
        queue_wait_s=wait,
        requests_per_s=rate,
        tokens_per_s_per_user=result.tokens_per_s_per_user,
        output_tokens_per_s_per_gpu=rate * output / gpus,
        total_tokens_per_s_per_gpu=rate * (lengths.mean_prompt_tokens + output) / gpus,
    )


def _lone_prefill_s(replica: Replica, lengths: RequestLengths) -> np.ndarray:
    """The prompt's prefill on an otherwise idle engine (the first request of a burst)."""
    steps = request_steps(replica, lengths.mean_prompt_tokens, lengths.mean_decode_context_tokens, 1.0, 0.0)
    return np.asarray(steps.prefill_one_s, dtype=float)


def _nothing_fits(c: np.ndarray) -> ClosedLoop:
    inf, zero = np.full_like(c, np.inf), np.zeros_like(c)
    return ClosedLoop(c, zero, 0, inf, inf, inf, inf, zero, zero, zero, zero)


def _squeezed(result: ClosedLoop) -> ClosedLoop:
    values: dict[str, Any] = {}
    for name in ClosedLoop.__slots__:
        value = getattr(result, name)
        values[name] = value if isinstance(value, int) else float(np.asarray(value)[0])
    return ClosedLoop(**values)
