"""Batching: one weight read feeds every sequence in the batch, until the maths saturates.

Reference: the lesson (Day 36, Part 2 and D4); Databricks/Mosaic, "LLM Inference
Performance Engineering" (2023), on batch size versus throughput.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from core.memory import kv_cache_bytes, weight_bytes
from core.parallel import Machine
from core.phases import decode_time_s, mean_decode_bytes, mean_decode_flops
from core.roofline import arithmetic_intensity_flop_per_byte, is_compute_bound
from core.specs import Model, Precision
from core.step_time import decode_times_s, step_balance, waits_on_host

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
    # Mean FLOPs ÷ the slower of mean reading and maths: the roofline part, before fixed costs, so not
    # FLOPs ÷ step_time_s (RooflinePoint.attained_flops_per_s, where the roofline chart places the step).
    attained_flops_per_s: FloatArray
    compute_bound: npt.NDArray[np.bool_]
    # Every step of the reply waits on the host's launches (an eager engine, `Machine.host_time_s`);
    # all False when the launches add to the GPU's time instead.
    host_bound: npt.NDArray[np.bool_]
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
    output_tokens: int = 1,
) -> BatchSweep:
    """The decode step at every batch size in `batch_sizes`, vectorised (no Python loop over points).

    The step is the estimate's: the mean over `output_tokens` steps at contexts
    context_tokens, context_tokens + 1, ... (pass the prompt and the reply length; the mean
    context is then prompt + (reply - 1) / 2). With output_tokens = 1 it is the one step at
    `context_tokens`. step time = Σ roofline(weights + B × KV, B × FLOPs per token) + fixed
    costs, ÷ steps; intensity = mean FLOPs ÷ mean bytes; throughput = B / step time; memory
    = weights + B × KV(sequence_tokens) against `memory_bytes`. Example (the lesson): the
    toy 7B at B = 64 → 7.000 ms, 9,143 tok/s; at B = 300 → 14.000 ms, 21,429 tok/s
    (compute-bound).
    """
    batch = np.asarray(batch_sizes, dtype=float)
    flops = mean_decode_flops(model, batch, context_tokens, output_tokens)
    bytes_moved = mean_decode_bytes(model, precision, batch, context_tokens, output_tokens, machine.gpu_count)
    time_s = decode_time_s(model, precision, machine, context_tokens, output_tokens, batch) / output_tokens
    intensity = arithmetic_intensity_flop_per_byte(flops, bytes_moved)
    kv_bytes = kv_cache_bytes(model, precision, sequence_tokens, batch, machine.gpu_count)
    required = weight_bytes(model, precision) + kv_bytes
    memory_s, compute_s = decode_times_s(model, precision, machine, batch, flops, bytes_moved)
    balance = step_balance(machine, flops, bytes_moved, compute_s, memory_s)
    return BatchSweep(
        batch_size=batch,
        step_time_s=time_s,
        output_tokens_per_s=batch / time_s,
        intensity_flop_per_byte=intensity,
        attained_flops_per_s=flops / np.maximum(memory_s, compute_s),
        compute_bound=is_compute_bound(intensity, balance),
        host_bound=np.asarray(waits_on_host(time_s, machine.host_time_s)),
        memory_required_bytes=required,
        fits_in_memory=required <= memory_bytes,
        balance_flop_per_byte=machine.balance_flop_per_byte,
    )


def critical_batch(
    model: Model, precision: Precision, machine: Machine, context_tokens: int, output_tokens: int = 1
) -> int | None:
    """The smallest batch whose decode intensity reaches the machine balance (the ridge).

    The decode step is the estimate's, as in `sweep_batch_sizes`: the mean over
    `output_tokens` steps from `context_tokens` (pass the prompt and the reply length), or
    the one step at `context_tokens` when output_tokens = 1. Intensity never falls as the
    batch grows (weights are shared, KV is per sequence), so a bisection finds it. None
    when even a huge batch stays memory-bound — long contexts, where each sequence's KV
    read outweighs its maths. Example (the lesson): intensity = B FLOP/byte against a
    balance of 150 → 150.
    """

    def reaches(batch: int) -> bool:
        flops = mean_decode_flops(model, batch, context_tokens, output_tokens)
        bytes_moved = mean_decode_bytes(model, precision, batch, context_tokens, output_tokens, machine.gpu_count)
        memory_s, compute_s = decode_times_s(model, precision, machine, batch, flops, bytes_moved)
        balance = step_balance(machine, flops, bytes_moved, compute_s, memory_s)
        return bool(flops / bytes_moved >= balance * (1 - 1e-12))

    if not reaches(MAX_SEARCH_BATCH):
        return None
    return _first_batch(reaches, 0, MAX_SEARCH_BATCH)


def _first_batch(holds: Callable[[int], bool], low: int, high: int) -> int:
    """The smallest batch in (low, high] where `holds`, which once true stays true, given holds(high)."""
    while high - low > 1:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    return high


def largest_host_bound_batch(
    model: Model, precision: Precision, machine: Machine, context_tokens: int, output_tokens: int = 1
) -> int | None:
    """The largest batch whose every decode step waits on the host's launches (`Machine.host_time_s`); None: not an eager engine.

    The step as in `sweep_batch_sizes` (the mean over `output_tokens` steps from `context_tokens`):
    it never gets quicker as the batch grows, so a bisection finds where it leaves the host's
    floor. 0 when even one sequence outlasts the host. Example: Llama 3.1 8B on one H100 under
    HF transformers, 200 → 500 tokens → 322 (the reply's last step, at 699 tokens, is
    5.448 ms + B × 99.08 µs of GPU work against 37.44 ms of launches).
    """
    host_s = machine.host_time_s
    if not host_s:
        return None

    def waits(batch: int) -> bool:
        step_s = float(decode_time_s(model, precision, machine, context_tokens, output_tokens, batch)) / output_tokens
        return bool(waits_on_host(step_s, host_s))

    if not waits(1):
        return 0
    if waits(MAX_SEARCH_BATCH):
        return MAX_SEARCH_BATCH
    return _first_batch(lambda batch: not waits(batch), 1, MAX_SEARCH_BATCH) - 1
