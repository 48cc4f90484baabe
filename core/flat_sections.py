"""The layout of the scenario's flat form: its sections, their keys, and the base each section's edits apply to.

A section is one spec of the scenario. Four of them start from a base named by a key of
their own (`model=`, `gpu=`, `engine=`, `api=`), the flat form carrying only the numbers
that differ from it; precision and workload have none. Keys and units come from each
field's description (`core.fields`): nothing here lists a field. The conversions that use
this layout are in `core.flat`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, fields
from typing import Any

from core import presets
from core.api_prices import lookup
from core.billing import pricing_of
from core.efficiency import BASES, default_efficiency, efficiency_base
from core.engine import ALIASES
from core.fields import Input, cut, inputs
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Pricing, Workload
from core.validation import near_matches


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


def base_id(section: Section, spec: Any) -> str | None:
    """The base a section's spec names: a preset id, an engine, an API model; None for the others."""
    if section.name in ("model", "gpu"):
        return str(spec.id)
    if section.name == "efficiency":
        return str(spec.label)
    if section.name == "pricing":
        return None if spec.api_model is None else str(spec.api_model)
    return None


def implied_base(section: Section, scenario: Any) -> str:
    """The base a flat form without this section's key reads as."""
    if section.name == "efficiency":
        return default_efficiency(scenario.gpu.id, scenario.model).label
    if section.name == "pricing":
        return ""  # no API: prices typed by hand
    return presets.TOY_MODEL_ID if section.name == "model" else presets.TOY_GPU_ID


def read_base(section: Section, flat: Mapping[str, str], specs: dict[str, Any]) -> str | None:
    """The base the flat form names for a section (its default when not named); ValueError naming the key."""
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
        # As a wrong API id is answered with the closest ones: 'h200-sxm' is h200, 'a100-80gb' a100-80gb-sxm.
        near = _closest_presets(chosen, known)
        hint = f"closest: {', '.join(near)}" if near else f"such as {next(iter(known))}"
        raise ValueError(f"{section.base_key} must be 'custom' or a preset id ({hint}), got {cut(chosen)!r}")
    return chosen


def _closest_presets(given: str, known: Mapping[str, Any], count: int = 3) -> list[str]:
    """Preset ids that look like `given`: those it starts or is started by first, then near spellings."""
    wanted = given.strip().lower()
    if not wanted:
        return []
    prefixed = [i for i in known if i.startswith(wanted) or wanted.startswith(i)]
    prefixed.sort(key=lambda i: -len(i) if wanted.startswith(i) else len(i))
    return near_matches(wanted, list(known), count, first=prefixed)


def section_base(section: Section, base: str | None, model: Any = None) -> Any:
    """The spec a section starts from: its named base, or the spec's defaults when it has none; the
    precision starts from the model's weights as released (`model=deepseek-v3` is FP8 unless wbits says)."""
    if base is not None:
        return base_spec(section, base, model)
    if section.name == "precision" and model is not None:
        return presets.release_precision(model.id)
    return section.spec_type()


def with_aliases(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Older key names read as today's (eff= is engine=); today's name wins when both are given."""
    renamed = dict(flat)
    for old, new in ALIAS_KEYS.items():
        if old in renamed:
            value = renamed.pop(old)
            renamed.setdefault(new, value)
    return renamed


def is_dense(model: Any) -> bool:
    return bool(model.active_params == model.total_params)


def follow_total(section: Section, base: Any, changes: dict[str, Any]) -> None:
    """A dense model's active parameters follow its total when only the total was edited."""
    if section.name == "model" and "total_params" in changes and "active_params" not in changes:
        if is_dense(base):
            changes["active_params"] = changes["total_params"]


def edited_values(section: Section, base: Any, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Every field the section's spec takes: the changed ones, the base's elsewhere (named bounds read these)."""
    return {f.name: changes.get(f.name, getattr(base, f.name)) for f in fields(section.spec_type) if f.init}


class View:
    """Attribute access over a dict: resolves named bounds before the spec exists."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def __getattr__(self, name: str) -> Any:
        return self._values.get(name)


def inputs_by_name(spec_type: type) -> dict[str, Input]:
    return dict(inputs(spec_type))


def named(error: ValueError, section: Section | None = None, changed: Collection[str] = ()) -> ValueError:
    """A spec's message names its fields; put the flat key of the one people typed in front.

    `section`: the spec that raised, whose keys come first (a model's and a GPU's `name` are
    `mname` and `gname`: the flat map alone named --gname for a bad --mname). `changed`: the
    fields the caller set; a message naming several ("kv_latent_dim and sliding_window_tokens
    need …") is put on the one among them that was typed, not on its first word."""
    message = str(error)
    if message.split(" ", 1)[0].endswith(":") and message.split(":", 1)[0] in FIELD_KEYS.values():
        return ValueError(message)  # led by its key already: "ebits: … has no experts" is not about --experts
    own = {name: i.key for name, i in inputs(section.spec_type)} if section is not None else {}
    words = [word.strip(",:;()") for word in message.split()]
    mentioned = [word for word in words if word in own or word in FIELD_KEYS]
    typed = [word for word in mentioned if word in changed]
    field = (typed or mentioned or [""])[0]
    key = own.get(field) or FIELD_KEYS.get(field)
    if not key or (key == field and words[0] == field):  # already starts with what people typed
        return ValueError(message)
    return ValueError(f"{key}: {message}")


def option_of(key: str) -> str:
    """The command-line option of a flat key."""
    return INPUTS[key].option if key in INPUTS else f"--{key}"
