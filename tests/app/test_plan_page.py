"""The Capacity plan page through the entry file (AppTest): the plan's inputs in the link, the
recommendation and the bills equal core's plan for the same inputs, every candidate accounted for."""

from __future__ import annotations

import pytest

from app import formatting as fmt
from core.cli.plan_report import recommendation
from core.lengths import RequestLengths
from core.plan import plan
from core.plan_spec import Plan
from core.scenario import Scenario

# Llama 3.1 70B, 1,000 → 500 tokens, 2 M replies a day; two GPUs × TP 1/2/4 × 8-bit: 6 candidates.
LINK = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "replies": "2000000", "prompt": "1000", "out": "500"}
SMALL = {"cands": "h100-sxm,h200", "tp": "1,2,4", "wlist": "8"}


def core_plan(**spec: object):
    scenario = Scenario.from_flat(LINK)  # h100-sxm with the automatic engine: the typical one
    return plan(scenario, Plan(**({"gpu_ids": ("h100-sxm", "h200"), "tensor_parallel": (1, 2, 4),
                                   "weight_bits": (8,)} | spec)), RequestLengths(1000, 500))  # fmt: skip


def unescape(text: str) -> str:
    return text.replace("\\", "")


def searched(at) -> str:
    """The caption that says what the search ran on."""
    (text,) = [unescape(c.value) for c in at.caption if c.value.startswith("Searched on")]
    return text


@pytest.fixture(scope="module")
def page(open_app):
    return open_app("plan", **LINK, **SMALL)


def test_the_recommendation_and_the_bills_are_cores(page) -> None:
    expected = core_plan()
    best = expected.best
    assert best is not None and len(expected.options) == 6  # 2 GPUs × 3 sizes × 1 precision
    (success,) = page.success
    assert unescape(success.value) == recommendation(expected)
    shown = {m.label: m.value for m in page.metric}
    assert shown == {
        "Self-hosted, autoscaled": fmt.usd(best.monthly_cost_usd),
        "Sized for the peak": fmt.usd(best.monthly_cost_peak_usd),
        # 1,000 × $0.5 + 500 × $1.5 per million = $0.00125 a reply × 2 M × 30 days = $75,000.
        "The API": "$75,000",
        "GPUs at the peak": fmt.count(best.total_gpus_at_peak),
    }


def test_a_precision_other_than_the_sidebars_is_said(page, open_app) -> None:
    # The sidebar's Llama 3.1 70B is 16-bit; the search's only width here is 8: the cheapest fleet quantises.
    said = [unescape(c.value) for c in page.caption if c.value.startswith("The plan")]
    assert said == [
        "The plan's weights are 8-bit, not the sidebar's 16-bit: it tries each precision in its list, each for every "
        "weight. Fewer bits per weight can cost some answer quality, which this tool does not measure. To keep "
        "16-bit, list only it under 'Weight precisions'."
    ]
    same = open_app("plan", **LINK, **SMALL, wbits="8")  # the sidebar at 8-bit as well: nothing to say
    assert not [c for c in same.caption if c.value.startswith("The plan")]


def test_the_traffic_and_targets_in_words(page) -> None:
    # 2,000,000 / 86,400 s = 23.15 requests/s; × 3 = 69.44 at the peak; the defaults p95 ≤ 1 s, 30 tokens/s.
    text = unescape(page.markdown[0].value)
    assert "23.15 requests/s on average and 69.44 at the 3× peak" in text
    assert "p95 TTFT ≤ 1.00 s, at least 30 tokens/s per user" in text


def test_every_candidate_is_in_the_tables_and_the_csv(open_app) -> None:
    expected = core_plan()
    page = open_app("plan", **LINK, **SMALL)
    assert len(page.dataframe) == 1  # the failures' table is drawn only once its expander is opened
    page.session_state["plan_failures_open"] = True
    page.run()
    ranked, failed = page.dataframe[0].value, page.dataframe[1].value
    assert len(ranked) == len(expected.ranked) and len(failed) == len(expected.failures)
    assert list(ranked["GPU"]) == [o.setup.gpu.name for o in expected.ranked]  # cheapest first
    # Each candidate's setup in words, as the frontier's legend names it: "h200, TP 2, 8-bit".
    assert list(ranked["setup"]) == [
        f"{o.setup.gpu.id}, TP {o.setup.gpus_per_replica}, {o.setup.precision_name}" for o in expected.ranked
    ]
    assert set(failed["why not"]) <= {"does not fit", "cannot split", "too slow to stream", "misses TTFT"}
    # The CSV's content is plan_charts.csv_table (tests/app/test_plan_charts.py); here, that it is offered.
    assert [b.proto.label for b in page.main.get("download_button")] == ["Download every candidate (CSV)"]


def test_a_list_in_the_link_narrows_the_search_and_a_bad_one_warns(open_app) -> None:
    at = open_app("plan", **LINK, cands="h200", tp="2,3", wlist="8")  # 3 is not a tensor-parallel size
    expected = core_plan(gpu_ids=("h200",), tensor_parallel=(2,))
    assert unescape(at.success[0].value) == recommendation(expected)
    warnings = " ".join(w.value for w in at.warning)
    assert "Ignored 3 in tp" in unescape(warnings)
    assert at.multiselect(key="tp").value == ["2"]


def test_the_automatic_engine_on_the_lessons_toy_gpu_plans_on_the_typical_engine(open_app) -> None:
    at = open_app("plan", **{**LINK, "gpu": "toy"}, **SMALL)
    assert "Searched on the typical engine" in searched(at)
    assert unescape(at.success[0].value) == recommendation(core_plan())  # the same search as on h100-sxm


def test_the_lessons_toy_models_verdict_is_qualified_and_not_green(open_app, page) -> None:
    # The default scenario's toy 7B has no attention shape: its fleet is what memory never limits, so
    # "self-hosting saves" against an API's real model would mislead a product manager who never set one.
    toy = open_app("plan", **SMALL)
    assert not toy.main.success
    (headline,) = [unescape(i.value) for i in toy.main.info]
    # The caveat before the saving, not after it: a product manager read "self-hosting saves" first.
    assert headline.startswith(
        "For the lesson's toy model, which has no KV cache (memory never fills its replicas, so a real model's "
        "fleet is larger: pick the model you would run before comparing): "
    )
    assert page.main.success and "no KV cache" not in unescape(page.main.success[0].value)  # Llama 3.1 70B


def test_the_search_names_the_sidebars_engine_in_words(open_app) -> None:
    # "Searched on vLLM (the sidebar's)", not the id in "the vllm engine".
    at = open_app("plan", **LINK, **SMALL, engine="vllm")
    assert "Searched on vLLM (the sidebar's), " in searched(at)


def test_targets_no_candidate_meets_say_why(open_app) -> None:
    at = open_app("plan", **LINK, **SMALL, ttft="1")  # p95 TTFT ≤ 1 ms: no prefill is that fast
    (warning,) = [w for w in at.warning if "No candidate" in w.value]
    assert unescape(warning.value) == recommendation(core_plan(ttft_target_s=0.001))
    assert "misses TTFT" in unescape(warning.value)


def test_the_share_link_carries_the_plans_inputs_one_parameter_per_item(open_app) -> None:
    at = open_app("plan", **LINK, cands="h200", tp="2,4", ttft="500")
    at.session_state["sb_share_open"] = True
    at.run()
    (code,) = at.sidebar.code
    query = code.value.split("?", 1)[1].split("&")
    # The link repeats a list's key (what the multiselect binds to); the comma form (core's) reads the same.
    assert {"cands=h200", "tp=2", "tp=4", "ttft=500"} <= set(query)
    assert not any(part.startswith("wlist") for part in query)  # at its default: left out


@pytest.mark.parametrize("held", [{}, {"tp": "2,4"}])
def test_leaving_the_page_keeps_its_inputs_offscreen(open_app, held) -> None:
    # The frame draws another page's inputs out of sight only while they hold a value (a list's too).
    at = open_app("plan", **LINK, **held)
    at.switch_page("app/app_pages/overview.py").run()
    assert not at.exception
    keys = {w.key for w in at.sidebar.multiselect}
    assert keys == ({"tp"} if held else set())
    if held:
        assert at.multiselect(key="tp").value == ["2", "4"]


def test_a_gpu_discount_in_the_link_lowers_the_fleets_bill(open_app) -> None:
    # discount=40 (shown in %, 0.4 in core): the fleet's bills are 0.6× the on-demand ones, the API's stays
    # $75,000, and the caption says where the prices come from.
    at = open_app("plan", **LINK, **SMALL, discount="40")
    expected, on_demand = core_plan(gpu_discount=0.4), core_plan()
    assert expected.best is not None and on_demand.best is not None
    assert expected.best.monthly_cost_usd == pytest.approx(0.6 * on_demand.best.monthly_cost_usd)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Self-hosted, autoscaled"] == fmt.usd(expected.best.monthly_cost_usd)
    assert shown["The API"] == "$75,000"
    assert at.number_input(key="discount").value == 40
    assert any("less the 40.0% discount asked" in c.value for c in at.caption)


def test_the_sidebars_own_gpu_is_said_beside_a_cheaper_one(open_app) -> None:
    # The sidebar's 2 × H100; the cheapest fleet is on H200s. An engineer was told of the H200s alone: now also
    # the cheapest on H100s, its place in the table and its bill, from the same plan (core_plan's ranked rows).
    result = core_plan()
    mine = next(o for o in result.ranked if o.setup.gpu.id == "h100-sxm")
    at = open_app("plan", **LINK, **SMALL)
    (note,) = [n for n in (unescape(c.value).replace("\\", "") for c in at.main.caption) if "sidebar's GPU" in n]
    assert result.best.setup.gpu.id == "h200"
    assert note == (
        f"On the sidebar's GPU, NVIDIA H100 SXM 80GB: {mine.total_gpus_at_peak} GPUs at the peak (2 GPUs per replica, "
        f"weights in 8-bit), ${mine.monthly_cost_usd:,.0f} a month autoscaled, rank 3 of {len(result.ranked)}."
    )
    # Not said when the cheapest is the sidebar's own GPU.
    other = open_app("plan", **{**LINK, "gpu": "h200"}, **SMALL)
    assert not [c for c in other.main.caption if "On the sidebar's GPU" in unescape(c.value).replace("\\", "")]


def test_the_api_beside_the_fleet_is_named_with_where_its_prices_come_from(open_app) -> None:
    # "The API is $14,816 a month cheaper" at the lesson's illustrative prices read as a finding about a
    # real API: the caption says they were typed by hand ($0.500 in, $1.50 out: the defaults).
    text = searched(open_app("plan", model="llama-3.1-8b", gpu="l4"))
    assert text.endswith(
        "The API: Prices typed by hand ($0.500 in, $1.50 out per million tokens; the lesson's illustrative "
        "prices unless you changed them). Pick an API model in the sidebar for its real list prices."
    )


def test_gpt_oss_as_shipped_is_the_4_bit_candidate_and_a_16_bit_fleet_is_said_to_differ(open_app) -> None:
    # A 16-bit fleet stores the experts at 16 bits too: not the sidebar's bf16 beside MXFP4 experts.
    at = open_app("plan", model="gpt-oss-120b", gpu="h100-sxm", wlist="16")
    said = [unescape(c.value) for c in at.caption if c.value.startswith("The plan")]
    # 116.83 B weights × 16 / 8 = 233.66 GB; as shipped 2.13 B × 16 / 8 + 114.7 B × 4.25 / 8 = 65.19 GB.
    assert said and said[0] == (
        "The plan's fleet stores every weight at 16 bits, the experts too (233.66 GB), where the sidebar's model "
        "keeps its experts at 4.25 bits (65.19 GB). Its 4-bit candidates keep that split: add 4 under 'Weight "
        "precisions' to include them."
    )
    # Listed alone, 4 is gpt-oss as shipped: nothing to say, and the table names the split.
    shipped = open_app("plan", model="gpt-oss-120b", gpu="h100-sxm", wlist="4", cands="h100-sxm")
    assert not [c for c in shipped.caption if c.value.startswith("The plan")]
    table = shipped.main.dataframe[0].value
    assert {setup.split(", ")[-1] for setup in table["setup"]} == {"16-bit (experts 4.25-bit)"}
