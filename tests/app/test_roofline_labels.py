"""Where the roofline's labels go (app/roofline_labels.py): every batch named once, no two labels overlapping."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app import roofline_labels as rl


def notes(intensity, prefill=5.0, ridge=150.0, x_range=(0.25, 2000.0)):
    batches = list(range(1, len(intensity) + 1))

    def roof(x):
        return np.minimum(300.0, 2.0 * np.asarray(x))  # the lesson's machine, in TFLOP/s

    return rl.roofline_notes(np.asarray(intensity, dtype=float), batches, prefill, ridge, roof, x_range)


def width(text, x_range):
    return (len(text) * rl.CHAR_PX + rl.GAP_PX) * math.log10(x_range[1] / x_range[0]) / rl.PLOT_WIDTH_PX


def test_slope_points_closer_than_the_spacing_share_a_label():
    # 8 and 10 (< 1.6 × 8) share one, pinned above-left of 10; 16 ≥ 12.8 starts its own.
    shown = {n["text"]: n for n in notes([1.0, 8.0, 10.0, 16.0])}
    assert list(shown) == ["B=1", "prefill", "B=2, 3", "B=4"]
    assert shown["B=2, 3"]["x"] == pytest.approx(1.0) and shown["B=2, 3"]["xanchor"] == "right"


def test_a_prefill_on_the_slope_is_labelled_below_right():
    prefill = next(n for n in notes([1.0], prefill=20.0) if n["text"] == "prefill")
    assert (prefill["xanchor"], prefill["yanchor"], prefill["yshift"]) == ("left", "top", -9)


def test_a_prefill_just_left_of_the_ridge_starts_its_label_at_the_ridge():
    # Llama 3.1 70B fp8 on 2 × H100 (the Roofline page's own scenario): the prompt at 400 FLOP/byte, the
    # ridge at 590.3, the axis 0.5-2,362. On a phone "prefill" needs (7 × 7 + 12) px × log10(2,362 ÷ 0.5)
    # ÷ 300 px = 0.747 decades; from log10 400 = 2.602 it would reach 3.349, past log10 590.3 = 2.771, so
    # the ridge's dashed line would strike it: it starts at the ridge instead, still below-right.
    def roof(x):
        return np.minimum(3483.0, 5.9 * np.asarray(x))

    shown = rl.roofline_notes(np.array([2.0]), [1], 400.0, 590.3, roof, (0.5, 2362.0))
    (label,) = [n for n in shown if n["text"] == "prefill"]
    assert label["x"] == pytest.approx(math.log10(590.3))
    assert label["y"] == pytest.approx(math.log10(5.9 * 400.0))  # at its own point's height
    assert (label["xanchor"], label["yanchor"]) == ("left", "top")
    # A prompt far left of the ridge (log10 5 + 0.747 = 1.446 < 2.771) keeps its label at its point.
    (far,) = [
        n for n in rl.roofline_notes(np.array([2.0]), [1], 5.0, 590.3, roof, (0.5, 2362.0)) if n["text"] == "prefill"
    ]
    assert far["x"] == pytest.approx(math.log10(5.0))


@given(
    st.lists(st.floats(0.5, 1e5), min_size=1, max_size=12, unique=True),
    st.floats(10, 1e4),
    st.floats(1, 1e6),
)
def test_every_batch_is_named_once_and_labels_below_the_roof_never_overlap(points, ridge, prefill):
    points = sorted(points)
    x_range = (min(*points, prefill, ridge) / 4, max(*points, prefill, ridge) * 4)
    shown = notes(points, prefill, ridge, x_range)
    # "prefill and B=3, 4": the batches whose points sit on the prefill's diamond share its label.
    named = [int(b) for n in shown for b in n["text"].partition("B=")[2].split(", ") if "B=" in n["text"]]
    assert sorted(named) == list(range(1, len(points) + 1))
    assert sum(n["text"].startswith("prefill") for n in shown) == 1
    rows: dict[float, list[tuple[float, float]]] = {}
    for n in shown:
        is_prefill = n["text"].startswith("prefill")
        below_the_flat_roof = not is_prefill and n["yanchor"] == "top"
        # A prefill's label is below the flat roof when its prompt is past the ridge or it starts at the ridge.
        if below_the_flat_roof or (is_prefill and n["x"] >= math.log10(ridge) - 1e-12):
            # A label anchored on its right (it turned left, away from the plot's edge) spans leftward, its
            # right end at its leader line's tail, the tail's drop its row.
            extent = width(n["text"], x_range)
            if n["showarrow"]:
                end = n["x"] + n["ax"] * math.log10(x_range[1] / x_range[0]) / rl.PLOT_WIDTH_PX
                span, row = (end - extent, end), (n["ay"] - rl.LEADER_AY_PX) / rl.ROW_PX
            else:
                x = n["x"]
                span = (x - extent, x) if n["xanchor"] == "right" else (x, x + extent)
                row = (-n["yshift"] - 9) / rl.ROW_PX
            rows.setdefault(row, []).append(span)
    for spans in rows.values():
        spans.sort()
        assert all(a_end <= b_start + 1e-9 for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))


def test_a_label_that_would_run_off_a_phones_plot_turns_left():
    # The x axis ends at 2,000 FLOP/byte (log10 = 3.3); "B=1" pinned at 1,500 (log10 = 3.18) would need
    # (3 × 7 + 12) px × log10(2000 / 0.25) / 300 px = 0.43 decades on a phone: it turns left of its point.
    (label,) = [n for n in notes([1500.0], prefill=5.0) if n["text"] == "B=1"]
    assert (label["xanchor"], label["yanchor"]) == ("right", "top")
    # Far from the edge it stays right of its point.
    (label,) = [n for n in notes([200.0], prefill=5.0) if n["text"] == "B=1"]
    assert label["xanchor"] == "left"


def test_a_group_on_the_roof_by_the_ridge_goes_above_left_when_placed_points_crowd_it():
    # Llama 3.1 70B fp8 on 2 × H100 (the Roofline page's own scenario): decode sits under the roof only
    # where attention dominates, and its last group sits on the solid roof at 586 FLOP/byte, just left of
    # the 590.3 ridge (here "B=300" alone). Below-right, its label would start 0.003 decades before the
    # ridge line and cross it ((5 × 7 + 12) px × log10(2,362 ÷ 0.5) ÷ 300 px = 0.58 decades on a phone);
    # above-left, as on the slope, it clears it. A point 0.2 decades under the roof keeps below-right
    # (the roof above would strike an above-left label through). The page's "B=300, 389, 739" also ran
    # off a phone's plot below-right.
    def roof(x):
        return np.minimum(3483.0, 5.9 * np.asarray(x))  # TFLOP/s, ridge at 590.3

    def placed(under_by):
        def on_points(x):
            return roof(x) / 10**under_by

        return rl.roofline_notes(
            np.array([586.0]), [300], 400.0, 590.3, on_points, (0.5, 2362.0),
            under_the_roof=True, solid_roof=roof,
        )  # fmt: skip

    (on,) = [n for n in placed(0.001) if n["text"] == "B=300"]
    assert (on["xanchor"], on["yanchor"]) == ("right", "bottom")
    (under,) = [n for n in placed(0.2) if n["text"] == "B=300"]
    assert (under["xanchor"], under["yanchor"]) == ("left", "top")


def test_a_placed_flat_group_that_turns_left_across_the_ridge_goes_above_the_roof():
    # Llama 3.1 8B int4 on an A100 under vLLM (the unpacking cap's scenario): placed decode points, the
    # ridge at 119.1, the group "B=64, 94, 150, 300, 822" pinned at 125.8 on the flat roof. Right of it,
    # its 23 characters ((23 × 7 + 12) px × log10(2,836 ÷ 0.89) ÷ 300 px = 2.02 decades) would run off a
    # phone's plot (log10 125.8 = 2.10, the axis ends at 3.45); turned left, below the roof, it would
    # reach back to 0.08, across the sloped roof that then strikes it: above-left, it clears the slope.
    # Not placed (every point on the roof), it keeps the rows below the roof (test_charts' crowded case).
    def roof(x):
        return np.minimum(137.3, 1.153 * np.asarray(x))

    intensity = np.array([3.56, 26.1, 47.8, 125.8, 160.0, 200.0, 230.0, 260.0])
    batches = [1, 8, 16, 64, 94, 150, 300, 822]
    kwargs = dict(prefill_y=137.3, under_the_roof=True, solid_roof=roof)
    shown = {n["text"]: n for n in rl.roofline_notes(intensity, batches, 709.0, 119.1, roof, (0.89, 2836.0), **kwargs)}
    group = shown["B=64, 94, 150, 300, 822"]
    assert (group["xanchor"], group["yanchor"], group["yshift"]) == ("right", "bottom", 3)
    plain = {n["text"]: n for n in rl.roofline_notes(intensity, batches, 709.0, 119.1, roof, (0.89, 2836.0))}
    assert (plain["B=64, 94, 150, 300, 822"]["xanchor"], plain["B=64, 94, 150, 300, 822"]["yanchor"]) == (
        "right",
        "top",
    )
