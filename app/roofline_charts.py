"""The roofline page's figures: the roofline itself and the decode batch sweep.

Plain numbers in, a plotly Figure out; no Streamlit here, so tests call them directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from app import formatting as fmt
from app import roofline_labels, theme
from app.figures import NOTE, Numbers, Trace, axis, figure, hover_xy, line, log10, ms, points, thin
from core.roofline import attainable_flops_per_s, under_the_roof

Peaks = tuple[float, float] | None  # a datasheet's (FLOP/s, bytes/s)


def _prefill_point(intensity: float, attained_tflops: float, compute_bound: bool) -> Trace:
    """The prefill diamond (its label is one of roofline_labels' notes)."""
    bound = "compute" if compute_bound else "memory"
    hover = "prefill<br>%{x:,.1f} FLOP/byte<br>%{y:,.2f} TFLOP/s<extra>%{fullData.name}</extra>"
    marker = {
        "color": theme.BOUND_COLOURS[bound],
        "size": 16,
        "symbol": "diamond",
        "line": {"color": theme.PREFILL, "width": 3},
    }
    name = f"prefill ({bound}-bound)"
    return points([intensity], [attained_tflops], name, hover, marker, legendrank=1001)  # after decode in the legend


def _roofs(x_range: tuple[float, float], machine: tuple[float, float], peaks: Peaks, weights: Peaks) -> list[Trace]:
    """The effective roof (solid); the datasheet's (dotted) when efficiency derates it; the weights' own
    (dashed) when they stream or multiply slower than the rest, in TFLOP/s."""
    low, high = x_range
    hover = "%{x:,.1f} FLOP/byte<br>%{y:,.1f} TFLOP/s<extra>%{fullData.name}</extra>"
    roofs = [("roof: min(compute, bandwidth × intensity)", *machine, "solid", 3)]
    if peaks is not None and peaks != machine:
        roofs.insert(0, ("datasheet roof", *peaks, "dot", 1))
    if weights is not None and weights != machine:
        roofs.append(("the weights' roof (dequantised)", *weights, "dash", 2))
    traces = []
    for name, flops, bytes_per_s, dash, width in roofs:
        x = sorted({low, min(max(flops / bytes_per_s, low), high), high})
        y = np.minimum(flops, bytes_per_s * np.asarray(x)) / 1e12
        traces.append(line(x, y, name, theme.CEILING, hover, dash, width))
    return traces


def roofline(
    balance_flop_per_byte: float,
    compute_flops_per_s: float,
    bandwidth_bytes_per_s: float,
    decode_batches: Sequence[int],
    decode_intensity: Numbers,
    prefill_intensity: float,
    peaks: Peaks = None,
    *,
    decode_flops_per_s: Numbers | None = None,
    decode_compute_bound: Numbers | None = None,
    prefill_flops_per_s: float | None = None,
    prefill_compute_bound: bool | None = None,
    weights_roof: Peaks = None,
    max_batch_that_fits: int | None = None,
) -> go.Figure:
    """Attainable FLOP/s = min(compute, bandwidth × intensity), log–log, with decode and prefill placed on it.

    `max_batch_that_fits`: a batch past it is drawn open and faded, as the physics of a batch memory cannot hold
    (it was drawn like the others beside a table that said it does not fit).

    A point's fill is its bound (left of the ridge memory, right of it compute); its
    outline is its phase (decode orange, prefill blue). `peaks` is the datasheet's
    (FLOP/s, bytes/s), drawn dotted when the efficiency derates the machine. Each step sits
    on the roof unless the page places it (`decode_flops_per_s`, `prefill_flops_per_s`: the
    steps' `attained_flops_per_s`, with their own bounds): a step whose weights stream slower
    than the KV cache (`weights_roof`, the weights' (FLOP/s, bytes/s), drawn dashed) sits below
    the roof, between the two.
    """
    if (decode_flops_per_s is None) != (decode_compute_bound is None) or (prefill_flops_per_s is None) != (
        prefill_compute_bound is None
    ):
        raise ValueError("a placed step needs its own bound: pass its FLOP/s and its compute_bound together")
    intensity = np.asarray(decode_intensity, dtype=float)
    low = min(*intensity, prefill_intensity, balance_flop_per_byte) / 4
    high = max(*intensity, prefill_intensity, balance_flop_per_byte) * 4

    def attainable(i: Any) -> np.ndarray:
        return attainable_flops_per_s(np.asarray(i, dtype=float), compute_flops_per_s, bandwidth_bytes_per_s) / 1e12

    decode_y = attainable(intensity) if decode_flops_per_s is None else np.asarray(decode_flops_per_s) / 1e12
    compute = (
        intensity > balance_flop_per_byte if decode_compute_bound is None else np.asarray(decode_compute_bound, bool)
    )
    prefill_y = attainable(prefill_intensity).item() if prefill_flops_per_s is None else prefill_flops_per_s / 1e12
    prefill_bound = (
        prefill_intensity > balance_flop_per_byte if prefill_compute_bound is None else prefill_compute_bound
    )

    def on_the_points(x: float) -> float:
        """Where a decode label at intensity x sits: on the drawn points (between two, along their line)."""
        order = np.argsort(intensity)
        return float(10 ** np.interp(np.log10(x), np.log10(intensity[order]), np.log10(decode_y[order])))

    traces = _roofs((low, high), (compute_flops_per_s, bandwidth_bytes_per_s), peaks, weights_roof)
    ridge_y = [attainable(low).item(), compute_flops_per_s / 1e12]
    traces.append(line([balance_flop_per_byte] * 2, ridge_y, "ridge", theme.CEILING, "", "dash", 1, showlegend=False))
    # Prefill first, so the decode points stay visible where they sit on the diamond.
    traces.append(_prefill_point(prefill_intensity, prefill_y, bool(prefill_bound)))
    hover = "decode, batch %{customdata:,}<br>%{x:,.1f} FLOP/byte<br>%{y:,.2f} TFLOP/s<extra>%{fullData.name}</extra>"
    all_batches = np.asarray(decode_batches)
    held = np.ones(len(all_batches), bool) if max_batch_that_fits is None else all_batches <= max_batch_that_fits
    for bound, mask in (("memory", ~compute & held), ("compute", compute & held)):
        if mask.any():
            marker = {"color": theme.BOUND_COLOURS[bound], "size": 11, "line": {"color": theme.DECODE, "width": 2}}
            traces.append(points(intensity[mask], decode_y[mask], f"decode ({bound}-bound)", hover, marker,
                                 customdata=all_batches[mask]))  # fmt: skip
    if not held.all():
        marker = {"color": theme.DECODE, "size": 11, "symbol": "circle-open", "opacity": 0.45, "line": {"width": 2}}
        traces.append(points(intensity[~held], decode_y[~held], f"decode, past the {fmt.count(max_batch_that_fits or 0)} "
                             "that fit", hover, marker, customdata=all_batches[~held]))  # fmt: skip
    under = decode_flops_per_s is not None and bool(
        under_the_roof(
            np.asarray(decode_flops_per_s, float), intensity, compute_flops_per_s, bandwidth_bytes_per_s
        ).any()
    )
    labels = roofline_labels.roofline_notes(
        intensity, list(decode_batches), prefill_intensity, balance_flop_per_byte,
        attainable if decode_flops_per_s is None else on_the_points, (low, high),
        prefill_y=prefill_y, under_the_roof=under, solid_roof=attainable,
    )  # fmt: skip
    ridge_text = f"ridge: {fmt.flop_per_byte(balance_flop_per_byte)}"
    note = {"x": log10(balance_flop_per_byte), "y": log10(ridge_y[0]), "yanchor": "bottom", **NOTE}
    if roofline_labels.runs_off_a_phone(ridge_text, balance_flop_per_byte, (low, high)):
        # Left of the ridge line at every width: one figure serves the desktop and the phone.
        note.update(xanchor="right", xshift=-4)
    return figure(
        traces,
        460,
        annotations=[*labels, {**note, "text": ridge_text}],
        xaxis=axis("arithmetic intensity (FLOP/byte)", type="log", dtick=1, range=[log10(low), log10(high)]),
        yaxis=axis("attainable compute (TFLOP/s)", type="log", dtick=1),
    )


def _throughput(b: np.ndarray, r: np.ndarray, compute: np.ndarray) -> list[Trace]:
    """Throughput as two joined segments, coloured by bound."""
    traces, hover = [], hover_xy("sequences", "throughput, tok/s")
    for bound, mask in (("memory", ~compute), ("compute", compute)):
        if mask.any():
            # Start the compute segment at the last memory point so the line stays joined.
            first = int(np.argmax(mask))
            idx = np.flatnonzero(mask) if bound == "memory" or first == 0 else np.r_[first - 1, np.flatnonzero(mask)]
            traces.append(
                line(b[idx], r[idx], f"throughput ({bound}-bound)", theme.BOUND_COLOURS[bound], hover, width=3)
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
            line(x, y, f"past the memory ceiling ({fmt.count(fits)} fit)", theme.CEILING, "", width=0, **band)
        )
        # Left of the band's edge: to its right the plot may end (a phone). With nothing fitting the edge
        # is the plot's own left side, and a note left of it would be cut: it goes inside the band.
        inside = fits + 0.5 <= b[0]
        notes.append(
            {
                "x": log10(edge),
                "y": 1,
                "yref": "paper",
                "yanchor": "top",
                "text": "not one sequence fits"
                if inside
                else f"memory ceiling: {fmt.plural(fits, 'sequence')} {'fits' if fits == 1 else 'fit'}",
                **{**NOTE, "xanchor": "left" if inside else "right", "xshift": 4 if inside else -4},
            }
        )
    traces += _throughput(b, r, c > 0.5)
    hover = "batch %{x:,.0f}<br>%{y:,.3f} ms per step<extra>step time</extra>"
    traces.append(line(b, ms(t), "decode step time", theme.DECODE, hover, "dot", yaxis="y2"))
    here = int(np.argmin(np.abs(b - scenario_batch)))
    marker = {"color": theme.DECODE, "size": 12, "symbol": "circle-open", "line": {"width": 3}}
    name = f"your batch ({fmt.count(scenario_batch)})"
    # Not clipped at the axes: at batch 1 the ring sits on the plot's left edge.
    traces.append(points([b[here]], [r[here]], name, hover_xy("sequences", "your batch"), marker, cliponaxis=False))
    if critical_batch is not None and b[0] <= critical_batch <= b[-1]:
        name = f"critical batch {fmt.count(critical_batch)}"
        traces.append(line([critical_batch] * 2, [0, top], name, theme.COMPUTE_BOUND, "", "dash", 1, hoverinfo="skip"))
    step_axis = {"range": [0, float(np.max(t)) * 1e3 * 1.15], "overlaying": "y", "side": "right", "showgrid": False}
    return figure(
        traces,
        440,
        annotations=notes,
        hovermode="x unified",
        # The range is the sweep's own: left to autorange, the ceiling's note stretched it to ten million.
        xaxis=axis("batch size (sequences decoded together)", type="log", dtick=1, range=[log10(b[0]), log10(b[-1])]),
        yaxis=axis("throughput (output tok/s)", range=[0, top]),
        yaxis2=axis("decode step time (ms)", tickmode="auto", nticks=6, **step_axis),
    )
