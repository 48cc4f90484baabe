"""Where the roofline's labels go ("B=…" for decode points, "prefill"), so that none overlaps another.

Pure arithmetic on the log axis (no plotly): the result is a list of plotly annotation dicts
in log10 coordinates, as a log axis wants them. On the sloped part of the roof a decode
label sits above-left of its point: the roof falls away to the left, and the datasheet roof
(dotted, above) is close. Past the ridge the roof is flat and the datasheet roof is far
above it but not far enough for text, so labels there go below the roof, in rows, each label
in the first row where it fits. A label's width is estimated from its characters against a
plot about PLOT_WIDTH_PX wide (the wide layout at 1280 px); on a much narrower screen labels
may still touch, and the hover names every point regardless.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from app import formatting

PLOT_WIDTH_PX = 700
CHAR_PX = 7.0  # 12 px sans-serif
GAP_PX = 12.0
SPACING = 1.6  # on the slope, a label's point at least this factor right of the last label's
ROW_PX = 16  # one row of labels below the flat roof
PHONE_PLOT_PX = 300  # the plot on a 390-px phone: a label that would run off the right edge there turns left
# A point this close under the solid roof (decades, about 2-3 px at either width) counts as on it: a label
# above-left of it clears the roof, which falls away to the left below the label's baseline.
ON_THE_ROOF_DECADES = 0.03
# A decode group this close to the prefill (decades, about a marker's width) sits on the diamond: one
# label names both ("prefill and B=696, 743"), where two had to find room at the ridge.
ON_THE_PREFILL_DECADES = 0.05
# A label turned left of its point spans back over the points to its left, and read as naming one of
# them (Llama 3.1 8B on an H100 under vLLM: "B=696, 743" under the B=150 marker): it hangs from a thin
# leader line, its right end this far left of its point and its top this far below, each row one more,
# and lower still by as much as the sloped roof falls under its span (one decade a decade, at about
# PLOT_HEIGHT_PX for the roof's decades), so that it sits in the empty corner under the slope.
LEADER_AX_PX = -10
LEADER_AY_PX = 14
PLOT_HEIGHT_PX = 300  # the plot area of the 460-px figure, legend and axes aside
LEADER = {"showarrow": True, "arrowhead": 0, "arrowwidth": 1, "arrowcolor": "#999999", "standoff": 6}
ABOVE_LEFT = {"xanchor": "right", "yanchor": "bottom", "xshift": -3, "yshift": 3}
BELOW_RIGHT = {"xanchor": "left", "yanchor": "top", "xshift": 5}
BELOW_LEFT = {"xanchor": "right", "yanchor": "top", "xshift": -5}
Roof = Callable[[float], Any]  # intensity (FLOP/byte) → attainable TFLOP/s


def _width_decades(text: str, x_range: tuple[float, float], plot_px: float = PLOT_WIDTH_PX) -> float:
    """How much of the log axis a label covers, in decades, gap included."""
    return (len(text) * CHAR_PX + GAP_PX) * math.log10(x_range[1] / x_range[0]) / plot_px


def runs_off_a_phone(text: str, x: float, x_range: tuple[float, float]) -> bool:
    """True when a label starting at intensity x would run off the plot's right edge on a phone."""
    return math.log10(x) + _width_decades(text, x_range, PHONE_PLOT_PX) > math.log10(x_range[1])


def _groups(
    intensity: np.ndarray, batches: Sequence[int], ridge: float, x_range: tuple[float, float]
) -> list[list[int]]:
    """Indices of decode points that share one label, left to right.

    On the slope a point joins the group when it is less than SPACING× right of the group's
    first point; past the ridge, when it lies under the group's label.
    """
    groups: list[list[int]] = []
    reach = -math.inf
    for i in np.argsort(intensity, kind="stable"):
        if intensity[i] < reach:
            groups[-1].append(int(i))
        else:
            groups.append([int(i)])
        group = groups[-1]
        x, flat = _anchor(intensity, group, ridge)
        under_label = x * 10 ** _width_decades(_text(batches, group), x_range) if flat else 0.0
        reach = max(intensity[group[0]] * SPACING, under_label)
    return groups


def _anchor(intensity: np.ndarray, group: list[int], ridge: float) -> tuple[float, bool]:
    """Where a group's label is pinned, and whether it is on the flat part of the roof (right of the ridge)."""
    flat = bool(intensity[group].max() > ridge)
    return (max(float(intensity[group[0]]), ridge), True) if flat else (float(intensity[group[-1]]), False)


def _text(batches: Sequence[int], group: list[int]) -> str:
    return "B=" + ", ".join(formatting.count(batches[i]) for i in group)


def roofline_notes(
    intensity: np.ndarray,
    batches: Sequence[int],
    prefill: float,
    ridge: float,
    roof: Roof,
    x_range: tuple[float, float],
    *,
    prefill_y: float | None = None,
    under_the_roof: bool = False,
    solid_roof: Roof | None = None,
) -> list[dict[str, Any]]:
    """One label per group of decode points ("B=8, 10"; "B=300, 324, 389") and one for prefill.

    Labels below the flat roof take rows, left to right, each the first row where its span is
    free. A prefill on the slope is labelled below-right, away from the decode labels above-left.
    `roof(x)` is where a label at intensity x sits (`prefill_y` the prefill's, when it is not on
    it); decode points placed under the sloped roof (`under_the_roof`) are labelled below-right,
    so the roof line above them does not strike their labels through, but for a group that sits on
    the solid roof (`solid_roof`, within ON_THE_ROOF_DECADES) near the ridge, whose label would cross
    the ridge line or run off a phone's plot there: it goes above-left, as on the slope; so does a
    flat-roof group among them that would run off a phone's plot and, turned left, cross the ridge.
    """
    placed: list[tuple[str, float, float | None]] = []  # text, x, row below the flat roof (None: on the slope)
    prefill_text = "prefill"
    for group in _groups(intensity, batches, ridge, x_range):
        x, flat = _anchor(intensity, group, ridge)
        if _on_the_prefill(intensity, group, prefill, roof, prefill_y):
            prefill_text = f"prefill and {_text(batches, group)}"
            continue
        placed.append((_text(batches, group), x, 0.0 if flat else None))
    rows: list[list[tuple[float, float]]] = []  # each row's taken spans, in log10 x
    notes = []
    for text, x, row in sorted([*placed, (prefill_text, prefill, 0.0)], key=lambda label: label[1]):
        is_prefill = text == prefill_text
        where = BELOW_RIGHT if under_the_roof else ABOVE_LEFT
        label_x = x
        if under_the_roof and not is_prefill and _above_the_roof(text, x, row, ridge, x_range, roof, solid_roof):
            where = ABOVE_LEFT
        elif under_the_roof and row is None and not is_prefill:
            # Below-right of a point near the ridge, it runs under the flat roof: keep its span in the
            # first row there, so a flat-roof or prefill label takes the next row, not its place.
            width = _width_decades(text, x_range, PHONE_PLOT_PX)
            rows += [] if rows else [[]]
            rows[0].append((math.log10(x), math.log10(x) + width))
        elif row is not None or is_prefill:
            # Right of its point, unless it would run off the plot's right edge on a phone: then left, on a leader.
            turns = runs_off_a_phone(text, x, x_range)
            width = _width_decades(text, x_range)
            label_x = x if turns else _past_the_ridge(text, x, ridge, x_range, is_prefill)
            end = math.log10(x) + LEADER_AX_PX * math.log10(x_range[1] / x_range[0]) / PLOT_WIDTH_PX
            span = (end - width, end) if turns else (math.log10(label_x), math.log10(label_x) + width)
            free = [r for r, taken in enumerate(rows) if all(span[1] <= a or span[0] >= b for a, b in taken)]
            row = free[0] if free else len(rows)
            rows += [] if free else [[]]
            rows[row].append(span)
            if turns:
                drop = LEADER_AY_PX + ROW_PX * row + _under_the_slope_px(text, end, ridge, x_range, roof)
                where = {**LEADER, "xanchor": "right", "yanchor": "top", "ax": LEADER_AX_PX, "ay": round(drop)}
            else:
                where = {**BELOW_RIGHT, "yshift": -9 - ROW_PX * row}
        y = prefill_y if is_prefill and prefill_y is not None else float(roof(x))
        notes.append({"x": math.log10(label_x), "y": math.log10(y), "text": text, "showarrow": False, **where})
    return notes


def _under_the_slope_px(text: str, end: float, ridge: float, x_range: tuple[float, float], roof: Roof) -> float:
    """How far the sloped roof falls under a label ending at log10 x `end`, px: the part of its span left of
    the ridge (at the wide layout's width), one decade of roof a decade, at the plot's height. On a phone the
    label spans more decades and its left end may still meet the slope; sized for the phone, it hung past
    the axis at 1280 px."""
    left = end - _width_decades(text, x_range)
    over_the_slope = max(0.0, min(end, math.log10(ridge)) - left)
    roof_decades = math.log10(float(roof(x_range[1])) / float(roof(x_range[0])))
    return over_the_slope * PLOT_HEIGHT_PX / max(roof_decades, 1e-9)


def _on_the_prefill(
    intensity: np.ndarray, group: list[int], prefill: float, roof: Roof, prefill_y: float | None
) -> bool:
    """Whether every point of a decode group sits on the prefill's diamond (within ON_THE_PREFILL_DECADES both ways)."""
    y = float(roof(prefill)) if prefill_y is None else prefill_y
    return all(
        abs(math.log10(float(intensity[i]) / prefill)) <= ON_THE_PREFILL_DECADES
        and abs(math.log10(float(roof(float(intensity[i]))) / y)) <= ON_THE_PREFILL_DECADES
        for i in group
    )


def _past_the_ridge(text: str, x: float, ridge: float, x_range: tuple[float, float], is_prefill: bool) -> float:
    """Where a prefill label left of the ridge starts: at its point, or at the ridge when on a phone it would cross it.

    The ridge's dashed line runs down through the plot; a label below-right of a prompt a little left
    of it would be struck through (Llama 3.1 70B fp8 on 2 × H100: the prompt at 400 FLOP/byte, the
    ridge at 591). Moved to start at the ridge, it sits just right of the line, beside its point.
    """
    if not is_prefill or x >= ridge:
        return x
    return ridge if _crosses_the_ridge(text, x, ridge, x_range) else x


def _crosses_the_ridge(text: str, x: float, ridge: float, x_range: tuple[float, float]) -> bool:
    """True when a label starting at intensity x, on a phone's plot, reaches past the ridge line."""
    return math.log10(x) + _width_decades(text, x_range, PHONE_PLOT_PX) > math.log10(ridge)


def _above_the_roof(
    text: str,
    x: float,
    row: float | None,
    ridge: float,
    x_range: tuple[float, float],
    roof: Roof,
    solid_roof: Roof | None,
) -> bool:
    """Among steps placed under the roof, a decode label that goes above-left, clear of what would cut it below.

    On the slope (`row` None): a point on the solid roof whose label below-right would cross the ridge
    line or leave a phone's plot. On the flat roof: a group whose label must turn left (it would leave
    a phone's plot) and would reach back across the ridge, where below-left the sloped roof crosses it.
    Above-left, the roof falls away beneath the label, as on the slope.
    """
    if row is None:
        if solid_roof is None:
            return False
        on_the_roof = math.log10(float(solid_roof(x))) - math.log10(float(roof(x))) <= ON_THE_ROOF_DECADES
        return on_the_roof and (_crosses_the_ridge(text, x, ridge, x_range) or runs_off_a_phone(text, x, x_range))
    phone = _width_decades(text, x_range, PHONE_PLOT_PX)  # turned left, its span reaches back from x
    return runs_off_a_phone(text, x, x_range) and math.log10(x) - phone < math.log10(ridge)
