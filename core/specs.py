"""The inputs of every estimate, as frozen dataclasses in SI units.

Each spec validates itself on construction: a bad value raises ValueError naming the
field, the value and the allowed range. Frozen specs hash, so the app can cache on them.
Bounds are generous physical limits (a megabyte to a petabyte per second, a thousand to a
hundred trillion parameters, 1 to 64 bits, 1 % to 100 % utilisation): they exist so no
estimate overflows, underflows or divides by zero, not to second-guess users.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.validation import check_int, check_number, check_optional_int, check_text

CUSTOM_ID = "custom"


@dataclass(frozen=True, slots=True)
class GPU:
    """One accelerator's datasheet peaks (dense, no sparsity)."""

    id: str
    name: str
    memory_bandwidth_bytes_per_s: float
    peak_flops_16bit_per_s: float
    peak_flops_8bit_per_s: float
    memory_bytes: float
    # Per direction, per GPU: what one GPU can push to its peers during an all-reduce.
    interconnect_bytes_per_s: float
    price_usd_per_hour: float | None = None

    def __post_init__(self) -> None:
        check_text("gpu id", self.id, 60)
        check_text("gpu name", self.name)
        check_number("memory_bandwidth_bytes_per_s", self.memory_bandwidth_bytes_per_s, 1e6, 1e15)
        check_number("peak_flops_16bit_per_s", self.peak_flops_16bit_per_s, 1e6, 1e18)
        check_number("peak_flops_8bit_per_s", self.peak_flops_8bit_per_s, 1e6, 1e18)
        check_number("memory_bytes", self.memory_bytes, 1e6, 1e14)
        check_number("interconnect_bytes_per_s", self.interconnect_bytes_per_s, 1e6, 1e14)
        if self.price_usd_per_hour is not None:
            check_number("price_usd_per_hour", self.price_usd_per_hour, 0, 1e4)

    def peak_flops_per_s(self, math_bits: int) -> float:
        """Dense peak at the precision the matrix maths runs in (8 or 16 bits)."""
        return self.peak_flops_8bit_per_s if math_bits == 8 else self.peak_flops_16bit_per_s


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
    name: str
    total_params: float
    active_params: float
    layers: int | None = None
    hidden: int | None = None
    query_heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    # Multi-head latent attention caches one compressed vector per token per layer.
    kv_latent_dim: int | None = None
    sliding_window_tokens: int | None = None
    sliding_window_layers: int | None = None
    # Of kv_latent_dim, the elements that are the decoupled RoPE key shared by every head
    # (DeepSeek-V3: 64 of 576); None reads as 0. Added last so positional use keeps its meaning.
    kv_latent_rope_dim: int | None = None
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
    # Attention FLOPs per attended token per layer for one query token: see core.phases.
    decode_attention_flops_per_token_layer: float = field(init=False, repr=False, compare=False)
    prefill_attention_flops_per_token_layer: float = field(init=False, repr=False, compare=False)
    # MLA only: expanding one cached latent into every head's K and V (a prefill that expands).
    latent_expansion_flops_per_token_layer: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._validate()
        derived = _model_derived(self)
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    def _validate(self) -> None:
        check_text("model id", self.id, 60)
        check_text("model name", self.name)
        check_number("total_params", self.total_params, 1000, 1e14)
        check_number("active_params", self.active_params, 1000, self.total_params)
        shape = (self.layers, self.hidden, self.query_heads, self.kv_heads, self.head_dim)
        if any(v is not None for v in shape) and any(v is None for v in shape):
            raise ValueError("layers, hidden, query_heads, kv_heads and head_dim must be given together or not at all")
        check_optional_int("layers", self.layers, 1, 1000)
        check_optional_int("hidden", self.hidden, 1, 1_000_000)
        check_optional_int("query_heads", self.query_heads, 1, 10_000)
        check_optional_int("kv_heads", self.kv_heads, 1, self.query_heads or 10_000)
        check_optional_int("head_dim", self.head_dim, 1, 10_000)
        if (self.experts is None) != (self.experts_per_token is None):
            raise ValueError("experts and experts_per_token must be given together or not at all")
        if self.experts is not None:
            check_int("experts", self.experts, 2, 100_000)
            per_token = check_int("experts_per_token", self.experts_per_token, 1, self.experts - 1)
            if self.active_params >= self.total_params:
                raise ValueError(
                    f"active_params must be < total_params for a mixture of experts, got {self.active_params!r}"
                )
            # A token uses at least its k routed experts, each (total - active) / (E - k) weights.
            floor = self.total_params * per_token / self.experts
            if self.active_params < floor:
                raise ValueError(
                    f"active_params must be >= total_params × experts_per_token / experts = {floor:g} "
                    f"(the routed experts alone), got {self.active_params!r}"
                )
        if self.layers is None and (self.kv_latent_dim is not None or self.sliding_window_tokens is not None):
            raise ValueError("kv_latent_dim and sliding windows need the attention shape (layers, heads, head_dim)")
        check_optional_int("kv_latent_dim", self.kv_latent_dim, 1, 1_000_000)
        if self.kv_latent_rope_dim is not None and self.kv_latent_dim is None:
            raise ValueError("kv_latent_rope_dim needs kv_latent_dim (it is part of the latent)")
        check_optional_int("kv_latent_rope_dim", self.kv_latent_rope_dim, 0, (self.kv_latent_dim or 1) - 1)
        if (self.sliding_window_tokens is None) != (self.sliding_window_layers is None):
            raise ValueError("sliding_window_tokens and sliding_window_layers must be given together")
        check_optional_int("sliding_window_tokens", self.sliding_window_tokens, 1, 100_000_000)
        check_optional_int("sliding_window_layers", self.sliding_window_layers, 1, self.layers or 1)


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


@dataclass(frozen=True, slots=True)
class Precision:
    """Bits per stored weight (scales included, so 4.5 for 4-bit with group scales) and per KV element."""

    weight_bits: float = 16.0
    kv_bits: float = 16.0

    def __post_init__(self) -> None:
        check_number("weight_bits", self.weight_bits, 1, 64)
        check_number("kv_bits", self.kv_bits, 1, 64)

    @property
    def math_bits(self) -> int:
        """The precision the matrix maths runs in.

        Assumption: 8-bit weights are served W8A8 (fp8 or int8 tensor cores); every
        other width is dequantised to 16-bit before the multiply (weight-only
        quantisation such as int4 AWQ/GPTQ, EXL2, GGUF).
        """
        return 8 if self.weight_bits == 8 else 16


@dataclass(frozen=True, slots=True)
class Efficiency:
    """How far real software falls short of the datasheet.

    mbu: memory-bandwidth utilisation; mfu: compute (model FLOPs) utilisation;
    step_overhead_s: a fixed cost per forward pass (kernel launches, scheduling);
    sequence_overhead_s: a cost per sequence per pass (sampling, detokenising, paging
    bookkeeping), which is why real servers fall short of the roofline at large batches;
    allreduce_latency_s: the fixed cost of one all-reduce under tensor
    parallelism. Ideal is MBU = MFU = 1 with nothing added: the lesson's physics.
    """

    label: str = "ideal"
    mbu: float = 1.0
    mfu: float = 1.0
    step_overhead_s: float = 0.0
    sequence_overhead_s: float = 0.0
    allreduce_latency_s: float = 0.0

    def __post_init__(self) -> None:
        check_text("efficiency label", self.label, 40)
        check_number("mbu", self.mbu, 0.01, 1)
        check_number("mfu", self.mfu, 0.01, 1)
        check_number("step_overhead_s", self.step_overhead_s, 0, 1)
        check_number("sequence_overhead_s", self.sequence_overhead_s, 0, 0.01)
        check_number("allreduce_latency_s", self.allreduce_latency_s, 0, 0.1)

    @property
    def is_ideal(self) -> bool:
        return (self.mbu, self.mfu, self.step_overhead_s, self.sequence_overhead_s, self.allreduce_latency_s) == (
            1,
            1,
            0,
            0,
            0,
        )


MAX_TOKENS = 10_000_000


@dataclass(frozen=True, slots=True)
class Workload:
    """One request shape: prompt and reply lengths, how many run together, on how many GPUs."""

    prompt_tokens: int = 200
    output_tokens: int = 500
    batch_size: int = 1
    cached_prompt_tokens: int = 0
    gpu_count: int = 1

    def __post_init__(self) -> None:
        check_int("prompt_tokens", self.prompt_tokens, 1, MAX_TOKENS)
        check_int("output_tokens", self.output_tokens, 1, MAX_TOKENS)
        check_int("batch_size", self.batch_size, 1, 1_000_000)
        check_int("cached_prompt_tokens", self.cached_prompt_tokens, 0, self.prompt_tokens)
        check_int("gpu_count", self.gpu_count, 1, 1024)

    @property
    def sequence_tokens(self) -> int:
        """What one sequence holds in its KV cache by the end of the reply."""
        return self.prompt_tokens + self.output_tokens

    @property
    def new_prompt_tokens(self) -> int:
        """Prompt tokens each sequence's prefill computes: the uncached ones, at least one.

        At least one, because the first output token needs one forward pass even when the
        whole prompt is cached.
        """
        return max(self.prompt_tokens - self.cached_prompt_tokens, 1)

    @property
    def prefill_tokens(self) -> int:
        """Tokens the one prefill pass computes for the whole static batch: batch × new prompt tokens.

        Everyone prefills together, so the TTFT is one pass over all of them. Example:
        batch 256 of 200-token prompts, nothing cached → 51,200 tokens.
        """
        return self.batch_size * self.new_prompt_tokens

    @property
    def mean_decode_context_tokens(self) -> float:
        """The mean context the reply's decode steps read: prompt + (output - 1) / 2.

        Step j of the reply reads prompt + j tokens, j = 0..output - 1. Example: a
        100-token prompt and a 4,000-token reply → 100 + 3,999 / 2 = 2,099.5.
        """
        return self.prompt_tokens + (self.output_tokens - 1) / 2


@dataclass(frozen=True, slots=True)
class Pricing:
    """API token prices and traffic. Defaults are the lesson's Part 3 (illustrative prices)."""

    input_usd_per_million_tokens: float = 0.50
    cached_input_usd_per_million_tokens: float = 0.50
    output_usd_per_million_tokens: float = 1.50
    replies_per_day: float = 100_000
    days_per_month: int = 30

    def __post_init__(self) -> None:
        check_number("input_usd_per_million_tokens", self.input_usd_per_million_tokens, 0, 10_000)
        check_number("cached_input_usd_per_million_tokens", self.cached_input_usd_per_million_tokens, 0, 10_000)
        check_number("output_usd_per_million_tokens", self.output_usd_per_million_tokens, 0, 10_000)
        check_number("replies_per_day", self.replies_per_day, 0, 1e12)
        check_int("days_per_month", self.days_per_month, 1, 31)
