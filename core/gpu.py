"""One accelerator as its datasheet gives it: bandwidth, dense peaks per precision, memory, links, price.

A field is written with `described(...)` (see `core.fields`): its bounds validate the GPU,
and the same description names the URL key, the sidebar widget, the CLI flag and the
README's option list.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.fields import described, validate
from core.units import BYTES_PER_GB, FLOP_PER_TFLOP
from core.validation import NAME_CHARS, check_text


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
    # The general-purpose (non-tensor) cores' FP32 peak: where a weight-only quantised kernel unpacks
    # every weight (shift, mask, convert, scale) before its maths (`Efficiency.unpack_flop_per_weight`).
    # None: not given, and unpacking then never limits a step.
    vector_flops_per_s: float | None = described(
        None, key="vflops", kind=float, label="Vector compute, FP32 (TFLOP/s)", unit="TFLOP/s", scale=FLOP_PER_TFLOP,
        low=1e11, high=1e17, step=1, flag="--tflops-vector", optional=True,
        help="FP32 throughput of the general-purpose (non-tensor) cores, TFLOP/s (A100: 19.5, RTX 4090: 82.6). "
        "Weight-only quantised kernels (int4 AWQ/GPTQ, GGUF) unpack every weight there; empty: no limit from it.",
    )  # fmt: skip
    price_usd_per_hour: float | None = described(
        None, key="usdh", kind=float, label="Price per GPU-hour (USD)", unit="USD per GPU-hour",
        low=0, high=1e4, step=0.1, flag="--gpu-price", optional=True,
        help="Rental price per GPU-hour, USD. Leave empty if unknown; with a price the bill compares self-hosting.",
    )  # fmt: skip

    # What kernels sustain, measured in microbenchmarks, relative to the reference GPU the engines'
    # costs are calibrated on (NVIDIA H100 SXM: 89 % of its datasheet bandwidth, 80 % of its dense
    # 16-bit peak). 1 unless at least two published measurements put the GPU clearly below it.
    sustained_bandwidth_share: float = described(
        1.0, key="bwshare", kind=float, label="Sustained bandwidth share", low=0.1, high=1, step=0.01,
        flag="--sustained-bandwidth",
        help="How much of its datasheet bandwidth this GPU's kernels sustain, relative to an H100's (whose "
        "copy kernels reach 89 %), as microbenchmarks measure it: 1 = as an H100. Every engine's MBU applies on "
        "top; the ideal machine reads the datasheet.",
    )  # fmt: skip
    sustained_compute_share: float = described(
        1.0, key="flopshare", kind=float, label="Sustained compute share", low=0.1, high=1, step=0.01,
        flag="--sustained-compute",
        help="How much of its datasheet compute this GPU's matmuls sustain, relative to an H100's (80 % of "
        "its dense 16-bit peak), as GEMM microbenchmarks measure it: 1 = as an H100 (MI300X: 0.64, its "
        "clocks held down by its power limit). Every engine's MFU applies on top; the ideal machine runs at the "
        "datasheet.",
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


# The first word of a GPU's name, after a vendor word, that names a family with kernels of its
# own in some engine (`core.engine.backend_for`): Apple's M-series, AMD's Radeon (RDNA) cards.
_VENDOR_WORDS = ("AMD", "Apple", "NVIDIA", "Intel")


def gpu_family(name: str) -> str:
    """ "Apple" or "Radeon" from a preset's or a published row's GPU name, else "" (the rest).

    "Apple M2 Ultra", "M2-Ultra-76c" → Apple; "AMD Radeon 8060S", "RX-9070-XT" → Radeon;
    "AMD Instinct MI300X", "MI300X", "NVIDIA H100" → "".
    """
    words = name.replace("-", " ").split()
    if words and words[0] in _VENDOR_WORDS:
        words = words[1:]
    first = words[0] if words else ""
    if len(first) > 1 and first[0] == "M" and first[1].isdigit():
        return "Apple"
    if first in ("RX", "Radeon"):
        return "Radeon"
    return ""
