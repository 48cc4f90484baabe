"""Scalar-or-array helpers: numpy for sweeps, plain floats for one estimate.

The formulas in `core` take a float or a numpy array for their "many points" argument
(batch sizes, output lengths). numpy's ufuncs on a single float cost about a
microsecond each; these pick the builtin for scalars, keeping one estimate fast.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# A float for one estimate, or a numpy array of floats for a sweep: the formulas are written
# with operators that work on both, so one definition serves the CLI and the charts.
Quantity = Any


def minimum(values: Any, cap: float) -> Any:
    return np.minimum(values, cap) if isinstance(values, np.ndarray) else min(values, cap)


def maximum(values: Any, floor: Any) -> Any:
    if isinstance(values, np.ndarray) or isinstance(floor, np.ndarray):
        return np.maximum(values, floor)
    return max(values, floor)


def clip(values: Any, low: float, high: Any) -> Any:
    if isinstance(values, np.ndarray) or isinstance(high, np.ndarray):
        return np.clip(values, low, high)
    return max(low, min(values, high))
