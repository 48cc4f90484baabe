"""The URL is the scenario: lenient parsing of shared links and JSON files, and writing back.

A link is `Scenario.to_flat()` as a query string. Links come from strangers, so parsing
never raises: unknown keys are ignored, malformed values fall back to the default, and
out-of-range values are clamped to the UI's bounds (`LIMITS`), each with one warning that
names the parameter and the allowed range. `parse_flat` and `parse_json` are pure (no
Streamlit calls) so tests exercise them directly; the few functions at the bottom are the
Streamlit glue (read once per session, write after every run, the share box).
"""

from __future__ import annotations

import json
import math
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from core import presets
from core.efficiency import NAMED
from core.scenario import FLAT_KEYS, Scenario, format_number
from core.specs import CUSTOM_ID, Workload
from core.units import BYTES_PER_GB, FLOP_PER_TFLOP, PARAMS_PER_BILLION, S_PER_MS

S_PER_US = 1e-6  # core.units has ms; overheads per sequence and all-reduces are microseconds


@dataclass(frozen=True, slots=True)
class Limit:
    """A field's UI bounds in the unit people type (`unit`); `scale` converts to the URL's SI value."""

    low: float
    high: float
    integer: bool = False
    scale: float = 1.0
    unit: str = ""


# Every number's UI unit, its factor to the URL's SI value and its bounds: the one table both
# the sidebar's widgets and the link parser use. The bounds are tight enough that every page
# (sweeps included) stays responsive, wide enough for any real deployment. Core's own limits
# are looser; these win in the app.
LIMITS: dict[str, Limit] = {
    "params": Limit(0.001, 100_000, scale=PARAMS_PER_BILLION, unit="billion parameters"),
    "active": Limit(0.001, 100_000, scale=PARAMS_PER_BILLION, unit="billion parameters"),
    "layers": Limit(1, 1000, integer=True),
    "hidden": Limit(1, 1_000_000, integer=True),
    "qheads": Limit(1, 10_000, integer=True),
    "kvheads": Limit(1, 10_000, integer=True),
    "headdim": Limit(1, 10_000, integer=True),
    "experts": Limit(2, 100_000, integer=True),
    "topk": Limit(1, 99_999, integer=True),
    "kvlatent": Limit(1, 1_000_000, integer=True),
    "swa": Limit(1, 10_000_000, integer=True),
    "swalayers": Limit(1, 1000, integer=True),
    "bw": Limit(1, 1_000_000, scale=BYTES_PER_GB, unit="GB/s"),
    "flops16": Limit(0.1, 1_000_000, scale=FLOP_PER_TFLOP, unit="TFLOP/s"),
    "flops8": Limit(0.1, 1_000_000, scale=FLOP_PER_TFLOP, unit="TFLOP/s"),
    "mem": Limit(0.1, 100_000, scale=BYTES_PER_GB, unit="GB"),
    "link": Limit(0.1, 100_000, scale=BYTES_PER_GB, unit="GB/s"),
    "usdh": Limit(0, 10_000, unit="USD per GPU-hour"),
    "wbits": Limit(1, 32, unit="bits"),
    "kvbits": Limit(1, 32, unit="bits"),
    "mbu": Limit(0.01, 1),
    "mfu": Limit(0.01, 1),
    "overhead": Limit(0, 1000, scale=S_PER_MS, unit="ms"),
    "seqoverhead": Limit(0, 10_000, scale=S_PER_US, unit="µs"),
    "allreduce": Limit(0, 100_000, scale=S_PER_US, unit="µs"),
    "prompt": Limit(1, 1_000_000, integer=True, unit="tokens"),
    "out": Limit(1, 200_000, integer=True, unit="tokens"),
    "batch": Limit(1, 4096, integer=True, unit="requests"),
    "cached": Limit(0, 1_000_000, integer=True, unit="tokens"),
    "gpus": Limit(1, 64, integer=True, unit="GPUs"),
    "pin": Limit(0, 1000, unit="USD per million tokens"),
    "pcache": Limit(0, 1000, unit="USD per million tokens"),
    "pout": Limit(0, 1000, unit="USD per million tokens"),
    "replies": Limit(0, 10_000_000_000, integer=True, unit="replies per day"),
    "days": Limit(1, 31, integer=True, unit="days"),
}
EFFICIENCY_LABELS = ("ideal", "calibrated", "custom")
NAME_KEYS = ("mname", "gname")
NAME_MAX_CHARS = 60
_NAME_EXTRA = set(" .-+/()#,")


def _sections() -> dict[str, tuple[str, ...]]:
    """FLAT_KEYS cut where each spec starts: a section core rejects falls back to its defaults."""
    starts = ("model", "gpu", "wbits", "eff", "prompt", "pin")
    cuts = [FLAT_KEYS.index(k) for k in starts] + [len(FLAT_KEYS)]
    names = ("model", "gpu", "precision", "efficiency", "workload", "pricing")
    return {name: FLAT_KEYS[a:b] for name, a, b in zip(names, cuts, cuts[1:], strict=False)}


SECTIONS = _sections()
MAX_VALUE_CHARS = 64  # the longest honest value is ~25 characters
MAX_KEYS = 200  # a hostile URL can carry thousands of keys; nobody reads past these
MAX_JSON_BYTES = 64 * 1024


def plain(text: object, max_chars: int = 40) -> str:
    """Untrusted text made safe to show in Streamlit markdown: shortened, no markup, no links.

    Every ASCII punctuation mark is backslash-escaped (CommonMark's escape), so `<script>`,
    `[a](b)`, `:red[x]` and `$x$` render as the characters typed.
    """
    text = str(text)
    short = text[:max_chars] + ("…" if len(text) > max_chars else "")
    shown = "".join(c if c.isprintable() else "?" for c in short)
    return "".join("\\" + c if c in string.punctuation else c for c in shown)


def clean_name(text: str) -> str:
    """A custom model or GPU name reduced to letters, digits, spaces and `.-+/()#,`."""
    kept = "".join(c for c in text if c.isalnum() or c in _NAME_EXTRA)
    return " ".join(kept.split())[:NAME_MAX_CHARS]


def _show(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}".replace("e+", "e")


def allowed_range(key: str, in_url: bool = False) -> str:
    """'1 to 200,000 tokens'; in the URL's SI units first when they differ from the widget's."""
    limit = LIMITS[key]
    unit = f" {limit.unit}" if limit.unit else ""
    human = f"{_show(limit.low)} to {_show(limit.high)}{unit}"
    if in_url and limit.scale != 1:
        return f"{_show(limit.low * limit.scale)} to {_show(limit.high * limit.scale)} ({human})"
    return human


def _number(key: str, text: str, warnings: list[str]) -> float | int | None:
    """One numeric value, in the URL's SI unit, clamped to the UI's bounds; None if unusable."""
    limit = LIMITS[key]
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        warnings.append(f"Ignored {key}={plain(text)}: {key} must be a number from {allowed_range(key, True)}.")
        return None
    human = value / limit.scale
    clamped = min(max(human, limit.low), limit.high)
    if clamped != human:
        shown = _show(clamped) if limit.scale == 1 else _show(clamped * limit.scale)
        warnings.append(f"{key}={plain(text)} is outside {allowed_range(key, True)}: using {shown}.")
    if limit.integer:  # integer fields are counts, unscaled
        whole = round(clamped)
        if whole != clamped:
            warnings.append(f"{key}={plain(text)} must be a whole number: using {whole:,}.")
        return whole
    # Keep the URL's own SI value when it was in range, so links round-trip exactly.
    return value if clamped == human else clamped * limit.scale


def _preset_id(key: str, text: str, known: Mapping[str, Any], warnings: list[str]) -> str | None:
    value = text.strip().lower()
    if value == CUSTOM_ID or value in known:
        return value
    warnings.append(
        f"Ignored {key}={plain(text)}: {key} must be 'custom' or a preset id such as"
        f" {next(iter(known))} (the sidebar lists them all)."
    )
    return None


def _efficiency(clean: dict[str, str], warnings: list[str]) -> None:
    """Reconcile `eff` with explicit numbers: numbers that change a named efficiency mean custom."""
    label = clean.get("eff")
    numbers = [k for k in SECTIONS["efficiency"][1:] if k in clean]
    if not numbers:
        return
    if label in NAMED:
        # The named set written out in full: the numbers not given keep the named values.
        named = Scenario(efficiency=replace(NAMED[label], label="custom")).to_flat()
        if all(float(clean[k]) == float(named[k]) for k in numbers):
            for k in numbers:
                del clean[k]
            return
        warnings.append(f"{', '.join(numbers)} given with eff={label}: treated as eff=custom.")
        for k in SECTIONS["efficiency"][1:]:
            clean.setdefault(k, named[k])
    clean["eff"] = "custom"


def _cross_field(clean: dict[str, str], warnings: list[str]) -> None:
    """The combinations core rejects that have an obvious repair: clamp the dependent field."""
    toy_params = presets.model(presets.TOY_MODEL_ID).total_params
    pairs = (
        ("cached", "prompt", Workload().prompt_tokens, "the prompt tokens"),
        ("active", "params", toy_params, "the total parameters"),
        ("kvheads", "qheads", None, "the query heads"),
    )
    for dependent, bound, default, words in pairs:
        if dependent not in clean:
            continue
        ceiling = float(clean[bound]) if bound in clean else default
        if ceiling is not None and float(clean[dependent]) > ceiling:
            warnings.append(
                f"{dependent}={clean[dependent]} exceeds {words} ({_show(ceiling)}): using {_show(ceiling)}."
            )
            clean[dependent] = clean[bound] if bound in clean else format_number(ceiling)


def _flat_of(parsed: dict[str, float | int | str]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else format_number(v) for k, v in parsed.items()}


def parse_flat(raw: Mapping[str, object]) -> tuple[Scenario, list[str]]:
    """Any dict of strings → the nearest valid Scenario and one warning per problem. Never raises.

    Example: {"prompt": "1e308", "out": "abc"} → prompt 1,000,000 (clamped), out 500 (the
    default), and two warnings naming `prompt` and `out` with their allowed ranges.
    """
    warnings: list[str] = []
    items = list(raw.items())[:MAX_KEYS]
    unknown = [k for k, _ in items if k not in FLAT_KEYS]
    if unknown:
        names = ", ".join(plain(k, 20) for k in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        warnings.append(f"Ignored unknown parameter(s): {names}{more}.")
    parsed: dict[str, float | int | str] = {}
    for key, value in items:
        if key not in FLAT_KEYS:
            continue
        text = str(value)
        if len(text) > MAX_VALUE_CHARS:
            warnings.append(f"Ignored {key}: its value is {len(text):,} characters long.")
        elif key == "model":
            parsed_id = _preset_id(key, text, presets.model_presets(), warnings)
            if parsed_id:
                parsed[key] = parsed_id
        elif key == "gpu":
            parsed_id = _preset_id(key, text, presets.gpu_presets(), warnings)
            if parsed_id:
                parsed[key] = parsed_id
        elif key == "eff":
            if text.strip().lower() in EFFICIENCY_LABELS:
                parsed[key] = text.strip().lower()
            else:
                warnings.append(f"Ignored eff={plain(text)}: eff must be ideal, calibrated or custom.")
        elif key in NAME_KEYS:
            name = clean_name(text)
            if name != text:
                warnings.append(
                    f"{key}: kept only letters, digits, spaces and .-+/()#, (at most {NAME_MAX_CHARS} characters)."
                )
            if name:
                parsed[key] = name
        else:
            number = _number(key, text, warnings)
            if number is not None:
                parsed[key] = number
    clean = _flat_of(parsed)
    for kind, keys in (("model", SECTIONS["model"][1:]), ("gpu", SECTIONS["gpu"][1:])):
        stray = [k for k in keys if k in clean]
        if stray and clean.get(kind) != CUSTOM_ID:
            warnings.append(f"Ignored {', '.join(stray)}: only used with {kind}=custom.")
            for k in stray:
                del clean[k]
    _efficiency(clean, warnings)
    _cross_field(clean, warnings)
    names = {k: clean.pop(k) for k in NAME_KEYS if k in clean}
    scenario = _build(clean, warnings)
    # Names are applied here rather than through from_flat: they cannot fail validation
    # once cleaned, so a name never costs the rest of a custom model its numbers.
    if scenario.model.id == CUSTOM_ID and "mname" in names:
        scenario = replace(scenario, model=replace(scenario.model, name=names["mname"]))
    if scenario.gpu.id == CUSTOM_ID and "gname" in names:
        scenario = replace(scenario, gpu=replace(scenario.gpu, name=names["gname"]))
    return scenario, warnings


def _build(clean: dict[str, str], warnings: list[str]) -> Scenario:
    """from_flat, falling back section by section when core still rejects a combination."""
    try:
        return Scenario.from_flat(clean)
    except ValueError:
        pass
    for section, keys in SECTIONS.items():
        part = {k: clean[k] for k in keys if k in clean}
        try:
            Scenario.from_flat(part)
        except ValueError as error:
            warnings.append(f"Ignored the {section} settings: {plain(error, 160)}.")
            for k in part:
                del clean[k]
    try:
        return Scenario.from_flat(clean)
    except ValueError as error:  # not expected: every section passed on its own
        warnings.append(f"Ignored the whole link: {plain(error, 160)}.")
        return Scenario.lesson()


def parse_json(data: bytes) -> tuple[Scenario | None, list[str]]:
    """A downloaded scenario file → (Scenario, warnings), leniently; (None, [why]) if unreadable."""
    if len(data) > MAX_JSON_BYTES:
        return None, [f"The file is {len(data):,} bytes; a scenario file is under {MAX_JSON_BYTES:,}."]
    try:
        obj = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None, ["The file is not JSON: download a scenario with 'Download scenario (JSON)'."]
    if not isinstance(obj, dict):
        return None, ["The file must hold one JSON object of parameter: value pairs."]
    flat: dict[str, str] = {}
    warnings: list[str] = []
    for key, value in obj.items():
        if isinstance(value, str):
            flat[key] = value
        elif isinstance(value, int | float) and not isinstance(value, bool):
            flat[key] = format_number(value) if math.isfinite(value) else str(value)
        else:
            warnings.append(f"Ignored {plain(key, 20)}: its value must be text or a number.")
    scenario, more = parse_flat(flat)
    return scenario, warnings + more


def link_query(scenario: Scenario) -> str:
    """The relative link that reproduces a scenario: `?model=toy-7b&gpu=toy-gpu&…`."""
    return "?" + urlencode(scenario.to_flat())


def scenario_json(scenario: Scenario) -> str:
    return json.dumps(scenario.to_flat(), indent=2)


# --- Streamlit glue ------------------------------------------------------------------------

_SEEDED = "app_url_seeded"
_NOTICES = "app_load_notices"  # (warnings, the scenario they describe)


def restore_once(seed: Callable[[Scenario], None]) -> None:
    """First run of a session: the address bar's scenario seeds the widgets."""
    if st.session_state.get(_SEEDED):
        return
    st.session_state[_SEEDED] = True
    scenario, warnings = parse_flat(st.query_params.to_dict())
    seed(scenario)
    st.session_state[_NOTICES] = (tuple(warnings), scenario)


def note_loaded(scenario: Scenario, warnings: list[str]) -> None:
    """Remember a loaded file's warnings; they show until the scenario is changed."""
    st.session_state[_NOTICES] = (tuple(warnings), scenario)


def show_load_warnings(current: Scenario) -> None:
    warnings, loaded = st.session_state.get(_NOTICES, ((), None))
    if warnings and loaded == current:
        for text in warnings:
            st.warning(text, icon=":material/link_off:")


def publish(scenario: Scenario) -> None:
    """Write the scenario into the address bar, only when it changed (each write is a message)."""
    flat = scenario.to_flat()
    if st.query_params.to_dict() != flat:
        st.query_params.from_dict(flat)


def render_share(scenario: Scenario) -> None:
    """The link and the JSON download; the caller adds the upload (its callback seeds widgets)."""
    st.caption("Link to this exact view (the copy button is at the right of the box):")
    st.code(link_query(scenario), language=None, wrap_lines=True)
    st.download_button(
        "Download scenario (JSON)",
        scenario_json(scenario),
        file_name="scenario.json",
        mime="application/json",
        icon=":material/download:",
        on_click="ignore",
    )
