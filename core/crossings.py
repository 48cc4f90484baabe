"""Where one bill overtakes another as traffic grows: the cheapest option over ranges of replies a day.

Each option's monthly bill is a function of the traffic (vectorised over an array of replies
a day): an API's is a straight line through zero, a self-hosted fleet's a staircase (whole
replicas). Sampled on a log grid, the cheapest option is read at each point; wherever it
changes, the exact traffic is found by bisection on log(replies) between the two points,
so a boundary is exact to 1e-12 in relative terms, not to the grid's spacing. A tie keeps
the option listed first. NaN (an option with no bill at that traffic) never wins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

Bill = Callable[[np.ndarray], np.ndarray]  # replies a day → USD a month, elementwise
GRID_POINTS = 241
_BISECTIONS = 40  # a grid step (×1.04) halved 40 times: 4e-14 in log(replies)


@dataclass(frozen=True, slots=True)
class Cheapest:
    """`option` is the cheapest from `from_replies_per_day` to `to_replies_per_day` (the grid's ends outside)."""

    option: str
    from_replies_per_day: float
    to_replies_per_day: float


def _winner(bills: Mapping[str, Bill], replies: np.ndarray) -> np.ndarray:
    """The index of the cheapest option at each traffic level; -1 where no option has a bill."""
    costs = np.array([np.asarray(bill(replies), dtype=float) for bill in bills.values()])
    costs = np.where(np.isnan(costs), np.inf, costs)
    best = np.argmin(costs, axis=0)  # the first of equal minima: the option listed first
    return np.where(np.isfinite(costs.min(axis=0)), best, -1)


def cheapest_ranges(bills: Mapping[str, Bill], low: float, high: float) -> list[Cheapest]:
    """The cheapest option over [low, high] replies a day, range by range (low > 0).

    Example: an API at $0.001 a reply against a $3,000-a-month fleet (30 days): the API is
    cheapest up to 100,000 replies a day, the fleet above (3,000 / 30 / 0.001).
    """
    if not bills or not 0 < low < high:
        raise ValueError(f"cheapest_ranges needs options and 0 < low < high, got {len(bills)} options, {low}, {high}")
    names = list(bills)
    grid = np.geomspace(low, high, GRID_POINTS)
    winners = _winner(bills, grid)
    ranges: list[Cheapest] = []
    start = low
    for i in np.flatnonzero(winners[1:] != winners[:-1]):
        a, b = np.log(grid[i]), np.log(grid[i + 1])
        for _ in range(_BISECTIONS):
            middle = (a + b) / 2
            if _winner(bills, np.array([np.exp(middle)]))[0] == winners[i]:
                a = middle
            else:
                b = middle
        edge = float(np.exp(b))
        if winners[i] >= 0:
            ranges.append(Cheapest(names[winners[i]], start, edge))
        start = edge
    if winners[-1] >= 0:
        ranges.append(Cheapest(names[winners[-1]], start, high))
    return ranges
