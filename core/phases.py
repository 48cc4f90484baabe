"""Prefill, one decode step, and the sum of a reply's decode steps (`core.reply` adds them up).

References: the lesson (Day 36); kipply, "Transformer Inference Arithmetic" (2022);
Databricks/Mosaic, "LLM Inference Performance Engineering: Best Practices" (2023),
which defines TTFT and TPOT as here.

FLOPs per token are 2 × active parameters (one multiply and one add per weight) plus
attention over the context, 4 × query_heads × head_dim per attended token per layer
(QKᵀ and the weighted sum of V). Multi-head latent attention costs more per attended token
in decode, where engines attend over the latent itself (see `model_spec._attention_widths`).
The toy model has no attention shape, so attention and the KV cache cost nothing, exactly
as in the lesson.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.arraymath import Quantity, clip, minimum, sum_capped, sum_of_max_of_lines
from core.memory import (
    expected_distinct_experts,
    kv_bytes_per_token_per_layer,
    kv_cache_bytes,
    kv_replication,
    kv_token_layers,
    mean_kv_token_layers,
    weight_bytes_read,
)
from core.parallel import ACTIVATION_BYTES, ALLREDUCES_PER_LAYER, Machine, allreduce_time_s
from core.roofline import Bound, arithmetic_intensity_flop_per_byte, bound
from core.specs import Model, Precision


@dataclass(frozen=True, slots=True)
class Step:
    """One forward pass: what it moves, what it computes, and how long it takes."""

    flops: float
    bytes_moved: float
    memory_time_s: float
    compute_time_s: float
    fixed_time_s: float  # per-step overhead plus tensor-parallel all-reduces
    balance_flop_per_byte: float

    @property
    def time_s(self) -> float:
        return max(self.memory_time_s, self.compute_time_s) + self.fixed_time_s

    @property
    def intensity_flop_per_byte(self) -> float:
        return float(arithmetic_intensity_flop_per_byte(self.flops, self.bytes_moved))

    @property
    def bound(self) -> Bound:
        return bound(self.intensity_flop_per_byte, self.balance_flop_per_byte)


def attention_flops_per_token(model: Model, context_tokens: Quantity) -> Quantity:
    """Attention FLOPs for one decoded token attending over `context_tokens` tokens (itself included).

    4 × query_heads × head_dim × attended tokens, summed over layers; sliding-window
    layers attend over at most their window. Example: Llama 3.1 8B (32 layers, 32 × 128)
    at 1,000 tokens → 4 × 4096 × 1000 × 32 = 0.52 GFLOP, against 16 GFLOP for its weights.
    Multi-head latent attention decodes in the absorbed form, every head against the
    latent: DeepSeek-V3 at 32,768 tokens → 2 × 128 × (2 × 512 + 64) × 32,768 × 61 =
    0.557 TFLOP, 4.25× what 4 × 128 × 128 per token would count.
    """
    if not model.has_attention_shape:
        return context_tokens * 0.0
    return model.decode_attention_flops_per_token_layer * kv_token_layers(model, context_tokens)


def prefill_attention_flops(model: Model, cached_tokens: int, prompt_tokens: int) -> float:
    """Attention FLOPs to prefill prompt positions cached+1..prompt, each attending over its prefix.

    Ordinary attention: 4 × query_heads × head_dim per attended token per layer. Multi-head
    latent attention: the cheaper of its two forms for this pass — expanded (per-head K and
    V: 81,920 per attended token per layer for DeepSeek-V3, plus 33.6 MFLOP to expand each
    cached latent) or absorbed (278,528, nothing to expand): a well-tuned engine's choice.
    A fresh prompt is cheaper expanded (vLLM expands every prefill); a long cached prefix
    with a few new tokens is cheaper absorbed (SGLang dispatches between the forms per
    batch, by backend and prefix length). Example: DeepSeek-V3, 1,000 new tokens, nothing
    cached → 81,920 × 61 × (1 + ... + 1000 = 500,500) = 2.50 TFLOP.
    """
    if not model.has_attention_shape:
        return 0.0
    attended = model.full_attention_layers * sum_capped(cached_tokens + 1, prompt_tokens)
    if model.sliding_window_tokens is not None and model.sliding_window_layers is not None:
        attended += model.sliding_window_layers * sum_capped(
            cached_tokens + 1, prompt_tokens, model.sliding_window_tokens
        )
    expanded = model.prefill_attention_flops_per_token_layer * attended
    if model.kv_latent_dim is None:
        return expanded
    expanded += model.latent_expansion_flops_per_token_layer * float(kv_token_layers(model, cached_tokens))
    return min(expanded, model.decode_attention_flops_per_token_layer * attended)


def tensor_parallel_time_s(model: Model, machine: Machine, tokens: Quantity) -> Quantity:
    """Two all-reduces per layer of the step's activations (tokens × hidden × 2 bytes); 0 on one GPU."""
    if machine.gpu_count == 1 or not model.has_attention_shape:
        return tokens * 0.0
    message_bytes = tokens * (model.hidden or 0) * ACTIVATION_BYTES
    return ALLREDUCES_PER_LAYER * (model.layers or 0) * allreduce_time_s(message_bytes, machine)


def memory_time_s(machine: Machine, weight_bytes: Quantity, other_bytes: Quantity) -> Quantity:
    """Reading the weights at the weights' bandwidth (lower when dequantised) and the rest (KV) at the group's."""
    if not machine.dequantised:
        return (weight_bytes + other_bytes) / machine.bandwidth_bytes_per_s
    return weight_bytes / machine.weight_bandwidth_bytes_per_s + other_bytes / machine.bandwidth_bytes_per_s


def compute_time_s(machine: Machine, weight_flops: Quantity, attention_flops: Quantity) -> Quantity:
    """The weight matmuls at the weights' compute (lower when dequantised) and attention at the group's."""
    if not machine.dequantised:
        return (weight_flops + attention_flops) / machine.compute_flops_per_s
    return weight_flops / machine.weight_compute_flops_per_s + attention_flops / machine.compute_flops_per_s


def step_balance(machine: Machine, flops: float, bytes_moved: float, compute_s: float, memory_s: float) -> float:
    """The balance a step is judged against: the group's compute ÷ bandwidth.

    With dequantised weights the weights' share of the step moves at other rates than the
    KV cache and attention, so the step's ridge is its own: (FLOPs ÷ compute time) ÷
    (bytes ÷ memory time), and intensity > balance exactly when its maths outlasts its reading.
    """
    if not machine.dequantised:
        return machine.balance_flop_per_byte
    return (flops / compute_s) / (bytes_moved / memory_s)


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
    return _step(model, machine, weight_flops, attention_flops, weights, kv, tokens, batch_size)


def _step(
    model: Model,
    machine: Machine,
    weight_flops: float,
    attention_flops: float,
    weights: float,
    kv: float,
    tokens: float,
    sequences: float,
) -> Step:
    """A forward pass from its weight and attention FLOPs and its weight and KV bytes."""
    flops, bytes_moved = weight_flops + attention_flops, weights + kv
    if machine.dequantised:
        memory_s = float(memory_time_s(machine, weights, kv))
        compute_s = float(compute_time_s(machine, weight_flops, attention_flops))
    else:
        memory_s, compute_s = bytes_moved / machine.bandwidth_bytes_per_s, flops / machine.compute_flops_per_s
    return Step(
        flops=flops,
        bytes_moved=bytes_moved,
        memory_time_s=memory_s,
        compute_time_s=compute_s,
        fixed_time_s=float(fixed_time_s(model, machine, tokens, sequences)),
        balance_flop_per_byte=step_balance(machine, flops, bytes_moved, compute_s, memory_s),
    )


def decode_flops(model: Model, batch_size: Quantity, context_tokens: Quantity) -> Quantity:
    """2 × active params × batch + batch × attention over context + 1 tokens."""
    return batch_size * (2.0 * model.active_params + attention_flops_per_token(model, context_tokens + 1))


def decode_bytes(
    model: Model, precision: Precision, batch_size: Quantity, context_tokens: Quantity, gpu_count: int = 1
) -> Quantity:
    """Weights read once for the whole batch + every sequence's KV cache of `context_tokens` tokens.

    Over `gpu_count` tensor-parallel GPUs each copy of a replicated KV head is read by its
    own GPU, so the group moves KV × `kv_replication` bytes.
    """
    return weight_bytes_read(model, precision, batch_size) + kv_cache_bytes(
        model, precision, context_tokens, batch_size, gpu_count
    )


def mean_decode_flops(model: Model, batch_size: Quantity, context_tokens: int, steps: int) -> Quantity:
    """Mean of `decode_flops` over `steps` steps at contexts context, context + 1, ... (vectorised over batch)."""
    attended = mean_kv_token_layers(model, context_tokens + 1, steps)
    return batch_size * (2.0 * model.active_params + model.decode_attention_flops_per_token_layer * attended)


def mean_decode_bytes(
    model: Model, precision: Precision, batch_size: Quantity, context_tokens: int, steps: int, gpu_count: int = 1
) -> Quantity:
    """Mean of `decode_bytes` over `steps` steps at contexts context, context + 1, ... (vectorised over batch)."""
    per_token_layer = kv_bytes_per_token_per_layer(model, precision) * kv_replication(model, gpu_count)
    per_sequence = per_token_layer * mean_kv_token_layers(model, context_tokens, steps)
    return weight_bytes_read(model, precision, batch_size) + batch_size * per_sequence


def expert_visits(model: Model, tokens: Quantity) -> Quantity:
    """Expert GEMMs one step runs: MoE layers × the distinct experts its tokens touch (0 when dense).

    Under tensor parallelism every GPU runs its slice of every touched expert, so the count
    is the same on each. Example: Qwen3-30B-A3B (48 layers, 8 of 128 experts) at batch 1 →
    48 × 8 = 384; DeepSeek-V3 (61 layers, 8 of 256) at 32 tokens → 61 × 160.6 = 9,794.
    """
    if not model.is_moe:
        return tokens * 0.0
    return (model.layers or 0) * expected_distinct_experts(model, tokens)


def fixed_time_s(model: Model, machine: Machine, tokens: Quantity, sequences: Quantity) -> Quantity:
    """What a step pays besides the roofline: per step, per sequence, per expert GEMM, and the all-reduces.

    step overhead (launches, scheduling: an engine's scales with the layers) + sequences ×
    per-sequence overhead + expert visits × per-expert overhead (a grouped GEMM's fixed cost
    for each expert it runs, which dominates when each gets a token or two) + tensor-parallel
    all-reduces of the step's tokens.
    """
    cost = machine.step_overhead_s + machine.sequence_overhead_s * sequences
    if machine.expert_overhead_s and model.is_moe:
        cost = cost + machine.expert_overhead_s * expert_visits(model, tokens)
    return cost + tensor_parallel_time_s(model, machine, tokens)


def decode_fixed_time_s(model: Model, machine: Machine, batch_size: Quantity) -> Quantity:
    """Costs every decode step pays whatever its size: `fixed_time_s` of `batch_size` one-token sequences."""
    return fixed_time_s(model, machine, batch_size, batch_size)


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
) -> Quantity:
    """Σ over the reply's decode steps j = 0..M-1, step j at context prompt + j. Vectorised over M or batch.

    With no KV cache every step is identical and the sum is exactly M × TPOT. Otherwise
    the step time is piecewise linear in j (linear between sliding-window knees), so each
    piece sums in closed form: no loop over M.
    """
    fixed_s = decode_fixed_time_s(model, machine, batch_size)
    return output_tokens * fixed_s + decode_roofline_time_s(
        model, precision, machine, prompt_tokens, output_tokens, batch_size
    )


def decode_roofline_time_s(
    model: Model,
    precision: Precision,
    machine: Machine,
    prompt_tokens: int,
    output_tokens: Quantity,
    batch_size: Quantity,
) -> Quantity:
    """Σ_j max(memory time, compute time) of the reply's steps: `decode_time_s` without the fixed costs."""
    m, total = output_tokens, output_tokens * 0.0
    starts = [0, *_line_breaks(model, prompt_tokens)]
    ends = [*starts[1:], None]

    weights_s = weight_bytes_read(model, precision, batch_size) / machine.weight_bandwidth_bytes_per_s
    weight_maths_s = 2.0 * model.active_params * batch_size / machine.weight_compute_flops_per_s

    def memory_s(j: int) -> Quantity:
        kv = kv_cache_bytes(model, precision, prompt_tokens + j, batch_size, machine.gpu_count)
        return weights_s + kv / machine.bandwidth_bytes_per_s

    def compute_s(j: int) -> Quantity:
        attention = batch_size * attention_flops_per_token(model, prompt_tokens + j + 1)
        return weight_maths_s + attention / machine.compute_flops_per_s

    for start, end in zip(starts, ends, strict=True):
        mem0, cmp0 = memory_s(start), compute_s(start)
        mem_slope, cmp_slope = memory_s(start + 1) - mem0, compute_s(start + 1) - cmp0
        stop = m if end is None else minimum(m, end)
        count = clip(stop - start, 0, math.inf)
        total = total + sum_of_max_of_lines(mem0, mem_slope, cmp0, cmp_slope, count)
    return total
