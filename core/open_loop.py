"""Open loop: requests arrive as a Poisson process at λ per second, as real traffic does.

Latency and throughput at one arrival rate or many, the largest rate with a steady state,
and the largest rate that meets latency targets (the goodput). The queueing model behind
them, its equations and its assumptions are `core.open_loop_model`.
"""

from __future__ import annotations

import numpy as np

from core.arraymath import Quantity
from core.lengths import RequestLengths
from core.open_loop_model import PERCENTILES, OpenLoop, OpenLoopModel
from core.replica import Replica
from core.validation import check_number

# The result and the model are taken from here by the load and plan code and the tests.
__all__ = ["PERCENTILES", "OpenLoop", "OpenLoopModel", "capacity_requests_per_s", "goodput", "open_loop"]


def open_loop(replica: Replica, lengths: RequestLengths, request_rate_per_s: Quantity) -> OpenLoop:
    """Latency and throughput under Poisson arrivals at `request_rate_per_s` (> 0; one or an array).

    Example: the lesson's toy at a trickle in tests/core/test_open_loop.py — TTFT is the
    unloaded prefill, and p95 passes any bound as λ nears capacity.
    """
    rates = np.atleast_1d(np.asarray(request_rate_per_s, dtype=float))
    for rate in rates:
        check_number("request_rate_per_s", float(rate), 0, 1e9, low_open=True)
    model = OpenLoopModel.build(replica, lengths)
    return model.point(float(rates[0])) if np.ndim(request_rate_per_s) == 0 else model.evaluate(rates)


def capacity_requests_per_s(replica: Replica, lengths: RequestLengths) -> float:
    """The largest arrival rate with a steady state (see `core.open_loop_model`)."""
    return OpenLoopModel.build(replica, lengths).capacity_per_s()


def goodput(
    replica: Replica,
    lengths: RequestLengths,
    ttft_target_s: float,
    tpot_target_s: float,
    percentile: float = 0.95,
) -> OpenLoop | None:
    """The open loop at the largest λ whose TTFT at `percentile` and mean TPOT meet the targets.

    None when even a trickle misses a target (the prefill or the TPOT alone is too slow).
    """
    if percentile not in PERCENTILES:
        raise ValueError(f"percentile must be one of {', '.join(str(p) for p in PERCENTILES)}, got {percentile!r}")
    check_number("ttft_target_s", ttft_target_s, 0, 1e6, low_open=True)
    check_number("tpot_target_s", tpot_target_s, 0, 1e6, low_open=True)
    model = OpenLoopModel.build(replica, lengths)
    rate = model.goodput_rate_per_s(ttft_target_s, tpot_target_s, percentile)
    return None if rate is None else model.point(rate)
