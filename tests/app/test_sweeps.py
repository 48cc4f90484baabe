"""The grids the pages sweep over (app/sweeps.py), without Streamlit."""

from __future__ import annotations

import pytest

from app import sweeps
from core.lesson import PART1_OUTPUT_TOKENS, PART2_BATCH_SIZES


def test_output_grid_is_whole_lengths_from_one_to_the_top():
    assert sweeps.output_grid(3) == (1, 2, 3)
    grid = sweeps.output_grid(1000)
    assert grid[0] == 1 and grid[-1] == 1000 and len(grid) == sweeps.LINE_POINTS
    assert list(grid) == sorted(set(grid))


@pytest.mark.parametrize(
    ("reply", "lengths"),
    [
        (500, PART1_OUTPUT_TOKENS),  # the lesson's own reply: its own lengths
        (1000, (2, 50, 100, 200, 400, 800, 1600)),  # twice the reply, twice each length
        (30_000, (40, 1000, 2000, 4000, 8000, 16_000, 32_000)),  # capped at 20,000: 40× the lesson
        (1, (1, 2)),  # 1/500 of 1…800 rounds to 0, 1 or 2: at least one token each
    ],
)
def test_simulated_lengths_scale_the_lessons_and_stop_at_the_cap(reply, lengths):
    assert sweeps.simulated_lengths(reply) == tuple(lengths)


def test_the_largest_reply_simulates_63040_steps():
    # 200,000 tokens is capped at 20,000: 40 × (1 + 25 + 50 + 100 + 200 + 400 + 800) = 40 × 1,576.
    assert sum(sweeps.simulated_lengths(200_000)) == 63_040


def test_table_batches_add_the_scenarios_own_to_the_lessons():
    assert sweeps.table_batches(1, 150, None) == PART2_BATCH_SIZES  # the lesson: nothing new
    assert sweeps.table_batches(4096, 324, 389) == (1, 8, 16, 64, 150, 300, 324, 389, 4096)
    assert sweeps.table_batches(1, None, 0) == PART2_BATCH_SIZES  # nothing fits: no 0 row


def test_sweep_batches_reach_past_everything_worth_seeing():
    table = sweeps.table_batches(4096, 324, 389)
    sweep = sweeps.sweep_batches(4096, 324, 389, table)
    assert sweep[0] == 1 and sweep[-1] == 2 * 4096  # the top is twice the batch here
    assert set(table) <= set(sweep) and list(sweep) == sorted(set(sweep))
    assert sweeps.sweep_batches(1, None, None, (1,))[-1] == 300  # never below 300
    assert sweeps.sweep_batches(900_000, None, None, (1,))[-1] == sweeps.MAX_BATCH_SIZE
