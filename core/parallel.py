"""The machine a step actually runs on: N GPUs in tensor parallel, derated by efficiency.

Reference: Shoeybi et al., "Megatron-LM" (2019) for the two all-reduces per layer;
Patarasuk & Yuan (2009) for the ring all-reduce's 2(N-1)/N traffic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.arraymath import Quantity
from core.roofline import machine_balance_flop_per_byte
from core.specs import GPU, Efficiency, Precision
from core.units import BITS_PER_BYTE

# Megatron-style tensor parallelism synchronises twice per layer: after attention and after the MLP.
ALLREDUCES_PER_LAYER = 2
# Activations travel between GPUs in 16-bit whatever the weight precision.
ACTIVATION_BYTES = 2


@dataclass(frozen=True, slots=True)
class Machine:
    """Effective bandwidth and compute of the whole tensor-parallel group, and the fixed costs.

    Weight reads and weight matmuls run at `weight_bandwidth_bytes_per_s` and
    `weight_compute_flops_per_s`: the same as the KV cache's and attention's, except when
    the weights are dequantised (`Precision.dequantises`), whose kernels reach less.
    Attention's matmuls run at `attention_flops_per_s`, at their own precision
    (`Precision.attention_bits`): 8-bit or 4-bit weight maths does not make attention faster
    than its KV cache's width allows.
    """

    bandwidth_bytes_per_s: float
    compute_flops_per_s: float
    gpu_count: int
    interconnect_bytes_per_s: float
    step_overhead_s: float  # per step on the GPU's time: 0 when the launches are the host's (host_time_s)
    # An eager engine's launches (Efficiency.launches_overlap): the host's time per step, overlapping the
    # GPU's work, so a step takes at least this long (`step_time.step_time_s`); 0 otherwise.
    host_time_s: float
    sequence_overhead_s: float
    allreduce_latency_s: float
    weight_bandwidth_bytes_per_s: float
    weight_compute_flops_per_s: float
    attention_flops_per_s: float  # attention's matmuls, at Precision.attention_bits
    request_overhead_s: float  # once per request, added to its TTFT (at this GPU count: Efficiency.request_path_s)
    stream_overhead_s: float  # under load, per request already in flight, added to a new one's TTFT
    expert_overhead_s: float  # per expert GEMM a step runs (MoE layers × distinct experts touched)
    expert_padding_tokens: float  # tokens of maths each expert's prompt matmul pays beyond its own, per pass
    prefill_micro_batch_tokens: int  # prompt tokens one pass carries on the GPU at most (0: the whole chunk)
    balance_flop_per_byte: float  # compute ÷ bandwidth of the group
    dequantised: bool  # weights move at their own (dequantising) rates, not the group's

    @property
    def uniform(self) -> bool:
        """Every byte and every FLOP of a step moves at the group's one rate (no dequantising, attention at the weights' precision).

        Otherwise a step's parts move at their own rates and its ridge is its own (`step_time.step_balance`).
        """
        return not self.dequantised and self.attention_flops_per_s == self.compute_flops_per_s


# Pure in frozen, hashable specs, and asked for again with the same ones (every estimate of a
# scenario whose lengths change, every point of a plan's grid): building the 17-field Machine is
# a fifth of one estimate, a lookup a twentieth. Bounded: a refit, which tries thousands of
# efficiencies, only churns it.
@lru_cache(maxsize=1024)
def effective_machine(
    gpu: GPU, gpu_count: int, efficiency: Efficiency, precision: Precision, prefill_micro_batch_tokens: int = 0
) -> Machine:
    """bandwidth = N × peak bandwidth × sustained share × MBU; compute = N × dense peak × sustained share × MFU.

    Assumes weights and KV cache split evenly over the N GPUs, so each reads 1/N of the
    bytes in parallel. Dequantised weights (`Precision.dequantises`) are read at bandwidth ×
    dequant_bandwidth and multiplied at compute × dequant_compute; attention multiplies at
    the dense peak of `Precision.attention_bits` × MFU. Example: 2 × H100 SXM at MBU 0.8 →
    2 × 3.35e12 × 0.8 = 5.36e12 B/s; int4 weights with dequant_bandwidth 0.7 → 3.75e12 B/s
    for the weights; fp8 weights with a 16-bit KV cache at MFU 0.5 → weights at 2 × 1,979 ×
    0.5 = 1,979 TFLOP/s, attention at 2 × 989 × 0.5 = 989 TFLOP/s. The GPU's sustained
    shares (`GPU.sustained_bandwidth_share`, `..._compute_share`: 1 but where microbenchmarks
    measure it clearly below the reference H100) derate every engine, never the ideal machine:
    an MI300X on vLLM's MFU 0.50 → 1,307 × 0.64 × 0.50 = 418 TFLOP/s of 16-bit maths.
    Dequantised weights stream no faster than the vector cores unpack them: N × vector peak ÷
    `Efficiency.unpack_flop_per_weight` weights a second. A100 (19.5 TFLOP/s FP32, 2,039 GB/s)
    at 12 FLOP per weight and 4.5 bits → 1.625e12 weights/s × 0.5625 B = 0.914 TB/s, under half
    its bandwidth; an RTX 4090 (82.6 TFLOP/s, 1,008 GB/s) → 3.87 TB/s, nearly 4× its bandwidth.
    `prefill_micro_batch_tokens` is the engine's (its scheduling, not a cost): how many prompt
    tokens one pass carries on the GPU (llama.cpp's n_ubatch), which the expert padding counts.
    """
    # Real software runs at what the GPU sustains (its kernels measured against the reference
    # GPU the engines' costs are calibrated on); the ideal machine at the datasheet itself.
    real = not efficiency.is_ideal
    bandwidth_share = efficiency.mbu * (gpu.sustained_bandwidth_share if real else 1.0)
    compute_share = efficiency.mfu * (gpu.sustained_compute_share if real else 1.0)
    bandwidth = gpu_count * gpu.memory_bandwidth_bytes_per_s * bandwidth_share
    compute = gpu_count * gpu.peak_flops_per_s(precision.math_bits) * compute_share
    attention = gpu_count * gpu.peak_flops_per_s(precision.attention_bits) * compute_share
    weight_bandwidth = bandwidth * efficiency.dequant_bandwidth
    unpacked = unpacking_bytes_per_s(gpu, gpu_count, efficiency, precision)
    if unpacked is not None:
        weight_bandwidth = min(weight_bandwidth, unpacked)
    dequantised = precision.dequantises and (weight_bandwidth, efficiency.dequant_compute) != (bandwidth, 1)
    return Machine(
        bandwidth_bytes_per_s=bandwidth,
        compute_flops_per_s=compute,
        gpu_count=gpu_count,
        interconnect_bytes_per_s=gpu.interconnect_bytes_per_s,
        step_overhead_s=0.0 if efficiency.launches_overlap else efficiency.step_overhead_s,
        host_time_s=efficiency.step_overhead_s if efficiency.launches_overlap else 0.0,
        sequence_overhead_s=efficiency.sequence_overhead_s,
        allreduce_latency_s=efficiency.allreduce_latency_s,
        weight_bandwidth_bytes_per_s=weight_bandwidth if dequantised else bandwidth,
        weight_compute_flops_per_s=compute * efficiency.dequant_compute if dequantised else compute,
        attention_flops_per_s=attention,
        request_overhead_s=efficiency.request_path_s(gpu_count),
        stream_overhead_s=efficiency.stream_overhead_s,
        expert_overhead_s=efficiency.expert_overhead_s,
        expert_padding_tokens=efficiency.expert_padding_tokens,
        prefill_micro_batch_tokens=prefill_micro_batch_tokens,
        balance_flop_per_byte=machine_balance_flop_per_byte(compute, bandwidth),
        dequantised=dequantised,
    )


def unpacking_bytes_per_s(gpu: GPU, gpu_count: int, efficiency: Efficiency, precision: Precision) -> float | None:
    """How many bytes of narrow weights a second the group's vector cores unpack; None: no such limit.

    N × vector peak ÷ `Efficiency.unpack_flop_per_weight` weights a second, × bits ÷ 8. A
    dequantising kernel streams its weights through those cores (load, unpack, then the maths),
    so they move no faster (`effective_machine` caps them at it). None when the GPU gives no
    vector peak or unpacking costs nothing. Example: one A100 (19.5 TFLOP/s) at 13.5 FLOP per
    weight and 4.5 bits → 1.444e12 × 0.5625 = 0.8125 TB/s.
    """
    if gpu.vector_flops_per_s is None or efficiency.unpack_flop_per_weight <= 0:
        return None
    weights_per_s = gpu_count * gpu.vector_flops_per_s / efficiency.unpack_flop_per_weight
    # With narrower experts (gpt-oss), at their width: the unpacked weights (the stream is capped as one).
    return weights_per_s * precision.narrowest_weight_bits / BITS_PER_BYTE


def allreduce_time_s(message_bytes: Quantity, machine: Machine) -> Quantity:
    """One ring all-reduce: latency + 2(N-1)/N × message / per-GPU link bandwidth; 0 on one GPU.

    Example: 8 GPUs, a 16 KB message (one token's 8192-wide activations in 16-bit) on
    450 GB/s links with 20 µs latency → 20 µs + 2 × 7/8 × 16384 / 450e9 ≈ 20.06 µs.
    """
    n = machine.gpu_count
    if n == 1:
        return message_bytes * 0.0
    traffic_bytes = 2.0 * (n - 1) / n * message_bytes
    return machine.allreduce_latency_s + traffic_bytes / machine.interconnect_bytes_per_s
