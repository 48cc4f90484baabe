"""The day's traffic curve and the replicas an autoscaler runs to follow it, worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.daily_curve import DailyCurve, peak_replicas

DAY = np.linspace(0, 2 * np.pi, 400_001)[:-1]  # fine enough that the sampled mean is the integral to 1e-9


@pytest.mark.parametrize("ratio", [1.0, 1.2, 1.5, 2.0, 2.5, 8 / 3, 3.0, 10.0, 100.0])
def test_the_curve_averages_one_and_peaks_at_the_ratio(ratio: float) -> None:
    shape = DailyCurve(ratio).multiplier(DAY)
    assert shape.mean() == pytest.approx(1.0, rel=1e-9)
    assert shape.max() == pytest.approx(ratio, rel=1e-12) and shape[0] == pytest.approx(ratio, rel=1e-12)
    assert shape.min() >= 0


def test_the_two_forms_by_hand() -> None:
    # r = 1.5: a gentle wave 1 + 0.5 cos θ, quietest at θ = π: 0.5 of the mean.
    assert DailyCurve(1.5).multiplier(np.pi) == pytest.approx(0.5)
    # r = 8/3 is the raised cosine squared: mean ((1 + cos)/2)² = Γ(2.5) / (√π Γ(3)) = (3√π/4) / (2√π) = 3/8.
    # So λ/λ̄ = (8/3) ((1 + cos θ)/2)²; at θ = π/2: (8/3)(1/4) = 2/3.
    assert DailyCurve(8 / 3).multiplier(np.pi / 2) == pytest.approx(2 / 3)
    # r = 2 is where the forms meet: 1 + cos θ either way; zero at θ = π.
    assert DailyCurve(2.0).multiplier(np.pi / 3) == pytest.approx(1.5)
    assert DailyCurve(2.0).multiplier(np.pi) == pytest.approx(0.0, abs=1e-15)


def test_an_autoscaled_day_by_hand() -> None:
    # r = 2, mean 10 requests/s: λ = 10 (1 + cos θ), peak 20. A replica takes 10.5/s, so the peak
    # needs ⌈20 / 10.5⌉ = 2 and a quarter-hour needs 2 exactly when its busiest moment is above
    # 10.5/s, i.e. cos θ > 0.05 (θ within 87.1° of the peak). The 96 quarter-hours have edges every
    # 3.75°; the busiest moment of each is its edge nearer the peak: for quarter-hours 0-23 that edge
    # is at most 86.25° (cos 0.065 > 0.05): 2 replicas; for 24-47 at least 90°: 1; the other half
    # mirrors it. Mean: (48 × 2 + 48 × 1) / 96 = 1.5 replicas, 75 % of the peak fleet's cost.
    curve = DailyCurve(2.0)
    assert peak_replicas(20.0, 10.5, 1) == 2
    assert curve.mean_replicas(10.0, 10.5, 1) == pytest.approx(1.5)
    # A floor of 3 is above what even the peak needs: 3 all day, and the peak fleet is 3 too.
    assert curve.mean_replicas(10.0, 10.5, 3) == 3 and peak_replicas(20.0, 10.5, 3) == 3
    # Flat traffic (r = 1): the peak fleet all day.
    assert DailyCurve(1.0).mean_replicas(10.0, 3.0, 1) == peak_replicas(10.0, 3.0, 1) == 4


def test_no_traffic_runs_the_floor() -> None:
    assert peak_replicas(0.0, 5.0, 0) == 0 and DailyCurve(3.0).mean_replicas(0.0, 5.0, 0) == 0
    assert peak_replicas(0.0, 5.0, 2) == 2 and DailyCurve(3.0).mean_replicas(0.0, 5.0, 2) == 2


@settings(max_examples=200, deadline=None)
@given(
    st.floats(1, 100),
    st.floats(1e-3, 1e6),
    st.floats(1e-3, 1e3),
    st.integers(0, 50),
)
def test_the_autoscaled_fleet_lies_between_the_floor_and_the_peak_fleet(
    ratio: float, mean_rate: float, per_replica: float, floor: int
) -> None:
    mean = DailyCurve(ratio).mean_replicas(mean_rate, per_replica, floor)
    peak = peak_replicas(mean_rate * ratio, per_replica, floor)
    assert floor <= mean <= peak
    # And it serves the day: on average at least the mean traffic's worth of replicas.
    assert mean >= min(mean_rate / per_replica, peak) * (1 - 1e-12)
    assert math.isfinite(mean)


def test_mean_replicas_over_an_array_of_traffic_is_each_day_in_turn() -> None:
    curve, rates = DailyCurve(3.0), np.array([0.0, 0.5, 7.3, 23.15, 500.0])
    each = [curve.mean_replicas(float(rate), 10.5, 1) for rate in rates]
    assert curve.mean_replicas(rates, 10.5, 1) == pytest.approx(each)
    # No traffic: the floor all day (1), or nothing with a floor of 0.
    assert each[0] == 1.0 and curve.mean_replicas(rates, 10.5, 0)[0] == 0.0
