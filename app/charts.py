"""Figure builders: plain numbers in, a plotly Figure out. No Streamlit here, so tests call them directly.

Every chart uses `theme`'s palette the same way: prefill blue and decode orange for the
two phases; pink for memory-bound and green for compute-bound; light blue for
measurements, vermillion for a fitted line, grey for ceilings. Backgrounds are
transparent and no text colour is forced, so Streamlit's light and dark themes both
read. Long lines are thinned to at most `MAX_POINTS` per trace to keep each figure's
JSON small (the app's budget is 100 KB).

Each figure is built from plain dicts in one `go.Figure(...)` call: plotly validates
every `add_trace`/`update_*` call separately, and building in one go is several times
faster (it keeps a page's rerun inside its 50 ms budget).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from app import formatting as fmt
from app import roofline_labels, theme
from core.fit import LineFit

MAX_POINTS = 500
_CLEAR = "rgba(0,0,0,0)"
_LEGEND = {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0}
_NOTE = {"showarrow": False, "xanchor": "left", "xshift": 4}
Trace = dict[str, Any]
Numbers = Sequence[float] | np.ndarray  # a list of numbers or a numpy array (what core's sweeps return)
Peaks = tuple[float, float] | None  # a datasheet's (FLOP/s, bytes/s)


def thin(*arrays: Numbers, max_points: int = MAX_POINTS) -> tuple[np.ndarray, ...]:
    """Every array at the same ≤ max_points evenly spaced indices, first and last kept."""
    columns = [np.asarray(a, dtype=float) for a in arrays]
    n = len(columns[0])
    if n <= max_points:
        return tuple(columns)
    keep = np.unique(np.linspace(0, n - 1, max_points).round().astype(int))
    return tuple(c[keep] for c in columns)


def _figure(traces: list[Trace], height: int, **layout: Any) -> go.Figure:
    base = {"height": height, "margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "legend": _LEGEND}
    return go.Figure({"data": traces, "layout": {**base, "paper_bgcolor": _CLEAR, "plot_bgcolor": _CLEAR, **layout}})


def _axis(title: str, **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title}, **extra}


def _line(
    x: Any, y: Any, name: str, colour: str, hover: str, dash: str = "solid", width: float = 2, **extra: Any
) -> Trace:
    line = {"color": colour, "dash": dash, "width": width}
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": name,
        "line": line,
        "hovertemplate": hover,
        **extra,
    }


def _points(x: Any, y: Any, name: str, hover: str, marker: dict[str, Any], **extra: Any) -> Trace:
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "markers",
        "name": name,
        "marker": marker,
        "hovertemplate": hover,
        **extra,
    }


def _hover(what: str, tag: str) -> str:
    return f"%{{x:,.0f}} {what}<br>%{{y:,.1f}}<extra>{tag}</extra>"


def _ms(seconds: Numbers) -> np.ndarray:
    return np.asarray(seconds, dtype=float) * 1e3


def _log10(value: float) -> float:
    """Annotations on a log axis take log10 of the data value (traces take the value itself)."""
    return math.log10(value)


def latency_line(
    output_tokens: Numbers,
    latency_s: Numbers,
    ttft_s: float,
    measured: tuple[Numbers, Numbers] | None = None,
    fit: LineFit | None = None,
    measured_name: str = "simulated measurements",
    chord: tuple[int, float] | None = None,
) -> go.Figure:
    """Total latency (ms) against output tokens: the model's line from TTFT at M = 0, points, their fit.

    `measured` is (output tokens, latency in seconds). `chord` = (M, TPOT s) draws the
    straight TTFT + M × TPOT beside a curve that bends (a KV cache: each step reads more
    than the last), so the two can be told apart; without one the model is that line.
    """
    x, y = thin([0.0, *output_tokens], [ttft_s, *latency_s])
    name = f"TTFT (prefill) {fmt.duration(ttft_s)}"
    model_name = "model: TTFT + Σ decode steps" if chord else "model: TTFT + M × TPOT"
    traces = [
        _line(x, _ms(y), model_name, theme.DECODE, _hover("tokens", "model"), width=3),
        _points(
            [0],
            [ttft_s * 1e3],
            name,
            _hover("tokens", "TTFT"),
            {"color": theme.PREFILL, "size": 13, "symbol": "diamond"},
            cliponaxis=False,
        ),
    ]
    top = max(output_tokens)
    if measured is not None:
        mx, my = thin(*measured)
        top = max(top, float(mx.max()))
        marker = {"color": theme.MEASURED, "size": 9, "line": {"width": 1, "color": theme.CEILING}}
        traces.append(_points(mx, _ms(my), measured_name, _hover("tokens", "measured"), marker))
    if chord is not None:
        reply, tpot_s = chord
        ends = _ms([ttft_s, ttft_s + tpot_s * reply])
        traces.append(_line([0, reply], ends, f"chord at M = {fmt.count(reply)}: TTFT + M × TPOT", theme.CEILING,
                            _hover("tokens", "chord"), dash="dot"))  # fmt: skip
    if fit is not None:
        name = f"fit: {fmt.ms(fit.ttft_s)} + M × {fmt.ms(fit.tpot_s, 3)}"
        fit_ms = _ms([fit.ttft_s, fit.ttft_s + fit.tpot_s * top])
        traces.append(_line([0, top], fit_ms, name, theme.FIT, _hover("tokens", "fit"), dash="dash"))
    # A short arrow from up and to the right: the label sits in the empty corner above the line's
    # start (a long one read as a second, steeper line).
    note = {
        "x": 0,
        "y": ttft_s * 1e3,
        "text": f"TTFT {fmt.duration(ttft_s)}<br>at M = 0",
        "align": "left",
        "xanchor": "left",
        "yanchor": "bottom",
        "ax": 10,
        "ay": -40,
        "arrowcolor": theme.PREFILL,
        "arrowwidth": 1.5,
        "arrowhead": 2,
        "standoff": 9,  # stop at the diamond's edge
    }
    return _figure(
        traces,
        420,
        annotations=[note],
        xaxis=_axis("output tokens (M)", rangemode="tozero"),
        yaxis=_axis("total latency (ms)", rangemode="tozero"),
    )


def asymmetry_bars(tokens: int, prompt_s: float, output_s: float) -> go.Figure:
    """The same N tokens as prompt (one prefill pass) and as output (N decode passes), in ms."""
    n = fmt.count(tokens)
    bars = {
        "type": "bar",
        "orientation": "h",
        "x": _ms([output_s, prompt_s]),
        "showlegend": False,
        "y": [f"{n} tokens as output<br>(decode, {n} passes)", f"{n} tokens as prompt<br>(prefill, one pass)"],
        "marker": {"color": [theme.DECODE, theme.PREFILL]},
        "hovertemplate": "%{y}<br>%{x:,.2f} ms<extra></extra>",
        "text": [fmt.duration(output_s), fmt.duration(prompt_s)],
        "textposition": "outside",
        "cliponaxis": False,
    }
    return _figure([bars], 240, xaxis=_axis("time (ms)", range=[0, output_s * 1e3 * 1.2]))


def _prefill_point(intensity: float, ridge: float, roof: Any) -> Trace:
    """The prefill diamond (its label is one of roofline_labels' notes)."""
    bound = "compute" if intensity > ridge else "memory"
    hover = "prefill<br>%{x:,.1f} FLOP/byte<br>%{y:,.2f} TFLOP/s<extra>%{fullData.name}</extra>"
    marker = {
        "color": theme.BOUND_COLOURS[bound],
        "size": 16,
        "symbol": "diamond",
        "line": {"color": theme.PREFILL, "width": 3},
    }
    name = f"prefill ({bound}-bound)"
    return _points([intensity], roof([intensity]), name, hover, marker, legendrank=1001)  # after decode in the legend


def _roofs(x_range: tuple[float, float], machine: tuple[float, float], peaks: Peaks) -> list[Trace]:
    """The effective roof (solid) and, when efficiency derates it, the datasheet roof (dotted), in TFLOP/s."""
    low, high = x_range
    hover = "%{x:,.1f} FLOP/byte<br>%{y:,.1f} TFLOP/s<extra>%{fullData.name}</extra>"
    roofs = [("roof: min(compute, bandwidth × intensity)", *machine, "solid", 3)]
    if peaks is not None and peaks != machine:
        roofs.insert(0, ("datasheet roof", *peaks, "dot", 1))
    traces = []
    for name, flops, bytes_per_s, dash, width in roofs:
        x = sorted({low, min(max(flops / bytes_per_s, low), high), high})
        y = np.minimum(flops, bytes_per_s * np.asarray(x)) / 1e12
        traces.append(_line(x, y, name, theme.CEILING, hover, dash, width))
    return traces


def roofline(
    balance_flop_per_byte: float,
    compute_flops_per_s: float,
    bandwidth_bytes_per_s: float,
    decode_batches: Sequence[int],
    decode_intensity: Numbers,
    prefill_intensity: float,
    peaks: Peaks = None,
) -> go.Figure:
    """Attainable FLOP/s = min(compute, bandwidth × intensity), log–log, with decode and prefill on the roof.

    A point's fill is its bound (left of the ridge memory, right of it compute); its
    outline is its phase (decode orange, prefill blue). `peaks` is the datasheet's
    (FLOP/s, bytes/s), drawn dotted when the efficiency derates the machine.
    """
    intensity = np.asarray(decode_intensity, dtype=float)
    low = min(*intensity, prefill_intensity, balance_flop_per_byte) / 4
    high = max(*intensity, prefill_intensity, balance_flop_per_byte) * 4

    def attainable(i: Any) -> np.ndarray:
        return np.minimum(compute_flops_per_s, bandwidth_bytes_per_s * np.asarray(i, dtype=float)) / 1e12

    traces = _roofs((low, high), (compute_flops_per_s, bandwidth_bytes_per_s), peaks)
    ridge_y = [attainable(low).item(), compute_flops_per_s / 1e12]
    traces.append(_line([balance_flop_per_byte] * 2, ridge_y, "ridge", theme.CEILING, "", "dash", 1, showlegend=False))
    # Prefill first, so the decode points stay visible where they sit on the diamond.
    traces.append(_prefill_point(prefill_intensity, balance_flop_per_byte, attainable))
    hover = "decode, batch %{customdata:,}<br>%{x:,.1f} FLOP/byte<br>%{y:,.2f} TFLOP/s<extra>%{fullData.name}</extra>"
    compute = intensity > balance_flop_per_byte
    for bound, mask in (("memory", ~compute), ("compute", compute)):
        if mask.any():
            x, batches = intensity[mask], np.asarray(decode_batches)[mask]
            marker = {"color": theme.BOUND_COLOURS[bound], "size": 11, "line": {"color": theme.DECODE, "width": 2}}
            traces.append(_points(x, attainable(x), f"decode ({bound}-bound)", hover, marker, customdata=batches))
    labels = roofline_labels.roofline_notes(
        intensity, list(decode_batches), prefill_intensity, balance_flop_per_byte, attainable, (low, high)
    )
    note = {"x": _log10(balance_flop_per_byte), "y": _log10(ridge_y[0]), "yanchor": "bottom", **_NOTE}
    return _figure(
        traces,
        460,
        annotations=[*labels, {**note, "text": f"ridge: {fmt.flop_per_byte(balance_flop_per_byte)}"}],
        xaxis=_axis("arithmetic intensity (FLOP/byte)", type="log", dtick=1, range=[_log10(low), _log10(high)]),
        yaxis=_axis("attainable compute (TFLOP/s)", type="log", dtick=1),
    )


def _throughput(b: np.ndarray, r: np.ndarray, compute: np.ndarray) -> list[Trace]:
    """Throughput as two joined segments, coloured by bound."""
    traces, hover = [], _hover("sequences", "throughput, tok/s")
    for bound, mask in (("memory", ~compute), ("compute", compute)):
        if mask.any():
            # Start the compute segment at the last memory point so the line stays joined.
            first = int(np.argmax(mask))
            idx = np.flatnonzero(mask) if bound == "memory" or first == 0 else np.r_[first - 1, np.flatnonzero(mask)]
            traces.append(
                _line(b[idx], r[idx], f"throughput ({bound}-bound)", theme.BOUND_COLOURS[bound], hover, width=3)
            )
    return traces


def batch_sweep(
    batch_size: Numbers,
    step_time_s: Numbers,
    tokens_per_s: Numbers,
    compute_bound: Numbers,
    critical_batch: int | None,
    max_batch_that_fits: int | None,
    scenario_batch: int,
) -> go.Figure:
    """Decode throughput (left axis, coloured by bound) and step time (right axis) against batch size.

    The critical batch is where the colour changes; batches past the memory ceiling
    (weights + KV cache no longer fit) sit in a grey band, a filled trace rather than a
    layout shape because trace coordinates are plain data values on a log axis.
    """
    b, t, r, c = thin(batch_size, step_time_s, tokens_per_s, np.asarray(compute_bound, dtype=float))
    top, traces, notes = float(np.max(r)) * 1.1, [], []
    fits = max_batch_that_fits
    if fits is not None and fits < b[-1]:
        edge = max(fits + 0.5, b[0])
        band: dict[str, Any] = {"fill": "toself", "fillcolor": theme.CEILING, "opacity": 0.25, "hoverinfo": "skip"}
        x, y = [edge, b[-1], b[-1], edge, edge], [0, 0, top, top, 0]
        traces.append(
            _line(x, y, f"past the memory ceiling ({fmt.count(fits)} fit)", theme.CEILING, "", width=0, **band)
        )
        notes.append(  # left of the band's edge: to its right the plot may end (a phone)
            {
                "x": _log10(edge),
                "y": 1,
                "yref": "paper",
                "yanchor": "top",
                "text": f"memory ceiling: {fmt.count(fits)} fit",
                **{**_NOTE, "xanchor": "right", "xshift": -4},
            }
        )
    traces += _throughput(b, r, c > 0.5)
    hover = "batch %{x:,.0f}<br>%{y:,.3f} ms per step<extra>step time</extra>"
    traces.append(_line(b, _ms(t), "decode step time", theme.DECODE, hover, "dot", yaxis="y2"))
    here = int(np.argmin(np.abs(b - scenario_batch)))
    marker = {"color": theme.DECODE, "size": 12, "symbol": "circle-open", "line": {"width": 3}}
    name = f"your batch ({fmt.count(scenario_batch)})"
    traces.append(_points([b[here]], [r[here]], name, _hover("sequences", "your batch"), marker))
    if critical_batch is not None and b[0] <= critical_batch <= b[-1]:
        name = f"critical batch {fmt.count(critical_batch)}"
        traces.append(_line([critical_batch] * 2, [0, top], name, theme.COMPUTE_BOUND, "", "dash", 1, hoverinfo="skip"))
    step_axis = {"range": [0, float(np.max(t)) * 1e3 * 1.15], "overlaying": "y", "side": "right", "showgrid": False}
    return _figure(
        traces,
        440,
        annotations=notes,
        hovermode="x unified",
        # The range is the sweep's own: left to autorange, the ceiling's note stretched it to ten million.
        xaxis=_axis(
            "batch size (sequences decoded together)", type="log", dtick=1, range=[_log10(b[0]), _log10(b[-1])]
        ),
        yaxis=_axis("throughput (output tok/s)", range=[0, top]),
        yaxis2=_axis("decode step time (ms)", tickmode="auto", nticks=6, **step_axis),
    )
