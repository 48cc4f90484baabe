"""app/formatting.py's rounded durations: an engine's fitted costs without digits they do not have."""

from __future__ import annotations

import math

import pytest

from app import formatting as fmt


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0.054, "54 ms"),  # vLLM's fitted path: "54.00 ms" claimed two digits the fit does not have
        (0.096, "96 ms"),  # SGLang's path on 8 GPUs, 54 + 3 × 14 ms
        (0.013883, "13.9 ms"),  # Qwen3-235B's fixed costs per decode step on vLLM, 8 × H100
        (0.03744, "37.4 ms"),  # HF transformers' launches, 32 layers × 1.17 ms
        (0.00082, "0.82 ms"),  # trailing zero dropped: 0.820 → 0.82
        (0.0000595, "0.0595 ms"),
        (0.9996, "1,000 ms"),  # below a second stays in ms, rounded up to the next figure
        (1.17, "1.17 s"),
        (12.345, "12.3 s"),
        (0.0, "0 ms"),
    ],
)
def test_a_cost_reads_to_three_significant_figures(seconds: float, expected: str) -> None:
    assert fmt.rounded_duration(seconds) == expected


def test_two_figures_and_no_number() -> None:
    assert fmt.rounded_duration(0.01388, digits=2) == "14 ms"
    assert fmt.rounded_duration(math.inf) == "—" and fmt.rounded_duration(math.nan) == "—"


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (2550.0, "$2,550"),
        (99.996, "$100"),  # rounds to 100: the whole-dollar scale, not "$100.00"
        (99.994, "$99.99"),
        (1.5, "$1.50"),
        (0.99999, "$1.00"),  # rounds to a dollar: "$1.00", not "$1.000"
        (0.0750, "$0.0750"),
        (0.000850, "$0.000850"),
    ],
)
def test_dollars_take_the_scale_of_the_amount_as_shown(amount: float, shown: str) -> None:
    assert fmt.usd(amount) == shown


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.9999999, "1.00 s"), (0.99949, "999.49 ms"), (0.007, "7.00 ms"), (3.50933, "3.51 s")],
)
def test_a_duration_takes_the_unit_of_the_value_as_shown(seconds: float, shown: str) -> None:
    # 0.9999999 s read "1,000.00 ms": rounded, it is a second.
    assert fmt.duration(seconds) == shown
    assert fmt.durations(seconds, 0.3)[0] == shown
