"""The deployment search on real models with a KV cache: the cheapest plan meets every target,
every candidate is accounted for, the bill's arithmetic, Little's law on the chosen points, and
the precision mapping — each expected value derived by hand beside it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core import presets
from core.candidates import candidate_gpus, setup_precision, setups, split_problem
from core.closed_loop import closed_loop
from core.daily_curve import DailyCurve
from core.efficiency import efficiency_base
from core.engine import VLLM
from core.lengths import RequestLengths
from core.memory import weight_bytes_read
from core.open_loop import OpenLoopModel, open_loop
from core.open_loop_model import GRIDS_KEPT
from core.plan import CapacityPlan, frontier, frontiers, monthly_usd_at, plan
from core.plan_capability import _every_capability, capabilities, concurrency_grid, open_loops
from core.plan_options import Problem
from core.plan_search import Search, _every_searched, search
from core.plan_spec import Plan
from core.replica import Replica
from core.scenario import Scenario
from core.specs import Precision, Pricing, Workload

HOURS_PER_MONTH = 30 * 24  # the default 30 billed days
# A small candidate set that still has every kind of outcome: fits and does not, TP 1-8, 8 and 4 bits.
SMALL = Plan(gpu_ids=("h100-sxm", "a100-80gb-sxm", "l4"), tensor_parallel=(1, 2, 4, 8), weight_bits=(16, 8, 4))


def scenario(model_id: str = "llama-3.1-70b", engine: str = "vllm", replies: int = 2_000_000, **workload) -> Scenario:
    model = presets.model(model_id)
    return Scenario(
        model=model,
        gpu=presets.gpu("h100-sxm"),
        efficiency=efficiency_base(engine, model),
        workload=Workload(**({"prompt_tokens": 1000, "output_tokens": 500} | workload)),
        pricing=Pricing(replies_per_day=replies),
    )


@pytest.fixture(scope="module")
def llama70b() -> CapacityPlan:
    # Llama 3.1 70B, 1,000 → 500 tokens, 2,000,000 replies a day peaking at 3×, p95 TTFT ≤ 1 s, 30 tokens/s.
    return plan(scenario(), SMALL, RequestLengths(1000, 500, 0.8))


def test_traffic_and_the_api_bill_by_hand(llama70b: CapacityPlan) -> None:
    # 2,000,000 / 86,400 s = 23.148 requests/s on average, 69.44 at the 3× peak.
    assert llama70b.mean_requests_per_s == pytest.approx(23.148148, rel=1e-6)
    assert llama70b.peak_requests_per_s == pytest.approx(69.444444, rel=1e-6)
    # Lengths 80-100 %: 900 prompt and 450 reply tokens on average, at $0.50 and $1.50 per million:
    # 900 × 0.5e-6 + 450 × 1.5e-6 = $0.001125 a reply × 2,000,000 × 30 = $67,500 a month.
    assert llama70b.api_cost_per_reply_usd == pytest.approx(0.001125)
    assert llama70b.api_monthly_usd == pytest.approx(67_500)


def test_every_candidate_is_accounted_for(llama70b: CapacityPlan) -> None:
    # 3 GPUs × 4 sizes × 3 precisions = 36 candidates, each ranked or failed with a reason.
    assert len(llama70b.options) == 36
    assert {o.setup for o in llama70b.options} == set(setups(llama70b.scenario, SMALL))
    for option in llama70b.failures:
        assert option.problem in Problem and option.reason
    assert all(o.problem is None and o.reason == "" for o in llama70b.ranked)
    assert llama70b.best is llama70b.ranked[0]


def test_the_cheapest_plan_meets_every_target(llama70b: CapacityPlan) -> None:
    best, spec = llama70b.best, llama70b.spec
    assert best is not None and best.point is not None
    assert best.point.ttft_p95_s <= spec.ttft_target_s
    assert best.point.tokens_per_s_per_user >= spec.tokens_per_s_per_user
    # The replica's cap is what fits, at most the plan's 256; the goodput is the edge of the targets:
    # at it both hold, and 0.5 % more traffic per replica breaks one (the search lands within 0.41 %).
    assert best.max_running_per_replica == min(best.max_concurrency_that_fits, 256)
    replica = Replica(
        llama70b.scenario.model,
        best.setup.precision,
        best.setup.gpu,
        best.setup.gpus_per_replica,
        replace(VLLM, max_sequences=best.max_running_per_replica),
    )
    edge = open_loop(replica, llama70b.lengths, best.requests_per_s_per_replica)
    assert edge.ttft_p95_s <= 1.0 and edge.tokens_per_s_per_user >= 30
    assert best.concurrency_per_replica == pytest.approx(edge.mean_in_flight)
    over = open_loop(replica, llama70b.lengths, best.requests_per_s_per_replica * 1.005)
    assert over.ttft_p95_s > 1.0 or over.tokens_per_s_per_user < 30
    # The fleet serves the peak: replicas × what each may take ≥ the peak rate, and one fewer would not.
    assert best.replicas_at_peak * best.requests_per_s_per_replica >= llama70b.peak_requests_per_s
    assert (best.replicas_at_peak - 1) * best.requests_per_s_per_replica < llama70b.peak_requests_per_s
    assert best.point.request_rate_per_s == pytest.approx(llama70b.peak_requests_per_s / best.replicas_at_peak)


def test_the_ranking_is_by_the_autoscaled_bill(llama70b: CapacityPlan) -> None:
    costs = [o.monthly_cost_usd for o in llama70b.ranked]
    assert costs == sorted(costs) and len(costs) >= 5


def test_the_bill_by_hand(llama70b: CapacityPlan) -> None:
    # The peak fleet: replicas × GPUs each × $/GPU-hour × 720 h. Autoscaled: mean replicas instead.
    for o in llama70b.ranked:
        price = o.setup.gpu.price_usd_per_hour
        assert o.monthly_cost_peak_usd == pytest.approx(o.total_gpus_at_peak * price * HOURS_PER_MONTH)
        assert o.monthly_cost_usd == pytest.approx(o.mean_replicas * o.setup.gpus_per_replica * price * HOURS_PER_MONTH)
        # $ per million output tokens at the peak: $/GPU-hour ÷ (tokens/s per GPU × 3,600) × 1e6.
        per_gpu = llama70b.peak_requests_per_s / o.total_gpus_at_peak * 450
        assert o.output_tokens_per_s_per_gpu == pytest.approx(per_gpu)
        assert o.usd_per_million_output_tokens == pytest.approx(price / (per_gpu * 3600) * 1e6)


def test_the_autoscaled_bill_lies_between_the_floor_and_the_peak_fleet(llama70b: CapacityPlan) -> None:
    floor = llama70b.spec.min_replicas
    for o in llama70b.ranked:
        floor_cost = floor * o.setup.gpus_per_replica * o.setup.gpu.price_usd_per_hour * HOURS_PER_MONTH
        assert floor_cost <= o.monthly_cost_usd <= o.monthly_cost_peak_usd
        # A 3× peak leaves the fleet idle much of the day: well under the peak fleet's bill.
        assert o.monthly_cost_usd < 0.8 * o.monthly_cost_peak_usd


def test_littles_law_on_the_chosen_points(llama70b: CapacityPlan) -> None:
    for o in llama70b.ranked:
        # Open loop at the peak: requests in flight = arrival rate × mean end-to-end latency.
        assert o.point.mean_in_flight == pytest.approx(o.point.request_rate_per_s * o.point.e2e_s, rel=1e-12)
        # Closed loop at the concurrency the replica holds at its goodput: throughput × end to end = it.
        replica = Replica(llama70b.scenario.model, o.setup.precision, o.setup.gpu, o.setup.gpus_per_replica, VLLM)
        held = round(o.concurrency_per_replica)
        point = closed_loop(replica, llama70b.lengths, held)
        assert point.requests_per_s * point.e2e_s == pytest.approx(held, rel=1e-9)


def test_a_candidate_that_cannot_fit_says_so_with_the_numbers(llama70b: CapacityPlan) -> None:
    # 70.55 billion weights × 2 bytes = 141.1 GB; vLLM may use 80 × 0.9 − 3 GiB = 68.78 GB of an H100.
    option = next(o for o in llama70b.options if o.setup.label == "NVIDIA H100 SXM 80GB, TP 1, 16-bit")
    assert option.problem is Problem.DOES_NOT_FIT and option.frontier is None
    assert option.reason == "141.1 GB of weights exceed the 68.8 GB vLLM may use on 1 × 80 GB"


def test_a_candidate_too_slow_to_stream_keeps_its_frontier(llama70b: CapacityPlan) -> None:
    # Llama 3.1 70B in 8 bits over four L4s (300 GB/s each): even alone a token takes ~75 ms.
    option = next(o for o in llama70b.options if o.setup.label == "NVIDIA L4 24GB, TP 4, 8-bit")
    assert option.problem is Problem.TOO_SLOW and option.reason.startswith("streams ")
    assert option.frontier is not None and option.requests_per_s_per_replica is None
    assert option.frontier.tokens_per_s_per_user[0] < 30


def test_a_gpu_without_a_price_keeps_its_frontier_and_a_price_ranks_it() -> None:
    # An H200 without a price (as the scenario's GPU it stands in for its preset): not ranked, its
    # frontier still there. With a price it is sized and costed.
    spec = Plan(gpu_ids=("h200",), tensor_parallel=(2,), weight_bits=(8,))
    unpriced = plan(replace(scenario(), gpu=replace(presets.gpu("h200"), price_usd_per_hour=None)), spec).options[0]
    assert unpriced.problem is Problem.NO_PRICE and unpriced.max_running_per_replica is not None
    assert unpriced.frontier is not None and unpriced.frontier.usd_per_million_output_tokens is None
    priced = replace(scenario(), gpu=replace(presets.gpu("h200"), price_usd_per_hour=4.0))
    option = plan(priced, spec).options[0]
    assert option.meets_targets and option.monthly_cost_peak_usd == pytest.approx(
        option.total_gpus_at_peak * 4.0 * HOURS_PER_MONTH
    )


def test_a_model_that_cannot_be_split_evenly() -> None:
    # Qwen2.5 7B has 28 query heads: 4 GPUs take 7 each, 8 GPUs cannot (engines split heads evenly).
    model = presets.model("qwen2.5-7b")
    assert split_problem(model, 4) is None
    assert split_problem(model, 8) == "8 GPUs cannot split the model's 28 query heads evenly"
    result = plan(scenario("qwen2.5-7b"), Plan(gpu_ids=("h100-sxm",), tensor_parallel=(8,), weight_bits=(16,)))
    assert result.options[0].problem is Problem.CANNOT_SPLIT
    # The KV heads must split too: 48 query heads and 12 KV heads over 8 GPUs (48 / 8 = 6, but 12 % 8 = 4
    # and 8 % 12 = 8); over 4 (3 KV heads each) or 6 (2 each) they do.
    wide = replace(presets.model("llama-3.1-8b"), query_heads=48, kv_heads=12, head_dim=128, hidden=6144)
    assert split_problem(wide, 8) == "8 GPUs cannot split the model's 12 KV heads evenly"
    assert split_problem(wide, 4) is None and split_problem(wide, 6) is None


@pytest.mark.parametrize(
    ("model_id", "gpu_ids"),
    [("llama-3.1-8b", ("l4", "a10g", "h100-sxm")), ("mixtral-8x7b", ("h100-sxm", "a100-80gb-sxm", "l40s"))],
)
def test_other_real_models_get_a_plan_that_meets_the_targets(model_id: str, gpu_ids: tuple[str, ...]) -> None:
    spec = Plan(gpu_ids=gpu_ids, tensor_parallel=(1, 2, 4), ttft_target_s=0.5, tokens_per_s_per_user=40)
    result = plan(scenario(model_id, engine="trtllm", replies=500_000), spec, RequestLengths(2000, 300, 0.8))
    best = result.best
    assert best is not None and best.point is not None
    assert best.point.ttft_p95_s <= 0.5 and best.point.tokens_per_s_per_user >= 40
    assert best.monthly_cost_usd <= min(o.monthly_cost_usd for o in result.ranked)


def test_the_precision_mapping() -> None:
    b200, h100 = presets.gpu("b200"), presets.gpu("h100-sxm")
    # 4 bits: NVFP4 (4 + an 8-bit scale per 16 = 4.5 bits, 4-bit maths) where the GPU has a 4-bit peak,
    # int4 weight-only (4.5 bits with group scales, 16-bit maths) where it does not.
    assert setup_precision(b200, 4, 16) == Precision(4.5, 16, compute_bits=4)
    assert setup_precision(h100, 4, 8) == Precision(4.5, 8, compute_bits=16)
    assert setup_precision(h100, 8, 16) == Precision(8, 16, compute_bits=8)  # W8A8
    assert setup_precision(b200, 16, 16) == Precision(16, 16, compute_bits=16)


def test_a_4_bit_candidate_keeps_gpt_oss_as_shipped() -> None:
    # gpt-oss ships MXFP4 experts (4.25 bits) beside bf16 attention, router and embeddings: its 4-bit
    # candidate is that checkpoint, maths as the GPU runs 4 bits; 16 and 8 stay one width for every weight.
    shipped = presets.release_precision("gpt-oss-120b")
    b200, h100 = presets.gpu("b200"), presets.gpu("h100-sxm")
    assert setup_precision(h100, 4, 16, shipped) == Precision(16, 16, compute_bits=16, expert_weight_bits=4.25)
    assert setup_precision(b200, 4, 16, shipped) == Precision(16, 16, compute_bits=4, expert_weight_bits=4.25)
    assert setup_precision(h100, 8, 16, shipped) == Precision(8, 16, compute_bits=8)
    assert setup_precision(h100, 4, 16, Precision(16, 16)) == Precision(4.5, 16, compute_bits=16)  # no split
    # A token at batch 1 reads 2.13 B shared weights at 16 bits + 4 of 128 experts × 0.896 B at 4.25 bits
    # = 4.26 + 1.90 = 6.16 GB, where one 4.5-bit width for every weight read 5.71 B × 4.5 / 8 = 3.21 GB.
    model = presets.model("gpt-oss-120b")
    (candidate,) = [s for s in setups(Scenario(model=model), Plan(gpu_ids=("h100-sxm",), tensor_parallel=(1,)))
                    if s.weight_bits == 4]  # fmt: skip
    assert candidate.precision_name == "16-bit (experts 4.25-bit)"
    assert float(weight_bytes_read(model, candidate.precision, 1.0)) == pytest.approx(6.16e9, rel=0.005)
    assert float(weight_bytes_read(model, Precision(4.5, 16), 1.0)) == pytest.approx(3.21e9, rel=0.005)


def test_the_default_candidates_are_the_gpus_with_a_price() -> None:
    # Today's priced presets, in file order (a preset given a price later joins them by itself).
    priced = tuple(i for i, p in presets.gpu_presets().items() if p.gpu.price_usd_per_hour is not None)
    assert {"h100-sxm", "a100-80gb-sxm", "l4"} <= set(priced) and "toy-gpu" not in priced
    assert tuple(g.id for g in candidate_gpus(scenario(), Plan())) == priced
    # The scenario's GPU given a price joins them, in preset order; edited, it stands in for its preset.
    h200 = replace(presets.gpu("h200"), price_usd_per_hour=4.0)
    chosen = candidate_gpus(replace(scenario(), gpu=h200), Plan())
    assert chosen[[g.id for g in chosen].index("h200")] is h200
    cheap = replace(presets.gpu("h100-sxm"), price_usd_per_hour=1.0)
    assert candidate_gpus(replace(scenario(), gpu=cheap), Plan())[0] is cheap


def test_the_concurrency_grid() -> None:
    # 2^(k/4) rounded: 1, 1.19, 1.41, 1.68, 2, 2.38, 2.83, 3.36, 4, ... → 1, 2, 3, 4, 5, 6, 7, 8, then the cap.
    assert list(concurrency_grid(10)) == [1, 2, 3, 4, 5, 6, 7, 8, 10]
    assert list(concurrency_grid(1)) == [1]
    grid = concurrency_grid(256)
    assert grid[-1] == 256 and 128 in grid and np.all(np.diff(grid) > 0)


def test_the_frontier_in_dollars_by_hand(llama70b: CapacityPlan) -> None:
    for o in llama70b.ranked:
        f, price = o.frontier, o.setup.gpu.price_usd_per_hour
        for per_gpu, dollars in zip(f.output_tokens_per_s_per_gpu, f.usd_per_million_output_tokens, strict=True):
            assert dollars == pytest.approx(price / (per_gpu * 3600) * 1e6)
        assert f.concurrency[-1] == o.max_running_per_replica
        # InferenceX's shape up to what the replica holds at its goodput: more concurrency, more tokens
        # per GPU, fewer per user. (Well past it the closed loop can dip where prompts saturate the
        # prefill: not a point anyone runs at.)
        upto = int(np.searchsorted(f.concurrency, o.concurrency_per_replica)) + 1
        assert np.all(np.diff(f.output_tokens_per_s_per_gpu[:upto]) > 0)
        assert np.all(np.diff(f.tokens_per_s_per_user[:upto]) < 0)


def test_no_traffic_costs_the_floor() -> None:
    # Zero replies a day: the floor (1 replica) all month; with a floor of 0 nothing runs and nothing is paid.
    spec = Plan(gpu_ids=("h100-sxm",), tensor_parallel=(4,), weight_bits=(8,))
    one = plan(scenario(replies=0), spec).options[0]
    assert one.replicas_at_peak == 1 and one.monthly_cost_usd == pytest.approx(4 * 3.78 * HOURS_PER_MONTH)
    none = plan(scenario(replies=0), replace(spec, min_replicas=0)).options[0]
    assert none.replicas_at_peak == 0 and none.monthly_cost_usd == 0 and none.monthly_cost_peak_usd == 0


def test_the_bill_against_traffic_is_the_cheapest_ranked_candidate_at_each_level(llama70b: CapacityPlan) -> None:
    replies = np.array([0.0, 20_000, 200_000, 2_000_000, 20_000_000])
    cost = monthly_usd_at(llama70b, replies)
    # At the plan's own traffic: its best candidate's autoscaled bill.
    assert cost[3] == pytest.approx(llama70b.best.monthly_cost_usd)
    # No traffic: the floor (1 replica) of the cheapest replica, all month: min over ranked of GPUs × $/h × 720 h.
    cheapest_replica = min(o.setup.gpus_per_replica * o.setup.gpu.price_usd_per_hour for o in llama70b.ranked)
    assert cost[0] == pytest.approx(cheapest_replica * HOURS_PER_MONTH)
    # Each level is the minimum over candidates of replica-months × mean replicas (none is cheaper).
    for level, usd in zip(replies, cost, strict=True):
        each = [
            o.setup.gpus_per_replica * o.setup.gpu.price_usd_per_hour * HOURS_PER_MONTH
            * DailyCurve(3.0).mean_replicas(level / 86_400, o.requests_per_s_per_replica, 1)
            for o in llama70b.ranked
        ]  # fmt: skip
        assert usd == pytest.approx(min(each))
    assert np.all(np.diff(cost) >= 0)  # more traffic never costs less
    # Ten times the traffic costs less than ten times as much (fuller replicas), but more than the same.
    assert cost[3] < cost[4] < 10 * cost[3]


def test_no_candidate_ranks_no_bill_against_traffic() -> None:
    nothing = plan(scenario(), Plan(gpu_ids=("l4",), tensor_parallel=(1,), weight_bits=(16,)))
    assert nothing.best is None and np.isnan(monthly_usd_at(nothing, [1e6])).all()


def test_a_plan_is_deterministic() -> None:
    spec = Plan(gpu_ids=("h100-sxm", "a100-40gb"), tensor_parallel=(2, 4), weight_bits=(8, 4))
    assert plan(scenario(), spec) == plan(scenario(), spec)


def test_a_plan_without_frontiers_ranks_the_same_and_draws_any_frontier_on_demand(llama70b: CapacityPlan) -> None:
    lean = plan(scenario(), SMALL, RequestLengths(1000, 500, 0.8), frontiers=False)
    # Same candidates, same order, same fleets and bills: the frontier never enters the ranking.
    strip = [replace(o, frontier=None) for o in llama70b.options]
    assert list(lean.options) == strip
    for full, thin in zip(llama70b.options, lean.options, strict=True):
        assert frontier(lean, thin) == full.frontier  # computed now, the same closed loop
    # Asked for all at once (a page at targets nothing meets looks at every candidate's), they are
    # built in one pass (`closed_loops`): the same frontiers still.
    leaner = plan(scenario(), SMALL, RequestLengths(1000, 500, 0.8), frontiers=False)
    assert frontiers(leaner, leaner.options) == [full.frontier for full in llama70b.options]
    assert sum(f is not None for f in frontiers(leaner, leaner.options)) > 3


def test_one_search_serves_any_traffic(llama70b: CapacityPlan) -> None:
    # Replies a day, the peak ratio and the floor only size and price the fleet (steps 4-5): a plan
    # at other traffic from the search behind llama70b equals that plan searched afresh, option for
    # option (the same goodputs, the same open-loop points, the same ranking).
    lengths = RequestLengths(1000, 500, 0.8)
    searched = search(scenario(replies=2_000_000), SMALL, lengths, frontiers=False)
    quieter, peakier = scenario(replies=300_000), replace(SMALL, peak_to_average=5.0, min_replicas=2)
    reused = plan(quieter, peakier, lengths, searched=searched)
    afresh = plan(quieter, peakier, lengths, frontiers=False)
    assert reused.options == afresh.options
    # And the traffic did change the fleet: fewer GPUs at 300,000 × 5 than at 2,000,000 × 3 (69.4/s)
    # (the cheapest option may be another GPU count per replica, so compare GPUs, not replicas).
    assert reused.best is not None and llama70b.best is not None
    assert reused.peak_requests_per_s == pytest.approx(300_000 / 86_400 * 5)  # 17.36 requests/s
    assert reused.best.replicas_at_peak is not None and llama70b.best.replicas_at_peak is not None

    def gpus_at_peak(option):
        return option.replicas_at_peak * option.setup.gpus_per_replica

    assert gpus_at_peak(reused.best) < gpus_at_peak(llama70b.best)


def test_a_search_for_other_inputs_is_refused() -> None:
    lengths = RequestLengths(1000, 500)
    searched = search(scenario(), SMALL, lengths, frontiers=False)
    with pytest.raises(ValueError, match="searched: that search was for another"):
        plan(scenario(), SMALL, RequestLengths(1000, 600), searched=searched)  # other lengths
    with pytest.raises(ValueError, match="searched"):
        plan(scenario(), replace(SMALL, tokens_per_s_per_user=40.0), lengths, searched=searched)  # another target
    with pytest.raises(ValueError, match="searched"):
        plan(scenario("llama-3.1-8b"), SMALL, lengths, searched=searched)  # another model


def test_a_gpu_discount_scales_every_self_hosted_dollar(llama70b: CapacityPlan) -> None:
    # 40 % off the on-demand $/GPU-hour: every fleet costs 0.6× as much (price × GPUs × hours × replicas),
    # and $ per million tokens too; the fleets themselves (goodput, replicas) and the API's bill do not move.
    spec = replace(SMALL, gpu_discount=0.4)
    assert spec.gpu_usd_per_hour(presets.gpu("h100-sxm")) == pytest.approx(
        0.6 * presets.gpu("h100-sxm").price_usd_per_hour
    )
    off = plan(scenario(), spec, RequestLengths(1000, 500, 0.8))
    assert off.api_monthly_usd == llama70b.api_monthly_usd
    assert [o.setup for o in off.ranked] == [o.setup for o in llama70b.ranked]  # the same order: every cost × 0.6
    for cheap, full in zip(off.ranked, llama70b.ranked, strict=True):
        assert cheap.replicas_at_peak == full.replicas_at_peak
        assert cheap.monthly_cost_usd == pytest.approx(0.6 * full.monthly_cost_usd)
        assert cheap.monthly_cost_peak_usd == pytest.approx(0.6 * full.monthly_cost_peak_usd)
        assert cheap.usd_per_million_output_tokens == pytest.approx(0.6 * full.usd_per_million_output_tokens)
    levels = np.array([1e5, 2e6, 5e7])
    np.testing.assert_allclose(monthly_usd_at(off, levels), 0.6 * monthly_usd_at(llama70b, levels))
    best, full_best = off.best, llama70b.best
    assert best is not None and full_best is not None
    # Both frontiers at 0.6×: the one the search drew (at on-demand prices, billed by the plan) and one
    # computed afresh for a plan searched without frontiers.
    drawn, full_drawn = frontier(off, replace(best, frontier=None)), full_best.frontier
    assert drawn is not None and full_drawn is not None and full_drawn.usd_per_million_output_tokens is not None
    assert best.frontier is not None and best.frontier.usd_per_million_output_tokens is not None
    np.testing.assert_allclose(
        best.frontier.usd_per_million_output_tokens, 0.6 * np.array(full_drawn.usd_per_million_output_tokens)
    )
    np.testing.assert_allclose(
        drawn.usd_per_million_output_tokens, 0.6 * np.array(full_drawn.usd_per_million_output_tokens)
    )


def test_one_set_of_capabilities_serves_any_targets() -> None:
    # What fits, the lone request, the open loop and its capacity depend on no target: a search at
    # tighter targets from the capabilities evaluated for the defaults equals that search run afresh,
    # and the tighter targets did change it (a lower goodput or more candidates failing).
    lengths = RequestLengths(1000, 500)
    capable = capabilities(scenario(), SMALL, lengths, frontiers=False)
    tight = replace(SMALL, ttft_target_s=0.3, ttft_percentile=99, tokens_per_s_per_user=45.0)
    reused = search(scenario(), tight, lengths, capable=capable)
    afresh = search(scenario(), tight, lengths, frontiers=False)
    assert [c.option for c in reused.candidates] == [c.option for c in afresh.candidates]
    assert [c.capacity_per_s for c in reused.candidates] == [c.capacity_per_s for c in afresh.candidates]
    loose = search(scenario(), SMALL, lengths, capable=capable)  # its grids' states partly kept from `tight`'s
    assert _outcomes(loose) == _outcomes(search(scenario(), SMALL, lengths, frontiers=False))
    goodputs = [(a.option.requests_per_s_per_replica, b.option.requests_per_s_per_replica)
                for a, b in zip(reused.candidates, loose.candidates, strict=True)]  # fmt: skip
    assert all(t is None or (d is not None and t <= d) for t, d in goodputs)  # tighter never takes more
    assert sum(t is not None for t, _ in goodputs) < sum(d is not None for _, d in goodputs) or any(
        t is not None and d is not None and t < d for t, d in goodputs
    )
    with pytest.raises(ValueError, match="capable: those capabilities were for another"):
        search(scenario(), replace(SMALL, max_concurrency=64), lengths, capable=capable)  # another cap


def test_no_stage_reads_what_its_cache_key_resets() -> None:
    # The app caches each stage keyed on its inputs with what it does not read at their defaults
    # (`plan_capability.without`). So each stage's step for one candidate, called on the raw inputs
    # (not through `without`), must give the same answer whatever those fields hold: the pricing and
    # traffic, the rest of the workload, the weights' precision, the peak, floor and discount — and
    # for the capabilities, the targets too.
    lengths = RequestLengths(1000, 500, 0.8)
    here = scenario()
    elsewhere = replace(
        scenario(replies=7),
        workload=Workload(prompt_tokens=64, output_tokens=32, batch_size=4, gpu_count=2, cached_prompt_tokens=16),
        precision=replace(here.precision, weight_bits=8.0),
    )
    odd = replace(SMALL, peak_to_average=9.0, min_replicas=5, gpu_discount=0.5)
    odder = replace(odd, ttft_target_s=0.1, ttft_percentile=50, tokens_per_s_per_user=99.0)
    capable = _every_capability(here, SMALL, lengths, frontiers=True)
    others = _every_capability(elsewhere, odder, lengths, frontiers=True)
    assert len(capable) == len(others) == len(setups(here, SMALL))
    for one, other in zip(capable, others, strict=True):
        assert (one.option, one.alone_tokens_per_s, one.replica) == (
            other.option,
            other.alone_tokens_per_s,
            other.replica,
        )
    assert any(c.replica is not None for c in capable) and any(c.option.problem for c in capable)  # both kinds
    for one in capable:
        assert _every_searched(SMALL, (one,))[0].option == _every_searched(replace(odd, **{
            f: getattr(SMALL, f) for f in ("ttft_target_s", "ttft_percentile", "tokens_per_s_per_user")
        }), (one,))[0].option  # fmt: skip


def _outcomes(searched: Search) -> list[tuple[object, float]]:
    """Each candidate's option (problem, goodput, …) and capacity: what a search found, its open loops aside."""
    return [(c.option, c.capacity_per_s) for c in searched.candidates]


def test_a_search_at_targets_met_before_evaluates_no_state_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # The goodput search's grids depend on the setup alone, so their states are kept with the open loop
    # (`OpenLoopModel._grid_state`): searching the same targets again from the same capabilities computes
    # no grid, a search at new targets computes fewer rows than the first (the first passes are kept), and
    # both equal a fresh search. The open loops are built beforehand (their capacities evaluate
    # states too), so the rows counted are the searches' own (and a lone request's miss, one row).
    lengths = RequestLengths(1000, 500)
    capable = capabilities(scenario(), SMALL, lengths, frontiers=False)
    open_loops([c for c in capable.candidates if c.replica is not None])
    rows: list[int] = []
    real = OpenLoopModel._state

    def counted(self: OpenLoopModel, rates: np.ndarray):  # type: ignore[no-untyped-def]
        rows.append(len(rates))
        return real(self, rates)

    monkeypatch.setattr(OpenLoopModel, "_state", counted)
    first = search(scenario(), SMALL, lengths, capable=capable)
    fresh_rows = sum(rows)
    searched = sum(c.model is not None or c.option.problem == Problem.MISSES_TTFT for c in first.candidates)
    # At least the trickle beside the first grid's middle rate, then three more steps of its bisection.
    assert fresh_rows >= 5 * searched
    again = search(scenario(), SMALL, lengths, capable=capable)
    assert sum(rows) == fresh_rows and _outcomes(again) == _outcomes(first)
    tighter = replace(SMALL, ttft_target_s=0.8, tokens_per_s_per_user=33.0)
    reused = search(scenario(), tighter, lengths, capable=capable)
    assert 0 < sum(rows) - fresh_rows <= fresh_rows - 2 * searched  # the first step is never computed again
    monkeypatch.setattr(OpenLoopModel, "_state", real)
    assert _outcomes(reused) == _outcomes(search(scenario(), tighter, lengths, frontiers=False))
    kept = [c.model._grids for c in reused.candidates if c.model is not None]
    assert kept and max(len(grids) for grids in kept) <= GRIDS_KEPT
    # Each kept grid holds K-long arrays only: its own, or its rows of a pass's K-long arrays (a row
    # per setup searched, a few KB), never a (K, slots) array.
    for grids in kept:
        for held in grids.values():
            state, rows = (held[0], held[2] - held[1]) if isinstance(held, tuple) else (held, None)
            for f in state.__slots__:
                values = np.asarray(getattr(state, f))
                assert values.ndim == 1 and values.nbytes <= 8 * 17 * len(reused.candidates)
            assert rows is None or rows <= 17


def test_a_frontier_drawn_on_demand_is_built_once_for_every_plan_from_the_same_capabilities() -> None:
    # A page draws a few candidates' frontiers; at new targets or traffic it draws the same ones again.
    # The capability keeps what it built: the same object, equal to the closed loop computed afresh.
    lengths = RequestLengths(1000, 500)
    capable = capabilities(scenario(), SMALL, lengths, frontiers=False)
    one = plan(scenario(), SMALL, lengths, searched=search(scenario(), SMALL, lengths, capable=capable))
    tighter = replace(SMALL, ttft_target_s=0.8)
    other = plan(scenario(), tighter, lengths, searched=search(scenario(), tighter, lengths, capable=capable))
    option = next(o for o in one.options if o.max_running_per_replica is not None)
    same = next(o for o in other.options if o.setup == option.setup)
    drawn = frontier(one, option)
    assert drawn is not None and frontier(other, same) is drawn
    with_frontiers = plan(scenario(), SMALL, lengths)
    assert drawn == next(o for o in with_frontiers.options if o.setup == option.setup).frontier


@pytest.mark.parametrize("low_fraction", [1.0, 0.8])
def test_the_apis_price_per_output_token_follows_the_mean_reply(low_fraction) -> None:
    # The default prices, $0.50 in and $1.50 out per million, on 1,000 → 500 tokens. Drawn at 80-100 % the
    # mean reply is 0.9 × nominal: 900 × 0.5e-6 + 450 × 1.5e-6 = $0.001125 a reply over 450 output tokens is
    # still $2.50 per million (dividing by the nominal 500 gave $2.25); fixed, $0.00125 over 500 = $2.50.
    scenario = Scenario.from_flat({"model": "llama-3.1-8b", "gpu": "h100-sxm", "prompt": "1000", "out": "500"})
    result = plan(scenario, Plan(gpu_ids=("h100-sxm",), tensor_parallel=(1,), weight_bits=(8,)),
                  RequestLengths(1000, 500, low_fraction), frontiers=False)  # fmt: skip
    assert result.api_usd_per_million_output_tokens == pytest.approx(2.5, rel=1e-12)
