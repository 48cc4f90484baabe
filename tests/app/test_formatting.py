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
