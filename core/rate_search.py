"""Searches over arrival rates: the edge of a steady state, and the last rate meeting targets.

Both search a rate λ in (0, high] for a quantity that grows with λ, evaluating numpy arrays
of rates (one row each), and both return a rate that was evaluated and is on the good side
of the edge — never a guess beyond it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

ROOT_STEPS = 80  # Illinois steps at most; they stop once the bracket is 1e-13 wide
GRID = 16  # rates per pass of the grid search
PASSES = 3  # each narrows a geometric bracket 15-fold: 1e-6..1 → a ratio of 1.0041
LOWEST = 1e-6  # of the top: where the first grid starts
TRICKLE = 1e-9  # of the top: a rate at which nothing waits
_SPACING = np.arange(GRID) / (GRID - 1)  # a grid's exponents: low × (high / low) ** spacing


def root_below(excess: Callable[[np.ndarray], np.ndarray], high: float, low: float = 0.0) -> float:
    """The largest rate in (low, high) where `excess` (increasing, < 0 at low, > 0 at high) is still < 0.

    Illinois (regula falsi that halves the value at an end kept twice in a row), stopping
    when the bracket is 1e-13 of `high` wide; returns the bracket's lower end. Example:
    excess(λ) = λ − 2 on (0, 10) → 2 (to 1e-12), in about seven steps.
    """
    return roots_below(lambda rates, _: excess(rates), (high,), (low,))[0]


def roots_below(
    excess: Callable[[np.ndarray, np.ndarray], np.ndarray], highs: Sequence[float], lows: Sequence[float] | None = None
) -> list[float]:
    """`root_below` for many functions in step: `excess(rates, which)` is function which[i] at rates[i].

    Every search takes the steps it would take alone (the same arithmetic, element by element),
    so one call per step evaluates them all (`open_loop_model.capacities`).
    """
    high = np.array(highs, dtype=float)
    low = np.zeros_like(high) if lows is None else np.array(lows, dtype=float)
    everyone = np.arange(len(high))
    f_high = np.asarray(excess(high, everyone), dtype=float)
    at_top = f_high <= 0
    f_low = np.asarray(excess(np.maximum(low, high * 1e-12), everyone), dtype=float)  # at 0 a queue takes log(0)
    moved = np.zeros(len(high))  # which end the last step replaced: -1 low, +1 high
    for _ in range(ROOT_STEPS):
        going = np.flatnonzero(~at_top & (high - low > 1e-13 * high))
        if not going.size:
            break
        lo, hi, f_lo, f_hi = low[going], high[going], f_low[going], f_high[going]
        guess = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        guess = np.where((lo < guess) & (guess < hi), guess, (lo + hi) / 2)
        f_guess = np.asarray(excess(guess, going), dtype=float)
        below, last = f_guess < 0, moved[going]
        low[going] = np.where(below, guess, lo)
        f_low[going] = np.where(below, f_guess, np.where(last == 1, f_lo / 2, f_lo))
        high[going] = np.where(below, hi, guess)
        f_high[going] = np.where(below, np.where(last == -1, f_hi / 2, f_hi), f_guess)
        moved[going] = np.where(below, -1, 1)
    return [float(h) if top else float(lo) for top, h, lo in zip(at_top, high, low, strict=True)]


def last_passing_rate(passes: Callable[[np.ndarray], np.ndarray], top: float) -> float | None:
    """The largest rate in (0, top] where `passes` still holds, for a check that fails past one edge.

    Each pass lays a geometric grid of GRID rates (first from 1e-6 × top to top), finds its first
    miss by bisecting the grid (the check fails only past its edge), keeps the rate before it
    and narrows to the grid step after it: three passes land
    within 0.41 % below the edge. None when even a trickle (1e-9 × top) misses. The grids
    depend on `top` alone, so a looser check never returns a lower rate: a miss can only move
    later. Example: passes = λ ≤ 3.7 with top 10 → 3.69 (3.7 / 1.0041 or closer).
    """
    return last_passing_rates(lambda _, grids: [passes(grid) for grid in grids], (top,))[0]


def last_passing_rates(
    passes: Callable[[list[int], list[np.ndarray]], list[np.ndarray]], tops: Sequence[float]
) -> list[float | None]:
    """`last_passing_rate` for many searches in step: each step of every search still going in one call.

    `passes(searches, grids)` checks grid i of search searches[i] and returns one boolean array
    per grid, so a caller can evaluate every search's rates at once (`open_loop_model.goodput_rates`).
    The check passes up to an edge and fails past it, so the first miss on a pass's grid is found
    by bisecting the grid's indices (five checks of one rate, not sixteen): the same rate as a
    walk along the whole grid, for a fifth of the work. Each search takes exactly the rates and
    decisions it would take alone.
    """
    lows, highs = [top * LOWEST for top in tops], [float(top) for top in tops]
    grids = {i: _geometric(lows[i], highs[i]) for i in range(len(tops))}
    # The trickle first, beside each first grid's middle rate (the first bisection step).
    middle = GRID // 2
    first = passes(list(grids), [np.array([top * TRICKLE, grids[i][middle]]) for i, top in enumerate(tops)])
    best: list[float | None] = [top * TRICKLE if checked[0] else None for top, checked in zip(tops, first, strict=True)]
    going = [i for i in range(len(tops)) if best[i] is not None]
    # Per search: the grid's last index known to pass (-1: none yet) and its first known to miss (GRID: none).
    bracket = {i: (middle, GRID) if first[i][1] else (-1, middle) for i in going}
    for sweep in range(PASSES):
        if sweep:
            grids = {i: _geometric(lows[i], highs[i]) for i in going}
            bracket = {i: (-1, GRID) for i in going}
        while open_ := [i for i in going if bracket[i][1] - bracket[i][0] > 1]:
            probes = {i: (bracket[i][0] + bracket[i][1]) // 2 for i in open_}
            checked = passes(open_, [grids[i][probes[i] : probes[i] + 1] for i in open_])
            for i, ok in zip(open_, checked, strict=True):
                bracket[i] = (probes[i], bracket[i][1]) if ok[0] else (bracket[i][0], probes[i])
        still = []
        for i in going:
            last_pass, first_miss = bracket[i]
            if last_pass < 0:
                continue  # the edge lies below this grid's first rate
            best[i] = float(grids[i][last_pass])
            if first_miss < GRID:  # else every rate up to the top passes
                lows[i], highs[i] = grids[i][last_pass], grids[i][first_miss]
                still.append(i)
        going = still
    return best


def _geometric(low: float, high: float) -> np.ndarray:
    """GRID rates from `low` to `high`, evenly spaced in log: np.geomspace's grid (to rounding), without its overhead."""
    rates = low * (high / low) ** _SPACING
    rates[-1] = high  # exactly the top, whatever the last power's rounding
    return rates
