"""One serving replica: a model at a precision on N GPUs in tensor parallel, run by an engine.

Everything the load model needs about the hardware and software, built once: the
effective `Machine` (the engine's efficiency flattened for this model) and the bytes
the engine gives the KV cache, which caps how many requests can be in flight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from core.engine import EngineProfile, in_words
from core.lengths import RequestLengths
from core.memory import kv_cache_bytes, weight_bytes
from core.parallel import Machine, effective_machine
from core.specs import GPU, Efficiency, Model, Precision
from core.units import BYTES_PER_GB
from core.validation import check_int


@dataclass(frozen=True, slots=True)
class Replica:
    """Model + precision + GPUs + engine; `machine` is derived on construction."""

    model: Model
    precision: Precision
    gpu: GPU
    gpu_count: int
    engine: EngineProfile
    # The costs to run at; None: the engine's own, flattened for this model. A scenario
    # whose efficiency numbers were edited passes them here (the engine keeps its scheduling).
    efficiency: Efficiency | None = None
    machine: Machine = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_int("gpu_count", self.gpu_count, 1, 1024)
        costs = self.engine.efficiency(self.model) if self.efficiency is None else self.efficiency
        micro = self.engine.prefill_micro_batch_tokens
        machine = effective_machine(self.gpu, self.gpu_count, costs, self.precision, micro)
        object.__setattr__(self, "machine", machine)

    @property
    def usable_bytes(self) -> float:
        """Memory the engine uses across the group: (memory × utilisation − reserve) × N.

        Example: vLLM (0.9, 3 GiB) on one H100 80 GB → 80 × 0.9 − 3.22 = 68.8 GB."""
        engine = self.engine
        return (self.gpu.memory_bytes * engine.memory_utilization - engine.reserved_bytes_per_gpu) * self.gpu_count

    @property
    def kv_budget_bytes(self) -> float:
        """Bytes the engine gives the KV cache across the group (≤ 0: the weights do not fit).

        (memory × utilisation − reserve) × N − weights, times the share of the rest the
        engine hands to the cache. Example: vLLM (0.9, 3 GiB) on 2 × H100 80 GB with 70.55 GB
        of fp8 weights → (72 − 3.22) × 2 − 70.55 = 67.0 GB.
        """
        return (self.usable_bytes - weight_bytes(self.model, self.precision)) * self.engine.kv_free_memory_fraction

    def kv_bytes_per_sequence(self, lengths: RequestLengths) -> float:
        """One running sequence's KV cache as the engine holds it: at its current length on average (paged),
        or prompt plus whole reply where the engine reserves it up front."""
        tokens = lengths.mean_tokens_reserved if self.engine.reserves_full_sequence else lengths.mean_tokens_held
        return float(kv_cache_bytes(self.model, self.precision, tokens, 1, self.gpu_count))

    def max_concurrency_that_fits(self, lengths: RequestLengths) -> int:
        """The most requests whose KV cache fits at once, capped by the engine's sequence limit.

        Paged engines hold each running sequence at its current length (on average the
        prompt plus half the reply); engines that guarantee no eviction reserve prompt plus
        the whole reply up front. KV heads replicated across the GPUs count once per copy. Above this concurrency requests wait for a slot. 0 when the
        weights alone do not fit; the engine's cap when the model has no KV cache.
        """
        budget = self.kv_budget_bytes
        if budget <= 0:
            return 0
        per_sequence = self.kv_bytes_per_sequence(lengths)
        cap = self.engine.max_sequences
        if per_sequence == 0:
            return cap
        return min(cap, math.floor(budget / per_sequence))


def fit_problem(replica: Replica, lengths: RequestLengths) -> str:
    """Why not even one request fits: the weights exceed what the engine may use, or one KV cache is too big.

    Example: Llama 3.1 70B in 8 bits (70.6 GB) on one H100 under vLLM: 80 × 0.9 − 3.2 = 68.8 GB usable.
    """
    engine, n, usable = replica.engine, replica.gpu_count, replica.usable_bytes
    weights = weight_bytes(replica.model, replica.precision)
    if replica.kv_budget_bytes <= 0:
        return (
            f"{weights / BYTES_PER_GB:,.1f} GB of weights {'exceed' if weights > usable else 'fill'} the {usable / BYTES_PER_GB:,.1f} GB "
            f"{in_words(engine.id)} may use on {n} × {replica.gpu.memory_bytes / BYTES_PER_GB:,.0f} GB"
        )
    one = replica.kv_bytes_per_sequence(lengths)
    return (
        f"one request's KV cache ({one / BYTES_PER_GB:,.2f} GB) does not fit in the "
        f"{replica.kv_budget_bytes / BYTES_PER_GB:,.2f} GB left beside the weights"
    )
