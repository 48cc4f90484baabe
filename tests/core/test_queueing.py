"""The queueing formulas against the textbook cases they reduce to, worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.queueing import (
    batch_wait_iterations,
    birth_death_distribution,
    kingman_wait_s,
    prompts_per_iteration,
    wait_quantile_s,
)


def test_kingman_is_md1_and_mm1():
    # M/D/1 at ρ = 0.5 with 100 ms service: 0.5 / 0.5 × (1 + 0) / 2 × 100 = 50 ms; M/M/1: 100 ms.
    assert float(kingman_wait_s(0.5, 0.1)) == pytest.approx(0.05)
    assert float(kingman_wait_s(0.5, 0.1, 1.0, 1.0)) == pytest.approx(0.1)
    assert float(kingman_wait_s(0.0, 0.1)) == 0.0
    assert math.isinf(float(kingman_wait_s(1.0, 0.1)))


def test_wait_quantiles_of_a_sometimes_exponential_wait():
    # P(wait) = 0.5, mean 50 ms → θ = 100 ms; p95 = 100 × ln(0.5 / 0.05) = 230.26 ms; the median
    # falls among those that do not wait: 0.
    assert float(wait_quantile_s(0.95, 0.5, 0.05)) == pytest.approx(0.1 * math.log(10))
    assert float(wait_quantile_s(0.5, 0.5, 0.05)) == 0.0
    assert float(wait_quantile_s(0.99, 0.0, 0.0)) == 0.0
    assert math.isinf(float(wait_quantile_s(0.5, 1.0, math.inf)))
    # The M/M/1 queue's waiting time: P(W > t) = ρ e^(−(μ−λ)t); ρ = 0.8, μ = 1 → p99 = 5 ln 80.
    assert float(wait_quantile_s(0.99, 0.8, 0.8 / 0.2)) == pytest.approx(5 * math.log(80))


def test_birth_death_is_mm1_and_mm2():
    pi, beyond, ratio = birth_death_distribution(1.0, np.array([2.0]))
    assert pi == pytest.approx([0.5, 0.25]) and beyond == pytest.approx(0.25) and ratio == 0.5
    # M/M/2, λ = 1, μ = 1 per server (rates 1, 2): π0 = 1/3, π1 = 1/3, π2+ = 1/3.
    pi, beyond, _ = birth_death_distribution(1.0, np.array([1.0, 2.0]))
    assert list(pi) + [beyond] == pytest.approx([1 / 3, 1 / 3, 1 / 6, 1 / 6])
    # Thousands of states neither overflow nor lose mass.
    pi, beyond, _ = birth_death_distribution(900.0, np.arange(1.0, 2001.0))
    assert pi.sum() + beyond == pytest.approx(1.0) and np.all(np.isfinite(pi))


def test_prompts_an_iteration_carries():
    # a = 1 arrival per iteration: given one or more, 1 / (1 − 1/e) = 1.582 on average.
    assert float(prompts_per_iteration(1.0, 100.0)) == pytest.approx(1 / (1 - math.exp(-1)))
    assert float(prompts_per_iteration(0.0, 100.0)) == 1.0
    assert float(prompts_per_iteration(50.0, 8.0)) == 8.0  # no more than the token budget holds


def test_batch_wait():
    # Window of 20 iterations, one arrival per 10: (20 + 2 × 10) / 3 = 13.33; a trickle waits all 20.
    assert float(batch_wait_iterations(20, 0.1)) == pytest.approx(40 / 3)
    assert float(batch_wait_iterations(20, 0.0)) == 20.0
