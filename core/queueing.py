"""Queueing formulas the load model uses, each a textbook result with its assumption.

References: Kingman, "The single server queue in heavy traffic" (1961); Kleinrock,
"Queueing Systems, Vol. 1" (1975), ch. 3 (birth-death processes) and 5 (M/G/1,
Pollaczek-Khinchine). Every function accepts floats or numpy arrays.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from core.arraymath import Quantity

FloatArray = npt.NDArray[np.float64]


def kingman_wait_s(
    utilisation: Quantity, service_s: Quantity, arrival_scv: float = 1.0, service_scv: float = 0.0
) -> Quantity:
    """Mean wait in a single-server queue: ρ / (1 - ρ) × (ca² + cs²) / 2 × service time.

    Exact for Poisson arrivals (ca² = 1, Pollaczek-Khinchine), a heavy-traffic
    approximation otherwise; infinite at ρ ≥ 1. Example: ρ = 0.5, deterministic 100 ms
    service, Poisson arrivals → 1 × 0.5 × 100 = 50 ms (M/D/1).
    """
    rho = np.asarray(utilisation, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = rho / (1 - rho) * (arrival_scv + service_scv) / 2 * service_s
    return np.where(rho < 1, wait, np.inf)


def wait_quantile_s(q: float, wait_probability: Quantity, mean_wait_s: Quantity) -> Quantity:
    """The q-th quantile of a wait that is 0 with probability 1 - P, else exponential.

    P(W > t) = P × exp(-t / θ) with θ = mean wait / P (the M/M/c and heavy-traffic shape),
    so t_q = θ × ln(P / (1 - q)) when 1 - q < P, else 0. Example: P = 0.5, mean 50 ms →
    θ = 100 ms, p95 = 100 × ln(10) = 230 ms.
    """
    p = np.asarray(wait_probability, dtype=float)
    waits = p > 1 - q  # else the quantile falls among the requests that do not wait
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = mean_wait_s / np.where(waits, p, 1.0)
        tail = np.where(waits, scale * np.log(np.where(waits, p, 1.0) / (1 - q)), 0.0)
    return np.where(np.isfinite(mean_wait_s), tail, np.inf)


def birth_death_distribution(
    rate_per_s: Quantity, service_rates_per_s: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Stationary distribution of a birth-death queue with state-dependent service, and its tail.

    Arrivals at λ; in state n ≤ c requests leave at μ(n) (`service_rates_per_s[..., n-1]`),
    above c at μ(c), so the tail is geometric with ratio ρ_c = λ / μ(c) (< 1 required).
    π(n) ∝ Π_{k ≤ n} λ / μ(k), computed in logs so thousands of states cannot overflow.
    Many queues at once: rates of shape (K, 1) against service rates of shape (K, c).
    Returns (π(0..c), P(n > c), ρ_c). Example: λ = 1, μ(1) = 2 (c = 1) → π(0) = 1/2,
    π(1) = 1/4, P(n > 1) = 1/4, ρ_c = 1/2 (the M/M/1 queue with ρ = 1/2).
    """
    rate, mu = np.asarray(rate_per_s, dtype=float), np.asarray(service_rates_per_s, dtype=float)
    log_steps = np.log(rate / mu)
    start = np.zeros(log_steps.shape[:-1] + (1,))
    log_terms = np.concatenate((start, np.cumsum(log_steps, axis=-1)), axis=-1)
    weights = np.exp(log_terms - log_terms.max(axis=-1, keepdims=True))
    ratio = rate / mu[..., -1:]
    beyond = weights[..., -1:] * ratio / (1 - ratio)
    total = weights.sum(axis=-1, keepdims=True) + beyond
    return weights / total, (beyond / total)[..., 0], ratio[..., 0]


def batch_wait_iterations(window_iterations: Quantity, arrivals_per_iteration: Quantity) -> Quantity:
    """Mean iterations a prompt is held back by a "wait W iterations to batch prefills" rule.

    The first prompt after a flush waits the whole window W; the a·W others that arrive
    during it wait W/2 on average: (W + a·W × W/2) / (1 + a·W). TensorRT-LLM's
    batch_wait_timeout_iters works this way when the token threshold is not reached.
    Example: W = 20, one arrival every 10 iterations → (20 + 2 × 10) / 3 = 13.3.
    """
    w = np.asarray(window_iterations, dtype=float)  # one window, or one per entry (setups stacked)
    batch = arrivals_per_iteration * w
    return (w + batch * w / 2) / (1 + batch)


def prompts_per_iteration(arrivals_per_iteration: Quantity, most: Quantity) -> Quantity:
    """Prompts an iteration carries when it takes every prompt that arrived during the last one.

    Poisson arrivals, a per iteration: given at least one, a / (1 − e^(−a)) on average
    (the zero-truncated Poisson mean), at most `most` (the token budget's worth) and at
    least 1. Example: a = 1 → 1 / (1 − 1/e) = 1.582; a → 0 → 1.
    """
    a = np.maximum(arrivals_per_iteration, 1e-300)
    # expm1 keeps a / (1 − e^(−a)) exact down to a = 1e-300 (1 + a/2 to the last bit below 1e-8, 1 at 1e-300),
    # so no branch for small a: the closed loop asks this twice per evaluation of its solve.
    return np.minimum(np.maximum(a / -np.expm1(-a), 1.0), most)  # np.clip's overhead, 3x, shows in a plan's search
