"""The two rate searches on functions whose edges are known exactly."""

from __future__ import annotations

import numpy as np
import pytest

from core.rate_search import (
    GRID,
    LOWEST,
    PASSES,
    TRICKLE,
    _geometric,
    last_passing_rate,
    last_passing_rates,
    root_below,
    roots_below,
)


def test_the_root_of_a_line_and_of_a_wall() -> None:
    # λ − 2 crosses zero at 2; a queue's excess that shoots up near its edge (1 / (3 − λ) − 1, at 2)
    # is found as well, from below: the rate returned never has a positive excess.
    assert root_below(lambda rate: rate - 2.0, 10.0) == pytest.approx(2.0, rel=1e-12)
    wall = root_below(lambda rate: 1 / np.maximum(3.0 - rate, 1e-300) - 1, 2.999999)
    assert wall == pytest.approx(2.0, rel=1e-12) and wall <= 2.0
    assert root_below(lambda rate: rate - 20.0, 10.0) == 10.0  # never crosses: the whole bracket is below


def test_the_last_passing_rate_is_just_below_the_edge() -> None:
    # λ ≤ 3.7 on a top of 10: three passes, each a geometric grid 15 steps wide, land within 0.41 %.
    found = last_passing_rate(lambda rates: rates <= 3.7, 10.0)
    assert found is not None and 3.7 / 1.0041 <= found <= 3.7
    assert last_passing_rate(lambda rates: rates <= 20.0, 10.0) == 10.0  # everything passes: the top
    assert last_passing_rate(lambda rates: rates < 0, 10.0) is None  # not even a trickle passes


def test_a_looser_check_never_returns_less() -> None:
    edges = np.linspace(0.01, 9.9, 300)
    found = [last_passing_rate(lambda rates, e=e: rates <= e, 10.0) for e in edges]
    assert all(b >= a for a, b in zip(found, found[1:], strict=False))


def test_searches_in_step_each_find_what_they_find_alone() -> None:
    # Many searches walked together (one call per step or pass for all of them) take each its own steps:
    # roots of λ − e and of a wall at e, and last passing rates of λ ≤ e, equal each searched by itself,
    # exactly, whatever the others do (one stops at once, one passes everywhere, one never).
    edges = [0.5, 2.0, 7.3, 20.0]
    lines = roots_below(lambda rates, which: rates - np.array(edges)[which], [10.0] * len(edges))
    assert lines == [root_below(lambda rate, e=e: rate - e, 10.0) for e in edges]
    assert lines[:3] == pytest.approx(edges[:3], rel=1e-12) and lines[3] == 10.0

    def walls(rates: np.ndarray, which: np.ndarray) -> np.ndarray:
        e = np.array(edges)[which]
        return 1 / np.maximum(e + 1 - rates, 1e-300) - 1

    assert roots_below(walls, [e + 0.999999 for e in edges]) == [
        root_below(lambda rate, e=e: 1 / np.maximum(e + 1 - rate, 1e-300) - 1, e + 0.999999) for e in edges
    ]
    checks = [*edges, -1.0]
    together = last_passing_rates(
        lambda which, grids: [grid <= checks[i] for i, grid in zip(which, grids, strict=True)], [10.0] * len(checks)
    )
    assert together == [last_passing_rate(lambda rates, e=e: rates <= e, 10.0) for e in checks]
    assert together[3] == 10.0 and together[4] is None


def _walked(check, top: float) -> float | None:  # type: ignore[no-untyped-def]
    """The grid search as first written: every rate of each pass's grid checked, in order (the oracle)."""
    if not check(np.array([top * TRICKLE]))[0]:
        return None
    low, high, best = top * LOWEST, top, top * TRICKLE
    for _ in range(PASSES):
        rates = _geometric(low, high)
        misses = np.flatnonzero(~check(rates))
        first_miss = int(misses[0]) if misses.size else GRID
        if first_miss == 0:
            break
        best = float(rates[first_miss - 1])
        if first_miss == GRID:
            break
        low, high = rates[first_miss - 1], rates[first_miss]
    return best


def test_bisecting_each_grid_finds_what_walking_it_finds_in_a_third_of_the_checks() -> None:
    # The check fails only past its edge, so a grid's first miss is found by bisection: the same rate
    # as checking every rate of every pass (17 + 16 + 16), with at most 2 + 3 × 5 rates checked.
    tops = [10.0, 3.3, 1e4]
    for top in tops:
        for edge in [*np.geomspace(top * 1e-8, top * 2, 97), top, top * LOWEST, top * TRICKLE]:
            checked: list[int] = []

            def check(rates: np.ndarray, e: float = float(edge), calls: list[int] = checked) -> np.ndarray:
                calls.append(len(rates))
                return np.asarray(rates <= e)

            assert last_passing_rate(check, top) == _walked(lambda r, e=float(edge): r <= e, top), (top, edge)
            assert sum(checked) <= 2 + 3 * 5
