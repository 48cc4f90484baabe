"""Traffic over a day, and the replicas an autoscaler runs to follow it.

The curve is a raised cosine whose busiest moment over its mean is the peak-to-average
ratio r, with θ = 2π × (time since the peak) / 24 h:

    r ≤ 2:  λ(θ) = λ̄ × (1 + (r − 1) cos θ)            a gentle wave; the quietest hour is (2 − r) λ̄
    r ≥ 2:  λ(θ) = λ̄ × r × ((1 + cos θ) / 2)^k        a sharper peak over a night at zero,

with k the exponent whose mean ((1 + cos θ) / 2)^k = Γ(k + ½) / (√π Γ(k + 1)) is 1 / r
(k = 1 at r = 2, where both forms are the same curve; k = 2 gives r = 8/3). Both average
λ̄ over the day, so the day's traffic is the replies per day whatever r is.

The autoscaler resizes every `RESIZE_INTERVAL_S` (15 minutes: a GPU replica takes minutes
to start, so it provisions each quarter-hour for that quarter-hour's busiest moment), never
below the floor and never above the fleet sized for the peak:
replicas(i) = min(peak fleet, max(floor, ⌈max λ over interval i / λ per replica⌉)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from core.arraymath import Quantity
from core.billing import SECONDS_PER_DAY
from core.validation import check_int, check_number

RESIZE_INTERVAL_S = 900.0
_INTERVALS = round(SECONDS_PER_DAY / RESIZE_INTERVAL_S)  # 96, an even number: the quietest moment is an edge


def _mean_power(k: float) -> float:
    """Mean over a day of ((1 + cos θ) / 2)^k = Γ(k + ½) / (√π Γ(k + 1)). Example: k = 1 → 1/2."""
    return math.exp(math.lgamma(k + 0.5) - math.lgamma(k + 1) - 0.5 * math.log(math.pi))


@cache
def _exponent(peak_to_average: float) -> float:
    """The k ≥ 1 whose raised cosine has max / mean = r (r ≥ 2), by bisection on log k."""
    low, high = 0.0, math.log(1e7)  # k up to 10 million: r up to ~5,600
    for _ in range(100):
        middle = (low + high) / 2
        if 1 / _mean_power(math.exp(middle)) < peak_to_average:
            low = middle
        else:
            high = middle
    return math.exp((low + high) / 2)


@dataclass(frozen=True, slots=True)
class DailyCurve:
    """The day's request rate as a multiple of its mean (see the module docstring)."""

    peak_to_average: float

    def __post_init__(self) -> None:
        check_number("peak_to_average", self.peak_to_average, 1, 1000)

    def multiplier(self, theta: Quantity) -> Quantity:
        """λ(θ) / λ̄ at θ = 2π × time since the peak / 24 h. Example: r = 1.5 at the trough (θ = π) → 0.5."""
        r = self.peak_to_average
        if r <= 2:
            return 1 + (r - 1) * np.cos(theta)
        return r * ((1 + np.cos(theta)) / 2) ** _exponent(r)

    def mean_replicas(self, mean_rate_per_s: Quantity, rate_per_replica_per_s: Quantity, floor: int) -> Quantity:
        """The replicas an autoscaler runs on average over the day, each serving up to `rate_per_replica_per_s`.

        Both rates may be arrays and broadcast together (one day per traffic level and per
        replica's capacity: the cheapest fleet at every traffic in one call).
        Example: r = 1 (flat traffic) → the peak fleet all day; r = 3 with a floor of 1 → fewer.
        """
        check_int("floor", floor, 0)
        rates = np.asarray(mean_rate_per_s, dtype=float)
        per = np.asarray(rate_per_replica_per_s, dtype=float)
        peak = np.where(rates > 0, np.maximum(floor, np.ceil(rates * self.peak_to_average / per)), floor)
        edges = self.multiplier(2 * np.pi * np.arange(_INTERVALS + 1) / _INTERVALS) * rates[..., None]
        busiest = np.maximum(edges[..., :-1], edges[..., 1:])  # λ is monotone between edges: 0 and π are edges
        replicas = np.minimum(np.maximum(np.ceil(busiest / per[..., None]), floor), peak[..., None])
        mean = replicas.mean(axis=-1)
        return float(mean) if mean.ndim == 0 else mean


def peak_replicas(peak_rate_per_s: float, rate_per_replica_per_s: float, floor: int) -> int:
    """⌈peak rate / rate per replica⌉, never below the floor. Example: 69.4 / 10 per replica → 7."""
    return max(floor, math.ceil(peak_rate_per_s / rate_per_replica_per_s)) if peak_rate_per_s > 0 else floor
