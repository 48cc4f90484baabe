"""The machine a step actually runs on: N GPUs in tensor parallel, derated by efficiency.

Reference: Shoeybi et al., "Megatron-LM" (2019) for the two all-reduces per layer;
Patarasuk & Yuan (2009) for the ring all-reduce's 2(N-1)/N traffic.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.arraymath import Quantity
from core.roofline import machine_balance_flop_per_byte
from core.specs import GPU, Efficiency

# Megatron-style tensor parallelism synchronises twice per layer: after attention and after the MLP.
ALLREDUCES_PER_LAYER = 2
# Activations travel between GPUs in 16-bit whatever the weight precision.
ACTIVATION_BYTES = 2


@dataclass(frozen=True, slots=True)
class Machine:
    """Effective bandwidth and compute of the whole tensor-parallel group."""

    bandwidth_bytes_per_s: float
    compute_flops_per_s: float
    gpu_count: int
    interconnect_bytes_per_s: float
    step_overhead_s: float
    sequence_overhead_s: float
    allreduce_latency_s: float

    @property
    def balance_flop_per_byte(self) -> float:
        return machine_balance_flop_per_byte(self.compute_flops_per_s, self.bandwidth_bytes_per_s)


def effective_machine(gpu: GPU, gpu_count: int, efficiency: Efficiency, math_bits: int) -> Machine:
    """bandwidth = N × peak bandwidth × MBU; compute = N × dense peak (at math_bits) × MFU.

    Assumes weights and KV cache split evenly over the N GPUs, so each reads 1/N of the
    bytes in parallel. Example: 2 × H100 SXM at MBU 0.8 → 2 × 3.35e12 × 0.8 = 5.36e12 B/s.
    """
    return Machine(
        bandwidth_bytes_per_s=gpu_count * gpu.memory_bandwidth_bytes_per_s * efficiency.mbu,
        compute_flops_per_s=gpu_count * gpu.peak_flops_per_s(math_bits) * efficiency.mfu,
        gpu_count=gpu_count,
        interconnect_bytes_per_s=gpu.interconnect_bytes_per_s,
        step_overhead_s=efficiency.step_overhead_s,
        sequence_overhead_s=efficiency.sequence_overhead_s,
        allreduce_latency_s=efficiency.allreduce_latency_s,
    )


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
