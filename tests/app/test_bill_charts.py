"""The bill page's pure figure and table builders (app/bill_charts.py), without Streamlit."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import bill_charts, theme
from core.estimate import estimate
from core.lengths import RequestLengths
from core.plan import monthly_usd_at, plan
from core.plan_spec import Plan
from core.scenario import Scenario
from core.specs import Pricing

LESSON = Scenario.lesson()
LLAMA = Scenario.from_flat(
    {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "engine": "typical"}
)
MAX_FIGURE_BYTES = 100_000


def trace(fig, name: str):
    return next(t for t in fig.data if t.name == name)


def test_reply_lengths_are_whole_tokens_from_one_past_twice_the_reply() -> None:
    m = bill_charts.reply_lengths(500)
    assert m[0] == 1 and m[-1] == 1000
    assert np.all(m == np.round(m)) and np.all(np.diff(m) > 0) and len(m) <= bill_charts.POINTS
    assert bill_charts.reply_lengths(5)[-1] == 100  # short replies still get a readable axis


def test_the_bill_against_reply_length_is_flat_input_plus_a_line_in_output() -> None:
    fig = bill_charts.bill_vs_reply_length(LESSON)
    assert [t.name for t in fig.data][:2] == ["input", "output"]  # no cached-input band without caching
    m = np.asarray(trace(fig, "input").x)
    # input: 200 × $0.50/M × 100,000 × 30 = $300 a month whatever the reply; output: $1.50/M × 3e6 = $4.50 per token.
    assert np.allclose(trace(fig, "input").y, 300)
    assert np.allclose(trace(fig, "output").y, 4.5 * m)
    mark = fig.data[-1]
    assert (list(mark.x), list(mark.y)) == ([500], [pytest.approx(2550)])  # the lesson's $2,550
    assert "$2,550" in mark.name
    assert (trace(fig, "input").line.color, trace(fig, "output").line.color) == (theme.INPUT_COST, theme.OUTPUT_COST)
    assert fig.layout.xaxis.title.text == "reply length (output tokens)"
    assert fig.layout.yaxis.title.text == "monthly bill (USD)"
    assert all("$%{y:,.2f}" in t.hovertemplate for t in fig.data)


def test_cached_prompt_tokens_get_their_own_band() -> None:
    scenario = Scenario.from_flat({"prompt": "1000", "cached": "800", "pcache": "0.05"})
    fig = bill_charts.bill_vs_reply_length(scenario)
    # 800 × $0.05/M × 3e6 = $120; 200 × $0.50/M × 3e6 = $300.
    assert np.allclose(trace(fig, "cached input").y, 120)
    assert np.allclose(trace(fig, "input").y, 300)
    assert trace(fig, "cached input").line.color == theme.CACHED_COST


def test_the_bill_against_traffic_is_linear_and_log_log() -> None:
    fig = bill_charts.bill_vs_replies_per_day(estimate(LESSON))
    api = trace(fig, "API bill")
    # $0.000850 × 30 days = $0.0255 a month per daily reply, across 1/1000 … 1000 × 100,000.
    assert np.allclose(np.asarray(api.y) / np.asarray(api.x), 0.0255)
    assert api.x[0] == pytest.approx(100) and api.x[-1] == pytest.approx(1e8)
    assert (fig.layout.xaxis.type, fig.layout.yaxis.type) == ("log", "log")
    assert "renting the GPUs (always on)" not in [t.name for t in fig.data]  # the toy GPU has no price
    assert fig.layout.shapes[0].x0 == 100_000  # your traffic, marked


@pytest.fixture(scope="module")
def fleet_plan():
    # Llama 3.1 70B on H100s and H200s at the scenario's 200 → 500 tokens and 100,000 replies a day.
    return plan(LLAMA, Plan(gpu_ids=("h100-sxm", "h200"), tensor_parallel=(1, 2, 4), weight_bits=(8,)),
                RequestLengths(200, 500))  # fmt: skip


def test_renting_is_the_plans_cheapest_fleet_at_each_traffic(fleet_plan) -> None:
    est = estimate(LLAMA)
    fig = bill_charts.bill_vs_replies_per_day(est, fleet_plan)
    fleet = trace(fig, "renting the plan's cheapest fleet (autoscaled)")
    assert fleet.line.shape == "hv"  # whole replicas: a staircase
    assert list(fleet.y) == pytest.approx(monthly_usd_at(fleet_plan, np.asarray(fleet.x)))
    # Shaded where the fleet is the cheaper, between the boundaries core finds.
    parts = bill_charts.cheapest(est, fleet_plan)
    shaded = [(s.x0, s.x1) for s in fig.layout.shapes if s.type == "rect"]
    assert shaded == [(p.from_replies_per_day, p.to_replies_per_day) for p in parts if p.option == "fleet"]
    assert shaded and trace(fig, "shaded: renting is the cheaper").marker.symbol == "square"  # named in the legend
    for part in parts:  # at each range's middle, its option's bill is the lower
        middle = np.sqrt(part.from_replies_per_day * part.to_replies_per_day)
        api, rent = bill_charts.api_bill(est)(np.array([middle]))[0], monthly_usd_at(fleet_plan, [middle])[0]
        assert (rent < api) == (part.option == "fleet")
    # Without a plan (or with none meeting the targets) only the API's line is drawn.
    assert [t.name for t in bill_charts.bill_vs_replies_per_day(est).data][0] == "API bill"
    assert not any(t.name.startswith(("renting", "shaded")) for t in bill_charts.bill_vs_replies_per_day(est).data)


def test_zero_traffic_still_draws_an_axis() -> None:
    scenario = replace(LESSON, pricing=Pricing(replies_per_day=0))
    fig = bill_charts.bill_vs_replies_per_day(estimate(scenario))
    assert fig.data[0].x[0] > 0 and not fig.layout.shapes


def test_the_cost_split_table_adds_up_and_round_trips_through_csv() -> None:
    table = bill_charts.cost_split_table(LESSON, estimate(LESSON))
    assert list(table.index) == [
        "input (uncached prompt)", "cached input (cache reads)", "cache writes (at the input price)", "output"
    ]  # fmt: skip
    assert table["USD per reply"].tolist() == pytest.approx([0.0001, 0.0, 0.0, 0.00075])
    assert table["USD per month"].sum() == pytest.approx(2550)
    assert table["share of the bill"].sum() == pytest.approx(1)
    again = pd.read_csv(io.StringIO(table.to_csv()), index_col=0)
    assert again["tokens per reply"].tolist() == [200, 0, 0, 500]


def test_the_cost_split_shows_the_rate_a_long_prompt_tier_paid() -> None:
    # gemini-2.5-pro above 200,000 prompt tokens: $2.50 in and $15 out per million (base $1.25 / $10).
    scenario = Scenario.from_flat({"api": "google/gemini-2.5-pro", "prompt": "250000"})
    table = bill_charts.cost_split_table(scenario, estimate(scenario))
    assert table.loc["input (uncached prompt)", "USD per million tokens"] == pytest.approx(2.5)
    assert table.loc["output", "USD per million tokens"] == pytest.approx(15.0)
    # 250,000 × 2.5e-6 + 500 × 15e-6 = $0.625 + $0.0075
    assert table["USD per reply"].sum() == pytest.approx(0.6325)


def test_an_unset_cache_write_price_shows_the_input_price_it_bills_at() -> None:
    # GPT-4o lists no cache-write price: cache writes bill at the input's $2.50 (Pricing's "empty: the input
    # price"), so that is the row's price, not a blank (which the table drew as "None").
    scenario = Scenario.from_flat({"api": "openai/gpt-4o"})
    table = bill_charts.cost_split_table(scenario, estimate(scenario))
    assert scenario.pricing.cache_write_usd_per_million_tokens is None
    assert table.loc["cache writes (at the input price)", "USD per million tokens"] == pytest.approx(2.5)
    priced = Scenario.from_flat({"api": "anthropic/claude-haiku-4-5"})  # lists its own cache-write price
    assert "cache writes" in bill_charts.cost_split_table(priced, estimate(priced)).index


def test_a_free_api_has_no_shares_rather_than_a_division_by_zero() -> None:
    scenario = replace(LESSON, pricing=Pricing(0, 0, 0))
    table = bill_charts.cost_split_table(scenario, estimate(scenario))
    assert table["share of the bill"].isna().all()


def test_the_short_long_table_is_the_lessons_part_3() -> None:
    short = estimate(replace(LESSON, workload=replace(LESSON.workload, output_tokens=50)))
    table = bill_charts.short_long_table(short, estimate(LESSON))
    # 9.33 + 50 × 7 = 359.33 ms and 9.33 + 500 × 7 = 3,509.33 ms; $0.000175 and $0.000850; × 3e6.
    assert table["latency (ms)"].tolist() == pytest.approx([359.3333333, 3509.3333333])
    assert table["USD per month"].tolist() == pytest.approx([525, 2550])


@pytest.mark.parametrize(
    "flat",
    [
        {},
        {"out": "200000", "replies": "10000000000"},
        {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "8", "prompt": "1000000", "cached": "999999"},
    ],
)
def test_every_figure_stays_under_100_kb(flat: dict) -> None:
    scenario = Scenario.from_flat(flat)
    for fig in (bill_charts.bill_vs_reply_length(scenario), bill_charts.bill_vs_replies_per_day(estimate(scenario))):
        assert len(fig.to_json()) <= MAX_FIGURE_BYTES


@settings(max_examples=60, deadline=None)
@given(
    pin=st.floats(0, 1000),
    pout=st.floats(0, 1000),
    replies=st.integers(0, 10**9),
    days=st.integers(1, 31),
    out=st.integers(1, 200_000),
)
def test_the_monthly_bill_is_linear_in_reply_length(pin: float, pout: float, replies: int, days: int, out: int) -> None:
    scenario = replace(
        LESSON, pricing=Pricing(pin, pin, pout, replies, days), workload=replace(LESSON.workload, output_tokens=out)
    )
    fig = bill_charts.bill_vs_reply_length(scenario)
    output = trace(fig, "output")
    # Slope = output price per token × replies per day × days: a line through the origin.
    assert np.allclose(output.y, np.asarray(output.x) * pout / 1e6 * replies * days, rtol=1e-9, atol=1e-9)
    assert np.all(np.isfinite(trace(fig, "input").y))
