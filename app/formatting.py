"""Human units for display: the only place the app turns SI values into text.

Every page formats through these functions, so "7.00 ms" reads the same everywhere
and the lesson's numbers appear with the lesson's digits.
"""

from __future__ import annotations

import math


def duration(seconds: float) -> str:
    """7.00 ms below a second, 3.51 s from one second up: the lesson's two scales."""
    if not math.isfinite(seconds):
        return "—"
    if _below_a_second(seconds):
        return f"{seconds * 1e3:,.2f} ms"
    return f"{seconds:,.2f} s"


def _below_a_second(seconds: float) -> bool:
    """Whether `seconds` still reads below 1,000 ms at two decimals (0.9999999 s is "1.00 s", not "1,000.00 ms")."""
    return abs(round(seconds * 1e3, 2)) < 1000


def durations(first: float, second: float) -> tuple[str, str]:
    """Two durations in one unit, the larger one's: ('2.11 s', '0.36 s'), never '2.11 s' vs '359.33 ms'."""
    if not (math.isfinite(first) and math.isfinite(second)):
        return duration(first), duration(second)
    if _below_a_second(max(abs(first), abs(second))):
        return f"{first * 1e3:,.2f} ms", f"{second * 1e3:,.2f} ms"
    return f"{first:,.2f} s", f"{second:,.2f} s"


def _outward(value: float, up: bool, digits: int = 2) -> str:
    """`value` to `digits` significant figures, rounded up or down: a range never shown narrower than computed."""
    if not math.isfinite(value) or value <= 0:
        return "0" if value == 0 else "—"
    decimals = digits - 1 - math.floor(math.log10(value))
    scale = 10.0**decimals
    # The tolerance keeps 7.0 × 10 = 70.000000001 from rounding up to 71.
    whole = math.ceil(value * scale - 1e-9) if up else math.floor(value * scale + 1e-9)
    if whole == 10**digits:  # 9.96 rounded up is 10, not 10.0
        whole, decimals, scale = 10 ** (digits - 1), decimals - 1, scale / 10
    return f"{whole / scale:,.{max(decimals, 0)}f}"


def _end(seconds: float, up: bool) -> tuple[str, str]:
    """One end of a duration range and its unit, `duration`'s: ms below a second, s from one up."""
    return (_outward(seconds * 1e3, up), "ms") if abs(seconds) < 1 else (_outward(seconds, up), "s")


def duration_range(low: float, high: float) -> str:
    """A likely range, two significant figures rounded outward: '63–760 ms', '3.2–8.8 s', '77 ms–3.0 s'.

    Each end in its own unit, so the end nearer a headline in ms reads in ms; one unit when they share it.
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        return "—"
    (low_text, low_unit), (high_text, high_unit) = _end(low, up=False), _end(high, up=True)
    if low_unit == high_unit:
        return f"{low_text}–{high_text} {high_unit}"
    return f"{low_text} {low_unit}–{high_text} {high_unit}"


def rounded_duration(seconds: float, digits: int = 3) -> str:
    """A fitted or derived cost to `digits` significant figures, trailing zeros dropped: '54 ms', '13.9 ms', '1.17 s'.

    For the engine's costs (its request path, fixed costs and launches per step): fitted to a few per
    cent, they read "54 ms", not "54.00 ms". The lesson's and the headlines' times keep `duration`.
    """
    if not math.isfinite(seconds):
        return "—"
    value, unit = (seconds * 1e3, "ms") if abs(seconds) < 1 else (seconds, "s")
    if value == 0:
        return f"0 {unit}"
    decimals = max(digits - 1 - math.floor(math.log10(abs(value))), 0)
    text = f"{value:,.{decimals}f}"
    return f"{text.rstrip('0').rstrip('.') if '.' in text else text} {unit}"


def ms(seconds: float, digits: int = 2) -> str:
    return f"{seconds * 1e3:,.{digits}f} ms"


def usd(amount: float) -> str:
    """$2,550 for large sums; below a dollar three significant digits ($0.0750, $0.000850), never $0.07."""
    if not math.isfinite(amount):
        return "—"
    if amount == 0:
        return "$0"
    # Each scale is chosen by the amount as it would be shown: $99.996 is "$100", not "$100.00", and
    # $0.99999 "$1.00", not "$1.000".
    if abs(round(amount, 2)) >= 100:
        return f"${amount:,.0f}"
    decimals = max(2, 2 - math.floor(math.log10(abs(amount))))
    if abs(amount) >= 1 or abs(round(amount, decimals)) >= 1:
        return f"${amount:,.2f}"
    return f"${amount:.{decimals}f}"


def gigabytes(n_bytes: float) -> str:
    if n_bytes >= 1e12:
        return f"{n_bytes / 1e12:,.2f} TB"
    return f"{n_bytes / 1e9:,.2f} GB"


def bandwidth(bytes_per_s: float) -> str:
    """'0.81 TB/s', '864 GB/s'."""
    return f"{bytes_per_s / 1e12:,.2f} TB/s" if bytes_per_s >= 1e12 else f"{bytes_per_s / 1e9:,.0f} GB/s"


def tflops(flops_per_s: float) -> str:
    """'19.5 TFLOP/s'."""
    return f"{flops_per_s / 1e12:,.1f} TFLOP/s"


def tokens_per_s(rate: float) -> str:
    return f"{rate:,.0f} tok/s"


def tokens_per_s_range(low: float, high: float) -> str:
    """'56–160 tok/s': two significant figures rounded outward, like `duration_range`."""
    return f"{_outward(low, up=False)}–{_outward(high, up=True)} tok/s"


def flop_per_byte(intensity: float) -> str:
    return f"{intensity:,.1f} FLOP/byte" if intensity < 100 else f"{intensity:,.0f} FLOP/byte"


def ratio(value: float) -> str:
    return f"{value:,.1f}x"


def percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


def gpu_discount(fraction: float) -> str:
    """A clause for a sentence about the fleet: ", GPUs 40.0% off on-demand", or nothing without a discount."""
    return f", GPUs {percent(fraction)} off on-demand" if fraction else ""


def count(value: float) -> str:
    return f"{value:,.0f}"


def plural(value: float, one: str, many: str | None = None) -> str:
    """'1 token', '2 tokens', '1,000 tokens': the count with the noun that agrees with it."""
    shown = count(value)
    return f"{shown} {one if shown == '1' else many or one + 's'}"


def listed(parts: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def tokens(value: float) -> str:
    """'1 token', '51,200 tokens'."""
    return plural(value, "token")
