"""Input checks shared by every spec: one message shape, naming the field and the range.

Specs call these from `__post_init__` (through `core.fields.validate`), so an invalid
value can never exist as a spec. `assert` is never used for this: it vanishes under
`python -O`. Numbers come back as plain Python ints and floats (a numpy scalar given in
is converted), so a spec never holds a type that JSON or a URL cannot carry.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from numbers import Integral, Real

import numpy as np

_SHOWN_MAX = 40  # a bad value is echoed at most this long
# Limits several specs share: generous, so that no estimate overflows, not to second-guess users.
MAX_TOKENS = 10_000_000  # a prompt, a reply, a sliding window
NAME_CHARS = 60  # a model's or a GPU's name and id


def near_matches(wanted: str, known: Sequence[str], count: int, first: Iterable[str] = ()) -> list[str]:
    """`first`, then the items of `known` spelled nearest `wanted` (difflib, cutoff 0.6), each once, at most
    `count`: what a message offers for a wrong id ("closest: h200, h100-sxm")."""
    near = difflib.get_close_matches(wanted, list(known), n=count, cutoff=0.6)
    return list(dict.fromkeys([*first, *near]))[:count]


def shown_number(value: float) -> str:
    """1,000,000 rather than 1e+06: ranges are read by people."""
    if float(value).is_integer() and abs(value) < 1e13:
        return f"{int(value):,}"
    return f"{value:g}"


def _describe(low: float, high: float, low_open: bool) -> str:
    left = f"> {shown_number(low)}" if low_open else f">= {shown_number(low)}"
    if math.isinf(high):
        return left
    return f"{left} and <= {shown_number(high)}"


def _echo(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_MAX else text[:_SHOWN_MAX] + "…"


def check_number(
    field: str,
    value: object,
    low: float,
    high: float = math.inf,
    *,
    low_open: bool = False,
) -> float:
    """Return `value` as a float, or raise ValueError naming `field` and the allowed range.

    The message is written only when it is needed: specs are built thousands of times in a search.
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{field} must be a number {_describe(low, high, low_open)}, got {_echo(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range, e.g. 10**400
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{field} must be a finite number {_describe(low, high, low_open)}, got {_echo(value)}")
    below = number <= low if low_open else number < low
    if below or number > high:
        raise ValueError(f"{field} must be {_describe(low, high, low_open)}, got {_echo(value)}")
    return number


def check_int(field: str, value: object, low: int, high: float = math.inf) -> int:
    """Return `value` as an int, or raise ValueError naming `field` and the allowed range."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{field} must be a whole number {_describe(low, high, False)}, got {_echo(value)}")
    number = int(value)
    if number < low or number > high:
        raise ValueError(f"{field} must be a whole number {_describe(low, high, False)}, got {_echo(value)}")
    return number


def check_bool(field: str, value: object) -> bool:
    """Return `value` as a bool (numpy's included), or raise ValueError naming `field`: 0 and 1 are not booleans."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{field} must be true or false, got {_echo(value)}")
    return bool(value)


def check_text(field: str, value: object, max_length: int = 200) -> str:
    """Non-empty printable text (no control or bidi-override characters) of at most `max_length`."""
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > max_length
        or not all(c.isprintable() for c in value)
    ):
        raise ValueError(
            f"{field} must be non-empty printable text of at most {max_length} characters, got {_echo(value)}"
        )
    return value
