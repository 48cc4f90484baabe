"""A transformer's size and attention shape, and what follows from them once per model.

The KV cache per token, the split of a mixture of experts into shared and per-expert
weights, and the attention FLOPs per attended token (ordinary or latent attention) are
derived on construction: every estimate reads them many times.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.fields import described, validate
from core.units import PARAMS_PER_BILLION
from core.validation import MAX_TOKENS, NAME_CHARS, check_text


@dataclass(frozen=True, slots=True)
class Model:
    """A transformer's size and, optionally, the attention shape that sizes its KV cache.

    Without an attention shape (`layers` is None) the KV cache and attention cost
    nothing: the lesson's toy model. Mixture-of-experts models give `experts` and
    `experts_per_token`; the split between shared and expert weights then follows from
    total and active parameters.

    Multi-head latent attention (DeepSeek-V2/V3) gives `kv_latent_dim`, the cached latent
    per token per layer (kv_lora_rank + qk_rope_head_dim = 512 + 64 = 576), and
    `kv_latent_rope_dim`, the part of it that is the shared RoPE key (64). `head_dim`
    then stands for both qk_nope_head_dim and v_head_dim (128 and 128 in DeepSeek-V3).
    """

    id: str
    name: str = described(
        key="mname", kind=str, label="Model name", max_chars=NAME_CHARS,
        help="A label for your edited model (letters, digits, spaces and .-+/()#,).",
    )  # fmt: skip
    total_params: float = described(
        key="params", kind=float, label="Parameters (billions)", unit="billion parameters", scale=PARAMS_PER_BILLION,
        low=1e6, high=1e14, step=0.1, flag="--params-b",
        help="Every stored weight, in billions. 7 means 7 billion parameters (14 GB at 16 bits).",
    )  # fmt: skip
    active_params: float = described(
        key="active", kind=float, label="Active parameters (billions)", unit="billion parameters",
        scale=PARAMS_PER_BILLION, low=1e6, high="total_params", step=0.1, flag="--active-params-b",
        help="Weights one token uses, in billions: equal to the total unless it is a mixture of experts.",
    )  # fmt: skip
    layers: int | None = described(
        None, key="layers", kind=int, label="Layers", low=1, high=1000, optional=True,
        help="Transformer blocks. With hidden size, heads and head dimension it sizes the KV cache; empty for none.",
    )  # fmt: skip
    hidden: int | None = described(
        None, key="hidden", kind=int, label="Hidden size", low=1, high=1_000_000, optional=True,
        help="Width of the model's activations (d_model).",
    )  # fmt: skip
    query_heads: int | None = described(
        None, key="qheads", kind=int, label="Query heads", low=1, high=10_000, optional=True, flag="--query-heads",
        help="Attention query heads per layer.",
    )  # fmt: skip
    kv_heads: int | None = described(
        None, key="kvheads", kind=int, label="KV heads", low=1, high="query_heads", optional=True, flag="--kv-heads",
        help="Key/value heads per layer (fewer than query heads with grouped-query attention).",
    )  # fmt: skip
    head_dim: int | None = described(
        None, key="headdim", kind=int, label="Head dimension", low=1, high=10_000, optional=True, flag="--head-dim",
        help="Size of each attention head.",
    )  # fmt: skip
    experts: int | None = described(
        None, key="experts", kind=int, label="Experts", low=2, high=100_000, optional=True,
        help="Routed experts per mixture-of-experts layer (empty for a dense model).",
    )  # fmt: skip
    experts_per_token: int | None = described(
        None, key="topk", kind=int, label="Experts per token", low=1, high="experts - 1", optional=True,
        flag="--experts-per-token", help="Routed experts each token uses (fewer than the experts).",
    )  # fmt: skip
    # Multi-head latent attention caches one compressed vector per token per layer.
    kv_latent_dim: int | None = described(
        None, key="kvlatent", kind=int, label="Latent KV width", low=1, high=1_000_000, optional=True,
        flag="--kv-latent-dim", help="Latent attention (DeepSeek): elements cached per token per layer (576).",
    )  # fmt: skip
    sliding_window_tokens: int | None = described(
        None, key="swa", kind=int, label="Sliding window (tokens)", low=1, high=MAX_TOKENS, optional=True,
        flag="--sliding-window", help="Tokens a sliding-window layer attends over and caches.",
    )  # fmt: skip
    sliding_window_layers: int | None = described(
        None, key="swalayers", kind=int, label="Sliding-window layers", low=1, high="layers", optional=True,
        flag="--sliding-window-layers", help="How many of the layers use the sliding window.",
    )  # fmt: skip
    # Of kv_latent_dim, the elements that are the decoupled RoPE key shared by every head
    # (DeepSeek-V3: 64 of 576); None reads as 0.
    kv_latent_rope_dim: int | None = described(
        None, key="kvrope", kind=int, label="Latent RoPE width", low=0, high="kv_latent_dim - 1", optional=True,
        flag="--kv-latent-rope-dim", help="Latent attention: how much of the cached latent is the shared RoPE key (64).",
    )  # fmt: skip
    # Derived once on construction (every estimate reads them many times); not part of equality.
    has_attention_shape: bool = field(init=False, repr=False, compare=False)
    is_moe: bool = field(init=False, repr=False, compare=False)
    # Cached elements per token per layer: K and V for every KV head, or the MLA latent.
    kv_elements_per_token_per_layer: int = field(init=False, repr=False, compare=False)
    full_attention_layers: int = field(init=False, repr=False, compare=False)
    # Weights of one routed expert summed over layers: (total - active) / (E - k).
    params_per_expert: float = field(init=False, repr=False, compare=False)
    # Weights every token reads (attention, embeddings, shared experts, dense layers).
    shared_params: float = field(init=False, repr=False, compare=False)
    # Attention FLOPs per attended token per layer for one query token: see core.attention.
    decode_attention_flops_per_token_layer: float = field(init=False, repr=False, compare=False)
    prefill_attention_flops_per_token_layer: float = field(init=False, repr=False, compare=False)
    # MLA only: expanding one cached latent into every head's K and V (a prefill that expands).
    latent_expansion_flops_per_token_layer: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_text("model id", self.id, NAME_CHARS)
        validate(self)
        self._validate_combinations()
        derived = _model_derived(self)
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    def _validate_combinations(self) -> None:
        shape = (self.layers, self.hidden, self.query_heads, self.kv_heads, self.head_dim)
        if any(v is not None for v in shape) and any(v is None for v in shape):
            raise ValueError("layers, hidden, query_heads, kv_heads and head_dim must be given together or not at all")
        if (self.experts is None) != (self.experts_per_token is None):
            raise ValueError("experts and experts_per_token must be given together or not at all")
        if self.experts is not None and self.experts_per_token is not None:
            if self.active_params >= self.total_params:
                raise ValueError(  # in billions, as every input gives parameters
                    f"active_params must be below total_params ({self.total_params / 1e9:,.2f} billion) for a "
                    f"mixture of experts, got {self.active_params / 1e9:,.2f} billion"
                )
            # A token uses at least its k routed experts, each (total - active) / (E - k) weights.
            floor = self.total_params * self.experts_per_token / self.experts
            if self.active_params < floor:
                raise ValueError(  # in billions, as every input gives parameters
                    f"active_params must be ≥ total × experts_per_token ÷ experts = {floor / 1e9:,.2f} billion "
                    f"({self.experts_per_token} routed expert{'s' * (self.experts_per_token != 1)}), got {self.active_params / 1e9:,.2f} billion"
                )
        if self.layers is None and (self.kv_latent_dim is not None or self.sliding_window_tokens is not None):
            raise ValueError(
                "kv_latent_dim and sliding_window_tokens need the attention shape (layers, hidden, query_heads, kv_heads, head_dim)"
            )
        if self.kv_latent_rope_dim is not None and self.kv_latent_dim is None:
            raise ValueError("kv_latent_rope_dim needs kv_latent_dim (it is part of the latent)")
        if (self.sliding_window_tokens is None) != (self.sliding_window_layers is None):
            raise ValueError("sliding_window_tokens and sliding_window_layers must be given together")


def _model_derived(model: Model) -> dict[str, object]:
    shaped = model.layers is not None
    moe = model.experts is not None and model.experts_per_token is not None
    if not shaped:
        kv_elements = 0
    elif model.kv_latent_dim is not None:
        kv_elements = model.kv_latent_dim
    else:
        kv_elements = 2 * (model.kv_heads or 0) * (model.head_dim or 0)
    per_expert = (
        (model.total_params - model.active_params) / ((model.experts or 0) - (model.experts_per_token or 0))
        if moe
        else 0.0
    )
    return {
        **_attention_widths(model),
        "has_attention_shape": shaped,
        "is_moe": moe,
        "kv_elements_per_token_per_layer": kv_elements,
        "full_attention_layers": (model.layers or 0) - (model.sliding_window_layers or 0),
        "params_per_expert": per_expert,
        "shared_params": model.active_params - (model.experts_per_token or 0) * per_expert,
    }


def _attention_widths(model: Model) -> dict[str, float]:
    """FLOPs per attended token per layer, for one query token; the expansion cost of MLA.

    Ordinary attention: QKᵀ and the weighted sum of V, 2 × heads × head_dim each →
    4 × heads × head_dim, in decode and prefill alike. Multi-head latent attention, with
    latent r + ρ (ρ the RoPE part) and H query heads, runs in one of two forms (DeepSeek-V2,
    arXiv 2405.04434, §2.1: W_UK absorbs into W_Q and W_UV into W_O at inference; vLLM's
    MLA backend calls the forms data-movement friendly and compute friendly):
    - absorbed (decode): W_UK and W_UV fold into the query and output projections, so every
      head attends over the cached latent itself: QKᵀ 2H(r + ρ), V 2Hr → 2H(2r + ρ).
      DeepSeek-V3: 2 × 128 × (1024 + 64) = 278,528, 4.25× the 65,536 of 4 × 128 × 128.
    - expanded (prefill): the latent is up-projected to per-head K (head_dim + ρ) and V
      (head_dim): 2H(head_dim + ρ) + 2H·head_dim = 81,920; a cached prefix must first be
      expanded, 2 × r × H × 2·head_dim = 33.6 MFLOP per cached token per layer (the new
      tokens' expansion is inside 2 × active parameters).
    """
    h, d = model.query_heads or 0, model.head_dim or 0
    ordinary = 4.0 * h * d
    if model.kv_latent_dim is None:
        return {
            "decode_attention_flops_per_token_layer": ordinary,
            "prefill_attention_flops_per_token_layer": ordinary,
            "latent_expansion_flops_per_token_layer": 0.0,
        }
    rope = model.kv_latent_rope_dim or 0
    rank = model.kv_latent_dim - rope
    return {
        "decode_attention_flops_per_token_layer": 2.0 * h * (2 * rank + rope),
        "prefill_attention_flops_per_token_layer": ordinary + 2.0 * h * rope,
        "latent_expansion_flops_per_token_layer": 4.0 * rank * h * d,
    }
