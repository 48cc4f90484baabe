"""How far real software falls short of the datasheet: utilisation shares and fixed costs, in SI units.

The spec only; where an efficiency starts from (the lesson's ideal machine or an engine's
costs flattened for a model) is `core.efficiency`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from core.fields import described, validate
from core.units import S_PER_MS, S_PER_US
from core.validation import check_text


@dataclass(frozen=True, slots=True)
class Efficiency:
    """How far real software falls short of the datasheet.

    mbu: memory-bandwidth utilisation; mfu: compute (model FLOPs) utilisation;
    step_overhead_s: a fixed cost per forward pass (kernel launches, scheduling);
    launches_overlap: whether that cost is the host's, running ahead of the GPU (eager PyTorch
    launching each kernel from Python while the GPU runs the last), so that a pass takes the
    longer of the host's launches and the GPU's work instead of their sum;
    sequence_overhead_s: a cost per sequence per pass (sampling, detokenising, paging
    bookkeeping), which is why real servers fall short of the roofline at large batches;
    allreduce_latency_s: the fixed cost of one all-reduce under tensor
    parallelism; request_overhead_s: the server's path per request (HTTP, tokenising,
    scheduling, streaming the first token back), added once to the TTFT;
    request_overhead_per_doubling_s: what that path adds each time the tensor-parallel GPUs
    double (a server that hands every request to every GPU's worker); stream_overhead_s:
    what that path adds per request already in flight, under load (the load model only);
    expert_overhead_s: a mixture of experts' fixed cost per expert GEMM (each expert a
    layer runs per pass); expert_padding_tokens: the tokens of maths each expert's prompt
    matmul pays beyond the tokens routed to it, per pass (kernels whose tiles run part-empty
    when each expert gets a few dozen tokens);
    dequant_bandwidth and dequant_compute: the share of MBU and MFU that kernels reach
    when they dequantise weights stored narrower than the maths (`Precision.dequantises`);
    unpack_flop_per_weight: what unpacking one such weight costs on the GPU's vector cores
    (`GPU.vector_flops_per_s`), which caps the rate the weights stream at.
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
        # 10 s: an engine's derived cost (its launches × layers) must fit under it at any layer count a model may
        # have: HF transformers' 1.17 ms a layer × 1,000 layers is 1.17 s, past the 1 s bound this had (a link crashed).
        0.0, key="overhead", kind=float, label="Overhead per step (ms)", unit="ms", scale=S_PER_MS, low=0, high=10,
        step=0.1, flag="--step-overhead-ms",
        help="A fixed cost of every forward pass (kernel launches, scheduling), ms: added to the GPU's time, or, "
        "with launches overlapping, the host's time per pass, which the GPU's work hides.",
    )  # fmt: skip
    launches_overlap: bool = described(
        False, key="overlap", kind=bool, label="Launches overlap the GPU's work", flag="--launches-overlap",
        help="true: the overhead per step is the host issuing the step's kernels while the GPU still runs the "
        "ones before (eager PyTorch, no CUDA graphs), so a step takes the longer of the two, not their sum; "
        "false: it adds to every step.",
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
    request_overhead_per_doubling_s: float = described(
        0.0, key="reqdoubling", kind=float, label="Overhead per request per GPU doubling (ms)", unit="ms",
        scale=S_PER_MS, low=0, high=1, step=1, flag="--request-overhead-per-doubling-ms",
        help="Several GPUs in tensor parallel: what the server's path per request adds each time the GPUs "
        "double (it hands every request to every GPU's worker), ms: 2 GPUs add it once, 8 three times.",
    )  # fmt: skip
    stream_overhead_s: float = described(
        0.0, key="streamoverhead", kind=float, label="Overhead per stream in flight (µs)", unit="µs",
        scale=S_PER_US, low=0, high=0.01, step=10, flag="--stream-overhead-us",
        help="Under load the server's path to a new request's first token also grows with the requests already "
        "streaming (their tokens go out through the same server loop): this much per request in flight, µs. "
        "The load model only (serve, plan): one request alone never pays it.",
    )  # fmt: skip
    expert_overhead_s: float = described(
        0.0, key="expertoverhead", kind=float, label="Overhead per expert GEMM (µs)", unit="µs", scale=S_PER_US,
        low=0, high=0.001, step=0.5, flag="--expert-overhead-us",
        help="Mixture of experts: a fixed cost for each expert a layer runs per pass (MoE layers × the distinct "
        "experts the tokens touch), µs.",
    )  # fmt: skip
    expert_padding_tokens: float = described(
        0.0, key="expertpad", kind=float, label="Expert matmul padding (tokens)", unit="tokens", low=0,
        high=100_000, step=10, flag="--expert-padding-tokens",
        help="Mixture of experts: the tokens of maths each expert's prompt matmul pays for beyond the tokens "
        "routed to it, per pass (its kernel's tiles run part-empty when each expert gets a few dozen tokens). "
        "Prefill only; 0: none.",
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
    unpack_flop_per_weight: float = described(
        0.0, key="unpack", kind=float, label="Unpacking cost (FLOP per weight)", unit="FLOP per weight", low=0,
        high=1000, step=0.5, flag="--unpack-flop-per-weight",
        help="Weights stored narrower than the maths: the general-purpose (non-tensor) work to unpack each "
        "weight before its matmul, in FP32 FLOPs at the GPU's vector peak. It caps the rate the weights stream "
        "at, on GPUs whose vector cores are slow for their bandwidth (A100, H100, H20); 0: no cap.",
    )  # fmt: skip

    def __post_init__(self) -> None:
        check_text("efficiency label", self.label, 40)
        validate(self)

    @property
    def is_ideal(self) -> bool:
        """Nothing lost and nothing added: the lesson's machine, which reads the GPU's datasheet itself.

        Every other efficiency (an engine's, or numbers edited from any base) runs at what the GPU
        sustains (`GPU.sustained_bandwidth_share`, `sustained_compute_share`) times its own shares.
        """
        costs = (
            self.step_overhead_s,
            self.sequence_overhead_s,
            self.allreduce_latency_s,
            self.request_overhead_s,
            self.request_overhead_per_doubling_s,
            self.stream_overhead_s,
            self.expert_overhead_s,
            self.expert_padding_tokens,
            self.unpack_flop_per_weight,
        )
        shares = (self.mbu, self.mfu, self.dequant_bandwidth, self.dequant_compute)
        return all(cost == 0 for cost in costs) and shares == (1, 1, 1, 1)

    def request_path_s(self, gpu_count: int) -> float:
        """The server's path per request on `gpu_count` GPUs: its base + one increment per doubling.

        Example: SGLang's 54 ms + 14 ms per doubling → 54 ms on one GPU, 54 + 14 × log2(8) = 96 ms on 8.
        """
        return self.request_overhead_s + self.request_overhead_per_doubling_s * math.log2(gpu_count)

    def in_process(self) -> Efficiency:
        """These costs with no server in front: an engine run in-process has no path per request."""
        return replace(self, request_overhead_s=0.0, request_overhead_per_doubling_s=0.0)
