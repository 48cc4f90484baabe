"""Measurements: fit the latency line and read the hardware efficiency off it.

Reference: the lesson (Day 36, Part 1: "Fit total = intercept + slope * (output tokens)").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.arraymath import Quantity


@dataclass(frozen=True, slots=True)
class LineFit:
    """total latency ≈ ttft_s + tpot_s × output tokens."""

    tpot_s: float  # slope
    ttft_s: float  # intercept
    r_squared: float
    points: int


def fit_latency_line(output_tokens: Quantity, latency_s: Quantity) -> LineFit:
    """Ordinary least squares through (output tokens, measured latency).

    slope = Σ(x - x̄)(y - ȳ) / Σ(x - x̄)²; intercept = ȳ - slope × x̄; R² = 1 - SSres/SStot.
    Needs at least two distinct output lengths. Example: (1, 10 ms), (3, 24 ms) →
    slope 7 ms/token, intercept 3 ms, R² = 1.
    """
    x = np.asarray(output_tokens, dtype=float)
    y = np.asarray(latency_s, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("output_tokens and latency_s must be 1-D and the same length")
    if x.size < 2 or np.ptp(x) == 0:
        raise ValueError("need at least two measurements with different output_tokens")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("measurements must be finite numbers")
    dx = x - x.mean()
    slope = float(np.dot(dx, y - y.mean()) / np.dot(dx, dx))
    intercept = float(y.mean() - slope * x.mean())
    residual = y - (intercept + slope * x)
    total = float(np.dot(y - y.mean(), y - y.mean()))
    r_squared = 1.0 - float(np.dot(residual, residual)) / total if total > 0 else 1.0
    return LineFit(tpot_s=slope, ttft_s=intercept, r_squared=r_squared, points=int(x.size))


def implied_mbu(tpot_s: float, bytes_per_step: float, bandwidth_bytes_per_s: float) -> float:
    """MBU = (bytes one decode step must read ÷ measured TPOT) ÷ peak bandwidth.

    Reference: Databricks/Mosaic, "LLM Inference Performance Engineering" (2023), which
    defines MBU this way. Example: 13.48 GB per step at 10.0 ms on a 2,039 GB/s A100 →
    1348 GB/s ÷ 2039 GB/s = 0.66.
    """
    if tpot_s <= 0:
        raise ValueError(f"tpot_s must be > 0, got {tpot_s!r}")
    return bytes_per_step / tpot_s / bandwidth_bytes_per_s
