"""The figure builders (latency_charts, roofline_charts, figures), called directly (no Streamlit): data, colours, units, size."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app import figures, latency_charts, roofline_charts, theme
from core.lesson import lab_run

MAX_JSON = 100_000  # the budget per figure


@pytest.fixture(scope="module")
def run():
    return lab_run()


def _trace(fig, name_start):
    matches = [t for t in fig.data if (t.name or "").startswith(name_start)]
    assert len(matches) == 1, [t.name for t in fig.data]
    return matches[0]


def _assert_theme_neutral(fig):
    """Readable in light and dark themes: transparent backgrounds, no forced text colour."""
    assert fig.layout.paper_bgcolor == "rgba(0,0,0,0)"
    assert fig.layout.plot_bgcolor == "rgba(0,0,0,0)"
    assert fig.layout.font.color is None
    for trace in fig.data:
        textfont = getattr(trace, "textfont", None)
        assert textfont is None or textfont.color is None


def _lesson_latency_figure(run):
    # The lesson's Part 1: TTFT 23.33 ms, TPOT 7 ms, a line over 1..1000 output tokens.
    tokens = np.arange(1, 1001)
    measured = (run.part1.output_tokens, run.part1.measured_latency_s)
    return latency_charts.latency_line(tokens, 0.023333 + 0.007 * tokens, 0.023333, measured, run.part1.fit)


def test_latency_line_data_colours_and_units(run):
    fig = _lesson_latency_figure(run)
    model = _trace(fig, "model")
    assert model.line.color == theme.DECODE
    assert model.x[0] == 0 and model.y[0] == pytest.approx(23.333)  # the line starts at TTFT, in ms
    assert model.y[-1] == pytest.approx(23.333 + 7 * 1000)  # 1,000 tokens × 7 ms on top
    assert len(model.x) <= figures.MAX_POINTS  # 1,001 points thinned
    ttft = _trace(fig, "TTFT")
    assert ttft.marker.color == theme.PREFILL and list(ttft.x) == [0]
    assert ttft.name == "TTFT (prefill) 23.33 ms"
    (note,) = fig.layout.annotations
    assert note.text == "TTFT 23.33 ms<br>at M = 0" and (note.x, note.y) == (0, pytest.approx(23.333))
    assert note.bgcolor  # on a box: a phone's steep line runs under it
    # A short arrow up and to the right (a long one read as a second, steeper data line).
    assert note.showarrow is not False and math.hypot(note.ax, note.ay) <= 50 and note.ax > 0 > note.ay
    measured = _trace(fig, "simulated")
    assert measured.marker.color == theme.MEASURED
    assert measured.y[-1] == pytest.approx(5621.7, abs=0.05)  # the lesson's 800-token row
    fit = _trace(fig, "fit")
    assert fit.line.color == theme.FIT
    assert fit.name == "fit: 24.31 ms + M × 6.999 ms"  # the lesson's fitted intercept and slope
    assert fit.y[0] == pytest.approx(24.31, abs=0.005)
    assert "ms" in fig.layout.yaxis.title.text and "tokens" in fig.layout.xaxis.title.text
    _assert_theme_neutral(fig)
    assert len(fig.to_json()) <= MAX_JSON


def test_latency_line_without_measurements_has_two_traces():
    fig = latency_charts.latency_line([1, 2], [0.017, 0.024], 0.010)
    assert [t.name.split(":")[0] for t in fig.data] == ["model", "TTFT (prefill) 10.00 ms"]


def test_latency_line_band_is_a_filled_area_under_the_line():
    # A line at 0, 1, 2 tokens: TTFT 10 ms, then 7 ms a token; the band's low and high edges in seconds
    # at M = 0, 1, 2 (the page gets them from app.likely.latency_band), drawn in ms.
    low, high = [0.009, 0.015, 0.021], [0.100, 0.115, 0.130]
    fig = latency_charts.latency_line([1, 2], [0.017, 0.024], 0.010, band=(low, high))
    edge, area = fig.data[0], fig.data[1]  # first: under everything else
    assert edge.name == "likely low" and edge.showlegend is False and edge.fill is None
    assert area.name == "likely range (about 80% of real servers)" and area.fill == "tonexty"
    assert list(edge.x) == list(area.x) == [0, 1, 2]
    assert list(edge.y) == pytest.approx([9, 15, 21]) and list(area.y) == pytest.approx([100, 115, 130])
    assert area.fillcolor == latency_charts.BAND_FILL == "rgba(230, 159, 0, 0.22)"  # theme.DECODE, faint
    assert _trace(fig, "model").y[0] == pytest.approx(10)  # the line is unchanged on top
    # A long line's band is thinned with it: within the figure budget.
    tokens = np.arange(1, 100_001)
    line_s = 0.01 + 0.007 * tokens
    band = (np.concatenate([[0.009], 0.009 + 0.006 * tokens]), np.concatenate([[0.1], 0.1 + 0.015 * tokens]))
    fig = latency_charts.latency_line(tokens, line_s, 0.01, band=band)
    assert len(fig.data[0].x) <= figures.MAX_POINTS and len(fig.data[1].x) <= figures.MAX_POINTS
    assert len(fig.to_json()) <= MAX_JSON


def test_asymmetry_bars(run):
    # The lesson's punchline: 500 prompt tokens 23.33 ms, 500 output tokens 3,500 ms.
    fig = latency_charts.asymmetry_bars(500, run.part1.prompt_as_input_s, run.part1.prompt_as_output_s)
    bars = fig.data[0]
    assert list(bars.x) == pytest.approx([3500.0, 23.333], abs=1e-3)
    assert list(bars.marker.color) == [theme.DECODE, theme.PREFILL]
    assert list(bars.text) == ["3.50 s", "23.33 ms"]
    assert "500 tokens as output" in bars.y[0] and "500 tokens as prompt" in bars.y[1]
    assert fig.layout.xaxis.title.text == "time (ms)"
    _assert_theme_neutral(fig)
    assert len(fig.to_json()) <= MAX_JSON


def _lesson_roofline(run):
    sweep = run.part2.sweep
    # Prefill of 500 tokens: 500 × 14e9 FLOPs over 14e9 bytes = 500 FLOP/byte.
    return roofline_charts.roofline(
        150.0, 300e12, 2e12, sweep.batch_size.astype(int), sweep.intensity_flop_per_byte, 500.0
    )


def test_roofline_roof_ridge_and_points(run):
    fig = _lesson_roofline(run)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.title.text == "arithmetic intensity (FLOP/byte)"
    assert fig.layout.yaxis.title.text == "attainable compute (TFLOP/s)"
    roof = _trace(fig, "roof")
    # x from 1/4 to 500 × 4; the slope is 2 TB/s × I, the flat top 300 TFLOP/s from the ridge at 150.
    assert list(roof.x) == pytest.approx([0.25, 150, 2000])
    assert list(roof.y) == pytest.approx([0.5, 300, 300])
    assert roof.line.color == theme.CEILING
    memory = _trace(fig, "decode (memory")
    assert list(memory.x) == [1, 8, 16, 64, 150]  # batch B → B FLOP/byte; 150 sits on the ridge: memory
    assert list(memory.y) == pytest.approx([2, 16, 32, 128, 300])  # 2 TB/s × B FLOP/byte, in TFLOP/s
    assert memory.marker.color == theme.MEMORY_BOUND and memory.marker.line.color == theme.DECODE
    assert list(memory.customdata) == [1, 8, 16, 64, 150]  # the hover names the batch
    compute = _trace(fig, "decode (compute")
    assert list(compute.x) == [300] and list(compute.y) == pytest.approx([300])
    assert compute.marker.color == theme.COMPUTE_BOUND
    prefill = _trace(fig, "prefill")
    assert prefill.name == "prefill (compute-bound)"
    assert prefill.marker.color == theme.COMPUTE_BOUND and prefill.marker.line.color == theme.PREFILL
    labels = {a.text: a for a in fig.layout.annotations}
    # Slope points are labelled above-left of themselves; past the ridge (the flat roof) labels go
    # below it, left to right: B=300 in the first row, "prefill" (at 500, under B=300's text) the next.
    assert [t for t in labels if t.startswith("B=")] == ["B=1", "B=8", "B=16", "B=64", "B=150", "B=300"]
    assert labels["B=64"].xanchor == "right" and labels["B=64"].yanchor == "bottom"
    assert labels["B=64"].x == pytest.approx(math.log10(64)) and labels["B=64"].y == pytest.approx(math.log10(128))
    assert labels["B=300"].yanchor == "top" and labels["B=300"].y == pytest.approx(math.log10(300))
    assert labels["prefill"].yanchor == "top" and labels["prefill"].x == pytest.approx(math.log10(500))
    # "prefill" would run off a phone's plot rightward: it turns left, hanging from a leader line.
    assert labels["prefill"].showarrow and labels["prefill"].xanchor == "right"
    assert _drop(labels["prefill"]) > _drop(labels["B=300"]) > 0
    ridge = [a for a in fig.layout.annotations if a.text.startswith("ridge")]
    assert ridge[0].text == "ridge: 150 FLOP/byte" and ridge[0].x == pytest.approx(math.log10(150))
    assert not [t for t in fig.data if t.name == "datasheet roof"]  # ideal machine: one roof
    _assert_theme_neutral(fig)
    assert len(fig.to_json()) <= MAX_JSON


def test_roofline_shows_the_datasheet_roof_when_derated():
    # MBU 0.8, MFU 0.5 on the toy GPU: effective 1.6 TB/s and 150 TFLOP/s, ridge 93.75.
    fig = roofline_charts.roofline(93.75, 150e12, 1.6e12, [1], [1.0], 200.0, peaks=(300e12, 2e12))
    datasheet = _trace(fig, "datasheet")
    assert max(datasheet.y) == pytest.approx(300)
    assert max(_trace(fig, "roof").y) == pytest.approx(150)


def test_roofline_places_dequantised_steps_under_the_roof_on_the_weights_own():
    # Int4 Llama 3.1 8B on one A100 under vLLM (test_engine_costs' capped step): the machine's roof
    # at 1.310 TB/s and 156 TFLOP/s, the weights' at 0.8125 TB/s (the unpacking cap). Batch 1 at
    # 3.556 FLOP/byte attains 2.889 TFLOP/s, under the 4.658 the roof gives. The second point is
    # synthetic (60 FLOP/byte placed at 60 TFLOP/s, memory-bound by its own ridge though the
    # machine's roof would put it at 78.6); prefill placed on the flat roof, compute-bound.
    fig = roofline_charts.roofline(
        119.1, 156e12, 1.310e12, [1, 64], [3.556, 60.0], 3512.0,
        decode_flops_per_s=[2.889e12, 60e12], decode_compute_bound=[False, False],
        prefill_flops_per_s=156e12, prefill_compute_bound=True, weights_roof=(156e12, 0.8125e12),
    )  # fmt: skip
    weights = _trace(fig, "the weights' roof")
    assert weights.line.dash == "dash" and max(weights.y) == pytest.approx(156)
    assert weights.y[0] == pytest.approx(0.8125 * weights.x[0])  # 0.8125 TB/s × I, in TFLOP/s
    memory = _trace(fig, "decode (memory")
    assert list(memory.y) == pytest.approx([2.889, 60])  # where they run, not on the roof (4.658 at B=1)
    assert not [t for t in fig.data if t.name.startswith("decode (compute")]
    assert _trace(fig, "prefill").name == "prefill (compute-bound)"
    labels = {a.text: a for a in fig.layout.annotations}
    assert labels["B=1"].y == pytest.approx(math.log10(2.889))  # the label follows its point,
    assert (labels["B=1"].xanchor, labels["B=1"].yanchor) == ("left", "top")  # below-right: clear of the roof
    with pytest.raises(ValueError, match="its own bound"):  # a placed step without its bound would be coloured wrong
        roofline_charts.roofline(119.1, 156e12, 1.310e12, [1], [3.556], 3512.0, decode_flops_per_s=[2.889e12])
    # The same machine with every byte at one rate draws no dashed roof.
    plain = roofline_charts.roofline(119.1, 156e12, 1.310e12, [1], [1.0], 200.0, weights_roof=(156e12, 1.310e12))
    assert not [t for t in plain.data if t.name.startswith("the weights")]


def test_the_ridge_label_turns_left_where_it_would_run_off_a_phone():
    # Qwen3-30B-A3B on a Radeon 8060S: the ridge at 114 FLOP/byte, prefill at 251, so the axis runs from
    # 1.2 ÷ 4 = 0.3 to 4 × 251 = 1,004, and "ridge: 114 FLOP/byte" would cross its end on a phone
    # ((20 × 7 + 12) px × log10(1,004 ÷ 0.3) ÷ 300 px = 1.79 decades from log10(114) = 2.06, past 3.00):
    # it goes left of the ridge line. With prefill at 100,000 FLOP/byte the axis runs to 400,000: right.
    def ridge(prefill: float):
        fig = roofline_charts.roofline(114.0, 27.8e12, 243e9, [1, 64], [1.2, 7.0], prefill)
        return next(a for a in fig.layout.annotations if a.text.startswith("ridge"))

    assert ridge(251.0).xanchor == "right" and ridge(251.0).xshift < 0
    assert ridge(100_000.0).xanchor == "left" and ridge(100_000.0).x == pytest.approx(math.log10(114))


def _lesson_sweep_figure(points=400, max_fit=None):
    batch = np.unique(np.r_[np.geomspace(1, 600, points).round(), 150])  # the page adds the table's batches
    step = np.maximum(0.007, batch * 14e9 / 300e12)  # the toy model: 7 ms until B = 150, then B × 46.7 µs
    return roofline_charts.batch_sweep(
        batch, step, batch / step, batch > 150, critical_batch=150, max_batch_that_fits=max_fit, scenario_batch=1
    )


def _drop(label) -> float:
    """How far below its point a label's top sits, px: on a leader line its tail's offset, else its shift."""
    return label.ay if label.showarrow else -label.yshift


def test_crowded_roofline_labels_share_a_label_and_never_overlap():
    # Llama 3.1 70B on 2× H100 (fp8): decode at 300, 324 and 389 sits at 372, 390 and 433 FLOP/byte,
    # around the ridge at 389, with prefill at 400 on top of them.
    fig = roofline_charts.roofline(
        389.0, 2.2e15, 5.7e12, [1, 150, 300, 324, 389], [2.0, 230.0, 372.0, 390.0, 433.0], 400.0
    )
    memory, compute = _trace(fig, "decode (memory"), _trace(fig, "decode (compute")
    assert list(compute.customdata) == [324, 389]  # hover still names every batch
    assert memory.mode == compute.mode == "markers"  # labels are annotations, placed below
    labels = {a.text: a for a in fig.layout.annotations if not a.text.startswith("ridge")}
    # 230 ≥ 1.6 × 2 starts a group; 372 ≥ 1.6 × 230 would too, but it shares the flat roof's label
    # with 390 and 433, which lie under that label. All three sit on the prefill's diamond (within 0.05
    # decades of 400 both ways: log10(372 / 400) = -0.032, log10(433 / 400) = 0.034), so one label names
    # the four, where two had taken rows at the ridge, each read as naming the other's points.
    assert list(labels) == ["B=1", "B=150", "prefill and B=300, 324, 389"]
    shared = labels["prefill and B=300, 324, 389"]
    assert shared.x == pytest.approx(math.log10(400)) and shared.yanchor == "top"
    # Away from the diamond (the prompt at 4,000 FLOP/byte), each keeps its own.
    apart = roofline_charts.roofline(
        389.0, 2.2e15, 5.7e12, [1, 150, 300, 324, 389], [2.0, 230.0, 372.0, 390.0, 433.0], 4000.0
    )
    assert {a.text for a in apart.layout.annotations} >= {"B=300, 324, 389", "prefill"}
    traces = [t.name for t in fig.data]
    assert traces.index("prefill (compute-bound)") < traces.index("decode (memory-bound)")  # decode drawn on top


def test_batch_sweep_lines_critical_batch_and_no_ceiling():
    fig = _lesson_sweep_figure()
    memory, compute = _trace(fig, "throughput (memory"), _trace(fig, "throughput (compute")
    assert memory.line.color == theme.MEMORY_BOUND and compute.line.color == theme.COMPUTE_BOUND
    assert max(memory.x) == 150 and memory.y[-1] == pytest.approx(21428.6, abs=0.1)  # 150 / 7 ms
    assert compute.x[0] == 150  # joined to the memory segment
    assert compute.y[-1] == pytest.approx(21428.6, abs=0.1)  # the plateau: 300 TFLOP/s ÷ 14 GFLOP
    step = _trace(fig, "decode step time")
    assert step.line.color == theme.DECODE and step.y[0] == pytest.approx(7.0)
    critical = _trace(fig, "critical batch")
    assert critical.name == "critical batch 150" and list(critical.x) == [150, 150]
    assert _trace(fig, "your batch").x[0] == 1
    assert not [t for t in fig.data if t.name.startswith("past the memory ceiling")]  # no KV cache: no ceiling
    assert fig.layout.xaxis.type == "log"
    assert "tok/s" in fig.layout.yaxis.title.text and "ms" in fig.layout.yaxis2.title.text
    _assert_theme_neutral(fig)
    assert len(fig.to_json()) <= MAX_JSON


def test_batch_sweep_memory_ceiling_band():
    fig = _lesson_sweep_figure(max_fit=389)
    band = _trace(fig, "past the memory ceiling")
    assert band.name == "past the memory ceiling (389 fit)"
    # From just past the last batch that fits to the end of the sweep, over the full height.
    assert list(band.x) == pytest.approx([389.5, 600, 600, 389.5, 389.5])
    assert max(band.y) == pytest.approx(21428.6 * 1.1, abs=0.1)
    assert band.fill == "toself" and band.fillcolor == theme.CEILING
    assert fig.data[0] is band  # drawn first, under the lines
    note = [a for a in fig.layout.annotations if a.text.startswith("memory ceiling")][0]
    assert note.text == "memory ceiling: 389 sequences fit" and note.x == pytest.approx(math.log10(389.5))


def test_with_nothing_fitting_the_ceilings_note_sits_inside_the_plot():
    # 0 fit: the band starts at the sweep's first batch (1), the plot's own left side; a note anchored left
    # of it would be cut off (a phone printed it over the axis' ticks), so it reads inside the band.
    fig = _lesson_sweep_figure(max_fit=0)
    assert list(_trace(fig, "past the memory ceiling").x)[0] == 1
    (note,) = fig.layout.annotations
    assert (note.text, note.xanchor, note.xshift, note.x) == ("not one sequence fits", "left", 4, 0)
    assert _trace(fig, "your batch").cliponaxis is False  # the ring at batch 1 is drawn whole


def test_long_sweeps_are_thinned_to_the_budget():
    batch = np.arange(1, 20_001, dtype=float)
    step = np.full(batch.shape, 0.007)
    fig = roofline_charts.batch_sweep(
        batch,
        step,
        batch / step,
        np.zeros(batch.shape, bool),
        critical_batch=None,
        max_batch_that_fits=None,
        scenario_batch=1,
    )
    assert all(len(t.x) <= figures.MAX_POINTS for t in fig.data)
    assert len(fig.to_json()) <= MAX_JSON


@given(st.integers(1, 5000), st.integers(2, 600))
def test_thin_keeps_endpoints_and_the_budget(n, budget):
    x = np.arange(n, dtype=float)
    (kept,) = figures.thin(x, max_points=budget)
    assert len(kept) <= max(budget, 0) or n <= budget
    assert kept[0] == 0 and kept[-1] == n - 1
    assert np.all(np.diff(kept) > 0)


def test_the_server_skips_validation_and_sends_the_same_figure(run, monkeypatch):
    """The server builds figures unvalidated (figures.VALIDATE, ~15-35 ms each): the JSON it sends must not change.

    The lesson's roofline (lines, markers, hover templates, eight annotations, log axes),
    built both ways, gives equal parsed JSON. And the tests' validation is real: an unknown
    property is refused only when validating.
    """
    import json

    import plotly.io as pio

    validated = _lesson_roofline(run)
    monkeypatch.setattr(figures, "VALIDATE", False)
    unvalidated = _lesson_roofline(run)
    assert json.loads(pio.to_json(unvalidated, validate=False)) == json.loads(pio.to_json(validated, validate=False))
    figures.figure([{"type": "scatter", "x": [1], "colour": "red"}], 200)  # a typo, not caught on the server
    monkeypatch.setattr(figures, "VALIDATE", True)
    with pytest.raises(ValueError, match="colour"):
        figures.figure([{"type": "scatter", "x": [1], "colour": "red"}], 200)


def test_a_batch_past_what_fits_is_drawn_apart():
    # The toy machine (balance 150), batches 1, 150 and 300 of which 211 fit: 300 was drawn like the others
    # beside a table that said it does not fit. It is now its own open, faded trace.
    fig = roofline_charts.roofline(150.0, 300e12, 2e12, [1, 150, 300], [1.0, 150.0, 300.0], 200.0,
                                   max_batch_that_fits=211)  # fmt: skip
    (past,) = [t for t in fig.data if t.name == "decode, past the 211 that fit"]
    assert list(past.customdata) == [300] and past.marker.symbol == "circle-open"
    drawn = [b for t in fig.data if t.name and t.name.startswith("decode (") for b in t.customdata]
    assert sorted(drawn) == [1, 150]
