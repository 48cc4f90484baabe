"""Prefill, one decode step, and the latency line that adds them up.

References: the lesson (Day 36); kipply, "Transformer Inference Arithmetic" (2022);
Databricks/Mosaic, "LLM Inference Performance Engineering: Best Practices" (2023),
which defines TTFT and TPOT as here.

FLOPs per token are 2 × active parameters (one multiply and one add per weight) plus
attention over the context, 4 × query_heads × head_dim per attended token per layer
(QKᵀ and the weighted sum of V). The toy model has no attention shape, so attention and
the KV cache cost nothing, exactly as in the lesson.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.arraymath import Quantity, clip, minimum
from core.memory import kv_cache_bytes, weight_bytes_read
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
    """Attention FLOPs for one new token attending over `context_tokens` tokens (itself included).

    4 × query_heads × head_dim × attended tokens, summed over layers; sliding-window
    layers attend over at most their window. Example: Llama 3.1 8B (32 layers, 32 × 128)
    at 1,000 tokens → 4 × 4096 × 1000 × 32 = 0.52 GFLOP, against 16 GFLOP for its weights.
    """
    if not model.has_attention_shape:
        return context_tokens * 0.0
    width = 4.0 * (model.query_heads or 0) * (model.head_dim or 0)
    attended = model.full_attention_layers * context_tokens
    if model.sliding_window_tokens is not None and model.sliding_window_layers is not None:
        attended = attended + model.sliding_window_layers * minimum(context_tokens, model.sliding_window_tokens)
    return width * attended


def _sum_capped(first: int, last: int, cap: int | None = None) -> float:
    """Σ min(c, cap) for c = first..last inclusive (no cap when cap is None; 0 when last < first)."""
    if last < first:
        return 0.0
    top = last if cap is None else min(last, cap)
    below = (top * (top + 1) - (first - 1) * first) / 2 if top >= first else 0.0
    above = (last - max(first - 1, top)) * cap if cap is not None and last > cap else 0.0
    return below + above


def prefill_attention_flops(model: Model, cached_tokens: int, prompt_tokens: int) -> float:
    """Attention FLOPs to prefill prompt positions cached+1..prompt, each attending over its prefix."""
    if not model.has_attention_shape:
        return 0.0
    width = 4.0 * (model.query_heads or 0) * (model.head_dim or 0)
    attended = model.full_attention_layers * _sum_capped(cached_tokens + 1, prompt_tokens)
    if model.sliding_window_tokens is not None and model.sliding_window_layers is not None:
        attended += model.sliding_window_layers * _sum_capped(
            cached_tokens + 1, prompt_tokens, model.sliding_window_tokens
        )
    return width * attended


def tensor_parallel_time_s(model: Model, machine: Machine, tokens: Quantity) -> Quantity:
    """Two all-reduces per layer of the step's activations (tokens × hidden × 2 bytes); 0 on one GPU."""
    if machine.gpu_count == 1 or not model.has_attention_shape:
        return tokens * 0.0
    message_bytes = tokens * (model.hidden or 0) * ACTIVATION_BYTES
    return ALLREDUCES_PER_LAYER * (model.layers or 0) * allreduce_time_s(message_bytes, machine)


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
    once (+ KV written, + cached prefix read). Cached prompt tokens skip the maths: the
    engine reuses their KV cache (at least one token is always computed, to emit the
    first output). Example (the lesson, D1): 1,000 tokens of the 7B toy model →
    2 × 7e9 × 1000 / 300e12 = 46.7 ms of maths against 14e9 / 2e12 = 7 ms of reading:
    compute-bound, TTFT 46.7 ms.
    """
    new_tokens = max(prompt_tokens - cached_tokens, 1)
    cached = prompt_tokens - new_tokens
    tokens = new_tokens * batch_size
    flops = 2.0 * model.active_params * tokens + batch_size * prefill_attention_flops(model, cached, prompt_tokens)
    bytes_moved = (
        float(weight_bytes_read(model, precision, tokens))
        + batch_size * float(kv_cache_bytes(model, precision, prompt_tokens))
        + batch_size * float(kv_cache_bytes(model, precision, cached))
    )
    return Step(
        flops=flops,
        bytes_moved=bytes_moved,
        memory_time_s=bytes_moved / machine.bandwidth_bytes_per_s,
        compute_time_s=flops / machine.compute_flops_per_s,
        fixed_time_s=machine.step_overhead_s
        + machine.sequence_overhead_s * batch_size
        + float(tensor_parallel_time_s(model, machine, tokens)),
        balance_flop_per_byte=machine.balance_flop_per_byte,
    )


def decode_flops(model: Model, batch_size: Quantity, context_tokens: Quantity) -> Quantity:
    """2 × active params × batch + batch × attention over context + 1 tokens."""
    return batch_size * (2.0 * model.active_params + attention_flops_per_token(model, context_tokens + 1))


def decode_bytes(model: Model, precision: Precision, batch_size: Quantity, context_tokens: Quantity) -> Quantity:
    """Weights read once for the whole batch + every sequence's KV cache of `context_tokens` tokens."""
    return weight_bytes_read(model, precision, batch_size) + kv_cache_bytes(
        model, precision, context_tokens, batch_size
    )


def decode_fixed_time_s(model: Model, machine: Machine, batch_size: Quantity) -> Quantity:
    """Costs every step pays whatever its size: the step, each sequence in it, and the all-reduces."""
    return (
        machine.step_overhead_s
        + machine.sequence_overhead_s * batch_size
        + tensor_parallel_time_s(model, machine, batch_size)
    )


def decode_step(
    model: Model, precision: Precision, machine: Machine, batch_size: int = 1, context_tokens: int = 0
) -> Step:
    """One decode step: one new token for each of `batch_size` sequences holding `context_tokens` each.

    Every step reads all the (touched) weights once, shared by the whole batch — the
    fixed cost batching amortises — plus each sequence's own KV cache. Example (the
    lesson, D3): batch 1 of the toy 7B model reads 14e9 bytes, does 14e9 FLOPs:
    intensity 1 FLOP/byte, 7.000 ms memory-bound against 0.047 ms of maths.
    """
    flops = float(decode_flops(model, batch_size, context_tokens))
    bytes_moved = float(decode_bytes(model, precision, batch_size, context_tokens))
    return Step(
        flops=flops,
        bytes_moved=bytes_moved,
        memory_time_s=bytes_moved / machine.bandwidth_bytes_per_s,
        compute_time_s=flops / machine.compute_flops_per_s,
        fixed_time_s=float(decode_fixed_time_s(model, machine, batch_size)),
        balance_flop_per_byte=machine.balance_flop_per_byte,
    )


def sum_of_max_of_lines(a1: Quantity, b1: Quantity, a2: Quantity, b2: Quantity, n: Quantity) -> Quantity:
    """Σ_{k=0}^{n-1} max(a1 + b1·k, a2 + b2·k) in closed form (vectorised over n).

    The difference of two lines changes sign at most once, so the sum is the second line's
    arithmetic series plus the positive part of the difference over a contiguous run of k.
    Example: a1=1, b1=1, a2=3, b2=0, n=5 → 3+3+3+4+5 = 18.
    """
    base = n * a2 + b2 * n * (n - 1) / 2
    da, db = a1 - a2, b1 - b2
    if db == 0:
        return base + (n * da if da > 0 else n * 0.0)
    root = -da / db
    if db > 0:  # difference positive for k > root
        first = clip(math.floor(root) + 1, 0, n)
        count = n - first
        extra = count * da + db * (first + n - 1) * count / 2
    else:  # difference positive for k < root
        count = clip(math.ceil(root), 0, n)
        extra = count * da + db * count * (count - 1) / 2
    return base + extra


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
    batch_size: int = 1,
) -> Quantity:
    """Σ over the reply's decode steps j = 0..M-1, step j at context prompt + j. Vectorised over M.

    With no KV cache every step is identical and the sum is exactly M × TPOT. Otherwise
    the step time is piecewise linear in j (linear between sliding-window knees), so each
    piece sums in closed form: no loop over M.
    """
    m = output_tokens
    starts = [0, *_line_breaks(model, prompt_tokens)]
    ends = [*starts[1:], None]
    total = m * float(decode_fixed_time_s(model, machine, batch_size))

    def memory_s(j: int) -> float:
        return float(decode_bytes(model, precision, batch_size, prompt_tokens + j)) / machine.bandwidth_bytes_per_s

    def compute_s(j: int) -> float:
        return float(decode_flops(model, batch_size, prompt_tokens + j)) / machine.compute_flops_per_s

    for start, end in zip(starts, ends, strict=True):
        mem0, cmp0 = memory_s(start), compute_s(start)
        mem_slope, cmp_slope = memory_s(start + 1) - mem0, compute_s(start + 1) - cmp0
        stop = m if end is None else minimum(m, end)
        count = clip(stop - start, 0, math.inf)
        total = total + sum_of_max_of_lines(mem0, mem_slope, cmp0, cmp_slope, count)
    return total


@dataclass(frozen=True, slots=True)
class Latency:
    """One request end to end: TTFT, then the decode steps."""

    prefill: Step  # its time is the TTFT
    decode_s: float
    output_tokens: int

    @property
    def ttft_s(self) -> float:
        return self.prefill.time_s

    @property
    def total_s(self) -> float:
        return self.ttft_s + self.decode_s

    @property
    def mean_tpot_s(self) -> float:
        return self.decode_s / self.output_tokens


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

    Example (the lesson, Part 3): 200-token prompt, 500-token reply on the toy machine →
    9.33 ms + 500 × 7.00 ms = 3,509.33 ms.
    """
    first = prefill(model, precision, machine, prompt_tokens, batch_size, cached_tokens)
    decode = float(decode_time_s(model, precision, machine, prompt_tokens, output_tokens, batch_size))
    return Latency(prefill=first, decode_s=decode, output_tokens=output_tokens)
