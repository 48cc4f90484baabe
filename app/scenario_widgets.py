"""The sidebar's scenario widgets as state: the callbacks that keep a base and its numbers in step,
loading a whole scenario into the widgets, and building the Scenario from their values.

Every scenario input is a widget keyed by its flat key and bound to the URL (`app.inputs`).
A model, GPU, engine or API is a base (a select) plus numbers whose widget defaults are the
base's own, so only edited numbers reach the address bar; picking another base resets its
numbers here, in a callback (callbacks run before the script, so they may set widget values).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import streamlit as st

from app import inputs
from app.compute import cached_scenario
from app.state import current_scenario
from core import presets
from core.api_prices import lookup
from core.billing import pricing_of
from core.efficiency import default_efficiency, efficiency_base
from core.engine import BACKENDS, ENGINES, backend_for
from core.fields import Input, flat_text, shown_value
from core.fields import inputs as described
from core.flat import INPUTS, clean_name
from core.scenario import Scenario
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Pricing, Workload

MODEL_INPUTS = dict(described(Model))
GPU_INPUTS = dict(described(GPU))
EFFICIENCY_INPUTS = dict(described(Efficiency))
WORKLOAD = dict(described(Workload))
PRICING = dict(described(Pricing))
PRECISION = dict(described(Precision))
PRICES = {name: i for name, i in PRICING.items() if "usd" in name}  # the price boxes an API fills
NO_API = "(none: type the prices)"  # the API select's first option (never in a link: it is the default)
# The scenario's selects and their defaults (the lesson's toy machine, no API).
BASES = {"model": presets.TOY_MODEL_ID, "gpu": presets.TOY_GPU_ID, "engine": "auto", "api": NO_API}


def efficiency_start() -> Efficiency:
    """The engine's costs (or ideal) the efficiency numbers start from, for the chosen GPU and model."""
    chosen = st.session_state.get("engine", "auto")
    model = presets.model_base(st.session_state.get("model", presets.TOY_MODEL_ID))
    gpu_id = st.session_state.get("gpu", presets.TOY_GPU_ID)
    return default_efficiency(gpu_id, model) if chosen == "auto" else efficiency_base(chosen, model)


def pricing_start() -> Pricing:
    """The prices the price boxes start from: the chosen API's list prices, or the lesson's."""
    api = st.session_state.get("api", NO_API)
    return Pricing() if api in (None, NO_API) else pricing_of(lookup(api))


def _set(fields: dict[str, Input], spec: Any) -> None:
    """Every field of `spec` into its widget, in the widget's unit (a choice as its option's text)."""
    st.session_state.update({i.key: widget_value(i, getattr(spec, name)) for name, i in fields.items()})


def widget_value(described_input: Input, value: Any) -> Any:
    """A field's value as its widget holds it: in the widget's unit, a choice as its option's text."""
    if described_input.is_list:
        return [str(item) for item in value]
    if described_input.choices:
        return inputs.AUTO if value is None else str(value)
    return value if described_input.kind is str else shown_value(described_input, value)


def on_model() -> None:
    _set(MODEL_INPUTS, presets.model_base(st.session_state["model"]))
    _set(EFFICIENCY_INPUTS, efficiency_start())  # an engine's step cost counts the layers
    _follow_release()


def _follow_release() -> None:
    """The weights' widths follow the model as its publisher ships it (DeepSeek-V3: FP8; gpt-oss: MXFP4
    experts), unless edited: a width other than the previous model's release stays (4-bit Llama → 4-bit Qwen)."""
    before = presets.release_precision(current_scenario().model.id)
    after = presets.release_precision(st.session_state["model"])
    for name in ("weight_bits", "expert_weight_bits"):
        key, was = PRECISION[name].key, getattr(before, name)
        if st.session_state.get(key, was) == was:
            st.session_state[key] = getattr(after, name)
    if not presets.model_base(st.session_state["model"]).is_moe:  # no experts: no width of theirs, even a typed one
        st.session_state[PRECISION["expert_weight_bits"].key] = None


def _follow_backend(only: tuple[str, ...] = ()) -> None:
    """llama.cpp on an Apple or Radeon GPU preset becomes that backend's profile (`core.engine.backend_for`),
    and one of its backends on any other preset llama.cpp itself; `only`: just those engines. A custom
    GPU keeps whichever the user picked."""
    gpu_id, chosen = st.session_state.get("gpu", presets.TOY_GPU_ID), st.session_state.get("engine", "auto")
    if gpu_id != CUSTOM_ID and chosen in ENGINES and (not only or chosen in only):
        st.session_state["engine"] = backend_for(chosen, presets.gpu_base(gpu_id).name)


def on_gpu() -> None:
    _set(GPU_INPUTS, presets.gpu_base(st.session_state["gpu"]))
    _follow_backend()
    _set(EFFICIENCY_INPUTS, efficiency_start())  # "automatic" follows the GPU


def on_engine() -> None:
    _follow_backend(only=tuple(BACKENDS))  # picking llama.cpp itself; a backend picked by name stays
    _set(EFFICIENCY_INPUTS, efficiency_start())


def on_api() -> None:
    _set(PRICES, pricing_start())


def seed(scenario: Scenario) -> None:
    """Every sidebar widget set from a scenario (a loaded file, a lesson button)."""
    eff = scenario.efficiency.label
    st.session_state.update(
        model=scenario.model.id,
        gpu=scenario.gpu.id,
        engine="auto" if eff == default_efficiency(scenario.gpu.id, scenario.model).label else eff,
        api=scenario.pricing.api_model or NO_API,
    )
    for fields, spec in (
        (MODEL_INPUTS, scenario.model),
        (GPU_INPUTS, scenario.gpu),
        (EFFICIENCY_INPUTS, scenario.efficiency),
        (PRECISION, scenario.precision),
        (WORKLOAD, scenario.workload),
        (PRICING, scenario.pricing),
    ):
        _set(fields, spec)


def _state() -> dict[str, Any]:
    """The session's values, read once: each lookup in st.session_state itself merges its layers
    again (about 6 µs; the sidebar's fifty-odd keys read one by one cost a quarter of a millisecond)."""
    return st.session_state.to_dict()


def holding(defaults: Iterable[tuple[Input, Any]]) -> list[Input]:
    """The inputs among (input, default value) pairs that hold another value: in the link, or set in this session.

    An input that holds nothing need not be drawn: its URL parameter is absent, and its
    widget, drawn again later, starts from the same default (the sidebar's lazy boxes)."""
    return _holding(defaults, set(st.query_params), _state())  # one read of each, not one per input


def _holding(defaults: Iterable[tuple[Input, Any]], linked: set[str], state: dict[str, Any]) -> list[Input]:
    return [
        i for i, default in defaults if i.key in linked or (i.key in state and state[i.key] != widget_value(i, default))
    ]


def held(defaults: Iterable[tuple[Input, Any]]) -> bool:
    """Whether any (input, default value) holds another value (`holding`)."""
    return bool(holding(defaults))


def scenario_held() -> bool:
    """Whether the scenario holds anything but the lesson's defaults: a key in the link, or a value set in this session.

    A page that does not read the scenario (the lesson) need not draw its inputs while this is
    False: nothing in them would change, and their values start from the same defaults later.
    """
    linked, state = set(st.query_params), _state()
    if not linked.isdisjoint((*BASES, *INPUTS)):
        return True
    if any(key in state and state[key] != default for key, default in BASES.items()):
        return True
    return bool(_holding(of(WORKLOAD, Workload()) + of(PRICING, Pricing()) + of(PRECISION, Precision()), linked, state))


def of(fields: dict[str, Input], base: Any) -> list[tuple[Input, Any]]:
    """Each input with its base's value: `held`'s defaults for a model's, GPU's or engine's numbers."""
    return [(i, getattr(base, name)) for name, i in fields.items()]


def flat_of_widgets() -> dict[str, str]:
    """The widgets' values as the scenario's flat form (shown units, as typed); an input not drawn is left out."""
    values = _state()
    flat = {"model": values.get("model", presets.TOY_MODEL_ID), "gpu": values.get("gpu", presets.TOY_GPU_ID)}
    flat["engine"] = values.get("engine", "auto")
    api = values.get("api", NO_API)
    if api not in (None, NO_API):
        flat["api"] = api
    for key, described_input in INPUTS.items():
        if key not in values:  # not drawn this run: its base's value (not "" for an optional field)
            continue
        value = values[key]
        if described_input.kind is str:
            name = clean_name(value or "")
            if name:
                flat[key] = name
        elif value is None or value == inputs.AUTO:
            if described_input.optional:
                flat[key] = ""
        elif described_input.kind is bool:
            flat[key] = flat_text(described_input, bool(value))
        else:
            flat[key] = str(int(value)) if described_input.kind is int else repr(float(value))
    return flat


def build() -> tuple[Scenario | None, str | None]:
    """This run's Scenario from the widgets, or (None, why) in the sidebar's words (labels, not keys)."""
    try:
        return cached_scenario(tuple(flat_of_widgets().items())), None
    except ValueError as error:
        message = str(error)
        key = message.split(" ", 1)[0].rstrip(":,")
        if key in INPUTS:
            message = INPUTS[key].label + message[len(key) :]
        return None, message


def typed_name_problems() -> list[str]:
    """Names that lost characters to the cleaning (a name keeps letters, digits, spaces and .-+/()#,)."""
    return [
        f"{INPUTS[key].label}: only letters, digits, spaces and .-+/()#, are kept."
        for key in ("mname", "gname")
        if (typed := st.session_state.get(key) or "").strip() != clean_name(typed)
    ]
