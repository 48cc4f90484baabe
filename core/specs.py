"""The inputs of every estimate, as frozen dataclasses in SI units, each field described once.

Every input field is written with `described(default, key=..., label=..., low=..., ...)`:
its bounds validate the spec, and the same description names the URL key, the sidebar
widget, the command-line flag and the README's option list (see `core.fields`). A bad
value raises ValueError naming the field, the value and the allowed range. Frozen specs
hash, so the app can cache on them. Bounds are generous physical limits: they exist so no
estimate overflows, underflows or divides by zero, not to second-guess users.

A preset's id stays on a spec whose numbers were edited: `Model(id="llama-3.1-8b",
layers=40, ...)` is Llama 3.1 8B with 40 layers, and its flat form is the id plus the
edited numbers. `custom` is the from-scratch base (the lesson's toy numbers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.fields import described, validate
from core.units import BYTES_PER_GB, FLOP_PER_TFLOP, PARAMS_PER_BILLION, S_PER_MS, S_PER_US
from core.validation import check_text

CUSTOM_ID = "custom"
MAX_TOKENS = 10_000_000
NAME_CHARS = 60


@dataclass(frozen=True, slots=True)
class GPU:
    """One accelerator's datasheet peaks (dense, no sparsity)."""

    id: str
    name: str = described(
        key="gname", kind=str, label="GPU name", help="A label for your edited GPU.", max_chars=NAME_CHARS
    )
    memory_bandwidth_bytes_per_s: float = described(
        key="bw", kind=float, label="Memory bandwidth (GB/s)", unit="GB/s", scale=BYTES_PER_GB,
        low=1e9, high=1e15, step=100, flag="--bandwidth-gb-s",
        help="How fast the GPU reads its memory, in GB/s (1 TB/s = 1,000). Decode waits on this.",
    )  # fmt: skip
    peak_flops_16bit_per_s: float = described(
        key="flops16", kind=float, label="16-bit compute (TFLOP/s)", unit="TFLOP/s", scale=FLOP_PER_TFLOP,
        low=1e11, high=1e18, step=10, flag="--tflops-16bit",
        help="Dense 16-bit tensor throughput (no sparsity), TFLOP/s. Prefill waits on this.",
    )  # fmt: skip
    peak_flops_8bit_per_s: float = described(
        key="flops8", kind=float, label="8-bit compute (TFLOP/s)", unit="TFLOP/s", scale=FLOP_PER_TFLOP,
        low=1e11, high=1e18, step=10, flag="--tflops-8bit",
        help="Dense 8-bit tensor throughput, TFLOP/s: used when weights are 8-bit.",
    )  # fmt: skip
    memory_bytes: float = described(
        key="mem", kind=float, label="Memory per GPU (GB)", unit="GB", scale=BYTES_PER_GB,
        low=1e8, high=1e14, step=1, flag="--memory-gb",
        help="Memory per GPU, GB: weights plus KV cache must fit in GPU count × this.",
    )  # fmt: skip
    # Per direction, per GPU: what one GPU can push to its peers during an all-reduce.
    interconnect_bytes_per_s: float = described(
        key="link", kind=float, label="GPU-to-GPU bandwidth (GB/s)", unit="GB/s", scale=BYTES_PER_GB,
        low=1e8, high=1e14, step=10, flag="--link-gb-s",
        help="What one GPU sends to its peers per direction, GB/s (NVLink 4: 450). Sets the all-reduce time.",
    )  # fmt: skip
    # Blackwell-class 4-bit floating-point tensor cores (NVFP4, MXFP4); None: the GPU has none.
    peak_flops_4bit_per_s: float | None = described(
        None, key="flops4", kind=float, label="4-bit compute (TFLOP/s)", unit="TFLOP/s", scale=FLOP_PER_TFLOP,
        low=1e11, high=1e18, step=10, flag="--tflops-4bit", optional=True,
        help="Dense 4-bit floating-point tensor throughput (NVFP4, MXFP4), TFLOP/s; empty when the GPU has none.",
    )  # fmt: skip
    price_usd_per_hour: float | None = described(
        None, key="usdh", kind=float, label="Price per GPU-hour (USD)", unit="USD per GPU-hour",
        low=0, high=1e4, step=0.1, flag="--gpu-price", optional=True,
        help="Rental price per GPU-hour, USD. Leave empty if unknown; with a price the bill compares self-hosting.",
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_text("gpu id", self.id, NAME_CHARS)
        validate(self)

    def peak_flops_per_s(self, math_bits: int) -> float:
        """Dense peak at the precision the matrix maths runs in (16, 8 or 4 bits).

        Raises ValueError for 4 on a GPU without 4-bit tensor cores.
        """
        if math_bits == 4:
            if self.peak_flops_4bit_per_s is None:
                raise ValueError(f"cbits: {self.name} has no 4-bit tensor cores, so its maths cannot run in 4 bits")
            return self.peak_flops_4bit_per_s
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
    # Attention FLOPs per attended token per layer for one query token: see core.phases.
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
                raise ValueError(
                    f"active_params must be < total_params for a mixture of experts, got {self.active_params!r}"
                )
            # A token uses at least its k routed experts, each (total - active) / (E - k) weights.
            floor = self.total_params * self.experts_per_token / self.experts
            if self.active_params < floor:
                raise ValueError(
                    f"active_params must be >= total_params × experts_per_token / experts = {floor:g} "
                    f"(the routed experts alone), got {self.active_params!r}"
                )
        if self.layers is None and (self.kv_latent_dim is not None or self.sliding_window_tokens is not None):
            raise ValueError("kv_latent_dim and sliding windows need the attention shape (layers, heads, head_dim)")
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


@dataclass(frozen=True, slots=True)
class Precision:
    """Bits per stored weight (scales included, so 4.5 for 4-bit with group scales) and per KV element."""

    weight_bits: float = described(
        16.0, key="wbits", kind=float, label="Bits per weight", unit="bits", low=1, high=32, step=0.5,
        flag="--weight-bits",
        help="Stored bits per weight, scales included: 16 = fp16/bf16, 8 = fp8/int8, 4.5 = int4 with group "
        "scales. Fewer bits → fewer bytes to read per step → faster decode.",
    )  # fmt: skip
    kv_bits: float = described(
        16.0, key="kvbits", kind=float, label="Bits per KV value", unit="bits", low=1, high=32, step=0.5,
        flag="--kv-bits", help="Bits per cached key/value element: 16, or 8 for an fp8 KV cache.",
    )  # fmt: skip
    compute_bits: int | None = described(
        None, key="cbits", kind=int, label="Maths precision", unit="bits", low=4, high=16, optional=True,
        flag="--compute-bits", choices=("16", "8", "4"),
        help="The bits the matrix maths runs in: 16, 8 (fp8/int8 tensor cores) or 4 (NVFP4/MXFP4, Blackwell). "
        "Empty: 8 for 8-bit weights, 16 otherwise (weight-only int4 dequantises to 16-bit maths).",
    )  # fmt: skip

    def __post_init__(self) -> None:
        validate(self)
        if self.compute_bits is not None and self.compute_bits not in (4, 8, 16):
            raise ValueError(f"compute_bits must be 16, 8 or 4, got {self.compute_bits!r}")

    @property
    def math_bits(self) -> int:
        """The precision the matrix maths runs in: `compute_bits`, or by default from the weights.

        Assumption when not given: 8-bit weights are served W8A8 (fp8 or int8 tensor cores);
        every other width is dequantised to 16-bit before the multiply (weight-only
        quantisation such as int4 AWQ/GPTQ, EXL2, GGUF). 4-bit maths (NVFP4, MXFP4 on
        Blackwell's tensor cores) must be asked for.
        """
        if self.compute_bits is not None:
            return self.compute_bits
        return 8 if self.weight_bits == 8 else 16

    @property
    def dequantises(self) -> bool:
        """True when weights are stored narrower than the maths, so every matmul unpacks them first.

        Weight-only quantisation (int4 AWQ/GPTQ at 4.25-4.5 bits, GGUF, MLX 4-bit, EXL2, or
        int8 weights multiplied in 16-bit) reads fewer bytes but runs a dequantising kernel,
        which reaches a smaller share of bandwidth and compute than a plain one (see
        `Efficiency.dequant_bandwidth`). fp8 weights on 8-bit maths and NVFP4 (4.5 bits with
        their scales) on 4-bit maths are not dequantised. Example: 4.5-bit weights, maths by
        default in 16 bits → True; 8-bit weights, maths by default in 8 → False.
        """
        return self.weight_bits < self.math_bits


@dataclass(frozen=True, slots=True)
class Efficiency:
    """How far real software falls short of the datasheet.

    mbu: memory-bandwidth utilisation; mfu: compute (model FLOPs) utilisation;
    step_overhead_s: a fixed cost per forward pass (kernel launches, scheduling);
    sequence_overhead_s: a cost per sequence per pass (sampling, detokenising, paging
    bookkeeping), which is why real servers fall short of the roofline at large batches;
    allreduce_latency_s: the fixed cost of one all-reduce under tensor
    parallelism; request_overhead_s: the server's path per request (HTTP, tokenising,
    scheduling, streaming the first token back), added once to the TTFT;
    expert_overhead_s: a mixture of experts' fixed cost per expert GEMM (each expert a
    layer runs per pass);
    dequant_bandwidth and dequant_compute: the share of MBU and MFU that kernels reach
    when they dequantise weights stored narrower than the maths (`Precision.dequantises`).
    Ideal is MBU = MFU = 1 with nothing added and nothing lost: the lesson's physics.
    `label` names the engine the numbers started from (ideal, typical, vllm, ...); numbers
    that differ from it are edits.
    """

    label: str = "ideal"
    mbu: float = described(
        1.0, key="mbu", kind=float, label="MBU", low=0.01, high=1, step=0.01,
        help="Memory-bandwidth utilisation: the share of peak bandwidth real software reaches.",
    )  # fmt: skip
    mfu: float = described(
        1.0, key="mfu", kind=float, label="MFU", low=0.01, high=1, step=0.01,
        help="Model FLOPs utilisation: the share of peak compute real software reaches.",
    )  # fmt: skip
    step_overhead_s: float = described(
        0.0, key="overhead", kind=float, label="Overhead per step (ms)", unit="ms", scale=S_PER_MS, low=0, high=1,
        step=0.1, flag="--step-overhead-ms",
        help="A fixed cost added to every forward pass (kernel launches, scheduling), ms.",
    )  # fmt: skip
    sequence_overhead_s: float = described(
        0.0, key="seqoverhead", kind=float, label="Overhead per sequence (µs)", unit="µs", scale=S_PER_US,
        low=0, high=0.01, step=1, flag="--sequence-overhead-us",
        help="A cost per sequence in the batch per pass (sampling, bookkeeping), µs.",
    )  # fmt: skip
    allreduce_latency_s: float = described(
        0.0, key="allreduce", kind=float, label="All-reduce latency (µs)", unit="µs", scale=S_PER_US,
        low=0, high=0.1, step=1, flag="--allreduce-us",
        help="Fixed latency of one all-reduce between GPUs, µs (only with more than one GPU).",
    )  # fmt: skip
    request_overhead_s: float = described(
        0.0, key="reqoverhead", kind=float, label="Overhead per request (ms)", unit="ms", scale=S_PER_MS, low=0,
        high=10, step=1, flag="--request-overhead-ms",
        help="The server's path per request (HTTP, tokenising, scheduling), added once to the TTFT, ms; "
        "0 for an engine run in-process.",
    )  # fmt: skip
    expert_overhead_s: float = described(
        0.0, key="expertoverhead", kind=float, label="Overhead per expert GEMM (µs)", unit="µs", scale=S_PER_US,
        low=0, high=0.001, step=0.5, flag="--expert-overhead-us",
        help="Mixture of experts: a fixed cost for each expert a layer runs per pass (MoE layers × the distinct "
        "experts the tokens touch), µs.",
    )  # fmt: skip
    dequant_bandwidth: float = described(
        1.0, key="dqbw", kind=float, label="Dequantising bandwidth share", low=0.01, high=1, step=0.01,
        flag="--dequant-bandwidth",
        help="Weights stored narrower than the maths (int4, GGUF): the share of the MBU their dequantising "
        "kernels reach when reading them.",
    )  # fmt: skip
    dequant_compute: float = described(
        1.0, key="dqmfu", kind=float, label="Dequantising compute share", low=0.01, high=1, step=0.01,
        flag="--dequant-compute",
        help="Weights stored narrower than the maths: the share of the MFU their matmuls reach, unpacking "
        "weights as they go (prefill pays it).",
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_text("efficiency label", self.label, 40)
        validate(self)

    @property
    def is_ideal(self) -> bool:
        costs = (self.step_overhead_s, self.sequence_overhead_s, self.allreduce_latency_s, self.request_overhead_s)
        shares = (self.mbu, self.mfu, self.dequant_bandwidth, self.dequant_compute)
        return costs == (0, 0, 0, 0) and self.expert_overhead_s == 0 and shares == (1, 1, 1, 1)


@dataclass(frozen=True, slots=True)
class Workload:
    """One request shape: prompt and reply lengths, how many run together, on how many GPUs."""

    prompt_tokens: int = described(
        200, key="prompt", kind=int, label="Prompt tokens", unit="tokens", low=1, high=MAX_TOKENS, step=100,
        flag="--prompt-tokens",
        help="Tokens in the prompt (about ¾ of a word each). Read in one parallel pass: prefill.",
    )  # fmt: skip
    output_tokens: int = described(
        500, key="out", kind=int, label="Output tokens", unit="tokens", low=1, high=1_000_000, step=50,
        flag="--output-tokens", help="Tokens in the reply. Each one is a full pass over the model: decode.",
    )  # fmt: skip
    batch_size: int = described(
        1, key="batch", kind=int, label="Batch size", unit="requests", low=1, high=1_000_000, flag="--batch",
        help="Requests decoded together. One weight read serves them all.",
    )  # fmt: skip
    cached_prompt_tokens: int = described(
        0, key="cached", kind=int, label="Cached prompt tokens", unit="tokens", low=0, high="prompt_tokens",
        step=100, flag="--cached-tokens",
        help="Prompt tokens already in a prefix cache: not prefilled again, billed at the cached price.",
    )  # fmt: skip
    gpu_count: int = described(
        1, key="gpus", kind=int, label="GPU count", unit="GPUs", low=1, high=1024, flag="--gpus",
        help="GPUs sharing one copy of the model (tensor parallel): bandwidth, compute and memory add up.",
    )  # fmt: skip
    cache_write_tokens: int = described(
        0, key="cwrite", kind=int, label="Cache writes per reply (tokens)", unit="tokens", low=0, high="prompt_tokens",
        step=100, flag="--cache-write-tokens",
        help="Prompt tokens each reply writes into the provider's prompt cache (billed at the cache-write price).",
    )  # fmt: skip

    def __post_init__(self) -> None:
        validate(self)
        if self.cached_prompt_tokens + self.cache_write_tokens > self.prompt_tokens:
            raise ValueError(
                f"cache_write_tokens must be <= prompt_tokens - cached_prompt_tokens "
                f"({self.prompt_tokens - self.cached_prompt_tokens:,}), got {self.cache_write_tokens!r}"
            )

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
    """API token prices and traffic. Defaults are the lesson's Part 3 (illustrative prices).

    `api_model` ("openai/gpt-4o") names the catalogue entry the prices start from (the
    link's `api=`): its list prices, unless typed over. While they are the catalogue's, a
    reply is billed the provider's way (long-prompt tiers, per-request fees: `core.billing`).
    """

    input_usd_per_million_tokens: float = described(
        0.50, key="pin", kind=float, label="Input ($ / M tokens)", unit="USD per million tokens", low=0, high=1e4,
        step=0.05, flag="--input-price", help="What the API charges per million prompt tokens, USD.",
    )  # fmt: skip
    cached_input_usd_per_million_tokens: float = described(
        0.50, key="pcache", kind=float, label="Cached input ($ / M tokens)", unit="USD per million tokens", low=0,
        high=1e4, step=0.05, flag="--cached-input-price",
        help="Per million prompt tokens read from the provider's prompt cache (a cache hit), USD.",
    )  # fmt: skip
    output_usd_per_million_tokens: float = described(
        1.50, key="pout", kind=float, label="Output ($ / M tokens)", unit="USD per million tokens", low=0, high=1e4,
        step=0.05, flag="--output-price",
        help="Per million output tokens, USD: usually several times the input price.",
    )  # fmt: skip
    replies_per_day: int = described(
        100_000, key="replies", kind=int, label="Replies per day", unit="replies per day", low=0, high=10**12,
        step=1000, flag="--replies-per-day", help="Replies your feature sends per day.",
    )  # fmt: skip
    days_per_month: int = described(
        30, key="days", kind=int, label="Days per month", unit="days", low=1, high=31, flag="--days",
        help="Days billed per month.",
    )  # fmt: skip
    cache_write_usd_per_million_tokens: float | None = described(
        None, key="pwrite", kind=float, label="Cache write ($ / M tokens)", unit="USD per million tokens", low=0,
        high=1e4, step=0.05, flag="--cache-write-price", optional=True,
        help="Per million prompt tokens written to the prompt cache, USD, where the provider charges for it "
        "(empty: the input price).",
    )  # fmt: skip
    # The catalogue entry the prices start from (the link's api=); None: prices typed by hand.
    api_model: str | None = None

    def __post_init__(self) -> None:
        validate(self)
        if self.api_model is not None:
            from core.api_prices import lookup  # the catalogue loads on first use only

            check_text("api_model", self.api_model, 120)
            object.__setattr__(self, "api_model", lookup(self.api_model).id)  # its own spelling
