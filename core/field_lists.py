"""List inputs in the flat form: comma-separated items, read strictly or leniently, written back.

A list input (`Input.item` set, see `core.fields`) is a tuple of ints or strings, each one
of the input's allowed items, none twice. Its flat text is the items joined by commas with
no spaces (`tp=1,2,4`, `cands=h100-sxm,h200`); reading accepts spaces around items and keeps
their order, so `read_list(i, list_text(v)) == v` for every valid value.
"""

from __future__ import annotations

from typing import Any

from core.fields import Input, cut, list_rule


def list_text(items: tuple[Any, ...]) -> str:
    """A list's flat form: its items comma-separated, no spaces. Example: (1, 2, 4) → '1,2,4'."""
    return ",".join(str(item) for item in items)


def list_items(described_input: Input, text: str) -> tuple[list[Any], list[str]]:
    """A list's text → (the items read, in order and once each; the pieces that are not allowed items)."""
    allowed, kind = described_input.allowed(), described_input.item or str
    items: list[Any] = []
    bad: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        try:
            item = None if "_" in piece else kind(piece)  # '1_6' is no 16: Python's digit separator
        except ValueError:
            item = None
        # Matched as read, not as typed: '１６' (full-width) is 16 to a number input, and was refused here.
        if item is None or (allowed and str(item) not in allowed):
            bad.append(piece)
        elif item not in items:
            items.append(item)
    return items, bad


def read_list(described_input: Input, text: str) -> tuple[Any, ...]:
    """Strict: '1, 2,4' → (1, 2, 4); ValueError naming the key and the allowed items otherwise.

    An item not allowed, an item twice, or an empty list that may not be empty is an error.
    """
    items, bad = list_items(described_input, text)
    pieces = [p.strip() for p in text.split(",")] if text.strip() else []
    # An empty item (',,,', 'h100-sxm,,h200') is a typo, not "every GPU": only a blank text means empty.
    if bad or len(items) != len(pieces) or (not items and not described_input.optional):
        raise ValueError(f"{described_input.key} must be {list_rule(described_input)}, got {cut(text)!r}")
    return tuple(items)


def lenient_list(described_input: Input, text: str, warnings: list[str]) -> tuple[Any, ...] | None:
    """Lenient: the allowed items of a list, each once; a warning naming the key for what was dropped.

    None when nothing usable is left of a list that may not be empty (the caller keeps its default).
    Example: tp='2,3,2' → (2,), with one warning about 3.
    """
    key = described_input.key
    items, bad = list_items(described_input, text)
    if text.strip() and any(not p.strip() for p in text.split(",")):  # the command line refuses '2,,4' as a typo
        warnings.append(f"Ignored an empty item in {key}: two commas in a row, or one at an end.")
    if bad:
        dropped = ", ".join(cut(piece, 20) for piece in bad[:5]) + (" and more" if len(bad) > 5 else "")
        warnings.append(f"Ignored {dropped} in {key}: {key} must be {list_rule(described_input)}.")
    kind = described_input.item or str
    given = [str(kind(p.strip())) for p in text.split(",") if p.strip() and p.strip() not in bad]
    if len(given) > len(items):  # tp=1,1,1 was read as tp=1 without a word (the command line refuses it)
        twice = sorted({p for p in given if given.count(p) > 1})
        warnings.append(f"Read {', '.join(cut(p, 20) for p in twice[:5])} once in {key}: each item counts once.")
    if not items and not described_input.optional:
        if not bad:
            warnings.append(f"Ignored {key}: it must be {list_rule(described_input)}, not empty.")
        return None
    return tuple(items)
