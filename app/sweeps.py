"""The grids the pages sweep over: output lengths for the latency line, batch sizes for the roofline.

Pure (numpy and core's constants), so tests call them directly. Each returns a tuple of
whole numbers, sorted and unique, because the pages hand them to compute's cached wrappers,
which key on them.
"""

from __future__ import annotations

import numpy as np

from core.fields import inputs
from core.lesson import PART1_OUTPUT_TOKENS, PART1_PROMPT_TOKENS, PART2_BATCH_SIZES, PART3_REPLIES
from core.specs import Workload

LINE_POINTS = 300
SWEEP_POINTS = 300
SIMULATED_OUTPUT_CAP = 20_000  # past this the per-step simulation would slow a cold rerun
MAX_BATCH_SIZE = int(dict(inputs(Workload))["batch_size"].high)  # the Workload's own bound, read from its description


def output_grid(top: int, points: int = LINE_POINTS) -> tuple[int, ...]:
    """Up to `points` evenly spaced output lengths from 1 to `top`. Example: output_grid(3) → (1, 2, 3)."""
    return tuple(int(m) for m in np.unique(np.linspace(1, top, points).round()))


def simulated_lengths(output_tokens: int, simulation: str = "part1") -> tuple[int, ...]:
    """The lesson's measured lengths, scaled so that a 500-token reply gets exactly the lab's; capped.

    part1: the lab's Part 1 lengths (1…800). Example: 500 → (1, 25, 50, 100, 200, 400, 800);
    30,000 is capped at 20,000, a scale of 20,000 / 500 = 40 → (40, 1,000, …, 32,000).
    part3: Part 3's two replies (50 and 500), in the lab's order: 500 → (50, 500).
    """
    lengths = PART3_REPLIES if simulation == "part3" else PART1_OUTPUT_TOKENS
    scale = min(output_tokens, SIMULATED_OUTPUT_CAP) / PART1_PROMPT_TOKENS
    return tuple(sorted({max(1, round(m * scale)) for m in lengths}))


def table_batches(batch: int, critical: int | None, ceiling: int | None) -> tuple[int, ...]:
    """The lesson's batch sizes plus the scenario's batch, its critical batch and the largest that fits."""
    extra = [b for b in (batch, critical, ceiling) if b is not None and 0 < b <= MAX_BATCH_SIZE]
    return tuple(sorted({*PART2_BATCH_SIZES, *extra}))


def sweep_batches(batch: int, critical: int | None, ceiling: int | None, table: tuple[int, ...]) -> tuple[int, ...]:
    """A log-spaced sweep from 1 past everything worth seeing (at least 300), with the table's batches in it.

    The top is the largest of 300, twice the batch, twice the critical batch and 1.5 × the
    memory ceiling, so the plateau and the ceiling both show; never above MAX_BATCH_SIZE.
    """
    top = min(max(300, 2 * batch, 2 * (critical or 0), 3 * (ceiling or 0) // 2), MAX_BATCH_SIZE)
    grid = np.unique(np.geomspace(1, top, SWEEP_POINTS).round().astype(int))
    return tuple(sorted({*grid.tolist(), *table}))
