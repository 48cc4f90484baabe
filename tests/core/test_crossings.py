"""Where the cheapest bill changes with traffic: boundaries derived by hand."""

from __future__ import annotations

import numpy as np
import pytest

from core.crossings import Cheapest, cheapest_ranges

DAYS = 30


def api(usd_per_reply: float):
    return lambda r: usd_per_reply * r * DAYS


def fleet(usd_per_replica_month: float, replies_per_replica_day: float):
    return lambda r: usd_per_replica_month * np.maximum(1, np.ceil(r / replies_per_replica_day))


def test_an_api_against_one_flat_fleet_crosses_where_the_bills_are_equal() -> None:
    # $0.001 a reply × 30 days = $3,000 a month at 100,000 replies a day: above it the fleet is cheaper.
    ranges = cheapest_ranges({"api": api(0.001), "fleet": lambda r: np.full_like(r, 3000.0)}, 1e3, 1e7)
    assert [r.option for r in ranges] == ["api", "fleet"]
    assert ranges[0].from_replies_per_day == 1e3 and ranges[1].to_replies_per_day == 1e7
    assert ranges[0].to_replies_per_day == pytest.approx(100_000, rel=1e-9)
    assert ranges[1].from_replies_per_day == ranges[0].to_replies_per_day


def test_a_staircase_can_hand_the_lead_back_and_forth() -> None:
    # A replica costs $3,000 a month and serves 150,000 replies a day; the API costs $0.0006 a reply,
    # so each reply a day costs 0.0006 × 30 = $0.018 a month.
    # 1 replica: the API reaches $3,000 at 3,000 / 0.018 = 166,667 > 150,000: the fleet never wins with 1;
    # 2 replicas ($6,000) from 150,000: the API passes $6,000 at 333,333 > 300,000: the fleet never wins.
    never = cheapest_ranges({"api": api(0.0006), "fleet": fleet(3000, 150_000)}, 1e3, 1e6)
    assert [r.option for r in never] == ["api"]
    # At $0.0008 a reply ($0.024): $3,000 at 125,000 < 150,000, so the fleet wins from 125,000 until
    # the second replica at 150,000, then again from 250,000 ($6,000 / 0.024) to 300,000, and so on.
    ranges = cheapest_ranges({"api": api(0.0008), "fleet": fleet(3000, 150_000)}, 1e3, 4e5)
    edges = [(r.option, round(r.from_replies_per_day), round(r.to_replies_per_day)) for r in ranges]
    assert edges == [
        ("api", 1000, 125_000), ("fleet", 125_000, 150_000), ("api", 150_000, 250_000),
        ("fleet", 250_000, 300_000), ("api", 300_000, 375_000), ("fleet", 375_000, 400_000),
    ]  # fmt: skip


def test_a_tie_keeps_the_first_option_and_nan_never_wins() -> None:
    same = cheapest_ranges({"a": api(0.001), "b": api(0.001)}, 1, 10)
    assert same == [Cheapest("a", 1, 10)]
    nothing = lambda r: np.full_like(r, np.nan)  # noqa: E731 - a fleet that meets no target
    assert cheapest_ranges({"none": nothing, "api": api(0.001)}, 1, 10) == [Cheapest("api", 1, 10)]
    assert cheapest_ranges({"none": nothing}, 1, 10) == []


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="0 < low < high"):
        cheapest_ranges({"a": api(1)}, 0, 10)
