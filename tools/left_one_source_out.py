"""Leaving one source out at a time, for the tools that fit one of llama.cpp's own costs on the later sets.

Each source's rows are predicted by the value fitted on every other source, beside a baseline
value (none, or the shared one); a line per source is printed. Not part of `make test`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from core.measurements import Measurement


def left_one_source_out(
    rows: list[Measurement],
    everything: list[Measurement],
    fit: Callable[[list[Measurement]], float],
    error_pct: Callable[[Measurement, float], float],
    baseline: float,
    shown: Callable[[float], str],
) -> tuple[list[float], list[float]]:
    """(errors at `baseline`, errors at the value fitted without the row's source) for every row of `rows`.

    `fit` sees `everything` but the left-out source's rows; `shown` writes a fitted value.
    """
    at_baseline: list[float] = []
    left_out: list[float] = []
    for source in sorted({m.source_id for m in rows}):
        value = fit([m for m in everything if m.source_id != source])
        own = [m for m in rows if m.source_id == source]
        before = [error_pct(m, baseline) for m in own]
        after = [error_pct(m, value) for m in own]
        at_baseline += before
        left_out += after
        print(
            f"  {source[:44]:44} {len(own):2} rows  {shown(value)}  "
            f"median {statistics.median(before):6.1f} % -> {statistics.median(after):6.1f} %"
        )
    return at_baseline, left_out
