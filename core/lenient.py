"""One value from a stranger's text, read leniently: clamped, rounded or skipped, never raising.

Links and JSON files come from anyone. Each reader here turns one value's text into the
nearest valid value (or `SKIP` when nothing usable is left) and appends one warning per
fix, naming the key people typed. The scenario's reader (`core.flat.read_flat`) and a
standalone spec's (`core.spec_flat.read_spec`) both read their values here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from core.field_lists import lenient_list
from core.fields import Input, allowed_range, cut, own_bounds, range_phrase, si_decimal, switch_from_text
from core.validation import shown_number

MAX_VALUE_CHARS = 64  # the longest honest value is ~25 characters
_NAME_EXTRA = set(" .-+/()#,")

SKIP = object()  # lenient_value's answer for a value that cannot be read


def clean_name(text: str) -> str:
    """A model or GPU name reduced to letters, digits, spaces and `.-+/()#,` (no markup, no controls)."""
    kept = "".join(c for c in text if c.isalnum() and c.isprintable() or c in _NAME_EXTRA)
    return " ".join(kept.split())[:60]


def lenient_value(described_input: Input, text: str, warnings: list[str]) -> Any:
    """One value from a link: clamped into range, rounded to a whole number, or SKIP; each fix a warning."""
    key = described_input.key
    if described_input.is_list:
        items = lenient_list(described_input, text, warnings)
        return SKIP if items is None else items
    if described_input.kind is bool:
        switch = switch_from_text(text)
        if switch is None:
            warnings.append(f"Ignored {key}={cut(text)}: {key} must be true or false (or 1/0, yes/no, on/off).")
            return SKIP
        return switch
    if described_input.choices:
        choice = described_input.choice_of(text.strip())  # the choice, or its label ("Part 3: short and long")
        if choice is not None:
            return described_input.kind(choice)
        warnings.append(f"Ignored {key}={cut(text)}: {key} must be one of {', '.join(described_input.choices)}.")
        return SKIP
    if described_input.kind is str:
        name = clean_name(text)
        if not name:  # nothing was kept: "kept only letters …" read as if something had been
            warnings.append(f"Ignored {key}: a name needs letters or digits (and may hold spaces and . - + / ( ) # ,).")
        elif name != text:
            warnings.append(
                f"{key}: kept {name!r}, its letters, digits, spaces and . - + / ( ) # , (at most 60 characters)."
            )
        return name or SKIP
    if text.strip() == "" and described_input.optional:
        return None
    low, high = own_bounds(described_input)
    value = _si_or_none(described_input, text)
    if value is None:
        warnings.append(
            f"Ignored {key}={cut(text)}: {key} must be a number {range_phrase(described_input, low, high)}."
        )
        return SKIP
    clamped = min(max(value, low), high)
    if not math.isfinite(clamped):  # no bound of its own (topk ≤ experts - 1): nothing to clamp to here
        warnings.append(
            f"Ignored {key}={cut(text)}: {key} must be a finite number {range_phrase(described_input, low, high)}."
        )
        return SKIP
    if clamped != value:
        shown = shown_number(described_input.shown_bound(clamped))
        # "1 to 8", or "at least 1" where there is no upper bound: "is outside at least 1" reads wrong
        allowed = allowed_range(described_input, low, high)
        verb = "is not" if allowed.startswith("at least") else "is outside"
        warnings.append(f"{key}={cut(text)} {verb} {allowed}: using {shown}.")
    if described_input.kind is int:
        if clamped != round(clamped):
            warnings.append(f"{key}={cut(text)} must be a whole number: using {round(clamped):,}.")
        return int(round(clamped))
    return float(clamped)


def _si_or_none(described_input: Input, text: str) -> float | None:
    """Any decimal number (1e400 and inf included: they clamp) → SI; None when it is not a number."""
    try:
        shown = Decimal(text.strip())
    except InvalidOperation:
        return None
    if shown.is_nan():
        return None
    if shown.is_infinite():
        return math.copysign(math.inf, shown)
    return float(si_decimal(described_input, shown))  # beyond a float: ±inf, which clamps


def flat_of_json(obj: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """A JSON object's values as flat text (numbers written as JSON gave them, true/false as the link writes
    them); warnings for the rest."""
    flat: dict[str, str] = {}
    warnings: list[str] = []
    for key, value in obj.items():
        if isinstance(value, str):
            flat[key] = value
        elif isinstance(value, bool):
            flat[key] = "true" if value else "false"
        elif isinstance(value, int | float):
            flat[key] = repr(value) if isinstance(value, float) else str(value)
        else:
            warnings.append(f"Ignored {cut(str(key), 20)}: its value must be text, a number or true/false.")
    return flat, warnings
