"""Measurements: fit the latency line and read the hardware efficiency off it.

Reference: the lesson (Day 36, Part 1: "Fit total = intercept + slope * (output tokens)").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.arraymath import Quantity
from core.estimate import Estimate


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


def implied_mbu(result: Estimate, measured_tpot_s: float) -> float | None:
    """The memory-bandwidth utilisation a measured TPOT implies, read the way the model reads its own.

    implied MBU = mean bytes per decode step ÷ (measured TPOT − fixed − waiting) ÷ (N × peak bandwidth)

    In words: from the measured time per output token take off what the model spends on
    anything but reading memory — the fixed per-step costs (step overhead, per-sequence
    overhead, tensor-parallel all-reduces) and the time its steps wait on maths beyond their
    memory time (zero when every step of the reply is memory-bound) — and divide the bytes
    the mean decode step reads (weights plus the KV caches, averaged over the reply) by
    what is left, as a share of the GPUs' peak bandwidth. A measurement equal to the
    estimate's TPOT implies exactly the scenario's MBU; a slower one, a lower MBU (weights an
    engine dequantises count as their bytes ÷ its dequantising share). None when
    the measurement leaves no time for memory at all (it is no slower than the fixed costs
    and the waiting alone), and None when the model's every step waits on the host's launches
    (an eager engine, `MeanDecodeStep.host_bound`): a time per token set by the host says
    nothing about the bandwidth. A reply only part of whose steps wait on the host counts that
    wait with the waiting on maths. Reference: Databricks/Mosaic, "LLM Inference Performance
    Engineering" (2023): MBU = achieved bandwidth (bytes ÷ time per token) ÷ peak bandwidth.
    Example: Llama 3.1 8B on one H100, calibrated, batch 1, 1,000-token prompt, 1-token
    reply: 16.191 GB per step, fixed 2.5 ms + 14 µs; a measured 10 ms →
    16.191e9 ÷ 7.486e-3 s ÷ 3.35e12 B/s = 0.646.
    """
    if not measured_tpot_s > 0:
        raise ValueError(f"measured_tpot_s must be > 0, got {measured_tpot_s!r}")
    step = result.decode
    if step.host_bound:
        return None
    waiting_s = step.time_s - step.fixed_time_s - step.memory_time_s
    memory_s = measured_tpot_s - step.fixed_time_s - waiting_s
    if memory_s <= 0:
        return None
    # MBU × memory time = the bytes over the peak, dequantised weights counted at 1 / their share.
    return result.scenario.efficiency.mbu * step.memory_time_s / memory_s
