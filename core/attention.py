"""Attention's FLOPs: one decoded token over its context, and a prompt's prefill over its prefixes.

Ordinary attention costs 4 × query_heads × head_dim per attended token per layer (QKᵀ and
the weighted sum of V); multi-head latent attention costs more in decode, where engines
attend over the latent itself (the widths are derived once per model in
`model_spec._attention_widths`). Sliding-window layers attend over at most their window.
The toy model has no attention shape: attention costs nothing, exactly as in the lesson.
"""

from __future__ import annotations

from core.arraymath import Quantity, maximum, minimum, sum_capped
from core.memory import kv_token_layers
from core.specs import Model


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


def prefill_chunk_attention_flops(
    model: Model, context_tokens: Quantity, chunk_tokens: Quantity, prompts: Quantity = 1.0
) -> Quantity:
    """Attention FLOPs of a prefill chunk: `prompts` prompts, each `chunk_tokens` / `prompts` tokens after its
    own `context_tokens` already prefilled, in the cheaper form (as `prefill_attention_flops`), array-wise.

    Attention is linear in position, so the chunk's tokens attend on average at context + (per prompt + 1) / 2.
    The load model's iterations use it: costed in the absorbed (decode) form, DeepSeek-V3's 12,000-token
    prompt took 293 ms to prefill on 8 × H200 under `serve` against `estimate`'s 184 ms (ideal)."""
    if not model.has_attention_shape:
        return chunk_tokens * 0.0
    per_prompt = chunk_tokens / maximum(prompts, 1.0)
    attended = chunk_tokens * kv_token_layers(model, context_tokens + (per_prompt + 1) / 2)
    return _cheaper_form(model, attended, prompts * kv_token_layers(model, context_tokens))


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
    return float(_cheaper_form(model, attended, kv_token_layers(model, cached_tokens)))


def _cheaper_form(model: Model, attended: Quantity, cached_token_layers: Quantity) -> Quantity:
    """Prefill attention over `attended` token-layers: ordinary attention's, or latent attention's cheaper
    form, expanded (each cached latent expanded once: `cached_token_layers`) or absorbed."""
    expanded = model.prefill_attention_flops_per_token_layer * attended
    if model.kv_latent_dim is None:
        return expanded
    expanded = expanded + model.latent_expansion_flops_per_token_layer * cached_token_layers
    return minimum(expanded, model.decode_attention_flops_per_token_layer * attended)
