"""The pieces every figure is built from: one layout, line and point traces, thinning.

Every chart uses `theme`'s palette the same way: prefill blue and decode orange for the
two phases; pink for memory-bound and green for compute-bound; light blue for
measurements, vermillion for a fitted line, grey for ceilings. Backgrounds are
transparent and no text colour is forced, so Streamlit's light and dark themes both
read. Long lines are thinned to at most `MAX_POINTS` per trace to keep each figure's
JSON small (the app's budget is 100 KB).

Each figure is built from plain dicts in one `go.Figure(...)` call: plotly validates
every `add_trace`/`update_*` call separately, and building in one go is several times
faster (it keeps a page's rerun inside its 50 ms budget). Outside the tests it is not
validated at all (`VALIDATE`): checking every property of a 16-line chart costs the server
~15-35 ms per figure on each rerun that draws a new one, for dicts only this module's
builders write, and the tests build every figure validated (tests/app/conftest.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

MAX_POINTS = 500
# Validate each figure's properties as plotly builds it: the tests turn it on; the server skips it
# (plotly's `_validate`; the JSON sent is the same, tests/app/test_charts.py).
VALIDATE = False
CLEAR = "rgba(0,0,0,0)"
# "normal" keeps a stacked area's legend in the order it is drawn (plotly reverses stacks).
LEGEND = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0, "traceorder": "normal"}
NOTE = {"showarrow": False, "xanchor": "left", "xshift": 4}
Trace = dict[str, Any]
Numbers = Sequence[float] | np.ndarray  # a list of numbers or a numpy array (what core's sweeps return)


def thin(*arrays: Numbers, max_points: int = MAX_POINTS) -> tuple[np.ndarray, ...]:
    """Every array at the same ≤ max_points evenly spaced indices, first and last kept."""
    columns = [np.asarray(a, dtype=float) for a in arrays]
    n = len(columns[0])
    if n <= max_points:
        return tuple(columns)
    keep = np.unique(np.linspace(0, n - 1, max_points).round().astype(int))
    return tuple(c[keep] for c in columns)


def figure(traces: list[Trace], height: int, **layout: Any) -> go.Figure:
    """One Figure from plain dicts; `layout` overrides the shared defaults."""
    base = {"height": height, "margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "legend": LEGEND}
    # An empty list (no shapes, no annotations) is left out, as validation would: the same JSON either way.
    given = {key: value for key, value in layout.items() if not (isinstance(value, list) and not value)}
    spec = {"data": traces, "layout": {**base, "paper_bgcolor": CLEAR, "plot_bgcolor": CLEAR, **given}}
    return go.Figure(spec, _validate=VALIDATE)


def axis(title: str, **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title}, **extra}


def line(
    x: Any, y: Any, name: str, colour: str, hover: str, dash: str = "solid", width: float = 2, **extra: Any
) -> Trace:
    style = {"color": colour, "dash": dash, "width": width}
    return {"type": "scatter", "x": x, "y": y, "mode": "lines", "name": name, "line": style, "hovertemplate": hover,
            **extra}  # fmt: skip


def points(x: Any, y: Any, name: str, hover: str, marker: dict[str, Any], **extra: Any) -> Trace:
    return {"type": "scatter", "x": x, "y": y, "mode": "markers", "name": name, "marker": marker,
            "hovertemplate": hover, **extra}  # fmt: skip


def hover_xy(what: str, tag: str) -> str:
    """Hover text for a line over a count: "1,234 tokens / 56.7", tagged with the trace's role."""
    return f"%{{x:,.0f}} {what}<br>%{{y:,.1f}}<extra>{tag}</extra>"


def ms(seconds: Numbers) -> np.ndarray:
    return np.asarray(seconds, dtype=float) * 1e3


def log10(value: float) -> float:
    """Annotations on a log axis take log10 of the data value (traces take the value itself)."""
    return math.log10(value)
