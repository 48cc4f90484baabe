"""The roofline: a step takes as long as the slower of moving its bytes and doing its maths.

Reference: the lesson (Day 36, "TODO 1"); Williams, Waterman & Patterson, "Roofline"
(CACM 2009); kipply, "Transformer Inference Arithmetic" (2022).

Every function accepts floats or numpy arrays, so a sweep is one vectorised call.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from core.arraymath import Quantity

Bound = Literal["memory", "compute"]


class RooflinePoint:
    """A step placed on the roofline: its intensity, and whether memory or maths bounds it.

    A base for the step dataclasses (a forward pass, the reply's mean decode step), which
    give `flops`, `bytes_moved` and the balance they are judged against.
    """

    __slots__ = ()
    flops: float
    bytes_moved: float
    memory_time_s: float
    compute_time_s: float
    balance_flop_per_byte: float

    @property
    def intensity_flop_per_byte(self) -> float:
        return float(arithmetic_intensity_flop_per_byte(self.flops, self.bytes_moved))

    @property
    def attained_flops_per_s(self) -> float:
        """Its FLOPs over the slower of its reading and its maths: where it sits on a roofline chart.

        On the machine's roof, min(compute, bandwidth × intensity), when every byte and FLOP moves at
        the group's one rate; below it when the weights stream or multiply at their own, lower, rates
        (a dequantising kernel, `Machine.dequantised`), when attention multiplies at a wider precision
        than the weights (fp8 weights beside a 16-bit KV cache: a long prompt's attention), or when a
        MoE prompt pays for padding. Example: an
        int4 Llama 3.1 8B decode on one A100 under vLLM (3.556 FLOP/byte), its weights streaming at
        0.81 TB/s (the unpacking cap) where the KV cache reads at 1.31 TB/s: 2.889 TFLOP/s, where
        the machine's roof would put it at 4.658.
        """
        return self.flops / max(self.memory_time_s, self.compute_time_s)

    @property
    def bound(self) -> Bound:
        return bound(self.intensity_flop_per_byte, self.balance_flop_per_byte)


def step_time_s(
    bytes_moved: Quantity, flops: Quantity, bandwidth_bytes_per_s: Quantity, compute_flops_per_s: Quantity
) -> Quantity:
    """time = max(bytes / bandwidth, FLOPs / compute).

    Assumes memory traffic and maths overlap perfectly, so the slower one sets the clock.
    Example (the lesson): 14e9 bytes and 14e9 FLOPs on 2e12 B/s and 3e14 FLOP/s →
    max(7.0 ms, 0.047 ms) = 7.0 ms.
    """
    return np.maximum(np.divide(bytes_moved, bandwidth_bytes_per_s), np.divide(flops, compute_flops_per_s))


def attainable_flops_per_s(
    intensity_flop_per_byte: Quantity, compute_flops_per_s: float, bandwidth_bytes_per_s: float
) -> Quantity:
    """The roof: min(compute, bandwidth × intensity). Example (the lesson): 64 FLOP/byte → min(300e12, 128e12) = 128e12."""
    return np.minimum(compute_flops_per_s, np.multiply(bandwidth_bytes_per_s, intensity_flop_per_byte))


# A step this much under its roof sits under it (float noise is far smaller, a real cause far larger).
UNDER_THE_ROOF = 1e-6


def under_the_roof(
    attained_flops_per_s: Quantity,
    intensity_flop_per_byte: Quantity,
    compute_flops_per_s: float,
    bandwidth_bytes_per_s: float,
) -> Quantity:
    """True where a step attains less than its roof: part of it moves slower than the group's one rate."""
    roof = attainable_flops_per_s(intensity_flop_per_byte, compute_flops_per_s, bandwidth_bytes_per_s)
    return np.less(attained_flops_per_s, roof * (1 - UNDER_THE_ROOF))


def arithmetic_intensity_flop_per_byte(flops: Quantity, bytes_moved: Quantity) -> Quantity:
    """intensity = FLOPs / bytes moved. Example: a batch-1 decode of the toy 7B model, 14e9 / 14e9 = 1."""
    return np.divide(flops, bytes_moved)


def machine_balance_flop_per_byte(compute_flops_per_s: float, bandwidth_bytes_per_s: float) -> float:
    """balance = compute / bandwidth: the intensity at which a step stops waiting on memory.

    Example (the lesson): 300e12 / 2e12 = 150 FLOP/byte.
    """
    return compute_flops_per_s / bandwidth_bytes_per_s


def bound(intensity_flop_per_byte: float, balance_flop_per_byte: float) -> Bound:
    """ "memory" when intensity <= balance, else "compute".

    On the ridge itself (intensity == balance) both take equally long; the lesson labels
    batch 150 on its 150 FLOP/byte machine "memory", so the tie goes to memory.
    """
    return "compute" if intensity_flop_per_byte > balance_flop_per_byte else "memory"


def is_compute_bound(intensity_flop_per_byte: Quantity, balance_flop_per_byte: Quantity) -> Quantity:
    """Vectorised `bound(...) == "compute"`."""
    return np.greater(intensity_flop_per_byte, balance_flop_per_byte)


def compute_idle_fraction(intensity_flop_per_byte: Quantity, balance_flop_per_byte: Quantity) -> Quantity:
    """Share of a step the compute units wait: 1 - min(intensity / balance, 1).

    Example (the lesson): 1 - 1/150 = 0.9933, "idle 99.3% of the time".
    """
    return 1.0 - np.minimum(np.divide(intensity_flop_per_byte, balance_flop_per_byte), 1.0)
