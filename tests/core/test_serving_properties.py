"""Hypothesis properties of the load model over wide valid inputs: dense and MoE models with
any attention shape (latent KV, sliding windows), any GPU, 1-8 GPUs, every engine, fixed or
varied lengths, any concurrency and load."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from core.closed_loop import closed_loop
from core.engine import ENGINES
from core.iteration import iteration
from core.lengths import RequestLengths
from core.open_loop import capacity_requests_per_s, open_loop
from core.replica import Replica
from tests.core.test_properties import custom_gpus, custom_models, precisions, preset_gpus, preset_models

SETTINGS = settings(max_examples=80, deadline=None)

engines = st.sampled_from(sorted(ENGINES)).map(ENGINES.__getitem__) | st.builds(
    lambda base, chunked, reserve, wait: replace(
        base, chunked_prefill=chunked, reserves_full_sequence=reserve, prefill_batch_wait_iterations=wait
    ),
    st.sampled_from(sorted(ENGINES)).map(ENGINES.__getitem__),
    st.booleans(),
    st.booleans(),
    st.integers(0, 40),
)
shaped_models = custom_models(shape=True) | preset_models
lengths = st.builds(
    RequestLengths,
    prompt_tokens=st.integers(1, 60_000),
    output_tokens=st.integers(1, 20_000),
    low_fraction=st.sampled_from([1.0, 0.8]) | st.floats(0.05, 1.0),
)


@st.composite
def replicas(draw: st.DrawFn) -> Replica:
    return Replica(
        model=draw(shaped_models),
        precision=draw(precisions),
        gpu=draw(custom_gpus() | preset_gpus),
        gpu_count=draw(st.integers(1, 8)),
        engine=draw(engines),
    )


def _finite_positive(*values: float) -> bool:
    return all(math.isfinite(v) and v > 0 for v in values)


@SETTINGS
@given(replicas(), lengths, st.lists(st.integers(1, 4096), min_size=1, max_size=6), st.none() | st.integers(1, 20))
def test_closed_loop_is_finite_positive_and_obeys_littles_law(r, lens, concurrency, requests_per_slot):
    assume(r.max_concurrency_that_fits(lens) > 0)
    c = np.array(sorted(set(concurrency)), dtype=float)
    result = closed_loop(r, lens, c, requests_per_slot)
    for name in ("ttft_s", "tpot_s", "e2e_s", "requests_per_s", "output_tokens_per_s_per_gpu"):
        assert _finite_positive(*getattr(result, name)), name
    assert np.allclose(result.requests_per_s * result.e2e_s, c, rtol=1e-9)
    # TTFT is at least the prompt's prefill on an idle engine; TPOT at least a lone decode.
    alone = closed_loop(r, lens, 1)
    assert np.all(result.ttft_s >= alone.ttft_s * (1 - 1e-6))
    assert np.all(result.tpot_s >= alone.tpot_s * (1 - 1e-6))


@SETTINGS
@given(replicas(), lengths, st.floats(1e-6, 0.999))
def test_open_loop_below_capacity_is_finite_and_ordered(r, lens, fraction):
    assume(r.max_concurrency_that_fits(lens) > 0)
    capacity = capacity_requests_per_s(r, lens)
    assume(capacity > 0)
    point = open_loop(r, lens, capacity * fraction)
    assert _finite_positive(point.ttft_s, point.ttft_p50_s, point.ttft_p99_s, point.tpot_s, point.e2e_s)
    assert point.ttft_p50_s <= point.ttft_p90_s <= point.ttft_p95_s <= point.ttft_p99_s * (1 + 1e-12)
    assert abs(point.utilisation - fraction) < 1e-9


@SETTINGS
@given(replicas(), st.floats(0, 4096), st.floats(0, 1e5), st.floats(0, 20_000), st.floats(0, 1e5))
def test_an_iteration_takes_at_least_its_roofline(r, decoding, context, chunk, prefix):
    step = iteration(r, decoding, context, chunk, prefix)
    assert math.isfinite(step.time_s) and step.time_s >= max(step.memory_time_s, step.compute_time_s) > 0
