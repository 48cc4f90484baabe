"""The Compare page through the entry file (AppTest): the options in the link, core's figures in the
table, the cheapest said in words, a typed latency, and the pin."""

from __future__ import annotations

import pytest

from app.compare_charts import bills_against_traffic
from core.compare import THIS, Compared, compare
from core.crossings import Cheapest
from core.plan_spec import Plan
from core.scenario import Scenario

TRAFFIC = {"replies": "1000000", "prompt": "1000", "out": "300"}


def unescape(text: str) -> str:
    return text.replace("\\", "")


@pytest.fixture(scope="module")
def page(open_app):
    return open_app("compare", **TRAFFIC)  # the default three: gpt-4.1-mini, claude-haiku-4-5, Llama 3.1 8B on L4


def test_the_default_options_are_the_decision_a_pm_makes(page) -> None:
    table = page.main.dataframe[0].value
    assert list(table.index) == ["openai/gpt-4.1-mini", "anthropic/claude-haiku-4-5", "llama-3.1-8b on l4"]
    # gpt-4.1-mini $26,400 and haiku $75,000 a month (tests/core/test_compare.py derives them).
    assert table["USD per month"].iloc[:2].tolist() == pytest.approx([26_400, 75_000])
    assert table["latency (one reply)"].iloc[:2].tolist() == ["not estimated", "not estimated"]
    assert "likely latency" not in table.columns  # APIs and fleets carry no range: no blank column
    # What decides first, then the long names; what a fleet is (its GPUs per replica and weights) is listed
    # under the grid, whole (a grid cuts a long cell: "1 per replica," and the weights were past its edge).
    assert list(table.columns) == ["USD per month", "USD per reply", "latency (one reply)", "USD per year",
                                   "what it is"]  # fmt: skip
    notes = unescape(next(m.value for m in page.main.markdown if m.value.startswith("**How each option runs:**")))
    assert "- **llama-3.1-8b on l4**: " in notes and " per replica, weights in " in notes
    assert "- **openai/gpt-4.1-mini**: OpenAI's list prices" in notes
    # A fleet's reply is timed at its peak load, not as the Overview's lone request: the cell says so.
    assert table["latency (one reply)"].iloc[2].endswith(" at the peak")
    assert any(c.value.startswith("Cheapest is not the same as equivalent") for c in page.main.caption)
    fleet = compare(("llama-3.1-8b on l4",), Scenario.from_flat(TRAFFIC), Plan())[0]
    assert table["USD per month"].iloc[2] == pytest.approx(fleet.monthly_usd)
    # The fleet is the cheapest at a million replies a day: said first, in dollars.
    (success,) = page.main.success
    assert unescape(success.value).startswith(
        "At 1,000,000 replies a day the cheapest of these options is llama-3.1-8b on l4: $"
    )
    words = next(m.value for m in page.main.markdown if m.value.startswith("**By traffic:**"))
    assert "openai/gpt-4.1-mini is the cheapest up to" in unescape(words) and "llama-3.1-8b on l4" in unescape(words)
    assert len(page.get("plotly_chart")) == 2


def test_a_gpu_discount_bills_the_fleet_less_and_says_so(open_app) -> None:
    # discount=40: the self-hosted option costs 0.6× its on-demand bill, the APIs the same; the intro says so.
    at = open_app("compare", **TRAFFIC, discount="40")
    table = at.main.dataframe[0].value
    fleet = compare(("llama-3.1-8b on l4",), Scenario.from_flat(TRAFFIC), Plan())[0]
    assert table["USD per month"].iloc[2] == pytest.approx(0.6 * fleet.monthly_usd)
    assert table["USD per month"].iloc[:2].tolist() == pytest.approx([26_400, 75_000])
    assert "GPUs 40.0% off on-demand" in unescape(at.main.markdown[0].value)


def test_the_self_hosted_options_name_the_sidebars_engine(open_app) -> None:
    # On llama.cpp the same L4 fleet is many more replicas (four slots each): the intro and the option's
    # "what it is" say which engine the fleet was sized on, so a flipped verdict has its reason on the page.
    at = open_app("compare", **TRAFFIC, engine="llama.cpp", gpu="l4")
    intro = unescape(at.main.markdown[0].value)
    assert "served by the sidebar's engine, llama.cpp (NVIDIA, Intel, AMD Instinct), at its targets" in intro
    table = at.main.dataframe[0].value
    assert table["what it is"].iloc[2].endswith("self-hosted on llama.cpp (NVIDIA, Intel, AMD Instinct)")
    assert table.columns[0] == "USD per month"  # the bill first: a phone shows the option and a column or two
    # The lesson's toy GPU leaves the engine on auto, which is ideal physics there: the fleet is sized on
    # the typical engine, as the Capacity plan searches it, and the intro says why in the plan's words.
    typical = open_app("compare", **TRAFFIC)
    assert (
        "served by the typical engine (the sidebar's automatic choice is the lesson's ideal physics, which no real "
        "server reaches), at" in unescape(typical.main.markdown[0].value)
    )


def test_ideal_physics_chosen_in_the_sidebar_sizes_the_plans_fleet(open_app) -> None:
    # engine=ideal on a real GPU: the Capacity plan searches ideal physics, so Compare's fleet is that
    # fleet (core's compare on "ideal"), not the typical engine's, and it says so.
    query = {**TRAFFIC, "gpu": "h100-sxm", "engine": "ideal"}
    at = open_app("compare", **query)
    assert "served by the sidebar's engine, ideal physics (the lesson's), at" in unescape(at.main.markdown[0].value)
    table = at.main.dataframe[0].value
    scenario = Scenario.from_flat(query)
    ideal = compare(("llama-3.1-8b on l4",), scenario, Plan(), engine_id="ideal")[0]
    typical = compare(("llama-3.1-8b on l4",), scenario, Plan(), engine_id="typical")[0]
    assert ideal.monthly_usd is not None and typical.monthly_usd is not None
    assert ideal.monthly_usd < typical.monthly_usd  # the two fleets differ, so the table says which it shows
    assert table["USD per month"].iloc[2] == pytest.approx(ideal.monthly_usd)
    assert table["what it is"].iloc[2].endswith("self-hosted on ideal physics (the lesson's)")


def test_a_typed_latency_shows_as_measured(open_app) -> None:
    at = open_app("compare", **TRAFFIC, lat1="850")
    table = at.main.dataframe[0].value
    assert table["latency (one reply)"].iloc[0] == "850.00 ms (measured)"  # as every duration is shown
    assert unescape(at.number_input(key="lat1").label) == "Measured latency of openai/gpt-4.1-mini (ms)"
    assert "lat3" not in {w.key for w in at.sidebar.number_input}  # option 3 is self-hosted: estimated


def test_pinning_holds_the_scenario_against_its_edit(open_app) -> None:
    at = open_app("compare", **TRAFFIC, cmp="openai/gpt-4.1-mini")
    at.button[0].click().run()  # "Pin this scenario": the lesson's prices, 1,000 → 300 tokens
    at.number_input(key="out").set_value(600).run()  # the edit: twice the reply
    table = at.main.dataframe[0].value
    assert list(table.index) == ["openai/gpt-4.1-mini", "pinned scenario", THIS]
    # Lesson prices: pinned 1,000 × 0.5 + 300 × 1.5 = $0.00095 a reply; edited 1,000 × 0.5 + 600 × 1.5 = $0.0014.
    assert table["USD per reply"].iloc[1:].tolist() == pytest.approx([0.00095, 0.0014])
    # The lesson's ideal physics is exact, so no range: the column stays out (an engine's scenario has one).
    assert "likely latency" not in table.columns
    assert at.text_input(key="pinned").value == "prompt=1000&out=300&replies=1000000"  # its short link


def test_a_pasted_link_is_read_as_a_link_and_a_bad_option_warns(open_app) -> None:
    at = open_app("compare", **TRAFFIC, cmp="pinned scenario", pinned="https://x.example/?out=abc&model=llama-3.1-8b")
    warnings = unescape(" ".join(w.value for w in at.warning))
    assert "Pinned scenario: Ignored out=abc" in warnings
    assert at.text_input(key="pinned").value == "model=llama-3.1-8b"  # cleaned: the readable part kept
    # A whole shared link pasted: its page inputs (the lesson's sim, a Compare's options) are no part of
    # a scenario, and are named rather than dropped without a word.
    whole = open_app("compare", **TRAFFIC, cmp="pinned scenario", pinned="/latency?sim=part3&cmp=x&out=400")
    assert (
        "Pinned scenario: ignored sim=part3, cmp=x, each a page's own setting, which a pinned scenario does not hold."
        in (unescape(" ".join(w.value for w in whole.warning)))
    )
    assert whole.text_input(key="pinned").value == "out=400"
    bad = open_app("compare", **TRAFFIC, cmp="openai/no-such-model")
    assert "Ignored openai/no-such-model in cmp" in unescape(" ".join(w.value for w in bad.warning))


def test_the_share_link_carries_the_options(open_app) -> None:
    at = open_app("compare", **TRAFFIC, cmp="openai/gpt-4.1-mini,llama-3.1-8b on h100-sxm", lat1="900")
    at.session_state["sb_share_open"] = True
    at.run()
    query = at.sidebar.code[0].value.split("?", 1)[1].split("&")
    assert {"cmp=openai%2Fgpt-4.1-mini", "cmp=llama-3.1-8b+on+h100-sxm", "lat1=900"} <= set(query)


def test_where_the_cheapest_changes_is_labelled_clear_of_your_traffic_line() -> None:
    # Two priced options and, made up for the test, a change of the cheapest at 22,000 replies a day
    # (the figure draws what `changes` says). With your traffic at 100,000 (under a
    # decade to the right) the "22,000" label sits left of its dashed line, clear of your dotted one;
    # with your traffic at 1,000,000 or 1,000 it sits right of it.
    options = [
        Compared("a", "api", "a", 0.001, 3000.0, None, None),
        Compared("b", "api", "b", 0.0005, 1500.0, None, None),
    ]
    changes = [Cheapest("a", 100.0, 22_000.0), Cheapest("b", 22_000.0, 1e7)]

    def label(traffic: float):
        fig = bills_against_traffic(options, traffic, 30, changes)
        (note,) = fig.layout.annotations
        assert note.text == "22,000" and note.x == pytest.approx(4.3424, abs=1e-4)  # log10(22,000)
        return note

    assert label(100_000).xanchor == "right" and label(100_000).xshift < 0
    assert label(1_000_000).xanchor == "left" and label(1_000).xanchor == "left"


def test_a_fleet_that_cannot_run_is_said_in_words_not_left_as_empty_cells(open_app) -> None:
    # Llama 3.1 405B on L4s: 24 GB cards, 8 at most per replica, against 228 GB of weights even at
    # 4 bits, so no setup fits and the option has no bill. The table keeps the options with a bill
    # (st.dataframe would print "None" in the others' money cells); a warning under it names the
    # option and the nearest setup's reason (tests/core/test_compare.py derives the figures).
    at = open_app("compare", **TRAFFIC, cmp="openai/gpt-4.1-mini,llama-3.1-405b on l4")
    table = at.main.dataframe[0].value
    assert list(table.index) == ["openai/gpt-4.1-mini"] and table["USD per month"].iloc[0] == pytest.approx(26_400)
    (warning,) = [w for w in at.main.warning if "no fleet" in unescape(w.value)]
    assert unescape(warning.value) == (
        "llama-3.1-405b on l4: no fleet. None of 12 setups meets the targets; the largest, NVIDIA L4 24GB, TP 8, "
        "4-bit int4: 228.3 GB of weights exceed the 147.0 GB the typical engine may use on 8 × 24 GB."
    )


def test_the_sidebars_api_and_model_are_offered_and_added_first(open_app) -> None:
    # A PM who chose GPT-4o (and an engineer Llama 3.1 70B on an H100) finds them offered, not silently
    # absent: one press puts them first, the default options after them, up to four.
    at = open_app("compare", **TRAFFIC, api="openai/gpt-4o", model="llama-3.1-70b", gpu="h100-sxm")
    (offer,) = [unescape(i.value) for i in at.main.info]
    assert offer == "The sidebar's choice is not compared yet: openai/gpt-4o, llama-3.1-70b on h100-sxm."
    next(b for b in at.main.button if b.label == "Compare them").click().run()
    table = at.main.dataframe[0].value
    assert list(table.index) == [
        "openai/gpt-4o",
        "llama-3.1-70b on h100-sxm",
        "openai/gpt-4.1-mini",
        "anthropic/claude-haiku-4-5",
    ]
    # GPT-4o's list prices $2.50 in, $10 out: 1,000 × 2.5e-6 + 300 × 1e-5 = $0.0055 a reply × 1e6 × 30.
    assert table["USD per month"].iloc[0] == pytest.approx(165_000)
    assert not at.main.info


def test_a_scenario_option_on_an_engine_brings_its_likely_range(open_app) -> None:
    at = open_app("compare", **TRAFFIC, cmp=f"openai/gpt-4.1-mini,{THIS}", model="llama-3.1-8b", gpu="h100-sxm",
                  engine="vllm")  # fmt: skip
    table = at.main.dataframe[0].value
    assert table["likely latency"].tolist()[0] == "" and " to " in table["likely latency"].tolist()[1]


def test_4_bit_maths_in_the_sidebar_leave_the_default_fleet_comparable(open_app) -> None:
    # The sidebar's B200 runs 4-bit maths; the default L4 option has none: it is sized at its own precisions.
    at = open_app("compare", **TRAFFIC, gpu="b200", wbits="4.5", cbits="4")
    assert not at.exception
    assert at.main.dataframe[0].value["USD per month"].iloc[2] > 0


def test_the_default_scenario_can_be_pinned(open_app) -> None:
    # Its short link is empty, and an empty pin had read as none: "nothing is pinned: press 'Pin this
    # scenario' first", just after pressing it. Its model's id now holds it, by the button or a link.
    at = open_app("compare")
    at.button[0].click().run()
    assert at.text_input(key="pinned").value == "model=toy-7b"
    assert not [w for w in at.warning if "nothing is pinned" in w.value]
    assert "pinned scenario" in list(at.main.dataframe[0].value.index)
    linked = open_app("compare", cmp="pinned scenario", pinned="/?out=500&model=toy-7b")
    assert linked.text_input(key="pinned").value == "model=toy-7b" and not linked.warning


def test_a_key_twice_in_the_pinned_link_and_a_fifth_option_are_said(open_app) -> None:
    # Both were dropped without a word: the pinned link's first out=100, and a fifth option the select
    # cannot hold (at most four).
    at = open_app("compare", cmp="pinned scenario", pinned="out=100&out=200")
    said = unescape(" ".join(w.value for w in at.warning))
    assert "Pinned scenario: out is given 2 times (100, 200): using the last, 200." in said
    five = ["this scenario", "openai/gpt-4.1-mini", "anthropic/claude-haiku-4-5", "llama-3.1-8b on l4",
            "llama-3.1-8b on h100-sxm"]  # fmt: skip
    at = open_app("compare", cmp=",".join(five))
    assert "cmp: at most 4 options; ignored llama-3.1-8b on h100-sxm." in unescape(
        " ".join(w.value for w in at.warning)
    )
    assert list(at.main.dataframe[0].value.index)[:4] == five[:4]


def test_one_option_is_not_called_the_cheapest(open_app) -> None:
    # "The cheapest of these options is pinned scenario" and "cheapest at every traffic shown" compared it
    # with nothing. At the lesson's prices: 1,000,000 × 30 × (1,000 × 0.5 + 300 × 1.5) / 1e6 = $28,500 a month.
    at = open_app("compare", **TRAFFIC, cmp="this scenario")
    (said,) = [i.value for i in at.info if "Only one option" in i.value]
    assert unescape(said).startswith("Only one option has a bill: this scenario, $28,500 a month ($0.000950 a reply)")
    assert not [s for s in at.success if "cheapest" in s.value]
    assert not [m for m in at.markdown if "By traffic" in m.value]
    assert not [c for c in at.caption if "Dashed" in c.value]
