"""Input checks shared by every spec: one message shape, naming the field and the range.

Specs call these from `__post_init__`, so an invalid value can never exist as a spec.
`assert` is never used for this: it vanishes under `python -O`.
"""

from __future__ import annotations

import math
from numbers import Integral, Real


def _bound(value: float) -> str:
    """1,000,000 rather than 1e+06: ranges are read by people."""
    if float(value).is_integer() and abs(value) < 1e13:
        return f"{int(value):,}"
    return f"{value:g}"


def _describe(low: float, high: float, low_open: bool) -> str:
    left = f"> {_bound(low)}" if low_open else f">= {_bound(low)}"
    if math.isinf(high):
        return left
    return f"{left} and <= {_bound(high)}"


def check_number(
    field: str,
    value: object,
    low: float,
    high: float = math.inf,
    *,
    low_open: bool = False,
) -> float:
    """Return `value` as a float, or raise ValueError naming `field` and the allowed range."""
    allowed = _describe(low, high, low_open)
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{field} must be a number {allowed}, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{field} must be a finite number {allowed}, got {value!r}")
    below = number <= low if low_open else number < low
    if below or number > high:
        raise ValueError(f"{field} must be {allowed}, got {value!r}")
    return number


def check_int(field: str, value: object, low: int, high: float = math.inf) -> int:
    """Return `value` as an int, or raise ValueError naming `field` and the allowed range."""
    allowed = _describe(low, high, False)
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{field} must be a whole number {allowed}, got {value!r}")
    number = int(value)
    if number < low or number > high:
        raise ValueError(f"{field} must be a whole number {allowed}, got {value!r}")
    return number


def check_optional_int(field: str, value: object, low: int, high: float = math.inf) -> None:
    if value is not None:
        check_int(field, value, low, high)


def check_text(field: str, value: object, max_length: int = 200) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > max_length:
        raise ValueError(f"{field} must be non-empty text of at most {max_length} characters, got {value!r}")
    return value
