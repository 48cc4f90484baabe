"""What the deployment search says about each candidate: its fleet and bill, or why it has none.

Frozen dataclasses in SI units (seconds, requests per second, USD). An `Option` that meets
every target has every field; one that fails keeps what was found before it failed (the
frontier of a candidate too slow to stream or without a price) and says why in `problem`
(a fixed code) and `reason` (words with the numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.candidates import Setup
from core.open_loop import OpenLoop


class Problem(StrEnum):
    """Why a candidate is not ranked; the value is what tables and JSON show."""

    CANNOT_SPLIT = "cannot split"  # the GPUs per replica do not divide the attention heads
    DOES_NOT_FIT = "does not fit"  # the weights leave no room for even one sequence's KV cache
    TOO_SLOW = "too slow to stream"  # the tokens/s per user target is missed even at one request
    MISSES_TTFT = "misses TTFT"  # the TTFT target is missed even at a trickle
    NO_PRICE = "no price"  # meets the targets, but the GPU has no rental price to bill


@dataclass(frozen=True, slots=True)
class Frontier:
    """The closed loop over the candidate's concurrency grid (tuples, one entry per concurrency).

    Throughput per GPU against tokens/s per user is InferenceX's chart; the same throughput in
    $ per million output tokens = price per GPU-hour / (tokens/s per GPU × 3600) × 1e6 (None
    without a price). The chosen point is the candidate's `Option.point`, on the same axes.
    """

    concurrency: tuple[int, ...]
    output_tokens_per_s_per_gpu: tuple[float, ...]
    tokens_per_s_per_user: tuple[float, ...]
    ttft_s: tuple[float, ...]  # mean, closed loop
    usd_per_million_output_tokens: tuple[float, ...] | None


@dataclass(frozen=True, slots=True)
class Option:
    """One candidate's outcome. `point` is the open loop at the per-replica rate at the peak."""

    setup: Setup
    problem: Problem | None
    reason: str
    max_concurrency_that_fits: int = 0
    frontier: Frontier | None = None
    max_running_per_replica: int | None = None  # the engine's cap (max_num_seqs): what fits, at most the plan's
    requests_per_s_per_replica: float | None = None  # goodput: the most a replica takes within the targets
    concurrency_per_replica: float | None = None  # requests in flight at the goodput: goodput × end to end
    replicas_at_peak: int | None = None
    mean_replicas: float | None = None  # over the day, autoscaled
    point: OpenLoop | None = None
    monthly_cost_peak_usd: float | None = None  # the peak fleet all month
    monthly_cost_usd: float | None = None  # following the daily curve
    usd_per_million_output_tokens: float | None = None  # at the peak

    @property
    def meets_targets(self) -> bool:
        return self.problem is None

    @property
    def total_gpus_at_peak(self) -> int | None:
        return None if self.replicas_at_peak is None else self.replicas_at_peak * self.setup.gpus_per_replica

    @property
    def output_tokens_per_s_per_gpu(self) -> float | None:
        return None if self.point is None else float(self.point.output_tokens_per_s_per_gpu)

    @property
    def tokens_per_s_per_user(self) -> float | None:
        return None if self.point is None else float(self.point.tokens_per_s_per_user)

    @property
    def ttft_p95_s(self) -> float | None:
        return None if self.point is None else float(self.point.ttft_p95_s)

    @property
    def tpot_s(self) -> float | None:
        return None if self.point is None else float(self.point.tpot_s)
