"""The scenario's flat form: `{key: text}` in the units people read, the shape of a URL query.

One form for every place a scenario travels: a shared link, a downloaded JSON file,
`estimate --json`'s `scenario`. Keys and units come from each field's description
(`core.fields`); nothing here lists a field.

- A model or GPU travels as the preset it starts from plus the numbers that differ from
  it: `model=llama-3.1-8b&layers=40` is Llama 3.1 8B with 40 layers. `custom` starts from
  the lesson's toy numbers. The efficiency likewise: `eff=calibrated&mbu=0.7`.
- Every other section is written in full (`to_flat`), or only where it differs from the
  lesson's defaults (`to_flat(minimal=True)`, the short form of a link).
- `from_flat` is strict (ValueError naming the key and its range, in the key's unit);
  `read_flat` is lenient, for links from strangers: it never raises, clamps what is out of
  range, drops what it cannot read, and says what it did in one warning per problem.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from core import presets
from core.api_prices import lookup
from core.billing import pricing_of
from core.efficiency import BASES, default_efficiency, efficiency_base
from core.engine import ALIASES
from core.field_lists import lenient_list
from core.fields import (
    Input,
    allowed_range,
    bound_field,
    cut,
    flat_text,
    inputs,
    range_phrase,
    read_number,
    resolved_bounds,
)
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Pricing, Workload
from core.validation import shown_number

MAX_VALUE_CHARS = 64  # the longest honest value is ~25 characters
MAX_KEYS = 200  # a hostile URL can carry thousands of keys; nobody reads past these
_NAME_EXTRA = set(" .-+/()#,")


@dataclass(frozen=True, slots=True)
class Section:
    """One spec of the scenario in the flat form: its base key (if any) and its fields."""

    name: str
    spec_type: type
    base_key: str | None = None


SECTIONS = (
    Section("model", Model, "model"),
    Section("gpu", GPU, "gpu"),
    Section("precision", Precision),
    Section("efficiency", Efficiency, "engine"),
    Section("workload", Workload),
    Section("pricing", Pricing, "api"),
)
FLAT_KEYS: tuple[str, ...] = tuple(
    key
    for section in SECTIONS
    for key in ((section.base_key,) if section.base_key else ()) + tuple(i.key for _, i in inputs(section.spec_type))
)
INPUTS: dict[str, Input] = {i.key: i for s in SECTIONS for _, i in inputs(s.spec_type)}
FIELD_KEYS: dict[str, str] = {name: i.key for s in SECTIONS for name, i in inputs(s.spec_type)}
EFFICIENCY_BASES = ("auto", *BASES)
ALIAS_KEYS = {"eff": "engine"}  # older links' name for the key


def clean_name(text: str) -> str:
    """A model or GPU name reduced to letters, digits, spaces and `.-+/()#,` (no markup, no controls)."""
    kept = "".join(c for c in text if c.isalnum() and c.isprintable() or c in _NAME_EXTRA)
    return " ".join(kept.split())[:60]


def base_spec(section: Section, base_id: str, model: Any = None) -> Any:
    """The spec a section's edits apply to: a preset, the custom base, an engine's costs for `model`, or defaults."""
    if section.name == "model":
        return presets.model_base(base_id)
    if section.name == "gpu":
        return presets.gpu_base(base_id)
    if section.name == "efficiency":
        return efficiency_base(base_id, model)
    if section.name == "pricing":
        return pricing_of(lookup(base_id))
    return section.spec_type()


def _base_id(section: Section, spec: Any) -> str | None:
    if section.name in ("model", "gpu"):
        return str(spec.id)
    if section.name == "efficiency":
        return str(spec.label)
    if section.name == "pricing":
        return None if spec.api_model is None else str(spec.api_model)
    return None


def to_flat(scenario: Any, minimal: bool = False) -> dict[str, str]:
    """The flat form; `minimal` keeps only what differs from the lesson's scenario."""
    flat: dict[str, str] = {}
    for section in SECTIONS:
        spec = getattr(scenario, section.name)
        base_id = _base_id(section, spec)
        base = base_spec(section, base_id, scenario.model) if base_id is not None else section.spec_type()
        edited_only = base_id is not None or minimal
        if section.base_key and base_id is not None:
            if not (minimal and base_id == _implied_base(section, scenario)):
                flat[section.base_key] = base_id
        for name, described_input in inputs(section.spec_type):
            value = getattr(spec, name)
            if edited_only and value == getattr(base, name) and not _follows_total(section, base, flat, name):
                continue
            if value is None and described_input.default is None and base_id is None:
                continue  # an unset optional with nothing to differ from ("auto"): nothing to say
            flat[described_input.key] = "" if value is None else _text(described_input, value)
    return flat


def _follows_total(section: Section, base: Any, flat: dict[str, str], name: str) -> bool:
    """Write an unedited active count beside an edited total when reading would otherwise move it."""
    return section.name == "model" and name == "active_params" and "params" in flat and _is_dense(base)


def _is_dense(model: Any) -> bool:
    return bool(model.active_params == model.total_params)


def _implied_base(section: Section, scenario: Any) -> str:
    """The base a flat form without this section's key reads as."""
    if section.name == "efficiency":
        return default_efficiency(scenario.gpu.id, scenario.model).label
    if section.name == "pricing":
        return ""  # no API: prices typed by hand
    return presets.TOY_MODEL_ID if section.name == "model" else presets.TOY_GPU_ID


def _text(described_input: Input, value: Any) -> str:
    return value if described_input.kind is str else flat_text(described_input, value)


def from_flat(flat: Mapping[str, str], scenario_type: type) -> Any:
    """Strict: the flat form → a Scenario; ValueError whose message starts with the offending key."""
    flat = _with_aliases(flat)
    unknown = sorted(set(flat) - set(FLAT_KEYS))
    if unknown:
        raise ValueError(f"unknown parameter(s): {', '.join(unknown)}")
    specs: dict[str, Any] = {}
    for section in SECTIONS:
        specs[section.name] = _section_from_flat(section, flat, specs)
    try:
        return scenario_type(**specs)
    except ValueError as error:
        raise _named(error) from None


def _with_aliases(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Older key names read as today's (eff= is engine=); today's name wins when both are given."""
    renamed = dict(flat)
    for old, new in ALIAS_KEYS.items():
        if old in renamed:
            value = renamed.pop(old)
            renamed.setdefault(new, value)
    return renamed


def _section_from_flat(section: Section, flat: Mapping[str, str], specs: dict[str, Any]) -> Any:
    base_id = _read_base(section, flat, specs)
    base = base_spec(section, base_id, specs.get("model")) if base_id is not None else section.spec_type()
    changes: dict[str, Any] = {}
    for name, described_input in inputs(section.spec_type):
        if described_input.key not in flat:
            continue
        text = flat[described_input.key]
        if described_input.kind is str:
            if text.strip():  # an empty name is no name: the base's stays
                changes[name] = text
        elif text.strip() == "" and described_input.optional:
            changes[name] = None
        else:
            low, high = _own_bounds(described_input)
            changes[name] = read_number(described_input, text, low, high)
    _follow_total(section, base, changes)
    _check_named_bounds(section, base, changes, flat)
    try:
        return replace(base, **changes)
    except ValueError as error:
        raise _named(error) from None


def _check_named_bounds(section: Section, base: Any, changes: dict[str, Any], flat: Mapping[str, str]) -> None:
    """Cached ≤ prompt and the like, said with the keys and units people typed."""
    view = _View({f.name: changes.get(f.name, getattr(base, f.name)) for f in fields(section.spec_type) if f.init})
    for name, described_input in inputs(section.spec_type):
        value = changes.get(name)
        if value is None or described_input.kind is str:
            continue
        low, high = resolved_bounds(described_input, view)
        if not low <= value <= high:
            kind = "a whole number" if described_input.kind is int else "a number"
            named = [b for b in (described_input.low, described_input.high) if isinstance(b, str)]
            limit = (
                f" ({', '.join(inputs_by_name(section.spec_type)[bound_field(b)].key for b in named)})" if named else ""
            )
            raise ValueError(
                f"{described_input.key} must be {kind} {range_phrase(described_input, low, high)}{limit}, "
                f"got {cut(flat.get(described_input.key, ''))!r}"
            )


def _read_base(section: Section, flat: Mapping[str, str], specs: dict[str, Any]) -> str | None:
    if section.base_key is None:
        return None
    given = flat.get(section.base_key)
    if section.name == "pricing":
        if not given:
            return None
        try:
            return lookup(given).id
        except ValueError as error:  # it names the id and the closest ones
            raise ValueError(f"api: {error}") from None
    if section.name == "efficiency":
        label = "auto" if given is None else given
        if label == "custom":  # older links: every number written out over the calibrated set
            label = "typical"
        label = ALIASES.get(label, label)
        if label == "auto":
            return default_efficiency(specs["gpu"].id, specs["model"]).label
        if label not in BASES:
            raise ValueError(f"engine must be one of {', '.join(EFFICIENCY_BASES)}, got {cut(label)!r}")
        return label
    known = presets.model_presets() if section.name == "model" else presets.gpu_presets()
    chosen = given if given is not None else presets.TOY_MODEL_ID if section.name == "model" else presets.TOY_GPU_ID
    if chosen != CUSTOM_ID and chosen not in known:
        raise ValueError(
            f"{section.base_key} must be 'custom' or a preset id such as {next(iter(known))}, got {cut(chosen)!r}"
        )
    return chosen


def _own_bounds(described_input: Input) -> tuple[float, float]:
    """A field's own numeric bounds; a bound named after a sibling is checked by the spec itself."""
    low = described_input.low if not isinstance(described_input.low, str) else 0.0
    high = described_input.high if not isinstance(described_input.high, str) else math.inf
    return low, high


def _follow_total(section: Section, base: Any, changes: dict[str, Any]) -> None:
    """A dense model's active parameters follow its total when only the total was edited."""
    if section.name == "model" and "total_params" in changes and "active_params" not in changes:
        if _is_dense(base):
            changes["active_params"] = changes["total_params"]


def _named(error: ValueError) -> ValueError:
    """A spec's message names its field; put the flat key in front, so people see what they typed."""
    message = str(error)
    first = message.split(" ", 1)[0].rstrip(",:")
    key = FIELD_KEYS.get(first)
    return ValueError(f"{key}: {message}" if key and key != first else message)


# --- lenient: links from strangers ---------------------------------------------------------


def read_flat(
    raw: Mapping[str, object], scenario_type: type, other_keys: Collection[str] = ()
) -> tuple[dict[str, str], Any, list[str]]:
    """Any mapping → (the cleaned flat form, the nearest valid Scenario, one warning per problem).

    Never raises. Unknown keys (other than `other_keys`, which the caller reads itself)
    and unreadable values are dropped; numbers out of range are clamped; a section core
    still rejects as a whole falls back to its defaults. Example: {"prompt": "1e308",
    "out": "abc"} → prompt 10,000,000 (clamped), out 500 (dropped), two warnings.
    """
    warnings: list[str] = []
    items = list(_with_aliases(dict(list(raw.items())[:MAX_KEYS])).items())
    unknown = [str(k) for k, _ in items if k not in FLAT_KEYS and k not in other_keys]
    if unknown:
        names = ", ".join(cut(k, 20) for k in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        warnings.append(f"Ignored unknown parameter(s): {names}{more}.")
    clean: dict[str, str] = {}
    for key, value in items:
        if key not in FLAT_KEYS:
            continue
        text = str(value)
        if len(text) > MAX_VALUE_CHARS:
            warnings.append(f"Ignored {key}: its value is {len(text):,} characters long.")
        else:
            clean[str(key)] = text
    specs: dict[str, Any] = {}
    for section in SECTIONS:
        specs[section.name] = _read_section(section, clean, specs, warnings)
    return _assemble(scenario_type, specs, clean, warnings)


def _assemble(
    scenario_type: type, specs: dict[str, Any], clean: dict[str, str], warnings: list[str]
) -> tuple[dict[str, str], Any, list[str]]:
    """The scenario from its sections; a rule across sections (4-bit maths on a GPU without 4-bit
    tensor cores) drops the value its message names, with a warning, and tries again."""
    for _ in range(len(SECTIONS)):
        try:
            scenario = scenario_type(**specs)
        except ValueError as error:
            key = str(error).split(":", 1)[0]
            section = next((s for s in SECTIONS if key in {i.key for _, i in inputs(s.spec_type)}), None)
            if section is None or key not in clean:
                raise
            warnings.append(f"Ignored {key}={cut(clean.pop(key))}: {str(error).split(': ', 1)[-1]}.")
            specs[section.name] = _read_section(section, clean, specs, [])
            continue
        return to_flat(scenario, minimal=True), scenario, warnings
    raise ValueError("the link's sections do not agree")


def _read_section(section: Section, clean: dict[str, str], specs: dict[str, Any], warnings: list[str]) -> Any:
    try:
        base_id = _read_base(section, clean, specs)
    except ValueError as error:
        key = section.base_key or ""
        reason = str(error).removeprefix(f"{key}: ").split(", got ")[0]
        warnings.append(f"Ignored {key}={cut(clean.get(key, ''))}: {reason}.")
        clean.pop(key, None)
        base_id = _read_base(section, clean, specs)
    base = base_spec(section, base_id, specs.get("model")) if base_id is not None else section.spec_type()
    changes: dict[str, Any] = {}
    for name, described_input in inputs(section.spec_type):
        key = described_input.key
        if key not in clean:
            continue
        value = lenient_value(described_input, clean[key], warnings)
        if value is not SKIP:
            changes[name] = value
    _follow_total(section, base, changes)
    _clamp_named_bounds(section, base, changes, warnings)
    try:
        return replace(base, **changes)
    except ValueError as error:
        if changes:
            warnings.append(f"Ignored the {section.name} settings: {_named(error)}.")
        return base


SKIP = object()  # lenient_value's answer for a value that cannot be read


def lenient_value(described_input: Input, text: str, warnings: list[str]) -> Any:
    """One value from a link: clamped into range, rounded to a whole number, or SKIP; each fix a warning."""
    key = described_input.key
    if described_input.is_list:
        items = lenient_list(described_input, text, warnings)
        return SKIP if items is None else items
    if described_input.kind is bool:
        if text.strip().lower() in ("true", "false"):
            return text.strip().lower() == "true"
        warnings.append(f"Ignored {key}={cut(text)}: {key} must be true or false.")
        return SKIP
    if described_input.choices:
        if text.strip() in described_input.choices:
            return described_input.kind(text.strip())
        warnings.append(f"Ignored {key}={cut(text)}: {key} must be one of {', '.join(described_input.choices)}.")
        return SKIP
    if described_input.kind is str:
        name = clean_name(text)
        if name != text:
            warnings.append(f"{key}: kept only letters, digits, spaces and .-+/()#, (at most 60 characters).")
        return name or SKIP
    if text.strip() == "" and described_input.optional:
        return None
    low, high = _own_bounds(described_input)
    value = _si_or_none(described_input, text)
    if value is None:
        warnings.append(
            f"Ignored {key}={cut(text)}: {key} must be a number {range_phrase(described_input, low, high)}."
        )
        return SKIP
    clamped = min(max(value, low), high)
    if not math.isfinite(clamped):  # no bound of its own (topk ≤ experts - 1): nothing to clamp to here
        warnings.append(f"Ignored {key}={cut(text)}: {key} must be a finite number.")
        return SKIP
    if clamped != value:
        shown = shown_number(described_input.shown_bound(clamped))
        warnings.append(f"{key}={cut(text)} is outside {allowed_range(described_input, low, high)}: using {shown}.")
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
    return float(shown * Decimal(repr(described_input.scale)))  # beyond a float: ±inf, which clamps


def _clamp_named_bounds(section: Section, base: Any, changes: dict[str, Any], warnings: list[str]) -> None:
    """Cached ≤ prompt, active ≤ total, KV heads ≤ query heads: clamp the dependent field, say so."""
    if not changes:
        return
    probe = {f.name: changes.get(f.name, getattr(base, f.name)) for f in fields(section.spec_type) if f.init}
    view = _View(probe)
    for name, described_input in inputs(section.spec_type):
        if name not in changes or changes[name] is None or not isinstance(described_input.high, str):
            continue
        _, high = resolved_bounds(described_input, view)
        if changes[name] > high:
            shown = shown_number(described_input.shown_bound(high))
            bound_key = inputs_by_name(section.spec_type)[bound_field(described_input.high)].key
            warnings.append(f"{described_input.key} exceeds {bound_key} ({shown}): using {shown}.")
            changes[name] = type(changes[name])(high)
            probe[name] = changes[name]


class _View:
    """Attribute access over a dict: resolves named bounds before the spec exists."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def __getattr__(self, name: str) -> Any:
        return self._values.get(name)


def inputs_by_name(spec_type: type) -> dict[str, Input]:
    return dict(inputs(spec_type))


def option_of(key: str) -> str:
    """The command-line option of a flat key."""
    return INPUTS[key].option if key in INPUTS else f"--{key}"


def flat_of_json(obj: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """A JSON object's values as flat text (numbers written as JSON gave them); warnings for the rest."""
    flat: dict[str, str] = {}
    warnings: list[str] = []
    for key, value in obj.items():
        if isinstance(value, str):
            flat[key] = value
        elif isinstance(value, int | float) and not isinstance(value, bool):
            flat[key] = repr(value) if isinstance(value, float) else str(value)
        else:
            warnings.append(f"Ignored {cut(str(key), 20)}: its value must be text or a number.")
    return flat, warnings


def names_of(keys: Iterable[str]) -> str:
    return ", ".join(keys)
