"""A step's times on a machine: reading, maths, the balance it is judged on, and the fixed costs.

The roofline part of a step is its bytes over the bandwidth and its FLOPs over the compute
(the weights at their own, lower, rates when an engine dequantises them); besides it a
step pays fixed costs: per step, per sequence, per expert GEMM, and the tensor-parallel
all-reduces (Megatron-LM's two per layer, `core.parallel`). An eager engine's per-step cost
is the host's instead, overlapping the GPU's work: the step takes the longer of the two.
"""

from __future__ import annotations

import numpy as np

from core.arraymath import Quantity, maximum, minimum
from core.memory import expected_distinct_experts, weight_bytes_read
from core.parallel import ACTIVATION_BYTES, ALLREDUCES_PER_LAYER, Machine, allreduce_time_s
from core.specs import Model, Precision


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
    """The weight matmuls at the weights' compute (lower when dequantised), attention at its own precision's."""
    if machine.uniform:
        return (weight_flops + attention_flops) / machine.compute_flops_per_s
    return weight_flops / machine.weight_compute_flops_per_s + attention_flops / machine.attention_flops_per_s


def decode_times_s(
    model: Model, precision: Precision, machine: Machine, batch: Quantity, flops: Quantity, bytes_moved: Quantity
) -> tuple[Quantity, Quantity]:
    """A decode step's (reading, maths) times from its FLOPs and bytes: all at the group's rates, or each part at its own.

    A dequantising engine reads and multiplies the weights at other rates than the KV cache and
    attention (`memory_time_s`, `compute_time_s`), and attention may run at another precision
    than the weights' maths, so the step's ridge (`step_balance`) moves with the batch's mix of
    weights and KV. Vectorised over the batch. The reply's mean step (`core.reply`) and the
    batch sweep (`core.batching`) both time their steps here.
    """
    if machine.uniform:
        return bytes_moved / machine.bandwidth_bytes_per_s, flops / machine.compute_flops_per_s
    weights = weight_bytes_read(model, precision, batch)
    weight_flops = 2.0 * model.active_params * batch
    memory_s = memory_time_s(machine, weights, bytes_moved - weights)
    return memory_s, compute_time_s(machine, weight_flops, flops - weight_flops)


def step_balance(
    machine: Machine, flops: float, bytes_moved: float, compute_s: float, memory_s: float, padded: bool = False
) -> float:
    """The balance a step is judged against: the group's compute ÷ bandwidth.

    With dequantised weights, or attention at another precision than the weights' maths, the
    step's parts move at their own rates, so the step's ridge is its own: (FLOPs ÷ compute
    time) ÷ (bytes ÷ memory time), and intensity > balance exactly when its maths outlasts
    its reading. So does a step whose expert matmuls pay padding (`expert_padding_flops`,
    `padded`): its maths takes longer than its FLOPs at the group's compute.
    """
    if machine.uniform and not padded:
        return machine.balance_flop_per_byte
    return (flops / compute_s) / (bytes_moved / memory_s)


def expert_visits(model: Model, tokens: Quantity) -> Quantity:
    """Expert GEMMs one step runs: MoE layers × the distinct experts its tokens touch (0 when dense).

    Under tensor parallelism every GPU runs its slice of every touched expert, so the count
    is the same on each. Example: Qwen3-30B-A3B (48 layers, 8 of 128 experts) at batch 1 →
    48 × 8 = 384; DeepSeek-V3 (61 layers, 8 of 256) at 32 tokens → 61 × 160.6 = 9,794.
    """
    if not model.is_moe:
        return tokens * 0.0
    return (model.layers or 0) * expected_distinct_experts(model, tokens)


def expert_padding_flops(model: Model, machine: Machine, prompt_tokens: Quantity) -> Quantity:
    """Maths a pass's prompt tokens waste in their expert matmuls: each touched expert pays for padding tokens.

    2 × params per expert (all layers) × padding tokens × the experts a micro-batch touches ×
    micro-batches. Kernels that tile each expert's tokens (llama.cpp's off Apple) run their
    tiles part-empty when a few dozen tokens reach each expert, so every expert a micro-batch
    touches costs as if it carried `expert_padding_tokens` more. Decode tokens are not
    charged: one token per sequence runs on vector kernels without tiles. Example: Qwen3-30B-A3B
    (128 experts, 0.227 B params each over its 48 layers) with 160 padding tokens, a 2,048-token
    prompt in micro-batches of 512 → 2 × 0.227e9 × 160 × 128 × 4 = 37 TFLOP, about 4× the
    prompt's own 2 × 3.3e9 × 2,048 = 13.5 TFLOP. Dense models, or no padding: 0.
    """
    if not (model.is_moe and machine.expert_padding_tokens):
        return prompt_tokens * 0.0
    micro = machine.prefill_micro_batch_tokens
    if micro:  # full micro-batches, the last counted as touching what a full one does
        passes, per_pass = np.ceil(prompt_tokens / micro), minimum(prompt_tokens, micro)
    else:
        passes, per_pass = 1.0, prompt_tokens
    touched = expected_distinct_experts(model, per_pass)  # 0 for no prompt tokens
    return 2.0 * model.params_per_expert * machine.expert_padding_tokens * passes * touched


def step_time_s(roofline_s: Quantity, fixed_s: Quantity, host_s: Quantity) -> Quantity:
    """A step's wall-clock time: its roofline (the longer of reading and maths) + fixed costs, or the host's, if longer.

    An eager engine (`Efficiency.launches_overlap`: PyTorch issuing every kernel from Python)
    queues kernels while the GPU still runs the ones before, so a step takes
    max(GPU time, host time) (`Machine.host_time_s`): a small model on a fast GPU waits on the
    host, a large batch on a slow one hides it. Otherwise the host's time is 0 and the step
    overhead is part of `fixed_time_s`.
    """
    gpu_s = roofline_s + fixed_s
    return maximum(gpu_s, host_s) if host_s else gpu_s


def waits_on_host(step_s: Quantity, host_s: float) -> Quantity:
    """Whether a (mean) step's time is the host's launches, up to rounding; False without them (host 0)."""
    if not host_s:
        return np.zeros(np.shape(step_s), dtype=bool) if isinstance(step_s, np.ndarray) else False
    return step_s <= host_s * (1 + 1e-12)


def fixed_time_s(model: Model, machine: Machine, tokens: Quantity, sequences: Quantity) -> Quantity:
    """What a step's GPU time pays besides the roofline: per step, per sequence, per expert GEMM, and the all-reduces.

    step overhead (launches, scheduling: an engine's scales with the layers; 0 on the GPU when
    it is the host's, overlapping the GPU's work: `Machine.host_time_s`) + sequences ×
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
