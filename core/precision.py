"""How numbers are stored and multiplied: bits per weight, per KV element, and the maths' precision."""

from __future__ import annotations

from dataclasses import dataclass

from core.fields import described, validate


@dataclass(frozen=True, slots=True)
class Precision:
    """Bits per stored weight (scales included, so 4.5 for 4-bit with group scales) and per KV element.

    The defaults are a 16-bit checkpoint's; a scenario built without a precision takes its model's
    release precision instead (`core.presets.release_precision`: DeepSeek-V3 ships FP8)."""

    weight_bits: float = described(
        16.0, key="wbits", kind=float, label="Bits per weight", unit="bits", low=1, high=32, step=0.5,
        flag="--weight-bits", default_words="as the model ships",
        help="Stored bits per weight, scales included: 16 = fp16/bf16, 8 = fp8/int8, 4.5 = int4 with group "
        "scales. Fewer bits → fewer bytes to read per step → faster decode. Unset, a preset is served as its "
        "publisher ships it: bf16 (16) for most, FP8 (8) for DeepSeek-V3, bf16 beside MXFP4 experts for gpt-oss.",
    )  # fmt: skip
    kv_bits: float = described(
        16.0, key="kvbits", kind=float, label="Bits per KV value", unit="bits", low=1, high=32, step=0.5,
        flag="--kv-bits", help="Bits per cached key/value element: 16, or 8 for an fp8 KV cache.",
    )  # fmt: skip
    compute_bits: int | None = described(
        None, key="cbits", kind=int, label="Maths precision", unit="bits", low=4, high=16, optional=True,
        flag="--compute-bits", choices=("16", "8", "4"),
        help="The bits the matrix maths runs in: 16, 8 (fp8/int8 tensor cores, on weights of at most 10 bits) or "
        "4 (NVFP4/MXFP4, Blackwell, on weights of at most 6). Empty: 8 for 8-bit weights, 16 otherwise "
        "(weight-only int4 dequantises to 16-bit maths).",
    )  # fmt: skip

    # A mixture of experts may store its experts narrower than the rest (gpt-oss: MXFP4 experts, bf16
    # attention, router and embeddings). One average width for both read 3.18 GB a token for gpt-oss-120b
    # where a token reads 2.13 B weights at 16 bits and 4 of 128 experts at 4.25: 6.16 GB.
    expert_weight_bits: float | None = described(
        None, key="ebits", kind=float, label="Bits per expert weight", unit="bits", low=1, high=32, step=0.25,
        optional=True, flag="--expert-weight-bits",
        help="A mixture of experts' expert weights, if stored narrower (or wider) than the rest: 4.25 = MXFP4 "
        "(4-bit values, an 8-bit scale per 32). Empty: as 'Bits per weight'. Dense models have no experts.",
    )  # fmt: skip

    def __post_init__(self) -> None:
        validate(self)
        if self.compute_bits is not None and self.compute_bits not in (4, 8, 16):
            raise ValueError(f"compute_bits must be 16, 8 or 4, got {self.compute_bits!r}")
        # Narrow maths multiplies weights stored that narrow (scales add a bit or so: 9.05 for int8 with
        # per-group scales, 4.5 for NVFP4). 16-bit weights with 8-bit maths was accepted and costed as fp8.
        # With the experts' bits given, theirs: their matmuls are most of a mixture's maths.
        widest = {8: 10.0, 4: 6.0}.get(self.compute_bits or 16)
        if widest is not None and self.expert_bits > widest:
            field = "weight_bits" if self.expert_weight_bits is None else "expert_weight_bits"
            raise ValueError(
                f"compute_bits {self.compute_bits} multiplies {self.compute_bits}-bit weights: set {field} to "
                f"{self.compute_bits} (at most {widest:g} with scales), got {self.expert_bits:g}"
            )

    @property
    def expert_bits(self) -> float:
        """Bits per stored expert weight: `expert_weight_bits`, or the weights' own when not given."""
        return self.weight_bits if self.expert_weight_bits is None else self.expert_weight_bits

    @property
    def weights_words(self) -> str:
        """'16-bit', or '16-bit (experts 4.25-bit)' where the experts are stored at another width."""
        experts = "" if self.expert_weight_bits is None else f" (experts {self.expert_weight_bits:g}-bit)"
        return f"{self.weight_bits:g}-bit{experts}"

    @property
    def narrowest_weight_bits(self) -> float:
        """The narrower of the weights' and the experts' widths: what a dequantising kernel unpacks."""
        return min(self.weight_bits, self.expert_bits)

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
    def attention_bits(self) -> int:
        """The precision attention's matmuls (QK^T, softmax × V) run in: 8 or 16, never the weights' 4.

        Attention multiplies activations by the cached keys and values, not by weights, so its
        precision follows the KV cache: an 8-bit cache beside 8-bit (or 4-bit) maths runs an
        FP8 attention kernel (TensorRT-LLM's FP8 context FMHA, FlashAttention-3's FP8 path);
        a 16-bit cache, or 16-bit maths, runs it in 16 bits. No engine runs attention in 4
        bits, so NVFP4 weights still attend at 8 or 16. Example: fp8 weights with a 16-bit
        KV cache → 16 (prefill's attention runs at half the 8-bit peak); NVFP4 with an fp8
        cache → 8.
        """
        return 8 if self.kv_bits <= 8 and self.math_bits <= 8 else 16

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
        return self.narrowest_weight_bits < self.math_bits
