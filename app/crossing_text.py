"""The cheapest option over traffic, in words: "gpt-4.1-mini up to 1,400,000 replies a day; above that, …"."""

from __future__ import annotations

import math
from collections.abc import Mapping

from app import formatting as fmt
from core.crossings import Cheapest


def traffic(replies_per_day: float) -> str:
    """Replies a day to two significant figures: a boundary found to 1e-9 is not known to that (1,437,211 → 1,400,000)."""
    if replies_per_day <= 0:
        return "0"
    digits = 1 - math.floor(math.log10(replies_per_day))
    return fmt.count(round(replies_per_day, digits))


def cheapest_words(parts: list[Cheapest], names: Mapping[str, str], low: float, high: float) -> str:
    """One sentence over the chart's traffic; `names` gives each option's words. Empty when nothing is billed."""
    if not parts:
        return ""
    if len(parts) == 1:
        return f"{names[parts[0].option]} is the cheapest at every traffic shown ({traffic(low)} to {traffic(high)} replies a day)."
    pieces = []
    for i, part in enumerate(parts):
        who = names[part.option]
        if i == 0:
            pieces.append(f"{who} is the cheapest up to {traffic(part.to_replies_per_day)} replies a day")
        elif i == len(parts) - 1:
            pieces.append(f"above {traffic(part.from_replies_per_day)}, {who}")
        else:
            pieces.append(f"from {traffic(part.from_replies_per_day)} to {traffic(part.to_replies_per_day)}, {who}")
    return "; ".join(pieces) + "."
