"""The latency page's figures: total latency against reply length, and prompt vs output time.

Plain numbers in, a plotly Figure out; no Streamlit here, so tests call them directly.
"""

from __future__ import annotations

import plotly.graph_objects as go

from app import formatting as fmt
from app import theme
from app.figures import Numbers, Trace, axis, figure, hover_xy, line, ms, points, thin
from core.fit import LineFit

# The decode colour, faint: the band sits under the model's line, which keeps its full colour.
BAND_FILL = "rgba({}, {}, {}, 0.22)".format(*(int(theme.DECODE[i : i + 2], 16) for i in (1, 3, 5)))


def latency_line(
    output_tokens: Numbers,
    latency_s: Numbers,
    ttft_s: float,
    measured: tuple[Numbers, Numbers] | None = None,
    fit: LineFit | None = None,
    measured_name: str = "simulated measurements",
    chord: tuple[int, float] | None = None,
    band: tuple[Numbers, Numbers] | None = None,
) -> go.Figure:
    """Total latency (ms) against output tokens: the model's line from TTFT at M = 0, points, their fit.

    `measured` is (output tokens, latency in seconds). `chord` = (M, TPOT s) draws the
    straight TTFT + M × TPOT beside a curve that bends (a KV cache: each step reads more
    than the last), so the two can be told apart; without one the model is that line.
    `band` = (low, high) total latency in seconds at M = 0 and at each of `output_tokens`:
    the likely range, shaded under everything else.
    """
    x, y = thin([0.0, *output_tokens], [ttft_s, *latency_s])
    name = f"TTFT (prefill) {fmt.duration(ttft_s)}"
    model_name = "model: TTFT + Σ decode steps" if chord else "model: TTFT + M × TPOT"
    traces = [] if band is None else _band([0.0, *output_tokens], *band)
    traces += [
        line(x, ms(y), model_name, theme.DECODE, hover_xy("tokens", "model"), width=3),
        points(
            [0],
            [ttft_s * 1e3],
            name,
            hover_xy("tokens", "TTFT"),
            {"color": theme.PREFILL, "size": 13, "symbol": "diamond"},
            cliponaxis=False,
        ),
    ]
    top = max(output_tokens)
    if measured is not None:
        mx, my = thin(*measured)
        top = max(top, float(mx.max()))
        marker = {"color": theme.MEASURED, "size": 9, "line": {"width": 1, "color": theme.CEILING}}
        traces.append(points(mx, ms(my), measured_name, hover_xy("tokens", "measured"), marker))
    if chord is not None:
        reply, tpot_s = chord
        ends = ms([ttft_s, ttft_s + tpot_s * reply])
        traces.append(line([0, reply], ends, f"chord at M = {fmt.count(reply)}: TTFT + M × TPOT", theme.CEILING,
                            hover_xy("tokens", "chord"), dash="dot"))  # fmt: skip
    if fit is not None:
        name = f"fit: {fmt.ms(fit.ttft_s)} + M × {fmt.ms(fit.tpot_s, 3)}"
        fit_ms = ms([fit.ttft_s, fit.ttft_s + fit.tpot_s * top])
        traces.append(line([0, top], fit_ms, name, theme.FIT, hover_xy("tokens", "fit"), dash="dash"))
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
        # On a phone's narrow plot the line rises through that corner: a box keeps the label readable over it.
        "bgcolor": theme.LABEL_BOX,
    }
    return figure(
        traces,
        420,
        annotations=[note],
        xaxis=axis("reply length M (output tokens)", rangemode="tozero"),
        yaxis=axis("total latency (ms)", rangemode="tozero"),
    )


def _band(output_tokens: Numbers, low_s: Numbers, high_s: Numbers) -> list[Trace]:
    """The likely range as a filled area: an invisible low edge, then the high edge filled down to it."""
    x, low, high = thin(output_tokens, low_s, high_s)
    edge = {"color": BAND_FILL, "width": 0}
    return [
        line(x, ms(low), "likely low", BAND_FILL, hover_xy("tokens", "likely low"), showlegend=False, line=edge),
        line(x, ms(high), "likely range (about 80% of real servers)", BAND_FILL, hover_xy("tokens", "likely high"),
             fill="tonexty", fillcolor=BAND_FILL, line=edge),
    ]  # fmt: skip


def asymmetry_bars(tokens: int, prompt_s: float, output_s: float) -> go.Figure:
    """The same N tokens as prompt (one prefill pass) and as output (N decode passes), in ms."""
    n = fmt.count(tokens)
    bars = {
        "type": "bar",
        "orientation": "h",
        "x": ms([output_s, prompt_s]),
        "showlegend": False,
        "y": [
            f"{n} tokens as output<br>(decode, {n} passes,<br>after that prompt)",
            f"{n} tokens as prompt<br>(prefill, one pass)",
        ],
        "marker": {"color": [theme.DECODE, theme.PREFILL]},
        "hovertemplate": "%{y}<br>%{x:,.2f} ms<extra></extra>",
        "text": [fmt.duration(output_s), fmt.duration(prompt_s)],
        "textposition": "outside",
        "cliponaxis": False,
    }
    return figure([bars], 240, xaxis=axis("time (ms)", range=[0, output_s * 1e3 * 1.2]))
