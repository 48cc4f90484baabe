"""Each input described once: its key, words, unit, bounds, widget step and command-line flag.

A spec field carries its description in `dataclasses.field(metadata=...)` (written with
`described(...)`), so the dataclass default, the validation bounds, the URL key, the
sidebar widget, the CLI option and the README's option list all come from one place.
The app describes its page-only inputs (a random seed, a prediction) with the same
`Input`, without a dataclass.

Units: bounds are SI (the spec's own unit); `unit` and `scale` give the unit people type
and read (GB/s, billions of parameters, ms), with SI = shown × scale. The flat form (a
link, a JSON file, `estimate --json`) carries the shown unit, so a link reads
`bw=3350` (GB/s) rather than `bw=3350000000000`. Conversions go through `Decimal`, so a
value written by `flat_text` parses back to exactly the same float.

Lists (`kind=tuple`, `item=int` or `str`): a tuple of items, written comma-separated in the
flat form (`tp=1,2,4`), each item one of `choices` — or of `choices_from()` when they are
known only at run time (preset ids) — no item twice; empty only when `optional`. Their
readers and writer are in `core.field_lists`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from decimal import Decimal, InvalidOperation, localcontext
from functools import cache
from typing import Any

from core.validation import check_bool, check_int, check_number, check_text, shown_number

INPUT = "input"  # the metadata key a described field keeps its Input under
MAX_TEXT_SHOWN = 40  # an echoed bad value is cut here: a 10,000-character value is not repeated back


@dataclass(frozen=True, slots=True)
class Input:
    """One input, as people see it: how it is named, bounded, typed and shown.

    `low`/`high` are SI; a str names a sibling field whose value is the bound (cached
    prompt tokens ≤ "prompt_tokens"), optionally less a whole number ("experts - 1").
    `optional` inputs may be empty (None).
    """

    key: str
    kind: type
    label: str
    help: str
    low: float | str = 0.0
    high: float | str = math.inf
    unit: str = ""
    scale: float = 1.0
    step: float = 1.0
    flag: str = ""
    optional: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    # What a select shows for each choice. A bound select reads the shown label from the link, so the link
    # carries the label and accepts either.
    choice_labels: tuple[str, ...] = ()
    max_chars: int = 60
    item: type | None = None  # a list: kind is tuple, each item of this type
    choices_from: Callable[[], tuple[str, ...]] | None = None  # choices known only at run time
    default_words: str = ""  # the default in words where it follows another field ("as the model ships")

    @property
    def option(self) -> str:
        """The command-line flag: `flag`, or `--` + the key."""
        return self.flag or f"--{self.key}"

    @property
    def is_list(self) -> bool:
        return self.item is not None

    def label_of(self, choice: str) -> str:
        """What a select shows for `choice`: its label, or the choice itself when it has none."""
        return dict(zip(self.choices, self.choice_labels, strict=False)).get(choice, choice)

    def choice_of(self, text: str) -> str | None:
        """The choice `text` names, as the choice or as its label, or a number's choice as a number input
        reads it ('９５', '095' → '95'); None when it names none."""
        if text in self.choices:
            return text
        if self.kind in (int, float) and "_" not in text:
            try:
                number = f"{float(text):g}"
            except ValueError:
                number = ""
            if number in self.choices:  # pct=９５ was refused where tp=１,２ and batch=５ are read
                return number
        return dict(zip(self.choice_labels, self.choices, strict=False)).get(text)

    def allowed(self) -> tuple[str, ...]:
        """The values (or a list's items) allowed, as text: `choices`, or `choices_from()`."""
        return self.choices_from() if self.choices_from is not None else self.choices

    def shown_bound(self, bound: float) -> float:
        """An SI bound in the shown unit, without float noise (0.1 s is 100,000 µs, not 99,999.99…)."""
        if self.scale == 1 or math.isinf(bound):
            return bound
        return float(Decimal(repr(bound)) / Decimal(repr(self.scale)))


def described(default: Any = MISSING, **description: Any) -> Any:
    """A dataclass field whose Input is written beside it; the default is written once, here."""
    given = None if default is MISSING else default
    return field(default=default, metadata={INPUT: Input(default=given, **description)})


@cache
def bound_field(bound: str) -> str:
    """The sibling field a named bound refers to: "experts - 1" → "experts"."""
    return bound.partition(" - ")[0]


def bound_less(bound: str) -> str:
    """What a named bound takes off its field: a whole number ("experts - 1" → "1"), another field
    ("prompt_tokens - cached_prompt_tokens" → "cached_prompt_tokens"), or "" (nothing)."""
    return bound.partition(" - ")[2]


def less_value(bound: str, spec: Any) -> float:
    """The number a named bound takes off its field, a sibling field's value read from `spec` (0 if unset)."""
    less = bound_less(bound)
    if not less or less.isdigit():
        return float(less or 0)
    value = getattr(spec, less, None)
    return float(value or 0)


def inputs(spec_type: type) -> tuple[tuple[str, Input], ...]:
    """(field name, Input) for every described field of a spec class, in field order."""
    return _inputs(spec_type)


@cache
def _inputs(spec_type: Any) -> tuple[tuple[str, Input], ...]:
    return tuple((f.name, f.metadata[INPUT]) for f in fields(spec_type) if INPUT in f.metadata)


def validate(spec: Any) -> None:
    """Check every described field against its bounds (SI); raise ValueError naming the field.

    Specs call this from `__post_init__`, so an invalid value can never exist as a spec.
    Numbers are stored back as plain int or float (a numpy scalar given in is converted).
    """
    for name, described_input in inputs(type(spec)):
        value = getattr(spec, name)
        if value is None and described_input.optional:
            continue
        low, high = resolved_bounds(described_input, spec)
        checked: object
        if described_input.is_list:
            checked = check_list(name, value, described_input)
        elif described_input.kind is int:
            checked = check_int(name, value, int(low), high)
        elif described_input.kind is float:
            checked = check_number(name, value, low, high)
        elif described_input.kind is bool:
            checked = check_bool(name, value)
        else:
            checked = check_text(name, value, described_input.max_chars)
        if type(checked) is not type(value):
            object.__setattr__(spec, name, checked)


def check_list(name: str, value: object, described_input: Input) -> tuple[Any, ...]:
    """A list field's value as a tuple: items of the right type, each allowed, none twice."""
    allowed = described_input.allowed()
    if not isinstance(value, tuple | list) or (not value and not described_input.optional):
        raise ValueError(f"{name} must be {list_rule(described_input)}, got {cut(repr(value))}")
    for item in value:
        if type(item) is not described_input.item or (allowed and str(item) not in allowed):
            raise ValueError(f"{name} must be {list_rule(described_input)}, got {cut(repr(item))} in it")
        if value.count(item) > 1:
            raise ValueError(f"{name} lists {item} twice")
    return tuple(value)


def resolved_bounds(described_input: Input, spec: Any) -> tuple[float, float]:
    """The SI bounds, a sibling field's value standing in for a named bound (its own bound if unset)."""

    def one(bound: float | str, fallback: float) -> float:
        if isinstance(bound, str):
            value = getattr(spec, bound_field(bound), None)
            return fallback if value is None else float(value) - less_value(bound, spec)
        return bound

    return one(described_input.low, 0.0), one(described_input.high, math.inf)


def own_bounds(described_input: Input) -> tuple[float, float]:
    """A field's own numeric bounds (SI); a bound named after a sibling is the spec's to check."""
    low, high = described_input.low, described_input.high
    return (0.0 if isinstance(low, str) else low), (math.inf if isinstance(high, str) else high)


# --- the flat form: text in the shown unit, exact both ways ---------------------------------


def _scale(described_input: Input) -> Decimal:
    return Decimal(repr(described_input.scale))


# Past any float (1e±308, a scale of at most 1e12 either way): Decimal's own context overflows at 1e±999999
# and raised decimal.Overflow, a traceback for `--batch 1e1000000` and a crash for `?prompt=1e1000000`.
_BEYOND_FLOAT_EXPONENT = 400


def si_decimal(described_input: Input, shown: Decimal) -> Decimal:
    """A finite shown-unit number → its SI value; ±Infinity past any float, 0 below any (never raises)."""
    if shown.is_zero() or shown.adjusted() < -_BEYOND_FLOAT_EXPONENT:
        return Decimal(0)
    if shown.adjusted() > _BEYOND_FLOAT_EXPONENT:
        return Decimal("-Infinity") if shown.is_signed() else Decimal("Infinity")
    return shown * _scale(described_input)


def si_from_text(described_input: Input, text: str) -> float | int:
    """Shown-unit text → the SI value, exactly as `flat_text` wrote it. Raises ValueError."""
    if "_" in text:  # Python's digit separator: '1_6' read as 16 without a word
        raise ValueError("not a number")
    try:
        shown = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError("not a number") from None
    if not shown.is_finite():
        raise ValueError("not a finite number")
    si = si_decimal(described_input, shown)
    if not si.is_finite():
        raise ValueError("out of range")
    if described_input.kind is int:
        if (
            not si.is_zero() and abs(si.adjusted()) > 30
        ):  # beyond any bound; and int() of 1e999999 would build a huge integer
            raise ValueError("out of range")
        if si != si.to_integral_value():
            raise ValueError("not a whole number")
        return int(si)
    return float(si)


def flat_text(described_input: Input, value: float | int) -> str:
    """The SI value as the shortest shown-unit text that `si_from_text` reads back exactly.

    Example: 3.35e12 bytes/s with scale 1e9 → "3350"; 0.0025 s with scale 1e-3 → "2.5".
    The shown value is found in decimal (not float) arithmetic, so it always exists.
    """
    if described_input.kind is bool:
        return "true" if value else "false"
    if described_input.kind is int or isinstance(value, int) and described_input.scale == 1:
        return str(int(value))
    exact = Decimal(value) / _scale(described_input) if described_input.scale != 1 else Decimal(value)
    for digits in range(1, 40):
        with localcontext() as context:
            context.prec = digits
            text = _decimal_text(+exact)
        if si_from_text(described_input, text) == value:
            return text
    return _decimal_text(exact)


def _decimal_text(number: Decimal) -> str:
    """100000 rather than 1E+5; 2.5e-06 rather than 0.0000025; never a '+' (a URL decodes it to a space)."""
    if number == number.to_integral_value() and abs(number) < Decimal(10) ** 16:
        return str(int(number))
    if -6 <= number.adjusted() < 16:
        return format(number.normalize(), "f")
    mantissa, _, exponent = format(number.normalize(), "e").partition("e")
    return f"{mantissa}e{int(exponent)}"


def shown_value(described_input: Input, value: float | int | None) -> float | int | None:
    """SI → the number a widget shows (GB/s, billions, ms); counts stay ints, switches bools."""
    if value is None:
        return None
    if described_input.kind is bool:
        return bool(value)
    if described_input.kind is int:
        return int(value)
    return float(flat_text(described_input, value))


def si_value(described_input: Input, shown: float | int | None) -> float | int | None:
    """What a widget holds (shown unit) → SI."""
    if shown is None:
        return None
    if described_input.kind is bool:
        return bool(shown)
    if described_input.kind is int:
        return int(shown)
    return si_from_text(described_input, repr(float(shown)))


def allowed_range(described_input: Input, low: float | None = None, high: float | None = None) -> str:
    """'1 to 1,000,000 GB/s' in the shown unit (SI bounds resolved by the caller when named)."""
    lo = low if low is not None else described_input.low
    hi = high if high is not None else described_input.high
    unit = f" {described_input.unit}" if described_input.unit else ""
    if isinstance(lo, str) or isinstance(hi, str):
        raise ValueError(f"{described_input.key}: resolve named bounds before describing them")
    shown_low = shown_number(described_input.shown_bound(lo))
    if math.isinf(hi):
        return f"at least {shown_low}{unit}"
    return f"{shown_low} to {shown_number(described_input.shown_bound(hi))}{unit}"


def range_phrase(described_input: Input, low: float, high: float) -> str:
    """'from 1 to 1,000 tokens', or 'of at least 0 tokens' when there is no upper bound."""
    shown = allowed_range(described_input, low, high)
    return f"of {shown}" if math.isinf(high) else f"from {shown}"


def cut(text: str, max_chars: int = MAX_TEXT_SHOWN) -> str:
    """A user's text shortened for an error message, control characters made visible."""
    short = text[:max_chars] + ("…" if len(text) > max_chars else "")
    return "".join(c if c.isprintable() else "?" for c in short)


_SWITCH_WORDS = {
    "true": True,
    "false": False,
    "1": True,
    "0": False,
    "yes": True,
    "no": False,
    "on": True,
    "off": False,
}


def switch_from_text(text: str) -> bool | None:
    """'true' or 'false' (any case, spaces around; also 1/0, yes/no, on/off, as people type a switch into a
    link: `reveal=1` was refused) → the bool; None: none of these. `flat_text` writes true or false."""
    return _SWITCH_WORDS.get(text.strip().lower())


def read_number(described_input: Input, text: str, low: float, high: float) -> float | int | bool:
    """Strict: shown-unit text → SI within [low, high] (SI), or ValueError naming the key and the range."""
    if described_input.kind is bool:
        switch = switch_from_text(text)
        if switch is None:
            raise ValueError(f"{described_input.key} must be true or false (or 1/0, yes/no, on/off), got {cut(text)!r}")
        return switch
    if described_input.choices:
        choice = described_input.choice_of(text.strip())
        if choice is None or choice not in described_input.choices:
            raise ValueError(
                f"{described_input.key} must be one of {', '.join(described_input.choices)}, got {cut(text)!r}"
            )
        return described_input.kind(choice)  # type: ignore[no-any-return]
    kind = "a whole number" if described_input.kind is int else "a number"
    try:
        value = si_from_text(described_input, text)
    except ValueError:
        value = math.nan
    if isinstance(value, float) and math.isnan(value) or not low <= value <= high:
        raise ValueError(
            f"{described_input.key} must be {kind} {range_phrase(described_input, low, high)}, got {cut(text)!r}"
        )
    return value


def list_rule(described_input: Input) -> str:
    """'a comma-separated list of 1, 2, 4, 8, each once' (and when it may be empty)."""
    empty = " (or empty)" if described_input.optional else ""
    allowed = described_input.allowed()
    of = f" of {', '.join(allowed)}" if allowed else ""
    if len(of) > 60:  # seventeen GPU ids ran past the one line an error gets: what was typed was cut off
        of = f" of the {len(allowed)} ids such as {', '.join(allowed[:3])}"
    return f"a comma-separated list{of}, each once{empty}"
