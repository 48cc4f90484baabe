"""The reply end to end: its decode steps averaged into the one decode step, and the latency line.

total = TTFT + Σ decode steps (Databricks/Mosaic, "LLM Inference Performance Engineering",
2023, for TTFT and TPOT). The decode step every page and the CLI report is the mean over
the reply's steps; its time is the TPOT.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.parallel import Machine
from core.phases import Step, decode_time_s, mean_decode_bytes, mean_decode_flops, prefill
from core.roofline import RooflinePoint
from core.specs import Model, Precision
from core.step_time import decode_fixed_time_s, decode_times_s, step_balance, waits_on_host


@dataclass(frozen=True, slots=True)
class MeanDecodeStep(RooflinePoint):
    """The decode step: the mean over the reply's M steps, the one definition every number uses.

    Step j (j = 0..M-1) reads the weights and B caches of prompt + j tokens and computes B
    tokens attending over prompt + j + 1. `flops` and `bytes_moved` are means over the M
    steps, so intensity = mean FLOPs ÷ mean bytes and the bound follows from it; `time_s`
    is the mean step time, Σ step times ÷ M: the TPOT. A reply that crosses the ridge
    (compute-bound early, memory-bound once the caches grow) takes longer than
    max(memory_time_s, compute_time_s) + fixed_time_s, which time the means alone. With no
    KV cache every step is the same and this is that step. An eager engine's steps take at
    least `host_time_s`, its launches, which then overlap the rest.
    """

    flops: float
    bytes_moved: float
    memory_time_s: float  # mean bytes ÷ bandwidth
    compute_time_s: float  # mean FLOPs ÷ compute
    fixed_time_s: float  # per-step overhead (unless the host's), per-sequence overhead and all-reduces
    total_time_s: float  # Σ of the M step times
    balance_flop_per_byte: float
    context_tokens: float  # the mean context the steps read: prompt + (M - 1) / 2
    steps: int
    host_time_s: float = 0.0  # an eager engine's launches per step, overlapping the rest (Machine.host_time_s)

    @property
    def time_s(self) -> float:
        return self.total_time_s / self.steps

    @property
    def host_bound(self) -> bool:
        """Every step of the reply waits on the host's launches (an eager engine): its time is theirs."""
        return bool(waits_on_host(self.time_s, self.host_time_s))


def mean_decode_step(
    model: Model, precision: Precision, machine: Machine, prompt_tokens: int, output_tokens: int, batch_size: int = 1
) -> MeanDecodeStep:
    """The reply's M = output_tokens decode steps at batch B, averaged (see MeanDecodeStep).

    Example: Llama 3.1 8B, batch 512, prompt 100, reply 4,000 → mean context 2,099.5;
    bytes 16.06e9 + 512 × 131,072 × 2,099.5 = 156.96 GB; FLOPs 512 × (2 × 8.03e9 +
    524,288 × 2,100.5) = 8.787 TFLOP → 55.98 FLOP/byte, one number for every page.
    """
    flops = float(mean_decode_flops(model, batch_size, prompt_tokens, output_tokens))
    bytes_moved = float(
        mean_decode_bytes(model, precision, batch_size, prompt_tokens, output_tokens, machine.gpu_count)
    )
    fixed_s = float(decode_fixed_time_s(model, machine, batch_size))
    total_s = float(decode_time_s(model, precision, machine, prompt_tokens, output_tokens, batch_size, fixed_s))
    memory_s, compute_s = (float(t) for t in decode_times_s(model, precision, machine, batch_size, flops, bytes_moved))
    return MeanDecodeStep(
        flops=flops,
        bytes_moved=bytes_moved,
        memory_time_s=memory_s,
        compute_time_s=compute_s,
        fixed_time_s=fixed_s,
        total_time_s=total_s,
        balance_flop_per_byte=step_balance(machine, flops, bytes_moved, compute_s, memory_s),
        context_tokens=prompt_tokens + (output_tokens - 1) / 2,
        steps=output_tokens,
        host_time_s=machine.host_time_s,
    )


@dataclass(frozen=True, slots=True)
class Latency:
    """One request end to end: TTFT (the server's path, then the prefill), then the decode steps."""

    prefill: Step
    decode: MeanDecodeStep  # its time is the TPOT
    request_overhead_s: float = 0.0  # the server's path per request (Efficiency.request_overhead_s)

    @property
    def ttft_s(self) -> float:
        return self.request_overhead_s + self.prefill.time_s

    @property
    def decode_s(self) -> float:
        return self.decode.total_time_s

    @property
    def total_s(self) -> float:
        return self.ttft_s + self.decode_s

    @property
    def tpot_s(self) -> float:
        return self.decode.time_s

    @property
    def output_tokens(self) -> int:
        return self.decode.steps


def latency(
    model: Model,
    precision: Precision,
    machine: Machine,
    prompt_tokens: int,
    output_tokens: int,
    batch_size: int = 1,
    cached_tokens: int = 0,
) -> Latency:
    """total = TTFT + Σ decode steps; with no KV cache exactly TTFT + M × TPOT.

    TTFT = the server's path per request (0 for an engine run in-process) + the prefill.

    Example (the lesson, Part 3): 200-token prompt, 500-token reply on the toy machine →
    9.33 ms + 500 × 7.00 ms = 3,509.33 ms.
    """
    return Latency(
        prefill=prefill(model, precision, machine, prompt_tokens, batch_size, cached_tokens),
        decode=mean_decode_step(model, precision, machine, prompt_tokens, output_tokens, batch_size),
        request_overhead_s=machine.request_overhead_s,
    )
