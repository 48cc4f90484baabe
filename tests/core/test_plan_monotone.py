"""Looser targets never cost more; stricter ones never cost less — for the cheapest plan and for
every candidate on its own, on real models with a KV cache."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.lengths import RequestLengths
from core.plan import CapacityPlan, plan
from core.plan_capability import capabilities
from core.plan_search import search
from core.plan_spec import Plan
from tests.core.test_plan import scenario

CANDIDATES = Plan(gpu_ids=("h100-sxm", "a100-80gb-sxm", "l40s"), tensor_parallel=(1, 2, 4, 8), weight_bits=(16, 8, 4))
CASES = {
    "llama-70b": ("llama-3.1-70b", RequestLengths(1000, 500, 0.8)),
    "llama-8b": ("llama-3.1-8b", RequestLengths(2000, 300, 0.8)),
    "mixtral-long-prompts": ("mixtral-8x7b", RequestLengths(8000, 200)),
}
# Each target from strict to loose.
LOOSENING = {
    "ttft_target_s": [0.2, 0.4, 0.7, 1.0, 2.0, 5.0],
    "ttft_percentile": [99, 95, 90, 50],
    "tokens_per_s_per_user": [80.0, 60.0, 45.0, 30.0, 20.0, 10.0, 0.0],
}


def costs(result: CapacityPlan) -> dict[str, tuple[float, float]]:
    """Each ranked candidate's (autoscaled, peak-sized) monthly bill, by its label."""
    return {o.setup.label: (o.monthly_cost_usd, o.monthly_cost_peak_usd) for o in result.ranked}


def assert_no_dearer(loose: CapacityPlan, strict: CapacityPlan) -> None:
    """Every candidate meeting the strict targets meets the loose ones, for no more; so does the cheapest."""
    looser, stricter = costs(loose), costs(strict)
    assert set(stricter) <= set(looser)
    for label, (auto, peak) in stricter.items():
        assert looser[label][0] <= auto and looser[label][1] <= peak, label
    if strict.best is not None:
        assert loose.best is not None and loose.best.monthly_cost_usd <= strict.best.monthly_cost_usd


@pytest.mark.parametrize("target", LOOSENING)
@pytest.mark.parametrize("case", CASES)
def test_loosening_a_target_never_raises_the_cost(case: str, target: str) -> None:
    model_id, lengths = CASES[case]
    plans = [plan(scenario(model_id), replace(CANDIDATES, **{target: value}), lengths) for value in LOOSENING[target]]
    for strict, loose in zip(plans, plans[1:], strict=False):
        assert_no_dearer(loose, strict)
    # The sweep is not vacuous: at the strictest end some candidate fails or costs more than at the loosest.
    strictest, loosest = costs(plans[0]), costs(plans[-1])
    assert len(strictest) < len(loosest) or any(strictest[k][0] > loosest[k][0] for k in strictest)


@settings(max_examples=25, deadline=None)
@given(
    st.tuples(st.floats(0.15, 5.0), st.floats(0.15, 5.0)).map(sorted),
    st.tuples(st.sampled_from([50, 90, 95, 99]), st.sampled_from([50, 90, 95, 99])).map(sorted),
    st.tuples(st.floats(0, 80), st.floats(0, 80)).map(sorted),
)
def test_tightening_a_target_never_lowers_the_cost(ttft: list, percentile: list, speed: list) -> None:
    # Stricter: a shorter TTFT, a higher percentile, more tokens/s per user — any of them together.
    small = replace(CANDIDATES, gpu_ids=("h100-sxm", "a100-80gb-sxm"), tensor_parallel=(2, 4, 8), weight_bits=(8, 4))
    model_id, lengths = CASES["llama-70b"]
    strict = replace(small, ttft_target_s=ttft[0], ttft_percentile=percentile[1], tokens_per_s_per_user=speed[1])
    loose = replace(small, ttft_target_s=ttft[1], ttft_percentile=percentile[0], tokens_per_s_per_user=speed[0])
    assert_no_dearer(plan(scenario(model_id), loose, lengths), plan(scenario(model_id), strict, lengths))


@pytest.mark.parametrize("case", CASES)
def test_a_lower_peak_never_needs_a_bigger_fleet(case: str) -> None:
    # The peak-sized fleet shrinks as the peak does. (The autoscaled bill need not: flatter traffic
    # can keep a replica barely needed busy all day where a peakier day lets it go.)
    model_id, lengths = CASES[case]
    plans = [plan(scenario(model_id), replace(CANDIDATES, peak_to_average=r), lengths) for r in (6, 3, 2, 1.5, 1)]
    for strict, loose in zip(plans, plans[1:], strict=False):
        peaks = {o.setup.label: o.monthly_cost_peak_usd for o in loose.ranked}
        for option in strict.ranked:
            assert peaks[option.setup.label] <= option.monthly_cost_peak_usd


@settings(max_examples=25, deadline=None)
@given(
    case=st.sampled_from(sorted(CASES)),
    replies=st.sampled_from([0, 1_000, 300_000, 2_000_000, 50_000_000]),
    peak=st.sampled_from([1.0, 2.0, 3.0, 10.0]),
    floor=st.integers(0, 4),
    ttft=st.sampled_from([0.2, 1.0, 5.0]),
    tps=st.sampled_from([0.0, 30.0, 80.0]),
    discount=st.sampled_from([0.0, 0.35]),
)
def test_the_cached_stages_give_the_plan_searched_afresh(
    case: str, replies: int, peak: float, floor: int, ttft: float, tps: float, discount: float
) -> None:
    # The app's three caches in miniature: capabilities made at other targets and traffic, a search
    # made from them at these targets, a plan from that search at this traffic — option for option the
    # plan that searches everything afresh.
    model_id, lengths = CASES[case]
    spec = replace(CANDIDATES, peak_to_average=peak, min_replicas=floor, ttft_target_s=ttft,
                   tokens_per_s_per_user=tps, gpu_discount=discount)  # fmt: skip
    elsewhere = replace(spec, peak_to_average=1.5, min_replicas=7, ttft_target_s=9.0, ttft_percentile=50,
                        tokens_per_s_per_user=1.0, gpu_discount=0.6)  # fmt: skip
    capable = capabilities(scenario(model_id, replies=12_345), elsewhere, lengths, frontiers=False)
    searched = search(scenario(model_id, replies=999), spec, lengths, capable=capable)
    staged = plan(scenario(model_id, replies=replies), spec, lengths, searched=searched)
    assert staged.options == plan(scenario(model_id, replies=replies), spec, lengths, frontiers=False).options
