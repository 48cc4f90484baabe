"""The Capacity plan's figures and table: a CapacityPlan in, plotly / pandas out. No Streamlit here.

The frontier is InferenceX's chart: output tokens/s per GPU (what the fleet costs) against
tokens/s per user (how fast each reply streams), one line per candidate over its
concurrency grid; the per-user target is a vertical line, the chosen point a diamond.
Each GPU is drawn once, by its best candidate (the cheapest that meets the targets, else
the one with the highest throughput), so a chart compares GPUs, not every precision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from app import formatting as fmt
from app import theme
from app.figures import axis, figure, line, points
from core.candidates import Setup
from core.cli.plan_report import CANDIDATE_KEYS, option_json
from core.plan import CapacityPlan
from core.plan import frontiers as frontiers_of
from core.plan_options import Option

MAX_LINES = len(theme.SERIES)


def shown_options(result: CapacityPlan) -> list[Option]:
    """One candidate per GPU, its frontier filled in: the cheapest ranked, else the highest throughput; at most 8.

    A plan searched without frontiers (`frontiers=False`, as the app runs it) gets them here,
    for these few candidates only (and, for a GPU none of whose candidates ranks, for each of
    its candidates that fits, to pick the fastest).
    """
    chosen: dict[str, Option] = {}
    for option in result.ranked:
        chosen.setdefault(option.setup.gpu.id, option)
    # The failures of GPUs where nothing ranks: each one's frontier (all in one pass) picks the fastest.
    unranked = [o for o in result.failures if o.setup.gpu.id not in chosen]
    for option, found in zip(unranked, frontiers_of(result, unranked), strict=True):
        held = chosen.get(option.setup.gpu.id)
        if found is None:
            continue
        best = max(found.output_tokens_per_s_per_gpu)
        if held is None or best > max(held.frontier.output_tokens_per_s_per_gpu):  # type: ignore[union-attr]
            chosen[option.setup.gpu.id] = replace(option, frontier=found)
    shown = list(chosen.values())[:MAX_LINES]
    return [replace(o, frontier=f) for o, f in zip(shown, frontiers_of(result, shown), strict=True)]


def setup_label(setup: Setup) -> str:
    """A candidate in a few words, the same in the tables and the charts' legends: "h100-sxm, TP 2, 8-bit".

    The GPU's id, not its name: a phone shows a table's first column or two, and a legend's width.
    """
    return f"{setup.gpu.id}, TP {setup.gpus_per_replica}, {setup.precision_name}"


def _name(option: Option) -> str:
    tail = "" if option.meets_targets else f" ({option.problem.value if option.problem else '?'})"
    return setup_label(option.setup) + tail


# 1, 2, 5 in every decade, each with its dollar sign: whole decades alone left a $0.2 line under the lowest
# label, and plotly's own "D2" writes $0.5 as a bare "5".
DOLLAR_TICKS = [m * 10.0**e for e in range(-3, 5) for m in (1, 2, 5)]


def frontier(result: CapacityPlan, dollars: bool = False, shown: list[Option] | None = None) -> go.Figure:
    """Throughput per GPU (or $ per million output tokens) against tokens/s per user, one line per GPU.

    `shown`: `shown_options(result)`, when the caller has it already (both charts draw the same).
    """
    traces: list[dict[str, Any]] = []
    y_name = "$ per million output tokens" if dollars else "output tokens/s per GPU"
    y_hover = "$%{y:,.3f} per M tokens" if dollars else "%{y:,.0f} tok/s per GPU"
    for colour, option in zip(theme.SERIES, shown if shown is not None else shown_options(result), strict=False):
        f = option.frontier
        if f is None or (dollars and f.usd_per_million_output_tokens is None):
            continue
        y = f.usd_per_million_output_tokens if dollars else f.output_tokens_per_s_per_gpu
        hover = f"%{{x:,.1f}} tok/s per user<br>{y_hover}<br>%{{customdata:,}} in flight<extra>{_name(option)}</extra>"
        traces.append(line(f.tokens_per_s_per_user, y, _name(option), colour, hover, customdata=f.concurrency,
                           mode="lines+markers", marker={"size": 5}))  # fmt: skip
        point = option.point
        if option.meets_targets and point is not None:
            here_y = option.usd_per_million_output_tokens if dollars else option.output_tokens_per_s_per_gpu
            marker = {"color": colour, "size": 13, "symbol": "diamond", "line": {"width": 1.5, "color": theme.CEILING}}
            traces.append(points([float(point.tokens_per_s_per_user)], [here_y], "at the peak",
                                 f"at the peak<br>%{{x:,.1f}} tok/s per user<br>{y_hover}<extra>{_name(option)}</extra>",
                                 marker, showlegend=False))  # fmt: skip
    target = result.spec.tokens_per_s_per_user
    shapes = []
    if target > 0:
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": target, "x1": target, "y0": 0, "y1": 1,
                       "line": {"color": theme.REFERENCE, "dash": "dash", "width": 1.5}})  # fmt: skip
    note = [{"x": target, "y": 1, "xref": "x", "yref": "paper", "text": f"target {fmt.count(target)} tok/s per user",
             "showarrow": False, "xanchor": "left", "yanchor": "top", "xshift": 4, "bgcolor": theme.LABEL_BOX}
            ] if target > 0 else []  # fmt: skip
    if dollars and result.api_cost_per_reply_usd > 0:
        # The API on the same axis, so the GPUs' dollars have something to be cheaper or dearer than.
        api = result.api_usd_per_million_output_tokens
        shapes.append({"type": "line", "xref": "paper", "yref": "y", "x0": 0, "x1": 1, "y0": api, "y1": api,
                       "line": {"color": theme.REFERENCE, "dash": "dot", "width": 2}})  # fmt: skip
        # On a white box and in few words: over the GPUs' lines (4-6 of them on a phone) it could not be read;
        # the caption says the prompts are included.
        note.append({"x": 1, "y": math.log10(api), "xref": "paper", "yref": "y", "showarrow": False,
                     "text": f"the API: {fmt.usd(api)} per M output tokens", "bgcolor": theme.LABEL_BOX,
                     "xanchor": "right", "yanchor": "bottom"})  # fmt: skip
    return figure(
        traces,
        460,
        shapes=shapes,
        annotations=note,
        hovermode="closest",
        xaxis=axis("tokens/s per user (how fast a reply streams)", rangemode="tozero"),
        yaxis=axis(y_name, type="log", tickvals=DOLLAR_TICKS, ticktext=[f"${v:g}" for v in DOLLAR_TICKS])
        if dollars
        else axis(y_name, rangemode="tozero"),
    )


# A phone shows the first two or three columns: the candidate in a few words (`setup_label`, pinned
# on the page), then the money that decides the ranking, then the rest (`RANKED_COLUMNS`).
# The $ per M tokens is the GPUs' cost at the peak's load, not the month's bill over its tokens: said so.
SETUP = "setup"
PER_M_AT_PEAK = "$ per M output tokens, at the peak's load"
# After the money, what shows each row meets the targets (with the GPU's full name third they sat
# past the grid's edge at 1280 px), then the fleet's shape; the full name, already in the setup, last.
RANKED_COLUMNS = {
    "monthly_cost_autoscaled_usd": "$ a month, autoscaled",
    "total_gpus_at_peak": "GPUs at peak",
    "tokens_per_s_per_user": "tok/s per user",
    "ttft_at_target_percentile_ms": "TTFT at the percentile (ms)",
    "usd_per_million_output_tokens": PER_M_AT_PEAK,
    "monthly_cost_peak_usd": "$ a month, sized for the peak",
    "concurrency_per_replica": "requests in flight per replica",
    "replicas_at_peak": "replicas at peak",
    "output_tokens_per_s_per_gpu": "tok/s per GPU",
    "gpu_name": "GPU",
}


def ranked_table(result: CapacityPlan) -> pd.DataFrame:
    """The candidates that meet every target, cheapest first, with the columns a reader compares."""
    rows = [option_json(o, result.spec.ttft_quantile) for o in result.ranked]
    frame = pd.DataFrame(rows, columns=list(CANDIDATE_KEYS))[list(RANKED_COLUMNS)].rename(columns=RANKED_COLUMNS)
    frame.insert(0, SETUP, [setup_label(o.setup) for o in result.ranked])
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="rank")
    return frame


def failures_table(result: CapacityPlan) -> pd.DataFrame:
    """Every candidate not ranked, with its reason in words (none is dropped silently)."""
    rows = [(setup_label(o.setup), o.problem.value if o.problem else "", o.reason, o.setup.gpu.name)
            for o in result.failures]  # fmt: skip
    return pd.DataFrame(rows, columns=[SETUP, "why not", "details", "GPU"])


def csv_table(result: CapacityPlan) -> pd.DataFrame:
    """Every candidate, ranked then not, with the CLI's JSON keys as columns (`plan --json`)."""
    rows = [option_json(o, result.spec.ttft_quantile) for o in result.options]
    frame = pd.DataFrame(rows, columns=list(CANDIDATE_KEYS))
    frame.insert(0, "rank", [i + 1 if o.meets_targets else math.nan for i, o in enumerate(result.options)])
    return frame


def formats_note(options: Sequence[Option]) -> str:
    """The table's key: what a setup reads as, and the 4-bit formats among `options` (only those shown:
    it had explained NVFP4 and int4 under a gpt-oss table holding neither, and not its experts' width)."""
    names = {o.setup.precision_name for o in options}
    split = next((o.setup.precision for o in options if o.setup.precision.expert_weight_bits is not None), None)
    formats = [
        *(["NVFP4 is Blackwell's 4-bit format"] if any("NVFP4" in n for n in names) else []),
        *(["int4 a 4-bit format unpacked to 16-bit maths"] if any("int4" in n for n in names) else []),
        *([f"'{split.weights_words}' keeps the experts at {split.expert_bits:g} bits as the model ships them and "
           f"every other weight at {split.weight_bits:g}"] if split is not None else []),
    ]  # fmt: skip
    glossary = f"; {', '.join(formats)}" if formats else ""
    return (
        "A setup reads GPU, TP (tensor parallel: how many GPUs share one copy of the model, a replica), and the "
        f"weights' precision{glossary}. TTFT is the wait for the first token; p95 the wait 95 % of requests beat."
    )
