"""The scenario's flat form: `{key: text}` in the units people read, the shape of a URL query.

One form for every place a scenario travels: a shared link, a downloaded JSON file,
`estimate --json`'s `scenario`. Keys and units come from each field's description
(`core.fields`); the sections and their bases are `core.flat_sections`; nothing here lists
a field.

- A model or GPU travels as the preset it starts from plus the numbers that differ from
  it: `model=llama-3.1-8b&layers=40` is Llama 3.1 8B with 40 layers. `custom` starts from
  the lesson's toy numbers. The efficiency likewise: `eff=calibrated&mbu=0.7`.
- Every other section is written in full (`to_flat`), or only where it differs from the
  lesson's defaults (`to_flat(minimal=True)`, the short form of a link).
- `from_flat` is strict (ValueError naming the key and its range, in the key's unit);
  `read_flat` is lenient, for links from strangers: it never raises, clamps what is out of
  range, drops what it cannot read (`core.lenient`), and says what it did in one warning
  per problem.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from core.fields import (
    Input,
    bound_field,
    bound_less,
    cut,
    flat_text,
    inputs,
    less_value,
    own_bounds,
    range_phrase,
    read_number,
    resolved_bounds,
)
from core.flat_sections import (
    ALIAS_KEYS,
    EFFICIENCY_BASES,
    FIELD_KEYS,
    FLAT_KEYS,
    INPUTS,
    SECTIONS,
    Section,
    View,
    base_id,
    edited_values,
    follow_total,
    implied_base,
    inputs_by_name,
    is_dense,
    named,
    option_of,
    read_base,
    section_base,
    with_aliases,
)
from core.lenient import MAX_VALUE_CHARS, SKIP, clean_name, flat_of_json, lenient_value
from core.validation import shown_number

MAX_KEYS = 200  # a hostile URL can carry thousands of keys; nobody reads past these

# The names the app, the CLI and the tests take from here, wherever they are defined.
__all__ = [
    "EFFICIENCY_BASES",
    "FIELD_KEYS",
    "FLAT_KEYS",
    "INPUTS",
    "MAX_KEYS",
    "MAX_VALUE_CHARS",
    "SECTIONS",
    "SKIP",
    "clean_name",
    "flat_of_json",
    "from_flat",
    "lenient_value",
    "option_of",
    "read_flat",
    "to_flat",
]


def to_flat(scenario: Any, minimal: bool = False) -> dict[str, str]:
    """The flat form; `minimal` keeps only what differs from the lesson's scenario."""
    flat: dict[str, str] = {}
    for section in SECTIONS:
        spec = getattr(scenario, section.name)
        spec_base = base_id(section, spec)
        base = section_base(section, spec_base, scenario.model)
        edited_only = spec_base is not None or minimal
        if section.base_key and spec_base is not None:
            if not (minimal and spec_base == implied_base(section, scenario)):
                flat[section.base_key] = spec_base
        for name, described_input in inputs(section.spec_type):
            value = getattr(spec, name)
            if edited_only and value == getattr(base, name) and not _follows_total(section, base, flat, name):
                continue
            if value is None and getattr(base, name) is None and spec_base is None:
                continue  # an unset optional with nothing to differ from ("auto"): nothing to say
            # (unset where the base sets it, gpt-oss's experts at 16 bits like the rest: said as "ebits=")
            flat[described_input.key] = "" if value is None else _text(described_input, value)
    return flat


def _follows_total(section: Section, base: Any, flat: dict[str, str], name: str) -> bool:
    """Write an unedited active count beside an edited total when reading would otherwise move it."""
    return section.name == "model" and name == "active_params" and "params" in flat and is_dense(base)


def _text(described_input: Input, value: Any) -> str:
    return value if described_input.kind is str else flat_text(described_input, value)


# --- strict: files and the command line -----------------------------------------------------


def from_flat(flat: Mapping[str, str], scenario_type: type) -> Any:
    """Strict: the flat form → a Scenario; ValueError whose message starts with the offending key."""
    for key, value in flat.items():  # the flat form is text (a link's, a file's): 1000 raised AttributeError
        if not isinstance(key, str):
            raise ValueError(f"parameter names must be text, got {cut(repr(key))}")
        if not isinstance(value, str):
            raise ValueError(f"{cut(key)} must be text, got {type(value).__name__}")
    flat = with_aliases(flat)
    unknown = sorted(set(flat) - set(FLAT_KEYS))
    if unknown:
        raise ValueError(f"unknown parameter(s): {', '.join(unknown)}")
    specs: dict[str, Any] = {}
    for section in SECTIONS:
        specs[section.name] = _section_from_flat(section, flat, specs)
    try:
        return scenario_type(**specs)
    except ValueError as error:
        raise named(error) from None


def _section_from_flat(section: Section, flat: Mapping[str, str], specs: dict[str, Any]) -> Any:
    base = section_base(section, read_base(section, flat, specs), specs.get("model"))
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
            changes[name] = read_number(described_input, text, *own_bounds(described_input))
    follow_total(section, base, changes)
    _check_named_bounds(section, base, changes, flat)
    try:
        return replace(base, **changes)
    except ValueError as error:
        raise named(error, section, changes) from None


def _check_named_bounds(section: Section, base: Any, changes: dict[str, Any], flat: Mapping[str, str]) -> None:
    """Cached ≤ prompt and the like, said with the keys and units people typed."""
    view = View(edited_values(section, base, changes))
    for name, described_input in inputs(section.spec_type):
        value = changes.get(name)
        if value is None or described_input.kind is str:
            continue
        low, high = resolved_bounds(described_input, view)
        if not low <= value <= high:
            kind = "a whole number" if described_input.kind is int else "a number"
            bounds = [b for b in (described_input.low, described_input.high) if isinstance(b, str)]
            by_name = inputs_by_name(section.spec_type)
            named_fields = [n for b in bounds for n in (bound_field(b), bound_less(b)) if n in by_name]
            limit = f" ({', '.join(by_name[n].key for n in named_fields)})" if named_fields else ""
            raise ValueError(
                f"{described_input.key} must be {kind} {range_phrase(described_input, low, high)}{limit}, "
                f"got {cut(flat.get(described_input.key, ''))!r}"
            )
    for kept, _, typed, _, least in _typed_bounds_under_kept_values(section, view, changes):
        raise ValueError(
            f"{typed.key} must be at least {shown_number(typed.shown_bound(least))}"
            f"{f' {typed.unit}' if typed.unit else ''} ({kept.key}), got {cut(flat.get(typed.key, ''))!r}"
        )


def _typed_bounds_under_kept_values(
    section: Section, view: View, changes: Mapping[str, Any]
) -> list[tuple[Input, float, Input, str, float]]:
    """(the kept field and its value, the typed bound and its name, the least the bound may be) where a
    typed bound falls below a value kept from the base: --query-heads 7 under Llama 3.1 8B's 8 KV heads.
    It was said of the field not typed ("kv_heads must be ≤ 7, got 8"), in SI units, and a link dropped
    the whole section."""
    by_name = inputs_by_name(section.spec_type)
    found = []
    for name, described_input in inputs(section.spec_type):
        bound, value = described_input.high, getattr(view, name)
        if name in changes or value is None or not isinstance(bound, str) or bound_field(bound) not in changes:
            continue
        if value > resolved_bounds(described_input, view)[1]:
            typed = bound_field(bound)
            found.append((described_input, float(value), by_name[typed], typed, float(value) + less_value(bound, view)))
    return found


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
    if len(raw) > MAX_KEYS:  # said, so that "and 195 more" below is not read as every unknown key
        warnings.append(f"Read only the first {MAX_KEYS} of the link's {len(raw):,} parameters.")
    kept = dict(list(raw.items())[:MAX_KEYS])
    for old, new in ALIAS_KEYS.items():  # eff=vllm&engine=sglang took sglang without a word
        if old in kept and new in kept and str(kept[old]) != str(kept[new]):
            warnings.append(f"Ignored {old}={cut(str(kept[old]))}: it is {new}'s older name, and {new} is given.")
    items = list(with_aliases(kept).items())
    unknown = [str(k) for k, _ in items if k not in FLAT_KEYS and k not in other_keys]
    if unknown:
        # A key with spaces around it is quoted: "prompt " read as the known key "prompt".
        names = ", ".join(cut(k, 20) if k.strip() == k and k else repr(cut(k, 20)) for k in unknown[:5])
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
        named_base = read_base(section, clean, specs)
    except ValueError as error:
        key = section.base_key or ""
        reason = str(error).removeprefix(f"{key}: ").split(", got ")[0]
        warnings.append(f"Ignored {key}={cut(clean.get(key, ''))}: {reason}.")
        clean.pop(key, None)
        named_base = read_base(section, clean, specs)
    base = section_base(section, named_base, specs.get("model"))
    changes: dict[str, Any] = {}
    for name, described_input in inputs(section.spec_type):
        key = described_input.key
        if key not in clean:
            continue
        value = lenient_value(described_input, clean[key], warnings)
        if value is not SKIP:
            changes[name] = value
    follow_total(section, base, changes)
    before = len(warnings)
    _clamp_named_bounds(section, base, changes, warnings)
    try:
        return replace(base, **changes)
    except ValueError as error:
        if changes:
            # A clamp of a section then ignored is not what happened: "topk … using 7" beside "Ignored the
            # model settings" contradicted itself.
            del warnings[before:]
            warnings.append(f"Ignored the {section.name} settings: {named(error, section, changes)}.")
        return base


def _clamp_named_bounds(section: Section, base: Any, changes: dict[str, Any], warnings: list[str]) -> None:
    """Cached ≤ prompt, active ≤ total, KV heads ≤ query heads: clamp the dependent field, say so; a typed
    bound under a value kept from the base is raised to it."""
    if not changes:
        return
    probe = edited_values(section, base, changes)
    view = View(probe)
    for kept, kept_value, typed, name, least in _typed_bounds_under_kept_values(section, view, changes):
        value = type(changes[name])(least)
        relation = "above" if bound_less(str(kept.high)).isdigit() else "at least"
        warnings.append(
            f"{typed.key}={shown_number(typed.shown_bound(changes[name]))} must be {relation} {kept.key} "
            f"({shown_number(kept.shown_bound(kept_value))}): using {shown_number(typed.shown_bound(value))}."
        )
        changes[name] = probe[name] = value
    for name, described_input in inputs(section.spec_type):
        if name not in changes or changes[name] is None or not isinstance(described_input.high, str):
            continue
        _, high = resolved_bounds(described_input, view)
        if changes[name] > high:
            shown = shown_number(described_input.shown_bound(high))
            bound_name = bound_field(described_input.high)
            bound_key = inputs_by_name(section.spec_type)[bound_name].key
            # "kvrope exceeds kvlatent (575)" named kvlatent beside a number that was not its value (576):
            # a bound "experts - 1" is said as "below experts (8)".
            of = shown_number(described_input.shown_bound(float(probe[bound_name])))
            less = bound_less(described_input.high)
            if less.isdigit():
                relation = f"below {bound_key} ({of})"
            elif less:  # cache writes ≤ prompt - cached: both named, and the difference
                relation = f"at most {bound_key} - {inputs_by_name(section.spec_type)[less].key} ({shown})"
            else:
                relation = f"at most {bound_key} ({of})"
            warnings.append(
                f"{described_input.key}={shown_number(described_input.shown_bound(changes[name]))} must be "
                f"{relation}: using {shown}."
            )
            changes[name] = type(changes[name])(high)
            probe[name] = changes[name]
