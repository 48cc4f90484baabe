"""Batching: one weight read feeds every sequence in the batch, until the maths saturates.

Reference: the lesson (Day 36, Part 2 and D4); Databricks/Mosaic, "LLM Inference
Performance Engineering" (2023), on batch size versus throughput.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from core.memory import kv_cache_bytes, weight_bytes
from core.parallel import Machine
from core.phases import decode_bytes, decode_fixed_time_s, decode_flops
from core.roofline import arithmetic_intensity_flop_per_byte, is_compute_bound, step_time_s
from core.specs import Model, Precision

FloatArray = npt.NDArray[np.float64]
# The largest batch the critical-batch search considers; beyond it "never compute-bound".
MAX_SEARCH_BATCH = 1 << 24


@dataclass(frozen=True, slots=True)
class BatchSweep:
    """Decode at each batch size, as parallel arrays (one entry per batch size)."""

    batch_size: FloatArray
    step_time_s: FloatArray
    output_tokens_per_s: FloatArray
    intensity_flop_per_byte: FloatArray
    compute_bound: npt.NDArray[np.bool_]
    memory_required_bytes: FloatArray
    fits_in_memory: npt.NDArray[np.bool_]
    balance_flop_per_byte: float


def sweep_batch_sizes(
    model: Model,
    precision: Precision,
    machine: Machine,
    batch_sizes: npt.ArrayLike,
    context_tokens: int,
    sequence_tokens: int,
    memory_bytes: float,
) -> BatchSweep:
    """One decode step at every batch size in `batch_sizes`, vectorised (no Python loop over points).

    step time = roofline(weights + B × KV(context), B × FLOPs per token) + fixed costs;
    throughput = B / step time; memory = weights + B × KV(sequence_tokens) against
    `memory_bytes`. Example (the lesson): the toy 7B at B = 64 → 7.000 ms, 9,143 tok/s;
    at B = 300 → 14.000 ms, 21,429 tok/s (compute-bound).
    """
    batch = np.asarray(batch_sizes, dtype=float)
    flops = decode_flops(model, batch, context_tokens)
    bytes_moved = decode_bytes(model, precision, batch, context_tokens)
    time_s = step_time_s(bytes_moved, flops, machine.bandwidth_bytes_per_s, machine.compute_flops_per_s)
    time_s = time_s + decode_fixed_time_s(model, machine, batch)
    intensity = arithmetic_intensity_flop_per_byte(flops, bytes_moved)
    required = weight_bytes(model, precision) + kv_cache_bytes(model, precision, sequence_tokens, batch)
    return BatchSweep(
        batch_size=batch,
        step_time_s=time_s,
        output_tokens_per_s=batch / time_s,
        intensity_flop_per_byte=intensity,
        compute_bound=is_compute_bound(intensity, machine.balance_flop_per_byte),
        memory_required_bytes=required,
        fits_in_memory=required <= memory_bytes,
        balance_flop_per_byte=machine.balance_flop_per_byte,
    )


def critical_batch(model: Model, precision: Precision, machine: Machine, context_tokens: int) -> int | None:
    """The smallest batch whose decode intensity reaches the machine balance (the ridge).

    Intensity never falls as the batch grows (weights are shared, KV is per sequence), so
    a bisection finds it. None when even a huge batch stays memory-bound — long contexts,
    where each sequence's KV read outweighs its maths. Example (the lesson): intensity =
    B FLOP/byte against a balance of 150 → 150.
    """

    def reaches(batch: int) -> bool:
        flops = decode_flops(model, batch, context_tokens)
        bytes_moved = decode_bytes(model, precision, batch, context_tokens)
        return bool(flops / bytes_moved >= machine.balance_flop_per_byte * (1 - 1e-12))

    if not reaches(MAX_SEARCH_BATCH):
        return None
    low, high = 0, MAX_SEARCH_BATCH  # reaches(high) is true; reaches(low) is false or low == 0
    while high - low > 1:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle
    return high
