"""Prefill, one decode step, and the sum of a reply's decode steps (`core.reply` adds them up).

References: the lesson (Day 36); kipply, "Transformer Inference Arithmetic" (2022);
Databricks/Mosaic, "LLM Inference Performance Engineering: Best Practices" (2023),
which defines TTFT and TPOT as here.

FLOPs per token are 2 × active parameters (one multiply and one add per weight) plus
attention over the context (`core.attention`); a step's time is the slower of its reading
and its maths plus its fixed costs (`core.step_time`). The toy model has no attention
shape, so attention and the KV cache cost nothing, exactly as in the lesson.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.arraymath import Quantity, clip, minimum, sum_of_max_of_lines, sum_of_max_of_lines_and_floor
from core.attention import attention_flops_per_token, prefill_attention_flops
from core.memory import (
    kv_cache_bytes,
    kv_token_layers,
    mean_kv_token_layers,
    stored_kv_bytes_per_token_layer,
    weight_bytes_read,
)
from core.parallel import Machine
from core.roofline import RooflinePoint
from core.specs import Model, Precision
from core.step_time import (
    compute_time_s,
    decode_fixed_time_s,
    expert_padding_flops,
    fixed_time_s,
    memory_time_s,
    step_balance,
)


@dataclass(frozen=True, slots=True)
class Step(RooflinePoint):
    """One forward pass: what it moves, what it computes, and how long it takes."""

    flops: float
    bytes_moved: float
    memory_time_s: float
    compute_time_s: float
    fixed_time_s: float  # per-step overhead (unless the host's), per-sequence costs, tensor-parallel all-reduces
    balance_flop_per_byte: float
    host_time_s: float = 0.0  # an eager engine's launches, overlapping the GPU's work (Machine.host_time_s)

    @property
    def time_s(self) -> float:
        gpu_s = max(self.memory_time_s, self.compute_time_s) + self.fixed_time_s  # step_time_s, inlined: read often
        return max(gpu_s, self.host_time_s) if self.host_time_s else gpu_s


def prefill(
    model: Model,
    precision: Precision,
    machine: Machine,
    prompt_tokens: int,
    batch_size: int = 1,
    cached_tokens: int = 0,
) -> Step:
    """Prefill: every uncached prompt token of every sequence in one parallel pass; its time is the TTFT.

    FLOPs = 2 × active params × new tokens × batch (+ attention); bytes = the weights
    once + batch × KV(prompt). The pass touches each sequence's prompt cache exactly
    once: the cached prefix's KV is read, the new tokens' KV is written, and the two
    together are the prompt's KV cache. Cached prompt tokens skip the maths: the engine
    reuses their KV cache (at least one token is always computed, to emit the first
    output). Example (the lesson, D1): 1,000 tokens of the 7B toy model →
    2 × 7e9 × 1000 / 300e12 = 46.7 ms of maths against 14e9 / 2e12 = 7 ms of reading:
    compute-bound, TTFT 46.7 ms. Llama 3.1 8B on one H100 with 99,990 of 100,000 tokens
    cached → (16.06 GB + 100,000 × 131,072 B) / 3.35 TB/s = 8.71 ms, memory-bound.
    """
    new_tokens = max(prompt_tokens - cached_tokens, 1)  # Workload.new_prompt_tokens
    cached = prompt_tokens - new_tokens
    tokens = new_tokens * batch_size
    weight_flops = 2.0 * model.active_params * tokens
    attention_flops = batch_size * prefill_attention_flops(model, cached, prompt_tokens)
    # Cached prefix read + new tokens written = the prompt's whole cache, once.
    weights = float(weight_bytes_read(model, precision, tokens))
    kv = batch_size * float(kv_cache_bytes(model, precision, prompt_tokens, 1, machine.gpu_count))
    padding = float(expert_padding_flops(model, machine, tokens))
    return _step(model, machine, weight_flops, attention_flops, weights, kv, tokens, batch_size, padding)


def _step(
    model: Model,
    machine: Machine,
    weight_flops: float,
    attention_flops: float,
    weights: float,
    kv: float,
    tokens: float,
    sequences: float,
    padding_flops: float = 0.0,
) -> Step:
    """A forward pass from its weight and attention FLOPs and its weight and KV bytes.

    `padding_flops` (`expert_padding_flops`) take time at the weights' rate but are not the
    model's FLOPs: the intensity counts the model's maths only.
    """
    flops, bytes_moved = weight_flops + attention_flops, weights + kv
    memory_s = float(memory_time_s(machine, weights, kv))  # each splits the weights' share only when dequantised
    compute_s = float(compute_time_s(machine, weight_flops + padding_flops, attention_flops))
    return Step(
        flops=flops,
        bytes_moved=bytes_moved,
        memory_time_s=memory_s,
        compute_time_s=compute_s,
        fixed_time_s=float(fixed_time_s(model, machine, tokens, sequences)),
        balance_flop_per_byte=step_balance(machine, flops, bytes_moved, compute_s, memory_s, padding_flops > 0),
        host_time_s=machine.host_time_s,
    )


def decode_flops(model: Model, batch_size: Quantity, context_tokens: Quantity) -> Quantity:
    """2 × active params × batch + batch × attention over context + 1 tokens."""
    return batch_size * (2.0 * model.active_params + attention_flops_per_token(model, context_tokens + 1))


def mean_decode_flops(model: Model, batch_size: Quantity, context_tokens: int, steps: int) -> Quantity:
    """Mean of `decode_flops` over `steps` steps at contexts context, context + 1, ... (vectorised over batch)."""
    attended = mean_kv_token_layers(model, context_tokens + 1, steps)
    return batch_size * (2.0 * model.active_params + model.decode_attention_flops_per_token_layer * attended)


def mean_decode_bytes(
    model: Model, precision: Precision, batch_size: Quantity, context_tokens: int, steps: int, gpu_count: int = 1
) -> Quantity:
    """Weights read once for the batch + every sequence's KV cache, averaged over `steps` steps at contexts
    context, context + 1, ... (vectorised over batch); replicated KV heads count once per copy (`kv_replication`)."""
    per_sequence = stored_kv_bytes_per_token_layer(model, precision, gpu_count) * mean_kv_token_layers(
        model, context_tokens, steps
    )
    return weight_bytes_read(model, precision, batch_size) + batch_size * per_sequence


def decode_step(
    model: Model, precision: Precision, machine: Machine, batch_size: int = 1, context_tokens: int = 0
) -> Step:
    """One decode step: one new token for each of `batch_size` sequences holding `context_tokens` each.

    Every step reads all the (touched) weights once, shared by the whole batch — the
    fixed cost batching amortises — plus each sequence's own KV cache. Example (the
    lesson, D3): batch 1 of the toy 7B model reads 14e9 bytes, does 14e9 FLOPs:
    intensity 1 FLOP/byte, 7.000 ms memory-bound against 0.047 ms of maths.
    """
    weight_flops = 2.0 * model.active_params * batch_size
    attention_flops = batch_size * float(attention_flops_per_token(model, context_tokens + 1))
    weights = float(weight_bytes_read(model, precision, batch_size))
    kv = float(kv_cache_bytes(model, precision, context_tokens, batch_size, machine.gpu_count))
    return _step(model, machine, weight_flops, attention_flops, weights, kv, batch_size, batch_size)


def _line_breaks(model: Model, prompt_tokens: int) -> list[int]:
    """Decode-step indices where the KV read or attention changes slope (a sliding window fills)."""
    if model.sliding_window_tokens is None:
        return []
    window = model.sliding_window_tokens
    return sorted({max(window - prompt_tokens, 0), max(window - 1 - prompt_tokens, 0)})


def decode_time_s(
    model: Model,
    precision: Precision,
    machine: Machine,
    prompt_tokens: int,
    output_tokens: Quantity,
    batch_size: Quantity = 1,
    fixed_s: Quantity | None = None,
) -> Quantity:
    """Σ over the reply's decode steps j = 0..M-1, step j at context prompt + j. Vectorised over M or batch.

    With no KV cache every step is identical and the sum is exactly M × TPOT. Otherwise
    the step time is piecewise linear in j (linear between sliding-window knees), so each
    piece sums in closed form: no loop over M. An eager engine's step is at least its host's
    launches (`Machine.host_time_s`): each piece then sums max(its two lines + fixed, the host's).
    `fixed_s`: each step's fixed costs (`decode_fixed_time_s`), for a caller that has them already.
    """
    if fixed_s is None:
        fixed_s = decode_fixed_time_s(model, machine, batch_size)
    host_s = machine.host_time_s
    if host_s:
        return _decode_sum(model, precision, machine, prompt_tokens, output_tokens, batch_size, fixed_s, host_s)
    return output_tokens * fixed_s + _decode_sum(model, precision, machine, prompt_tokens, output_tokens, batch_size)


def _decode_sum(
    model: Model,
    precision: Precision,
    machine: Machine,
    prompt_tokens: int,
    output_tokens: Quantity,
    batch_size: Quantity,
    fixed_s: Quantity = 0.0,
    host_s: float = 0.0,
) -> Quantity:
    """Σ_j max(memory time, compute time) of the reply's steps; with a host's time, Σ_j max(that + fixed, host)."""
    m, total = output_tokens, output_tokens * 0.0
    starts = [0, *_line_breaks(model, prompt_tokens)]
    ends = [*starts[1:], None]

    weights_s = weight_bytes_read(model, precision, batch_size) / machine.weight_bandwidth_bytes_per_s
    weight_maths_s = 2.0 * model.active_params * batch_size / machine.weight_compute_flops_per_s
    # Step j's KV read and attention are these rates × the token-layers at its context, as in
    # `kv_cache_bytes` and `mean_decode_flops` (0 without an attention shape), derived once.
    kv_bytes = batch_size * stored_kv_bytes_per_token_layer(model, precision, machine.gpu_count)
    kv_s_per_token_layer = kv_bytes / machine.bandwidth_bytes_per_s
    attention_s_per_token_layer = (
        batch_size * model.decode_attention_flops_per_token_layer / machine.attention_flops_per_s
    )

    def memory_s(j: int) -> Quantity:
        return weights_s + kv_s_per_token_layer * kv_token_layers(model, prompt_tokens + j)

    def compute_s(j: int) -> Quantity:
        return weight_maths_s + attention_s_per_token_layer * kv_token_layers(model, prompt_tokens + j + 1)

    for start, end in zip(starts, ends, strict=True):
        mem0, cmp0 = memory_s(start), compute_s(start)
        mem_slope, cmp_slope = memory_s(start + 1) - mem0, compute_s(start + 1) - cmp0
        stop = m if end is None else minimum(m, end)
        count = clip(stop - start, 0, math.inf)
        if host_s:
            piece = sum_of_max_of_lines_and_floor(mem0 + fixed_s, mem_slope, cmp0 + fixed_s, cmp_slope, host_s, count)
        else:
            piece = sum_of_max_of_lines(mem0, mem_slope, cmp0, cmp_slope, count)
        total = total + piece
    return total
