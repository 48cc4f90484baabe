"""The bill page's figures and tables: a Scenario (and its Estimate) in, plotly / pandas out.

No Streamlit here, so tests call these directly. Money comes from core.billing (vectorised
over the swept quantity); the colours are theme's: input cost in prefill blue, output cost
in decode orange, cached input in a paler blue, limits in grey. Each figure is a few
hundred points at most, far under the app's 100 KB-per-figure budget.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app import formatting as fmt
from app import theme
from app.figures import Trace, axis, figure
from core.billing import monthly_cost_usd, reply_cost
from core.crossings import Bill, Cheapest, cheapest_ranges
from core.estimate import Estimate
from core.plan import CapacityPlan, monthly_usd_at
from core.scenario import Scenario

POINTS = 121


def _money_figure(
    traces: list[Trace], x_title: str, y_title: str, log: bool = False, marks: list[dict] | None = None
) -> go.Figure:
    """Dollars up, a hover that reads every line at one x, log–log when the traffic spans decades."""
    scale = {"type": "log"} if log else {}
    return figure(
        traces,
        380,
        hovermode="x unified",
        xaxis=axis(x_title, hoverformat=",.0f", **scale),
        yaxis=axis(y_title, tickprefix="$", separatethousands=True, **scale),
        shapes=marks or [],
    )


def reply_lengths(output_tokens: int) -> np.ndarray:
    """Whole token counts from 1 to twice the reply (at least 100): the line and the reply both show."""
    top = max(2 * output_tokens, 100)
    return np.unique(np.linspace(1, top, POINTS).round())


def bill_vs_reply_length(scenario: Scenario) -> go.Figure:
    """Monthly bill against reply length, stacked by what is billed; the scenario's reply marked.

    monthly = (uncached × p_in + cached × p_cached + M × p_out) / 1e6 × replies/day × days:
    flat in input, a straight line in M.
    """
    pricing, work = scenario.pricing, scenario.workload
    m = reply_lengths(work.output_tokens)
    cost = reply_cost(pricing, work.prompt_tokens, m, work.cached_prompt_tokens, work.cache_write_tokens)

    def month(usd: float | np.ndarray) -> np.ndarray:
        return monthly_cost_usd(np.broadcast_to(usd, m.shape), pricing.replies_per_day, pricing.days_per_month)

    parts = (
        ("input", cost.input_usd, theme.INPUT_COST),
        ("cached input", cost.cached_input_usd, theme.CACHED_COST),
        ("cache writes", cost.cache_write_usd, theme.CACHED_COST),
        ("per-request fee", cost.request_usd, theme.CEILING),
        ("output", cost.output_usd, theme.OUTPUT_COST),
    )
    shown = {"cached input": work.cached_prompt_tokens > 0, "cache writes": work.cache_write_tokens > 0}
    traces = [
        {
            "type": "scatter",
            "x": m,
            "y": month(usd),
            "name": name,
            "stackgroup": "bill",
            "mode": "lines",
            "line": {"color": colour},
            "hovertemplate": f"{name}: $%{{y:,.2f}}<extra></extra>",
        }
        for name, usd, colour in parts
        if shown.get(name, name != "per-request fee" or cost.request_usd > 0)
    ]
    here = float(
        monthly_cost_usd(
            reply_cost(
                pricing, work.prompt_tokens, work.output_tokens, work.cached_prompt_tokens, work.cache_write_tokens
            ).total_usd,
            pricing.replies_per_day,
            pricing.days_per_month,
        )
    )
    traces.append(
        {
            "type": "scatter",
            "x": [work.output_tokens],
            "y": [here],
            "mode": "markers",
            "name": f"your reply: {fmt.usd(here)} a month",
            "marker": {"color": theme.FIT, "size": 11, "symbol": "diamond"},
            "hovertemplate": "your reply: $%{y:,.2f} a month<extra></extra>",
        }
    )
    return _money_figure(traces, "reply length (output tokens)", "monthly bill (USD)")


def replies_axis(replies_per_day: float) -> np.ndarray:
    """Log-spaced traffic from 1/1000 to 1000 × the scenario's (from 1 a day when it is 0)."""
    centre = max(replies_per_day, 1.0)
    return np.geomspace(max(centre / 1000, 0.1), centre * 1000, POINTS)


def api_bill(est: Estimate) -> Bill:
    """The API's monthly bill at any traffic: a straight line through zero."""
    pricing = est.scenario.pricing
    return lambda replies: monthly_cost_usd(est.cost_per_reply_usd, replies, pricing.days_per_month)


def fleet_bill(result: CapacityPlan) -> Bill:
    """The plan's cheapest fleet meeting its targets at any traffic (autoscaled): `core.plan.monthly_usd_at`."""
    return lambda replies: monthly_usd_at(result, replies)


def cheapest(est: Estimate, result: CapacityPlan | None) -> list[Cheapest]:
    """Over the chart's traffic, which is cheaper where: the API, or renting the plan's fleet."""
    bills = {"API": api_bill(est)} | ({} if result is None or result.best is None else {"fleet": fleet_bill(result)})
    r = replies_axis(est.scenario.pricing.replies_per_day)
    return cheapest_ranges(bills, float(r[0]), float(r[-1]))


def bill_vs_replies_per_day(
    est: Estimate, result: CapacityPlan | None = None, parts: list[Cheapest] | None = None
) -> go.Figure:
    """The API bill (a straight line: linear in traffic) against the plan's cheapest fleet, log–log.

    The fleet is a staircase (whole replicas, autoscaled over the day); where it is the
    cheaper of the two, the traffic range is shaded. `parts`: `cheapest(est, result)` when the
    caller has them already (the page says them in words too).
    """
    pricing = est.scenario.pricing
    r = replies_axis(pricing.replies_per_day)
    traces = [
        {
            "type": "scatter",
            "x": r,
            "y": api_bill(est)(r),
            "name": "API bill",
            "mode": "lines",
            "line": {"color": theme.OUTPUT_COST, "width": 3},
            "hovertemplate": "API: $%{y:,.2f} a month<extra></extra>",
        }
    ]
    marks: list[dict] = []
    if result is not None and result.best is not None:
        traces.append(
            {
                "type": "scatter",
                "x": r,
                "y": fleet_bill(result)(r),
                "name": "renting the plan's cheapest fleet (autoscaled)",
                "mode": "lines",
                "line": {"color": theme.CEILING, "width": 2, "shape": "hv"},
                "hovertemplate": "self-hosted: $%{y:,.2f} a month<extra></extra>",
            }
        )
        for part in parts if parts is not None else cheapest(est, result):
            if part.option == "fleet":
                marks.append({"type": "rect", "xref": "x", "yref": "paper", "x0": part.from_replies_per_day,
                              "x1": part.to_replies_per_day, "y0": 0, "y1": 1, "fillcolor": theme.CEILING,
                              "opacity": 0.12, "line": {"width": 0}, "layer": "below"})  # fmt: skip
        if any(m["type"] == "rect" for m in marks):
            # A shape has no legend entry of its own: an empty trace in its colour names the shading.
            traces.append(
                {
                    "type": "scatter",
                    "x": [None],
                    "y": [None],
                    "mode": "markers",
                    "name": "shaded: renting is the cheaper",
                    "marker": {"color": theme.CEILING, "opacity": 0.3, "size": 14, "symbol": "square"},
                    "hoverinfo": "skip",
                }
            )
    if pricing.replies_per_day > 0:
        traces.append(
            {
                "type": "scatter",
                "x": [pricing.replies_per_day],
                "y": [est.monthly_cost_usd],
                "mode": "markers",
                "name": f"your traffic: {fmt.count(pricing.replies_per_day)} a day",
                "marker": {"color": theme.FIT, "size": 11, "symbol": "diamond"},
                "hovertemplate": "your traffic: $%{y:,.2f} a month<extra></extra>",
            }
        )
        marks.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": pricing.replies_per_day,
                "x1": pricing.replies_per_day,
                "y0": 0,
                "y1": 1,
                "line": {"color": theme.FIT, "dash": "dot"},
            }
        )
    return _money_figure(traces, "replies per day (log scale)", "monthly bill (USD, log scale)", log=True, marks=marks)


def cost_split_table(scenario: Scenario, est: Estimate) -> pd.DataFrame:
    """One reply's bill by what is billed, with its monthly total and share."""
    pricing, work, cost = scenario.pricing, scenario.workload, est.reply_cost
    fresh = work.prompt_tokens - work.cached_prompt_tokens - work.cache_write_tokens

    def per_million(usd: float, tokens: int, listed: float | None) -> float:
        # What was paid per token (a long-prompt tier's rate when one applied), else the listed price.
        return (
            usd / tokens * 1e6 if tokens else (listed if listed is not None else pricing.input_usd_per_million_tokens)
        )

    rows = [
        ("input (uncached prompt)", fresh, per_million(cost.input_usd, fresh, pricing.input_usd_per_million_tokens),
         cost.input_usd),
        ("cached input (cache reads)", work.cached_prompt_tokens,
         per_million(cost.cached_input_usd, work.cached_prompt_tokens, pricing.cached_input_usd_per_million_tokens),
         cost.cached_input_usd),
        # Unset, they bill at the input price: said, as the sidebar's empty field showed no price at all.
        ("cache writes" if pricing.cache_write_usd_per_million_tokens is not None else "cache writes (at the input price)",
         work.cache_write_tokens,
         per_million(cost.cache_write_usd, work.cache_write_tokens, pricing.cache_write_usd_per_million_tokens),
         cost.cache_write_usd),
        ("output", work.output_tokens, per_million(cost.output_usd, work.output_tokens,
                                                   pricing.output_usd_per_million_tokens), cost.output_usd),
    ]  # fmt: skip
    if cost.request_usd:
        rows.append(("per-request fee", 0, math.nan, cost.request_usd))
    total = cost.total_usd
    frame = pd.DataFrame(
        [
            (
                name,
                float(monthly_cost_usd(usd, pricing.replies_per_day, pricing.days_per_month)),
                usd / total if total else math.nan,
                usd,
                tokens,
                price,
            )
            for name, tokens, price, usd in rows
        ],
        # The money first: a phone shows the index and one or two columns.
        columns=[
            "billed as",
            "USD per month",
            "share of the bill",
            "USD per reply",
            "tokens per reply",
            "USD per million tokens",
        ],
    )
    return frame.set_index("billed as")


def short_long_table(short: Estimate, long: Estimate) -> pd.DataFrame:
    """The same prompt answered short and long: latency and money side by side."""
    rows = []
    for name, est in (("short reply", short), ("long reply", long)):
        rows.append(
            (
                name,
                est.scenario.workload.output_tokens,
                est.monthly_cost_usd,
                est.total_s * 1e3,
                est.cost_per_reply_usd,
                est.ttft_s * 1e3,
            )
        )
    # The month's bill and the latency first: a phone shows the reply and two or three columns.
    frame = pd.DataFrame(
        rows, columns=["reply", "output tokens", "USD per month", "latency (ms)", "USD per reply", "TTFT (ms)"]
    )
    return frame.set_index("reply")
