"""One wave: C requests sent at once to an idle engine and none replaced.

This is a benchmark run with as many prompts as its concurrency cap (`vllm bench serve
--num-prompts C --max-concurrency C`, or a burst of C requests by hand). The closed loop's
steady state (`core.closed_loop`) does not describe it: there, a finished request is replaced at
once and every reply is interrupted by the replacements' prefills; here, once the C prompts are
in, nothing interrupts the replies, which stream at the decode rate of the sequences still
running. The first prompts' replies do ride along the rest of the burst's prefills.

Simulated iteration by iteration on `core.iteration`'s step time (deterministic; the lengths at
their means, which is exact for fixed lengths). Each iteration decodes one token for every
running sequence and fills the rest of the engine's token budget with the waiting prompts in
order: chunked, the decodes counting against the budget (vLLM, SGLang), or whole prompts (an
engine without chunked prefill); at most `max_concurrency_that_fits` sequences hold KV cache,
the others wait for a slot. A prompt's last chunk emits its first token; its reply's other
M - 1 tokens take one iteration each. Once every prompt is in, the iterations until the next
reply ends differ only in context, so they are one vectorised call.

Means over the C requests, as the benchmark reports them: TTFT (the server's per-request path
added, as in the closed loop), TPOT = (last token - first token) / (M - 1), e2e; throughput by
Little's law, X = C / e2e. Example: tests/core/test_one_wave.py works one by hand.
`benchmark_run` is where a benchmark's number of requests picks this or `closed_loop`, for
`serve --num-prompts` and the serving files alike.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from core.arraymath import Quantity
from core.closed_loop import ClosedLoop, closed_loop
from core.iteration import iteration
from core.lengths import RequestLengths
from core.replica import Replica


def one_wave(replica: Replica, lengths: RequestLengths, concurrency: int) -> ClosedLoop:
    """Means over C requests sent at once, none replaced (floats, like `closed_loop` for one C)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency!r}")
    fits = replica.max_concurrency_that_fits(lengths)
    c = float(concurrency)
    if fits == 0:
        inf = math.inf
        return ClosedLoop(c, 0.0, 0, inf, inf, inf, inf, 0.0, 0.0, 0.0, 0.0)
    wave = _Wave(replica, lengths.mean_prompt_tokens, max(round(lengths.mean_output_tokens), 1), concurrency, fits)
    wave.run()
    machine = replica.machine
    running = min(concurrency, fits)
    path = machine.request_overhead_s + machine.stream_overhead_s * (running - 1)
    ttft = path + wave.first_token_s_total / c
    e2e = path + wave.last_token_s_total / c
    tpot = wave.tpot_s_total / c
    rate = c / e2e
    gpus = replica.gpu_count
    return ClosedLoop(
        concurrency=c,
        running=float(running),
        max_concurrency_that_fits=fits,
        ttft_s=ttft,
        tpot_s=tpot,
        e2e_s=e2e,
        queue_wait_s=wave.slot_wait_s_total / c,
        requests_per_s=rate,
        tokens_per_s_per_user=1 / tpot,
        output_tokens_per_s_per_gpu=rate * lengths.mean_output_tokens / gpus,
        total_tokens_per_s_per_gpu=rate * (lengths.mean_prompt_tokens + lengths.mean_output_tokens) / gpus,
    )


def benchmark_run(
    replica: Replica, lengths: RequestLengths, concurrency: Quantity, requests_per_slot: float | None
) -> ClosedLoop:
    """A closed-loop benchmark as it ran: n × C requests, the first C at once (`requests_per_slot` n).

    n = 1 sent no more than the cap: one wave (simulated here, per concurrency); any other n is
    `closed_loop`'s steady state with the benchmark's start; None, the steady state alone.
    """
    if requests_per_slot != 1:
        return closed_loop(replica, lengths, concurrency, requests_per_slot)
    if np.ndim(concurrency) == 0:
        return one_wave(replica, lengths, int(concurrency))
    waves = [one_wave(replica, lengths, int(c)) for c in np.asarray(concurrency)]
    values: dict[str, Any] = {name: np.array([getattr(w, name) for w in waves]) for name in ClosedLoop.__slots__}
    values["max_concurrency_that_fits"] = waves[0].max_concurrency_that_fits
    return ClosedLoop(**values)


class _Wave:
    """The wave's state: prompts waiting, replies decoding (in cohorts that got their first token together)."""

    def __init__(self, replica: Replica, prompt: float, output: int, concurrency: int, fits: int) -> None:
        self.replica, self.prompt, self.output = replica, prompt, output
        self.limit = min(concurrency, fits)  # sequences that may hold KV cache at once
        self.waiting = concurrency  # prompts not yet fully prefilled (the one begun included)
        self.begun = 0  # prompts whose prefill has started
        self.head_left = 0.0  # tokens left of a prompt begun but not finished (chunked engines)
        self.clock_s = 0.0
        # Cohorts: [requests, tokens generated after the first, time of the first token].
        self.cohorts: list[list[float]] = []
        self.first_token_s_total = 0.0  # sums over requests
        self.last_token_s_total = 0.0
        self.tpot_s_total = 0.0
        self.slot_wait_s_total = 0.0  # before a slot, for the prompts beyond the first `limit`

    @property
    def decoding(self) -> float:
        return sum(cohort[0] for cohort in self.cohorts)

    def _context(self, decoding: float) -> float:
        return sum(n * (self.prompt + generated) for n, generated, _ in self.cohorts) / decoding if decoding else 0.0

    def run(self) -> None:
        while self.waiting:
            if self.limit - self.decoding < 1:
                # Every slot holds a reply: no prompt can start until one ends, so those iterations are the
                # same decodes, one vectorised call (one Python iteration each took hours for 10,000 requests
                # of 100,000 tokens that fit a few hundred at a time).
                self._decode_until_a_reply_ends()
            else:
                self._prefill_iteration()
        while self.cohorts:
            self._decode_until_a_reply_ends()

    def _prefill_iteration(self) -> None:
        engine, decoding = self.replica.engine, self.decoding
        room = max(engine.max_batched_tokens - decoding, 1.0)
        slots = self.limit - decoding  # the prompt begun already holds one of them
        tokens = prefix = 0.0
        prompts = finished = 0
        if engine.chunked_prefill:
            while room > 0 and prompts < slots and finished < self.waiting:
                left = self.head_left or self.prompt
                if not self.head_left:
                    self._begin()
                take = min(room, left)
                tokens, prefix, room, prompts = tokens + take, prefix + self.prompt - left, room - take, prompts + 1
                if take < left:
                    self.head_left = left - take
                    break
                self.head_left, finished = 0.0, finished + 1
        elif slots >= 1:
            finished = prompts = int(min(max(math.floor(room / self.prompt), 1), slots, self.waiting))
            for _ in range(prompts):
                self._begin()
            tokens = prompts * self.prompt
        if not tokens and not decoding:
            raise RuntimeError("a wave iteration with nothing to do")  # cannot happen: limit >= 1
        step = iteration(self.replica, decoding, self._context(decoding), tokens, prefix / max(prompts, 1), prompts)
        self.clock_s += float(step.time_s)
        self._advance(1)
        self.waiting -= finished
        if finished:
            self.cohorts.append([float(finished), 0.0, self.clock_s])
        self._end_replies()  # replies that ended free their slots for the prompts still waiting

    def _begin(self) -> None:
        if self.begun >= self.limit:  # it waited for a slot until now
            self.slot_wait_s_total += self.clock_s
        self.begun += 1

    def _decode_until_a_reply_ends(self) -> None:
        """Every iteration until the next reply ends: the same sequences, the context one token longer each time."""
        decoding = self.decoding
        steps = int(self.output - 1 - max(generated for _, generated, _ in self.cohorts))
        context = self._context(decoding) + np.arange(steps)
        times = iteration(self.replica, np.full(steps, decoding), context).time_s
        self.clock_s += float(np.sum(times))
        self._advance(steps)
        self._end_replies()

    def _advance(self, steps: int) -> None:
        for cohort in self.cohorts:
            cohort[1] += steps

    def _end_replies(self) -> None:
        done = [cohort for cohort in self.cohorts if cohort[1] >= self.output - 1]
        for n, _, first_s in done:
            self.first_token_s_total += n * first_s
            self.last_token_s_total += n * self.clock_s
            # One-token replies have no time per output token: the next iteration's, alone.
            per_token = (self.clock_s - first_s) / (self.output - 1) if self.output > 1 else self._lone_decode_s()
            self.tpot_s_total += n * per_token
        self.cohorts = [cohort for cohort in self.cohorts if cohort[1] < self.output - 1]

    def _lone_decode_s(self) -> float:
        return float(iteration(self.replica, 1.0, self.prompt).time_s)
