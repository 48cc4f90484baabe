"""The Capacity plan's figures and tables (app/plan_charts.py), called directly on a real plan."""

from __future__ import annotations

import json
import math

import pytest

from app import plan_charts, theme
from core import presets
from core.efficiency import efficiency_base
from core.lengths import RequestLengths
from core.plan import CapacityPlan, plan
from core.plan_spec import Plan
from core.scenario import Scenario
from core.specs import Pricing, Workload

MAX_JSON = 100_000


@pytest.fixture(scope="module")
def result() -> CapacityPlan:
    # Llama 3.1 70B on vLLM, 1,000 → 500 tokens, 2 M replies a day: H100, H200 and an unpriced GPU (MI300X).
    model = presets.model("llama-3.1-70b")
    scenario = Scenario(model=model, gpu=presets.gpu("h100-sxm"), efficiency=efficiency_base("vllm", model),
                        workload=Workload(prompt_tokens=1000, output_tokens=500), pricing=Pricing(replies_per_day=2_000_000))  # fmt: skip
    spec = Plan(gpu_ids=("h100-sxm", "h200", "mi300x"), tensor_parallel=(1, 2, 4), weight_bits=(16, 8))
    return plan(scenario, spec, RequestLengths(1000, 500))


def test_one_line_per_gpu_its_cheapest_ranked_candidate(result: CapacityPlan) -> None:
    shown = plan_charts.shown_options(result)
    assert len({o.setup.gpu.id for o in shown}) == len(shown)
    for option in shown:
        same_gpu = [o for o in result.ranked if o.setup.gpu.id == option.setup.gpu.id]
        if same_gpu:
            assert option == same_gpu[0]  # ranked cheapest first
        else:  # no ranked candidate (no price): the one with the highest throughput per GPU
            others = [o for o in result.failures if o.setup.gpu.id == option.setup.gpu.id and o.frontier]
            top = max(max(o.frontier.output_tokens_per_s_per_gpu) for o in others)
            assert max(option.frontier.output_tokens_per_s_per_gpu) == top


def test_a_plan_searched_without_frontiers_draws_the_same_lines(result: CapacityPlan) -> None:
    # The app searches without frontiers (half the time) and computes the few it draws.
    lean = plan(result.scenario, result.spec, result.lengths, frontiers=False)
    assert plan_charts.shown_options(lean) == plan_charts.shown_options(result)
    assert plan_charts.frontier(lean).to_plotly_json() == plan_charts.frontier(result).to_plotly_json()


def test_the_frontier_draws_each_candidates_closed_loop_the_target_and_the_chosen_point(result) -> None:
    fig = plan_charts.frontier(result)
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    shown = plan_charts.shown_options(result)
    assert len(lines) == len(shown)
    for trace, option, colour in zip(lines, shown, theme.SERIES, strict=False):
        assert list(trace.x) == pytest.approx(option.frontier.tokens_per_s_per_user)
        assert list(trace.y) == pytest.approx(option.frontier.output_tokens_per_s_per_gpu)
        assert trace.line.color == colour and trace.name.startswith(option.setup.gpu.id)
    diamonds = [t for t in fig.data if t.mode == "markers"]
    best = result.best
    assert [best.tokens_per_s_per_user, best.output_tokens_per_s_per_gpu] == pytest.approx(
        [diamonds[0].x[0], diamonds[0].y[0]]
    )
    (target,) = fig.layout.shapes
    assert target.x0 == target.x1 == 30  # the default 30 tokens/s per user
    assert len(json.dumps(fig.to_plotly_json(), default=str)) < MAX_JSON


def test_the_dollar_frontier_is_log_and_leaves_out_a_gpu_without_a_price(result) -> None:
    fig = plan_charts.frontier(result, dollars=True)
    assert fig.layout.yaxis.type == "log"
    names = [t.name for t in fig.data if t.mode == "lines+markers"]
    assert names and not any(name.startswith("mi300x") for name in names)
    h100 = next(o for o in plan_charts.shown_options(result) if o.setup.gpu.id == "h100-sxm")
    trace = next(t for t in fig.data if t.name.startswith("h100-sxm"))
    # $ per million = $/GPU-hour ÷ (tokens/s per GPU × 3,600) × 1e6, point by point.
    price = h100.setup.gpu.price_usd_per_hour
    expected = [price / (x * 3600) * 1e6 for x in h100.frontier.output_tokens_per_s_per_gpu]
    assert list(trace.y) == pytest.approx(expected)


def test_the_dollar_frontier_draws_the_apis_price_per_output_token(result) -> None:
    # The default prices, $0.50 in and $1.50 out per million: 1,000 × 0.5e-6 + 500 × 1.5e-6 = $0.00125 a
    # reply, over its 500 output tokens = $2.50 per million output tokens, prompts included.
    fig = plan_charts.frontier(result, dollars=True)
    (api,) = [s for s in fig.layout.shapes if s.xref == "paper"]
    assert (api.y0, api.y1) == (pytest.approx(2.5), pytest.approx(2.5))
    (label,) = [a for a in fig.layout.annotations if a.text.startswith("the API")]
    assert label.text == "the API: $2.50 per M output tokens" and label.bgcolor  # on a box: lines run under it
    assert fig.layout.yaxis.ticktext[fig.layout.yaxis.tickvals.index(0.5)] == "$0.5"  # not a bare "5"
    assert not [s for s in plan_charts.frontier(result).layout.shapes if s.xref == "paper"]  # tokens: no price
    # The target and the price are no option's colour: vermillion and orange had read as two more GPUs.
    from app import theme

    assert {s.line.color for s in fig.layout.shapes} == {theme.REFERENCE} and theme.REFERENCE not in theme.SERIES


def test_the_tables_account_for_every_candidate(result) -> None:
    ranked, failed, csv = (plan_charts.ranked_table(result), plan_charts.failures_table(result),
                           plan_charts.csv_table(result))  # fmt: skip
    assert len(ranked) + len(failed) == len(csv) == len(result.options) == 3 * 3 * 2
    assert list(ranked.index) == list(range(1, len(result.ranked) + 1))
    # The candidate in a few words, then the money, as a phone shows only the first columns, then what
    # shows it meets the targets; the setup reads as the charts' legends do; the $ per M tokens says it
    # is the peak's; the GPU's full name (long, and in the setup already) last.
    assert list(ranked.columns[:5]) == [
        "setup", "$ a month, autoscaled", "GPUs at peak", "tok/s per user", "TTFT at the percentile (ms)"
    ]  # fmt: skip
    assert ranked.columns[-1] == "GPU"
    best = result.ranked[0].setup
    assert ranked["setup"].iloc[0] == f"{best.gpu.id}, TP {best.gpus_per_replica}, {best.precision_name}"
    assert list(failed.columns) == ["setup", "why not", "details", "GPU"]
    assert "$ per M output tokens, at the peak's load" in ranked.columns
    costs = ranked["$ a month, autoscaled"].tolist()
    assert costs == sorted(costs) and costs[0] == pytest.approx(result.best.monthly_cost_usd)
    assert (failed["details"] != "").all()  # never dropped without a reason
    # The CSV: the CLI's JSON keys; rank 1.. for the ranked, empty for the rest.
    assert list(csv.columns[:3]) == ["rank", "gpu", "gpu_name"]
    assert csv["rank"].tolist()[: len(ranked)] == list(range(1, len(ranked) + 1))
    assert all(math.isnan(r) for r in csv["rank"].tolist()[len(ranked) :])


@pytest.mark.parametrize("dollars", [False, True])
def test_the_frontier_unvalidated_is_the_same_chart(result: CapacityPlan, dollars: bool, monkeypatch) -> None:
    # The server builds figures without plotly's validation (app.figures.VALIDATE): the frontier (up to
    # 16 traces, markers, shapes, an annotation, a log axis in dollars) sends the same JSON either way.
    # The bill against reply length too (stacked areas, the lesson's scenario).
    import plotly.io as pio

    from app import bill_charts, figures

    def both(build):  # type: ignore[no-untyped-def]
        monkeypatch.setattr(figures, "VALIDATE", True)
        checked = json.loads(pio.to_json(build(), validate=False))
        monkeypatch.setattr(figures, "VALIDATE", False)
        return checked, json.loads(pio.to_json(build(), validate=False))

    checked, fast = both(lambda: plan_charts.frontier(result, dollars=dollars))
    assert checked == fast and len(fast["data"]) >= 4
    checked, fast = both(lambda: bill_charts.bill_vs_reply_length(Scenario.lesson()))
    assert checked == fast and fast["data"]


def test_the_tables_key_names_only_the_formats_it_shows() -> None:
    # Under a gpt-oss table of 16-bit and shipped candidates it had explained NVFP4 and int4, shown nowhere,
    # and not '16-bit (experts 4.25-bit)'.
    from core.plan_spec import Plan
    from core.scenario import Scenario

    shipped = plan(Scenario.from_flat({"model": "gpt-oss-120b"}), Plan(gpu_ids=("h100-sxm",), weight_bits=(16, 4)))
    note = plan_charts.formats_note(shipped.ranked)
    assert "NVFP4" not in note and "int4" not in note
    assert (
        "'16-bit (experts 4.25-bit)' keeps the experts at 4.25 bits as the model ships them and every other weight at 16"
        in note
    )
    dense = plan(Scenario.from_flat({"model": "llama-3.1-8b"}), Plan(gpu_ids=("b200", "h100-sxm"), weight_bits=(4,)))
    assert "NVFP4 is Blackwell's 4-bit format, int4 a 4-bit format unpacked to 16-bit maths" in (
        plan_charts.formats_note(dense.ranked)
    )
