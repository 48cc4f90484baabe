"""Fitting an engine's costs over grids: the start every fit shares, and the coarse-then-fine pick.

Both calibrations fit by coordinate descent, one cost at a time over a grid of plausible
values: `core.engine_fit` on single-request and static-batch measurements,
`core.serving_calibration` on the load measurements.
"""

from __future__ import annotations

from collections.abc import Callable

# Where every fit starts, whatever it fits on: the costs calibrated before engines were an
# input, so that a refit never depends on the values it replaces.
NEUTRAL_COSTS = {
    "mbu": 0.85,
    "mfu": 0.56,
    "launch_overhead_per_layer_s": 30e-6,
    "sequence_overhead_s": 14e-6,
    "allreduce_latency_s": 24e-6,
}
COARSE_STEP = 5  # the first pass tries every 5th grid value
FINE_REACH = 4  # the second, every value within 4 steps of the best of those


def best_on_grid(grid_size: int, score: Callable[[int], float]) -> int:
    """The grid index with the lowest score: every 5th value, then every value within 4 steps of the best.

    About size / 5 + 9 scores instead of size. Example: a 76-value grid → 16 + 9 = 25 scores.
    Ties go to the lowest index (`min`).
    """
    pick = min(range(0, grid_size, COARSE_STEP), key=score)
    return min(range(max(pick - FINE_REACH, 0), min(pick + FINE_REACH + 1, grid_size)), key=score)
