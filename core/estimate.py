"""One scenario in, every headline number out: the answer the CLI prints and the app shows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy.typing as npt

from core.batching import BatchSweep, critical_batch, largest_host_bound_batch, sweep_batch_sizes
from core.billing import ReplyCost, SelfHosting, monthly_cost_usd, reply_cost, self_hosting
from core.checks import memory_problem
from core.memory import MemoryPlan, memory_plan
from core.parallel import Machine
from core.phases import Step
from core.reply import Latency, MeanDecodeStep, latency
from core.roofline import Bound
from core.scenario import Scenario


@dataclass(frozen=True, slots=True)
class Estimate:
    """Latency, throughput, memory and money for one scenario."""

    scenario: Scenario
    machine: Machine
    latency: Latency
    memory: MemoryPlan
    reply_cost: ReplyCost
    # None when the GPU has no rental price or the batch does not fit: see self_hosting_problem.
    self_hosting: SelfHosting | None

    @property
    def prefill(self) -> Step:
        """The batch's prefill pass; its time is the TTFT."""
        return self.latency.prefill

    @property
    def decode(self) -> MeanDecodeStep:
        """The decode step: the mean over the reply's steps (bytes, FLOPs, time), the only one there is.

        Its time is the TPOT, its intensity mean FLOPs ÷ mean bytes, its bound follows from
        that; `critical_batch` and `sweep_batch_sizes` given the prompt and reply length
        average the same steps.
        """
        return self.latency.decode

    @property
    def critical_batch(self) -> int | None:
        """The smallest batch whose decode step (the mean over this reply) reaches the ridge; None: never."""
        s, w = self.scenario, self.scenario.workload
        return critical_batch(s.model, s.precision, self.machine, w.prompt_tokens, w.output_tokens)

    @property
    def host_bound_batch(self) -> int | None:
        """The largest batch whose every decode step (this reply's) waits on the host's launches; None: not an eager engine."""
        s, w = self.scenario, self.scenario.workload
        return largest_host_bound_batch(s.model, s.precision, self.machine, w.prompt_tokens, w.output_tokens)

    def batch_sweep(self, batch_sizes: npt.ArrayLike) -> BatchSweep:
        """This reply's decode step (the mean over its steps) at each batch size, against the group's memory."""
        s, w = self.scenario, self.scenario.workload
        memory_bytes = s.gpu.memory_bytes * w.gpu_count
        return sweep_batch_sizes(
            s.model,
            s.precision,
            self.machine,
            batch_sizes,
            w.prompt_tokens,
            w.sequence_tokens,
            memory_bytes,
            w.output_tokens,
        )

    @property
    def self_hosting_problem(self) -> str | None:
        """Why there is no self-hosting figure ("not possible: ... does not fit ..."), or None when there is one."""
        if self.self_hosting is not None:
            return None
        if self.scenario.gpu.price_usd_per_hour is None:
            return "no rental price for this GPU"
        return f"not possible: {memory_problem(self.scenario, self.memory)}"

    @property
    def ttft_s(self) -> float:
        return self.latency.ttft_s

    @property
    def tpot_s(self) -> float:
        """The decode step's time: the mean over the reply (steps grow with context when there is a KV cache)."""
        return self.latency.tpot_s

    @property
    def total_s(self) -> float:
        return self.latency.total_s

    @property
    def decode_bound(self) -> Bound:
        return self.decode.bound

    @property
    def output_tokens_per_s(self) -> float:
        """The whole batch: B × M output tokens ÷ (prefill of the batch + decoding it)."""
        workload = self.scenario.workload
        return workload.batch_size * workload.output_tokens / self.latency.total_s

    @property
    def per_request_tokens_per_s(self) -> float:
        """What one user sees streaming: 1 ÷ TPOT."""
        return 1 / self.tpot_s

    @property
    def output_token_vs_prompt_token(self) -> float:
        """How many prompt tokens cost the time of one output token (the lesson's 150x)."""
        return self.tpot_s / (self.prefill.time_s / self.scenario.workload.new_prompt_tokens)

    @property
    def cost_per_reply_usd(self) -> float:
        return self.reply_cost.total_usd

    @property
    def monthly_cost_usd(self) -> float:
        pricing = self.scenario.pricing
        return float(monthly_cost_usd(self.cost_per_reply_usd, pricing.replies_per_day, pricing.days_per_month))


def estimate(scenario: Scenario) -> Estimate:
    """Run the cost model on one scenario.

    Example (the lesson's Part 3 long reply, the default scenario): TTFT 9.33 ms, TPOT
    7.00 ms, total 3,509.33 ms, $0.000850 a reply, $2,550 a month.
    """
    model, precision, workload = scenario.model, scenario.precision, scenario.workload
    machine = scenario.machine
    batch, output = workload.batch_size, workload.output_tokens
    line = latency(model, precision, machine, workload.prompt_tokens, output, batch, workload.cached_prompt_tokens)
    cost = reply_cost(
        scenario.pricing, workload.prompt_tokens, output, workload.cached_prompt_tokens, workload.cache_write_tokens
    )
    price = scenario.gpu.price_usd_per_hour
    plan = memory_plan(model, precision, scenario.gpu.memory_bytes, workload.gpu_count, batch, workload.sequence_tokens)
    return Estimate(
        scenario=scenario,
        machine=machine,
        latency=line,
        memory=plan,
        reply_cost=cost,
        # A setup that cannot hold its batch has no price per token and no break-even.
        self_hosting=None
        if price is None or not plan.fits
        else self_hosting(price, workload.gpu_count, batch, output, line.total_s, cost.total_usd),
    )
