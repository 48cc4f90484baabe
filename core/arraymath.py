"""Scalar-or-array helpers: numpy for sweeps, plain floats for one estimate; closed-form sums.

The formulas in `core` take a float or a numpy array for their "many points" argument
(batch sizes, output lengths). numpy's ufuncs on a single float cost about a
microsecond each; these pick the builtin for scalars, keeping one estimate fast.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# A float for one estimate, or a numpy array of floats for a sweep: the formulas are written
# with operators that work on both, so one definition serves the CLI and the charts.
Quantity = Any


def minimum(values: Any, cap: Any) -> Any:
    if isinstance(values, np.ndarray) or isinstance(cap, np.ndarray):
        return np.minimum(values, cap)
    return min(values, cap)


def maximum(values: Any, floor: Any) -> Any:
    if isinstance(values, np.ndarray) or isinstance(floor, np.ndarray):
        return np.maximum(values, floor)
    return max(values, floor)


def clip(values: Any, low: float, high: Any) -> Any:
    if isinstance(values, np.ndarray) or isinstance(high, np.ndarray):
        return np.clip(values, low, high)
    return max(low, min(values, high))


def sum_capped(first: int, last: int, cap: int | None = None) -> float:
    """Σ min(c, cap) for c = first..last inclusive (no cap when cap is None; 0 when last < first).

    Example: first=1, last=5, cap=3 → 1+2+3+3+3 = 12.
    """
    if last < first:
        return 0.0
    top = last if cap is None else min(last, cap)
    below = (top * (top + 1) - (first - 1) * first) / 2 if top >= first else 0.0
    above = (last - max(first - 1, top)) * cap if cap is not None and last > cap else 0.0
    return below + above


def sum_of_max_of_lines(a1: Quantity, b1: Quantity, a2: Quantity, b2: Quantity, n: Quantity) -> Quantity:
    """Σ_{k=0}^{n-1} max(a1 + b1·k, a2 + b2·k) in closed form, vectorised over any argument.

    The difference of two lines changes sign at most once, so the sum is the second line's
    arithmetic series plus the positive part of the difference over a contiguous run of k.
    Example: a1=1, b1=1, a2=3, b2=0, n=5 → 3+3+3+4+5 = 18.
    """
    base = n * a2 + b2 * n * (n - 1) / 2
    da, db = a1 - a2, b1 - b2
    if isinstance(da, np.ndarray) or isinstance(db, np.ndarray):
        return base + _positive_part_sum(np.asarray(da, dtype=float), np.asarray(db, dtype=float), n)
    root = -da / db if db != 0 else math.inf
    if not math.isfinite(root):  # parallel lines (a slope difference too small to cross within floats)
        return base + (n * da if da > 0 else n * 0.0)
    if db > 0:  # difference positive for k > root
        first = clip(math.floor(root) + 1, 0, n)
        count = n - first
        extra = count * da + db * (first + n - 1) * count / 2
    else:  # difference positive for k < root
        count = clip(math.ceil(root), 0, n)
        extra = count * da + db * count * (count - 1) / 2
    return base + extra


def sum_of_max_of_lines_and_floor(
    a1: Quantity, b1: Quantity, a2: Quantity, b2: Quantity, floor: Quantity, n: Quantity
) -> Quantity:
    """Σ_{k=0}^{n-1} max(a1 + b1·k, a2 + b2·k, floor) in closed form, vectorised over any argument.

    The larger of two lines is convex, so it lies below the floor over one contiguous run of
    k (where both lines do); there the floor adds floor − max(lines) to the two lines' sum.
    Example: a1=1, b1=1, a2=0, b2=0, floor=3, n=5 → 3+3+3+4+5 = 18.
    """
    lo1, hi1 = _below(a1, b1, floor, n)
    lo2, hi2 = _below(a2, b2, floor, n)
    lo, hi = maximum(lo1, lo2), minimum(hi1, hi2)
    count = maximum(hi - lo, 0.0)
    under = sum_of_max_of_lines(a1 + b1 * lo, b1, a2 + b2 * lo, b2, count)
    total = sum_of_max_of_lines(a1, b1, a2, b2, n) + count * floor - under
    # Every k under the floor: exactly n × floor (the sum above cancels to it only up to rounding),
    # so that a reply whose every step waits on the floor reads as exactly that.
    if isinstance(total, np.ndarray):
        return np.where(count == n, n * floor, total)
    return n * floor if count == n else total


def _below(a: Any, b: Any, floor: Any, n: Any) -> tuple[Any, Any]:
    """The run of k in [0, n) where a + b·k < floor, as [lo, hi) (hi ≤ lo: none)."""
    if not any(isinstance(x, np.ndarray) for x in (a, b, floor, n)):
        root = (floor - a) / b if b != 0 else math.inf
        if not math.isfinite(root):  # flat (or a slope too small to reach the floor within floats)
            return (0.0, float(n)) if a < floor else (0.0, 0.0)
        if b > 0:  # below the floor for k < root
            return 0.0, float(clip(math.ceil(root), 0, n))
        return float(clip(math.floor(root) + 1, 0, n)), float(n)
    a, b, floor, n = (np.asarray(x, dtype=float) for x in (a, b, floor, n))
    with np.errstate(all="ignore"):  # a flat line's root is never used
        root = np.where(b != 0, (floor - a) / np.where(b != 0, b, 1.0), np.inf)
    flat = ~np.isfinite(root)
    b = np.where(flat, 0.0, b)
    flat_below = flat & (a < floor)
    lo = np.where(b < 0, np.clip(np.floor(root) + 1, 0, n), 0.0)
    hi = np.where(b > 0, np.clip(np.ceil(root), 0, n), np.where((b < 0) | flat_below, n, 0.0))
    return lo, hi


def _positive_part_sum(da: Any, db: Any, n: Any) -> Any:
    """Σ_{k=0}^{n-1} max(da + db·k, 0) elementwise: the array form of the branches above."""
    with np.errstate(all="ignore"):  # the root of a flat difference is never used
        root = np.where(db != 0, -da / np.where(db != 0, db, 1.0), 0.0)
    first = np.clip(np.floor(root) + 1, 0, n)
    rising = (n - first) * da + db * (first + n - 1) * (n - first) / 2
    count = np.clip(np.ceil(root), 0, n)
    falling = count * da + db * count * (count - 1) / 2
    return np.where(db > 0, rising, np.where(db < 0, falling, n * np.maximum(da, 0.0)))
