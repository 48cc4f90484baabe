"""The open loop at many arrival rates at once is the open loop at each rate; the goodput search
returns a rate that meets its targets, close to the edge, and never less for looser targets."""

from __future__ import annotations

import math
from dataclasses import fields, replace

import numpy as np
import pytest

from core import presets
from core.engine import TRTLLM, VLLM
from core.lengths import RequestLengths
from core.open_loop import OpenLoop, OpenLoopModel, capacity_requests_per_s, goodput, open_loop
from core.open_loop_model import goodput_rates, stacked_points
from core.replica import Replica
from core.specs import Precision

SETUPS = {
    "70b-vllm-varied": (Replica(presets.model("llama-3.1-70b"), Precision(8, 8), presets.gpu("h100-sxm"), 2, VLLM), RequestLengths(1024, 1024, 0.8)),
    "8b-trtllm-long-prompts": (Replica(presets.model("llama-3.1-8b"), Precision(16, 16), presets.gpu("a100-80gb-sxm"), 1, TRTLLM), RequestLengths(8192, 128)),
    "mixtral-vllm": (Replica(presets.model("mixtral-8x7b"), Precision(8, 8), presets.gpu("h200"), 2, VLLM), RequestLengths(500, 2000, 0.5)),
}  # fmt: skip


@pytest.mark.parametrize("setup", SETUPS)
def test_many_rates_at_once_are_each_rate_alone(setup: str) -> None:
    replica, lengths = SETUPS[setup]
    capacity = capacity_requests_per_s(replica, lengths)
    rates = capacity * np.array([1e-6, 0.1, 0.5, 0.9, 0.999, 1.5])
    many = open_loop(replica, lengths, rates)
    for i, rate in enumerate(rates):
        one = open_loop(replica, lengths, float(rate))
        for field in fields(OpenLoop):
            value, alone = np.asarray(getattr(many, field.name)).reshape(-1), getattr(one, field.name)
            expected = value[i] if value.size == len(rates) else value[0]
            assert float(expected) == pytest.approx(alone, rel=1e-12) or (math.isinf(expected) and math.isinf(alone))
    # Past capacity every latency is infinite, and the server emits at its capacity (it read 0).
    assert math.isinf(many.ttft_p95_s[-1])
    assert many.output_tokens_per_s_per_gpu[-1] == pytest.approx(
        capacity * lengths.mean_output_tokens / replica.gpu_count, rel=1e-12
    )


@pytest.mark.parametrize("setup", SETUPS)
def test_capacity_is_the_edge_of_a_steady_state(setup: str) -> None:
    # Just below capacity the queue is finite; just above it is not.
    replica, lengths = SETUPS[setup]
    capacity = capacity_requests_per_s(replica, lengths)
    below, above = open_loop(replica, lengths, np.array([capacity * (1 - 1e-6), capacity * (1 + 1e-6)])).ttft_s
    assert math.isfinite(below) and math.isinf(above)


@pytest.mark.parametrize("setup", SETUPS)
def test_goodput_is_within_half_a_percent_of_its_edge(setup: str) -> None:
    replica, lengths = SETUPS[setup]
    lone = open_loop(replica, lengths, 1e-9)
    ttft_target, tpot_target = 3 * lone.ttft_p99_s, 2 * lone.tpot_s
    point = goodput(replica, lengths, ttft_target, tpot_target, 0.99)
    assert point is not None
    assert point.ttft_p99_s <= ttft_target and point.tpot_s <= tpot_target
    over = open_loop(replica, lengths, point.request_rate_per_s * 1.005)
    assert over.ttft_p99_s > ttft_target or over.tpot_s > tpot_target
    # A grid that starts higher searches the same way and never finds less.
    model = OpenLoopModel.build(replica, lengths)
    higher = model.goodput_rate_per_s(ttft_target, tpot_target, 0.99, highest=10 * model.slot_limit_upper_per_s())
    assert higher is not None and higher == pytest.approx(point.request_rate_per_s, rel=0.01)


def _stackable_setups() -> list[Replica]:
    """Llama 3.1 70B under vLLM: three setups with 256 slots (one shape: evaluated together) and one with 40."""
    model, engine = presets.model("llama-3.1-70b"), replace(VLLM, max_sequences=256)
    return [
        Replica(model, Precision(8, 8), presets.gpu("h100-sxm"), 2, engine),
        Replica(model, Precision(16, 16), presets.gpu("h200"), 4, engine),
        Replica(model, Precision(8, 8), presets.gpu("b200"), 1, engine),
        Replica(model, Precision(8, 8), presets.gpu("h100-sxm"), 2, replace(VLLM, max_sequences=40)),
    ]


def test_setups_evaluated_together_are_each_setup_alone() -> None:
    # A plan evaluates dozens of setups at once (`stacked_points`): rows of every setup's steps in one
    # pass. Three setups with 256 slots share a pass (different GPUs, precisions, GPU counts, rates
    # past capacity included), one with other slots and one with varied lengths run alone; every
    # field of every point equals `points` on that setup by itself.
    lengths, setups = RequestLengths(1000, 500), _stackable_setups()
    asked = []
    for replica in setups:
        built = OpenLoopModel.build(replica, lengths)
        capacity = built.capacity_per_s()
        asked.append((built, (0.3 * capacity, 0.9 * capacity, 1.2 * capacity), capacity))
    varied = OpenLoopModel.build(setups[0], RequestLengths(1000, 500, 0.8))
    asked.append((varied, (0.5 * varied.capacity_per_s(),), varied.capacity_per_s()))
    assert [m.fits for m, _, _ in asked[:3]] == [256, 256, 256] and asked[3][0].fits == 40
    together = stacked_points(asked)
    for (built, rates, capacity), points in zip(asked, together, strict=True):
        for one, alone in zip(points, built.points(rates, capacity), strict=True):
            for field in fields(OpenLoop):
                got, expected = getattr(one, field.name), getattr(alone, field.name)
                assert got == pytest.approx(expected, rel=1e-12) or (math.isinf(got) and math.isinf(expected))
    assert math.isinf(together[0][2].ttft_p95_s)  # 1.2× capacity: no steady state, in a stacked row too


def test_goodput_searches_in_step_find_each_setups_own_rate() -> None:
    # The plan's search runs every candidate's goodput search in step (`goodput_rates`): each pass of the
    # setups of one shape in one evaluation. Each rate found is the one its setup finds searched alone
    # (fresh models on both sides, so no grid's state is shared), at two sets of targets.
    lengths = RequestLengths(1000, 500)
    l4 = Replica(
        presets.model("llama-3.1-8b"), Precision(16, 16), presets.gpu("l4"), 1, replace(VLLM, max_sequences=256)
    )
    setups = [*_stackable_setups(), l4]
    for ttft, tpot, percentile in ((1.0, 1 / 30, 0.95), (0.25, 1 / 45, 0.99)):
        together = goodput_rates([OpenLoopModel.build(r, lengths) for r in setups], ttft, tpot, percentile)
        alone = [OpenLoopModel.build(r, lengths).goodput_rate_per_s(ttft, tpot, percentile) for r in setups]
        assert [rate is None for rate in together] == [rate is None for rate in alone]
        found = [(t, a) for t, a in zip(together, alone, strict=True) if t is not None]
        assert len(found) >= 3 and all(t == pytest.approx(a, rel=1e-12) for t, a in found)  # most meet them
