"""Bytes: the weights, the KV cache, and whether a batch fits in GPU memory.

Reference: kipply, "Transformer Inference Arithmetic" (2022), "kv cache" section:
2 × layers × kv_heads × head_dim values per token (K and V).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.arraymath import Quantity, minimum, sum_capped
from core.specs import Model, Precision
from core.units import BITS_PER_BYTE


def weight_bytes(model: Model, precision: Precision) -> float:
    """All stored weights: total parameters × bits per weight / 8 (a mixture's experts at their own width).

    Example: the lesson's 7B model in fp16 → 7e9 × 16 / 8 = 14e9 bytes (14 GB); gpt-oss-120b as shipped,
    2.13 B weights at 16 bits and 128 experts × 0.896 B at 4.25 → 4.26 + 60.93 = 65.2 GB, its checkpoint.
    """
    if not model.is_moe:
        return model.total_params * precision.weight_bits / BITS_PER_BYTE
    experts = (model.experts or 0) * model.params_per_expert
    return (model.shared_params * precision.weight_bits + experts * precision.expert_bits) / BITS_PER_BYTE


def expected_distinct_experts(model: Model, tokens: Quantity) -> Quantity:
    """Experts per layer that `tokens` routed tokens touch, on average: E × (1 - (1 - k/E)^T).

    Assumes each token picks its k experts uniformly at random, independently of the
    others (real routers are skewed, which touches fewer). One token touches exactly k;
    many tokens touch nearly all E. Example: Mixtral (E=8, k=2) at 4 tokens →
    8 × (1 - 0.75^4) = 5.47 experts. Dense models: 0.
    """
    if model.experts is None or model.experts_per_token is None:
        return tokens * 0.0
    e, k = model.experts, model.experts_per_token
    return e * (1.0 - (1.0 - k / e) ** tokens)


def weight_bytes_read(model: Model, precision: Precision, tokens: Quantity) -> Quantity:
    """Weights one forward pass over `tokens` tokens reads: shared weights + the experts they touch.

    Dense: every weight, once, whatever the token count (the fixed cost batching amortises).
    MoE at batch 1 reads only the active parameters; a large batch reads nearly all of them.
    Example: Mixtral 8x7B (46.7B total, 12.9B active) at 1 token in fp16 → 12.9e9 × 2 = 25.8 GB.
    """
    if not model.is_moe:
        return tokens * 0.0 + weight_bytes(model, precision)
    touched = model.params_per_expert * expected_distinct_experts(model, tokens)
    return (model.shared_params * precision.weight_bits + touched * precision.expert_bits) / BITS_PER_BYTE


def kv_bytes_per_token_per_layer(model: Model, precision: Precision) -> float:
    return model.kv_elements_per_token_per_layer * precision.kv_bits / BITS_PER_BYTE


def kv_bytes_per_token(model: Model, precision: Precision) -> float:
    """KV cache per token across all layers, before any sliding-window cap.

    Example: Llama 3.1 8B (32 layers, 8 KV heads × 128) in 16-bit →
    2 × 32 × 8 × 128 × 2 = 131,072 bytes. The toy model has no attention shape: 0.
    """
    return kv_bytes_per_token_per_layer(model, precision) * (model.layers or 0)


def kv_token_layers(model: Model, context_tokens: Quantity) -> Quantity:
    """Σ over layers of the tokens each layer caches (and attends over) at `context_tokens`.

    Full-attention layers keep every token; sliding-window layers at most their window.
    Example: gpt-oss-20b (12 full layers, 12 with a 128-token window) at 10,000 tokens →
    12 × 10,000 + 12 × 128 = 121,536. No attention shape: 0.
    """
    attended = model.full_attention_layers * context_tokens
    if model.sliding_window_tokens is not None and model.sliding_window_layers is not None:
        attended = attended + model.sliding_window_layers * minimum(context_tokens, model.sliding_window_tokens)
    return attended


def mean_kv_token_layers(model: Model, first_context_tokens: int, steps: int) -> float:
    """Mean of `kv_token_layers` over contexts first, first + 1, ..., first + steps - 1, in closed form.

    What the reply's decode steps cache and attend over, on average. Without sliding
    windows it is the token-layers at the mean context, first + (steps - 1) / 2.
    Example: Llama 3.1 8B (32 full layers), contexts 100..4,099 → 32 × 2,099.5 = 67,184.
    """
    last = first_context_tokens + steps - 1
    attended = model.full_attention_layers * (first_context_tokens + last) / 2
    if model.sliding_window_tokens is not None and model.sliding_window_layers is not None:
        window = sum_capped(first_context_tokens, last, model.sliding_window_tokens) / steps
        attended += model.sliding_window_layers * window
    return attended


def kv_replication(model: Model, gpu_count: int) -> float:
    """How many copies of each KV element a tensor-parallel group of `gpu_count` GPUs stores.

    Tensor parallelism splits attention by head: with N GPUs and K KV heads each GPU holds
    ceil(K / N) heads, so past N = K the heads are replicated (vLLM keeps max(1, K / N) per
    GPU): N × ceil(K / N) / K, the busiest GPU's share times N. Latent attention caches one
    latent that every head reads, so every rank keeps it whole: N (SGLang's data-parallel
    attention exists to avoid exactly this). Examples: Qwen3-235B-A22B (K = 4) on 8 GPUs →
    8 × 1 / 4 = 2; Llama 3.1 70B (K = 8) on 8 → 1; DeepSeek-V3 on 8 → 8. One GPU: 1.
    """
    if gpu_count == 1 or not model.has_attention_shape:
        return 1.0
    if model.kv_latent_dim is not None:
        return float(gpu_count)
    kv_heads = model.kv_heads or 1
    return gpu_count * math.ceil(kv_heads / gpu_count) / kv_heads


def stored_kv_bytes_per_token_layer(model: Model, precision: Precision, gpu_count: int = 1) -> float:
    """KV bytes one token stores (and a step reads) per layer over the group, every copy of a replicated head counted.

    Example: Qwen3-235B-A22B (4 KV heads × 128, 16-bit) on 8 GPUs → 2 × 4 × 128 × 2 B × 2 copies = 4,096 B.
    """
    return kv_bytes_per_token_per_layer(model, precision) * kv_replication(model, gpu_count)


def kv_cache_bytes(
    model: Model, precision: Precision, context_tokens: Quantity, sequences: Quantity = 1, gpu_count: int = 1
) -> Quantity:
    """KV cache held for `sequences` sequences of `context_tokens` tokens each, over `gpu_count` GPUs.

    Sliding-window layers keep at most their window; full-attention layers keep everything;
    heads replicated by tensor parallelism count once per copy (`kv_replication`), since
    each copy is stored and read.
    """
    per_token_layer = stored_kv_bytes_per_token_layer(model, precision, gpu_count)
    return per_token_layer * kv_token_layers(model, context_tokens) * sequences


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """What a batch needs in GPU memory, against what the tensor-parallel group has.

    Totals are over the group, replicated KV heads counted once per copy; the per-GPU
    figures divide by the GPU count (weights and heads split evenly, the busiest GPU's KV).
    """

    weight_bytes: float
    kv_cache_bytes: float  # every copy: logical cache × kv_replication
    available_bytes: float
    max_batch_that_fits: int | None  # None: no KV cache, so memory never limits the batch
    gpu_count: int = 1
    kv_replication: float = 1.0  # copies of each KV element the group stores (see kv_replication)

    @property
    def required_bytes(self) -> float:
        return self.weight_bytes + self.kv_cache_bytes

    @property
    def fits(self) -> bool:
        return self.required_bytes <= self.available_bytes

    @property
    def weight_bytes_per_gpu(self) -> float:
        return self.weight_bytes / self.gpu_count

    @property
    def kv_cache_bytes_per_gpu(self) -> float:
        return self.kv_cache_bytes / self.gpu_count

    @property
    def required_bytes_per_gpu(self) -> float:
        return self.required_bytes / self.gpu_count

    @property
    def available_bytes_per_gpu(self) -> float:
        return self.available_bytes / self.gpu_count


def memory_plan(
    model: Model,
    precision: Precision,
    memory_bytes_per_gpu: float,
    gpu_count: int,
    batch_size: int,
    sequence_tokens: int,
) -> MemoryPlan:
    """weights + batch × KV(prompt + output) × replication against memory × GPUs.

    Ignores activations, the CUDA context and allocator fragmentation (typically a few GB
    per GPU): "fits" is optimistic near the edge. Example: Llama 3.1 8B fp16 on one 80 GB
    GPU, 8,192-token sequences → weights 16.06 GB, KV 1.07 GB per sequence →
    (80 - 16.06) / 1.07 = 59 sequences fit. On more GPUs than KV heads each head is stored
    on several GPUs (`kv_replication`), which the per-sequence KV counts.
    """
    weights = weight_bytes(model, precision)
    replication = kv_replication(model, gpu_count)
    per_sequence = float(kv_cache_bytes(model, precision, sequence_tokens)) * replication
    available = memory_bytes_per_gpu * gpu_count
    if per_sequence == 0:
        max_batch = None if weights <= available else 0
    else:
        max_batch = max(0, math.floor((available - weights) / per_sequence))
    return MemoryPlan(
        weight_bytes=weights,
        kv_cache_bytes=per_sequence * batch_size,
        available_bytes=available,
        max_batch_that_fits=max_batch,
        gpu_count=gpu_count,
        kv_replication=replication,
    )
