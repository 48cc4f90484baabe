"""The Compare page's figures and table: compared options in, plotly / pandas out. No Streamlit here.

One colour per option, in the order chosen (theme.SERIES), the same on both charts: the
monthly bills as bars, and each option's bill against traffic (log–log), where an API is a
straight line through zero and a self-hosted fleet a staircase; the traffic where the
cheapest option changes is marked with a dotted line.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app import formatting as fmt
from app import theme
from app.crossing_text import traffic
from app.figures import axis, figure, line
from app.safe import plain
from core.compare import Compared, bill
from core.crossings import Cheapest

POINTS = 161


def traffic_axis(replies_per_day: float) -> np.ndarray:
    """Log-spaced traffic from 1/1000 to 1000 × the scenario's (from 1 a day when it is 0)."""
    centre = max(replies_per_day, 1.0)
    return np.geomspace(max(centre / 1000, 0.1), centre * 1000, POINTS)


def short_name(compared: Compared) -> str:
    """The option's id, which is short and what the sidebar shows (its label is in the table)."""
    return compared.option


def bars(results: Sequence[Compared]) -> go.Figure:
    """The monthly bills side by side; an option without one (no fleet meets the targets) is left out."""
    shown = [(c, colour) for c, colour in zip(results, theme.SERIES, strict=False) if c.monthly_usd is not None]
    trace = {
        "type": "bar",
        "orientation": "h",
        "y": [short_name(c) for c, _ in shown][::-1],
        "x": [c.monthly_usd for c, _ in shown][::-1],
        "marker": {"color": [colour for _, colour in shown][::-1]},
        "text": [fmt.usd(c.monthly_usd or 0.0) for c, _ in shown][::-1],
        "textposition": "outside",
        "cliponaxis": False,
        "hovertemplate": "%{y}<br>$%{x:,.0f} a month<extra></extra>",
        "showlegend": False,
    }
    top = max((c.monthly_usd or 0.0 for c, _ in shown), default=1.0)
    return figure([trace], 120 + 48 * len(shown), xaxis=axis("monthly bill (USD)", range=[0, top * 1.3],
                                                                tickprefix="$", separatethousands=True),
                  yaxis={"automargin": True}, margin={"l": 10, "r": 30, "t": 10, "b": 10})  # fmt: skip


def bills_against_traffic(
    results: Sequence[Compared], replies_per_day: float, days_per_month: float, changes: Sequence[Cheapest]
) -> go.Figure:
    """Every option's monthly bill against replies a day, log–log; your traffic and the changes of the cheapest marked."""
    r = traffic_axis(replies_per_day)
    traces = []
    for compared, colour in zip(results, theme.SERIES, strict=False):
        y = np.asarray(bill(compared, days_per_month)(r), dtype=float)
        if np.isnan(y).all():
            continue
        shape = "hv" if compared.plan is not None else "linear"
        hover = f"%{{x:,.0f}} replies a day<br>$%{{y:,.0f}} a month<extra>{short_name(compared)}</extra>"
        trace = line(r, y, short_name(compared), colour, hover, width=3 if compared.kind == "api" else 2)
        trace["line"]["shape"] = shape  # a fleet is whole replicas: a staircase
        traces.append(trace)
    shapes = [{"type": "line", "xref": "x", "yref": "paper", "x0": replies_per_day, "x1": replies_per_day, "y0": 0,
               "y1": 1, "line": {"color": theme.FIT, "dash": "dot"}}] if replies_per_day > 0 else []  # fmt: skip
    notes = []
    for change in changes[1:]:  # where a new option becomes the cheapest
        x = change.from_replies_per_day
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
                       "line": {"color": theme.CEILING, "dash": "dash", "width": 1}})  # fmt: skip
        # Right of its line, unless your traffic's line follows within a decade: then left, clear of it.
        left = x < replies_per_day < 10 * x
        notes.append({"x": float(np.log10(x)), "y": 0, "yref": "paper", "yanchor": "bottom",
                      "xanchor": "right" if left else "left", "xshift": -3 if left else 3, "showarrow": False,
                      "text": traffic(x), "font": {"size": 11}})  # fmt: skip
    return figure(
        traces,
        420,
        shapes=shapes,
        annotations=notes,
        hovermode="x unified",
        xaxis=axis("replies per day (log scale)", type="log", hoverformat=",.0f"),
        yaxis=axis("monthly bill (USD, log scale)", type="log", tickprefix="$", separatethousands=True),
    )


def table(results: Sequence[Compared], measured_ms: Sequence[float | None]) -> pd.DataFrame:
    """One row per option: money, latency (estimated, measured, not estimated, or no fleet), its range, what it is."""
    rows = []
    for compared, typed in zip(results, measured_ms, strict=False):
        if compared.latency_s is not None and compared.kind == "self-hosted":
            # A fleet's reply at its peak load, not the Overview's lone request (12.86 s beside its 31.10 s read
            # as a busy fleet answering faster): said in the cell, as the notes under the table say how it runs.
            latency = f"{fmt.duration(compared.latency_s)} at the peak"
        elif compared.latency_s is not None:
            latency = fmt.duration(compared.latency_s)
        elif compared.kind == "self-hosted":
            latency = "no fleet"  # none meets the targets on that GPU: the notes say why
        elif typed is not None:
            latency = f"{fmt.duration(typed / 1e3)} (measured)"
        else:
            latency = "not estimated"
        span = (
            f"{fmt.duration(compared.latency_low_s)} to {fmt.duration(compared.latency_high_s)} ({compared.confidence})"
            if compared.latency_low_s is not None and compared.latency_high_s is not None
            else ""
        )
        rows.append((compared.option, compared.monthly_usd, compared.cost_per_reply_usd, latency, compared.note,
                     compared.yearly_usd, span, compared.label))  # fmt: skip
    # The month's bill first (a phone shows the option and a column or two), then the latency and the notes
    # that say what a fleet is (its GPUs per replica and precision, the plan's choice): at 1,280 px they
    # were past the table's edge, and a fleet read as the sidebar's setup.
    columns = ["option", "USD per month", "USD per reply", "latency (one reply)", "notes", "USD per year",
               "likely latency", "what it is"]  # fmt: skip
    frame = pd.DataFrame(rows, columns=columns).set_index("option")
    # Only a scenario option has a likely range (the load model's fleets and the APIs have none): a
    # column empty on every row is left out rather than shown blank.
    return frame if frame["likely latency"].astype(bool).any() else frame.drop(columns="likely latency")


def notes_list(results: Sequence[Compared]) -> str:
    """How each billed option runs, one line each, as markdown with every name escaped (the table's cells cut them)."""
    lines = [f"- **{plain(c.option, 120)}**: {plain(c.note, 300)}" for c in results if c.monthly_usd is not None]
    return "**How each option runs:**\n\n" + "\n".join(lines)
