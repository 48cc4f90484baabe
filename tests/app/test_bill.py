"""The Monthly bill page (AppTest): the lesson's Part 3 bill, short vs long, and self-hosting."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

PAGE = "app/app_pages/bill.py"
LLAMA_70B_FP8 = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "engine": "typical"}


def metrics(at: AppTest) -> dict[str, tuple[str, str]]:
    return {m.label: (m.value, m.delta) for m in at.main.metric}


def test_the_defaults_are_the_lessons_part_3(open_app) -> None:
    at = open_app(PAGE)
    shown = metrics(at)
    # 200 × $0.50/M = $0.000100; 500 × $1.50/M = $0.000750; $0.000850 × 100,000 × 30 = $2,550; × 12.
    assert shown["Input per reply"][0] == "$0.000100"
    assert shown["Cached input per reply"][0] == "$0"
    assert shown["Output per reply"][0] == "$0.000750"
    assert shown["Cost per reply"][0] == "$0.000850"
    assert shown["Monthly bill"][0] == "$2,550"
    assert shown["Yearly bill"][0] == "$30,600"
    # Short (50) vs long (500): 9.33 + 50 × 7 = 359.33 ms vs 3,509.33 ms → 9.77x;
    # $0.000100 + 50 × $1.5e-6 = $0.000175 vs $0.000850 → 4.86x.
    # One unit for both (issue 10: not "3.51 s vs 359.33 ms"); the ratio is the headline.
    assert shown["Latency, 500 vs 50 tokens"] == ("9.8x", "3.51 s vs 0.36 s")
    assert shown["Cost per reply, 500 vs 50 tokens"] == ("4.9x", "$0.000850 vs $0.000175")
    # The lab's ±5 % jitter draws 9.72x for the same pair (tests/data/reference_run.txt): said beside the 9.8x.
    assert any("without jitter" in c.value and "measures 9.7x the latency" in c.value for c in at.main.caption)
    assert "estimate the output tokens first" in at.main.info[0].value
    assert len(at.get("plotly_chart")) == 2


def test_the_labs_jitter_is_said_only_on_the_labs_machine(open_app) -> None:
    # The 9.7x the lab measures is the toy model's on the lesson's GPU: beside Llama 3.1 70B it is noise.
    at = open_app(PAGE, model="llama-3.1-70b", gpu="h100-sxm", gpus="2", wbits="8")
    assert not any("without jitter" in c.value for c in at.main.caption)
    assert "Latency, 500 vs 50 tokens" in metrics(at)
    # ... and its two lengths: at a short reply of 100 (the card's "500 vs 100 tokens 4.9x") or a 300-token
    # reply, "its 500- vs 50-token replies measure 9.7x" beside it read as a contradiction.
    for link in ({"short": "100"}, {"out": "300"}):
        assert not any("without jitter" in c.value for c in open_app(PAGE, **link).main.caption), link


def test_the_latencies_beside_an_apis_prices_say_whose_they_are(open_app) -> None:
    # GPT-4o's prices bill the replies; the 500- vs 50-token latencies are the sidebar's self-hosted model's.
    at = open_app(PAGE, api="openai/gpt-4o", model="llama-3.1-70b", gpu="h100-sxm", gpus="2", wbits="8")
    captions = [c.value.replace("\\", "") for c in at.main.caption]
    assert (
        "The latencies are Llama 3.1 70B on 2 × NVIDIA H100 SXM 80GB, as set under 'Self-hosting' in the "
        "sidebar, not openai/gpt-4o's (the tool does not estimate an API's speed)." in captions
    )


def test_the_latencies_of_a_setup_that_cannot_run_say_so(open_app) -> None:
    # 16-bit Llama 3.1 70B (141 GB) on one 80 GB A100: the Overview says its times are "as if it did" fit.
    at = open_app(PAGE, model="llama-3.1-70b", gpu="a100-80gb-sxm")
    captions = [c.value.replace("\\", "") for c in at.main.caption]
    assert any(c.endswith("It does not fit in memory (said above): they are as if it did, not what a server would run.")
               for c in captions)  # fmt: skip
    fits = open_app(PAGE, model="llama-3.1-70b", gpu="h100-sxm", gpus="2", wbits="8")
    assert not any("does not fit" in c.value for c in fits.main.caption)


def test_the_tables_hold_the_numbers_and_download_as_csv(open_app) -> None:
    at = open_app(PAGE)
    split, pair = (frame.value for frame in at.main.dataframe)
    assert split.loc["output", "USD per month"] == pytest.approx(2250)  # 500 × 1.5e-6 × 3e6
    assert split.loc["input (uncached prompt)", "share of the bill"] == pytest.approx(0.1 / 0.85)
    assert list(split.columns[:2]) == ["USD per month", "share of the bill"]  # the money first, for a phone
    assert list(pair.index) == ["short reply", "long reply"]
    assert pair["latency (ms)"].tolist() == pytest.approx([359.3333, 3509.3333], rel=1e-6)
    assert pair["USD per reply"].tolist() == pytest.approx([0.000175, 0.000850])
    labels = [str(b.proto.label) for b in at.main.get("download_button")]
    assert labels == ["Download the split (CSV)", "Download the comparison (CSV)"]


def test_the_short_reply_is_adjustable_and_kept_across_pages(open_app) -> None:
    at = open_app(PAGE)
    at.number_input(key="short").set_value(250).run()
    # 9.33 + 250 × 7 = 1,759.33 ms; 3,509.33 / 1,759.33 = 1.99x; $0.000475 vs $0.000850 = 1.79x.
    assert metrics(at)["Latency, 500 vs 250 tokens"] == ("2.0x", "3.51 s vs 1.76 s")
    assert metrics(at)["Cost per reply, 500 vs 250 tokens"] == ("1.8x", "$0.000850 vs $0.000475")
    at.switch_page("app/app_pages/overview.py").run()
    at.switch_page(PAGE).run()
    assert at.number_input(key="short").value == 250


def test_cached_prompt_tokens_are_billed_at_the_cached_price(open_app) -> None:
    at = open_app(PAGE, prompt="1000", cached="800", pcache="0.05")
    shown = metrics(at)
    # 200 uncached × $0.50/M = $0.000100; 800 cached × $0.05/M = $0.000040; + $0.000750 output.
    assert shown["Input per reply"][0] == "$0.000100"
    assert shown["Cached input per reply"][0] == "$0.0000400"  # three significant digits
    assert shown["Cost per reply"][0] == "$0.000890"


def _plan(link: dict[str, str], **spec: object):
    from core.lengths import RequestLengths
    from core.plan import plan
    from core.plan_spec import Plan
    from core.scenario import Scenario

    scenario = Scenario.from_flat(link)
    work = scenario.workload
    return plan(scenario, Plan(**spec), RequestLengths(work.prompt_tokens, work.output_tokens))


TRAFFIC = {**LLAMA_70B_FP8, "replies": "2000000", "prompt": "1000", "out": "500"}


def opened(at: AppTest) -> AppTest:
    """The fleet's section opened, as a click does (it runs the capacity plan only while open)."""
    at.session_state["bill_fleet_open"] = True
    return at.run()


def test_the_fleet_is_sized_only_when_its_section_is_opened(open_app) -> None:
    at = open_app(PAGE, **TRAFFIC)
    assert "Cheapest fleet, a month" not in metrics(at)
    assert any("Open to size the cheapest fleet" in c.value for c in at.main.caption)
    assert '"renting the plan' not in at.get("plotly_chart")[1].proto.spec  # the API's line only
    assert "renting the plan" in opened(at).get("plotly_chart")[1].proto.spec


def test_renting_shows_the_plans_cheapest_fleet_beside_the_api(open_app) -> None:
    from core.cli.plan_report import recommendation

    at = opened(open_app(PAGE, **TRAFFIC))
    best = _plan(TRAFFIC).best
    shown = metrics(at)
    assert shown["Cheapest fleet, a month"][0] == f"${best.monthly_cost_usd:,.0f}"
    # 1,000 × $0.5 + 500 × $1.5 per million = $0.00125 a reply × 2,000,000 × 30 days = $75,000.
    assert shown["The API, a month"][0] == "$75,000"
    assert any(c.value.replace("\\", "") == recommendation(_plan(TRAFFIC)) for c in at.main.caption)
    # At this traffic the fleet is far cheaper than $75,000: the sentence hands it the top of the range.
    sentence = next(m.value for m in at.main.markdown if "cheapest up to" in m.value).replace("\\", "")
    assert sentence.startswith("The API is the cheapest up to ") and "renting the plan's fleet" in sentence
    assert any("Capacity plan" in link.proto.label for link in at.main.get("page_link"))


def test_a_gpu_discount_bills_the_fleet_less_and_says_so(open_app) -> None:
    # discount=40 in the link: the cheapest fleet at 0.6× its on-demand bill (the same fleet), the API unchanged.
    at = opened(open_app(PAGE, **TRAFFIC, discount="40"))
    full, off = _plan(TRAFFIC).best, _plan(TRAFFIC, gpu_discount=0.4).best
    assert off.setup == full.setup and off.monthly_cost_usd == pytest.approx(0.6 * full.monthly_cost_usd)
    shown = metrics(at)
    assert shown["Cheapest fleet, a month"][0] == f"${off.monthly_cost_usd:,.0f}"
    assert shown["The API, a month"][0] == "$75,000"
    assert any("GPUs 40.0% off on-demand" in c.value for c in at.main.caption)


def test_targets_no_fleet_meets_say_so(open_app) -> None:
    at = opened(open_app(PAGE, **TRAFFIC, ttft="1"))  # p95 TTFT ≤ 1 ms: no prefill is that fast
    (info,) = [i for i in at.main.info if "No candidate meets every target" in i.value]
    assert "misses TTFT" in info.value.replace("\\", "") and "Loosen the targets" in info.value
    assert "Cheapest fleet, a month" not in metrics(at)


def test_the_lessons_toy_is_planned_on_the_typical_engine(open_app) -> None:
    at = opened(open_app(PAGE))
    assert any("searched on the typical engine" in c.value for c in at.main.caption)
    assert metrics(at)["Cheapest fleet, a month"][0].startswith("$")
