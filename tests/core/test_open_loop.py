"""The open loop (Poisson arrivals): unloaded at a trickle, unbounded tails at capacity,
ordered percentiles, and goodput that meets its targets."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core import presets
from core.closed_loop import closed_loop
from core.engine import TRTLLM, TYPICAL, VLLM
from core.estimate import estimate
from core.lengths import RequestLengths
from core.open_loop import capacity_requests_per_s, goodput, open_loop
from core.replica import Replica
from core.scenario import Scenario
from core.specs import Precision, Workload

FP8 = Precision(8, 8)


def replica(model_id="llama-3.1-70b", gpu_id="h100-sxm", n=2, engine=VLLM, precision=FP8) -> Replica:
    return Replica(presets.model(model_id), precision, presets.gpu(gpu_id), n, engine)


@pytest.mark.parametrize(
    ("model_id", "gpu_id", "n", "prompt", "output"),
    [("llama-3.1-8b", "h100-sxm", 1, 1000, 500), ("llama-3.1-70b", "b200", 4, 4000, 200)],
)
def test_a_trickle_sees_an_idle_engine(model_id, gpu_id, n, prompt, output):
    # λ → 0: nothing waits and nobody else runs, so every percentile of TTFT is one prefill on an
    # idle engine — `estimate`'s TTFT exactly (TYPICAL has no per-request path) — and TPOT is one
    # sequence's.
    r = replica(model_id, gpu_id, n, TYPICAL)
    scenario = Scenario(
        model=r.model,
        gpu=r.gpu,
        precision=FP8,
        efficiency=TYPICAL.efficiency(r.model),
        workload=Workload(prompt_tokens=prompt, output_tokens=output, gpu_count=n),
    )
    expected = estimate(scenario)
    point = open_loop(r, RequestLengths(prompt, output), 1e-9)
    for value in (point.ttft_s, point.ttft_p50_s, point.ttft_p95_s, point.ttft_p99_s):
        assert value == pytest.approx(expected.ttft_s, rel=1e-6)
    assert point.tpot_s == pytest.approx(expected.tpot_s, rel=1e-6)
    assert point.utilisation < 1e-6


def test_a_named_engine_adds_its_request_path_to_a_trickle():
    point = open_loop(replica(engine=TRTLLM), RequestLengths(1000, 500), 1e-9)
    bare = open_loop(replica(engine=replace(TRTLLM, request_overhead_s=0.0)), RequestLengths(1000, 500), 1e-9)
    assert point.ttft_p95_s - bare.ttft_p95_s == pytest.approx(TRTLLM.request_overhead_s, rel=1e-6)


def test_the_per_stream_path_costs_nothing_at_a_trickle_and_grows_with_the_others_in_flight():
    # vLLM's 0.82 ms per other request streaming: a trickle finds nobody else (no change); at load
    # an arrival finds λ × e2e others on average, so the mean TTFT grows by about that many × 0.82 ms.
    lengths = RequestLengths(1000, 500)
    bare_engine = replace(VLLM, stream_overhead_s=0.0)
    trickle = open_loop(replica(), lengths, 1e-9).ttft_s - open_loop(replica(engine=bare_engine), lengths, 1e-9).ttft_s
    assert trickle == pytest.approx(0.0, abs=1e-9)
    busy, bare = open_loop(replica(), lengths, 2.0), open_loop(replica(engine=bare_engine), lengths, 2.0)
    others = busy.mean_in_flight  # λ × e2e: about how many an arrival finds (PASTA)
    assert 0.5 * others * VLLM.stream_overhead_s < busy.ttft_s - bare.ttft_s < 1.5 * others * VLLM.stream_overhead_s


@pytest.mark.parametrize(
    "lengths",
    [RequestLengths(1024, 1024, 0.8), RequestLengths(8192, 64), RequestLengths(200, 4000)],
    ids=["1k-1k", "prefill-bound", "decode-bound"],
)
def test_the_tail_grows_without_bound_towards_capacity(lengths):
    # Whichever limit binds (KV-cache slots or the prefill), p95 TTFT passes any bound as λ → capacity.
    r = replica()
    capacity = capacity_requests_per_s(r, lengths)
    fractions = [0.5, 0.9, 0.99, 0.999, 0.99999]
    p95 = [open_loop(r, lengths, capacity * f).ttft_p95_s for f in fractions]
    assert all(b > a for a, b in zip(p95, p95[1:], strict=False))
    assert p95[-1] > 1000 * p95[0]
    assert p95[-1] > 60  # a minute, from well under a second at half load
    beyond = open_loop(r, lengths, capacity * 1.01)
    assert beyond.utilisation == pytest.approx(1.01) and math.isinf(beyond.ttft_p95_s)


def test_percentiles_are_ordered_and_the_mean_sits_among_them():
    r, lengths = replica(), RequestLengths(2048, 512, 0.8)
    capacity = capacity_requests_per_s(r, lengths)
    for fraction in (0.3, 0.7, 0.95):
        point = open_loop(r, lengths, capacity * fraction)
        assert point.ttft_p50_s <= point.ttft_p90_s <= point.ttft_p95_s <= point.ttft_p99_s
        assert point.ttft_p50_s <= point.ttft_s * 1.5 and point.ttft_s <= point.ttft_p99_s
        assert point.mean_in_flight == pytest.approx(point.request_rate_per_s * point.e2e_s)
        assert point.output_tokens_per_s_per_gpu == pytest.approx(point.request_rate_per_s * 512 * 0.9 / 2)


def test_capacity_matches_the_closed_loop_at_the_memory_cap():
    # The open loop's slot limit is the rate at which c full slots free up; the closed loop with
    # C = c measures the same engine state, so the two agree closely (the closed loop's requests
    # also wait one iteration on arrival, so it is a little lower).
    r, lengths = replica(), RequestLengths(1000, 2000)
    cap = r.max_concurrency_that_fits(lengths)
    capacity = capacity_requests_per_s(r, lengths)
    closed = closed_loop(r, lengths, cap).requests_per_s
    assert closed < capacity < 1.05 * closed


def test_prefill_bound_capacity_is_the_prefill_rate():
    # 16k-token prompts, 16-token replies: the engine spends nearly all its time prefilling, so
    # capacity is about one prompt per prefill (vLLM chunks each over two iterations).
    r, lengths = replica(), RequestLengths(16_000, 16)
    lone = open_loop(r, lengths, 1e-9).ttft_s - VLLM.request_overhead_s
    capacity = capacity_requests_per_s(r, lengths)
    assert 0.8 / lone < capacity < 1.2 / lone


def test_goodput_meets_its_targets_and_loosening_them_never_lowers_it():
    r, lengths = replica(), RequestLengths(1024, 1024, 0.8)
    point = goodput(r, lengths, ttft_target_s=1.0, tpot_target_s=0.05)
    assert point is not None
    assert point.ttft_p95_s <= 1.0 and point.tpot_s <= 0.05
    # ... and it is the edge: 1 % more traffic breaks one of them.
    over = open_loop(r, lengths, point.request_rate_per_s * 1.01)
    assert over.ttft_p95_s > 1.0 or over.tpot_s > 0.05
    looser = goodput(r, lengths, ttft_target_s=2.0, tpot_target_s=0.05)
    assert looser is not None and looser.request_rate_per_s >= point.request_rate_per_s
    stricter_percentile = goodput(r, lengths, ttft_target_s=1.0, tpot_target_s=0.05, percentile=0.99)
    assert stricter_percentile is not None and stricter_percentile.request_rate_per_s <= point.request_rate_per_s


def test_no_goodput_when_a_trickle_already_misses():
    # TPOT of Llama 3.1 70B on 2 × H100 is ~19 ms at best: a 10 ms target cannot be met.
    assert goodput(replica(), RequestLengths(1000, 500), ttft_target_s=1.0, tpot_target_s=0.010) is None


def test_more_traffic_more_waiting_and_slower_tokens():
    r, lengths = replica(), RequestLengths(1024, 1024, 0.8)
    capacity = capacity_requests_per_s(r, lengths)
    points = [open_loop(r, lengths, capacity * f) for f in np.linspace(0.05, 0.95, 10)]
    for a, b in zip(points, points[1:], strict=False):
        assert b.ttft_s > a.ttft_s and b.tpot_s > a.tpot_s and b.mean_in_flight > a.mean_in_flight


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="request_rate_per_s"):
        open_loop(replica(), RequestLengths(100, 100), 0.0)
    with pytest.raises(ValueError, match="percentile"):
        goodput(replica(), RequestLengths(100, 100), 1.0, 0.05, percentile=0.97)
