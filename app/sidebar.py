"""The shared sidebar: every scenario input, drawn from its description, and the one Scenario built from them.

Each widget is keyed by its flat key and bound to the URL (`app.inputs`). A model, GPU
or efficiency is a base (the select) plus numbers whose defaults are the base's own, so
only edited numbers reach the address bar. Picking another base resets its numbers
(a callback). On a bad combination the sidebar warns and keeps the last valid scenario.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app import inputs, link, price_catalogue, state
from app import sidebar_text as words
from app.compute import cached_estimate, cached_scenario
from app.page_inputs import HEADINGS, PAGE_INPUTS
from app.safe import plain
from core import presets
from core.checks import context_problems
from core.efficiency import default_efficiency, efficiency_base
from core.fields import Input, shown_value
from core.fields import inputs as described
from core.flat import EFFICIENCY_BASES, INPUTS, clean_name
from core.scenario import Scenario
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Pricing, Workload

MODEL_INPUTS = dict(described(Model))
GPU_INPUTS = dict(described(GPU))
EFFICIENCY_INPUTS = dict(described(Efficiency))
WORKLOAD = dict(described(Workload))
PRICING = dict(described(Pricing))
PRECISION = dict(described(Precision))
PRICE_SOURCE = "sb_price_source"  # not a scenario field: prices typed or loaded are the scenario's


def _efficiency_base(gpu_id: str, model_id: str) -> Efficiency:
    chosen = st.session_state.get("engine", "auto")
    model = presets.model_base(model_id)
    return default_efficiency(gpu_id, model) if chosen == "auto" else efficiency_base(chosen, model)


# --- callbacks (they run before the script, so they may set widget values) -----------------


def _set(fields: dict[str, Input], spec: Any) -> None:
    """Every field of `spec` into its widget, in the widget's unit."""
    st.session_state.update(
        {
            i.key: getattr(spec, name) if i.kind is str else shown_value(i, getattr(spec, name))
            for name, i in fields.items()
        }
    )


def _base_ids() -> tuple[str, str]:
    return st.session_state.get("gpu", presets.TOY_GPU_ID), st.session_state.get("model", presets.TOY_MODEL_ID)


def _on_model() -> None:
    _set(MODEL_INPUTS, presets.model_base(st.session_state["model"]))
    _set(EFFICIENCY_INPUTS, _efficiency_base(*_base_ids()))  # an engine's step cost counts the layers


def _on_gpu() -> None:
    _set(GPU_INPUTS, presets.gpu_base(st.session_state["gpu"]))
    _set(EFFICIENCY_INPUTS, _efficiency_base(*_base_ids()))  # "automatic" follows the GPU


def _on_efficiency() -> None:
    _set(EFFICIENCY_INPUTS, _efficiency_base(*_base_ids()))


def _on_price_source() -> None:
    chosen = st.session_state.get(PRICE_SOURCE)
    for price in price_catalogue.api_prices():
        if price.label == chosen:
            st.session_state.update(
                pin=price.input_usd_per_million_tokens,
                pout=price.output_usd_per_million_tokens,
                pcache=price.cached_input_usd_per_million_tokens,
            )


def _on_price_edit() -> None:
    st.session_state[PRICE_SOURCE] = None  # typed prices are no longer that provider's


def seed(scenario: Scenario) -> None:
    """Every sidebar widget set from a scenario (a loaded file)."""
    eff = scenario.efficiency.label
    st.session_state.update(
        model=scenario.model.id,
        gpu=scenario.gpu.id,
        engine="auto" if eff == default_efficiency(scenario.gpu.id, scenario.model).label else eff,
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


def _on_upload() -> None:
    uploaded = st.session_state.get("sb_upload")
    if uploaded is None:
        return
    _, scenario, warnings = link.parse_json(uploaded.getvalue())
    if scenario is None:
        link.note(state.current_scenario(), warnings)
        return
    seed(scenario)
    link.note(scenario, warnings)
    st.toast("Scenario loaded from the file.", icon=":material/upload_file:")


# --- drawing ---------------------------------------------------------------------------------


def _select(kind: str) -> str:
    """A preset by its id. Bound selects put the option's shown text in the link, so the
    options show ids (stable, what the CLI takes) and the full name goes in a caption."""
    known = presets.model_presets() if kind == "model" else presets.gpu_presets()
    # Before the widget's first run its value is still only in the link (bind seeds it below).
    given = st.session_state.get(kind) or st.query_params.get(kind)
    chosen = given if isinstance(given, str) and (given in known or given == CUSTOM_ID) else next(iter(known))
    value = str(
        st.selectbox(
            "Model" if kind == "model" else "GPU",
            [*known, CUSTOM_ID],
            key=kind,
            help=f"{'Whose weights are read on every step' if kind == 'model' else 'The accelerator'}.\n\n"
            + words.provenance(kind, chosen),
            on_change=_on_model if kind == "model" else _on_gpu,
            bind="query-params",
        )
    )
    st.caption(plain(words.preset_label(kind, value)))
    return value


def _numbers(fields: dict[str, Input], base: Any) -> None:
    """A base's editable numbers: each widget's default is the base's value, so only edits reach the link."""
    for name, described_input in fields.items():
        if described_input.kind is str:
            inputs.text(described_input, getattr(base, name))
        else:
            inputs.number(described_input, getattr(base, name))


def _edit_numbers(model_base: Model, gpu_base: GPU) -> None:
    box = st.expander("Edit the model's and GPU's numbers", icon=":material/tune:")
    box.caption("Edited numbers travel in the link beside the preset. Empty shape fields: no KV cache.")
    with box:
        st.markdown("**Model**")
        _numbers(MODEL_INPUTS, model_base)
        st.markdown("**GPU**")
        _numbers(GPU_INPUTS, gpu_base)


def _precision_and_efficiency(gpu_id: str, model_id: str) -> None:
    bits = inputs.number(PRECISION["weight_bits"])
    if bits is not None:
        st.caption(words.bits_note(bits))
    inputs.number(PRECISION["kv_bits"])
    inputs.choice(PRECISION["compute_bits"], auto="auto: 8 for 8-bit weights, else 16")
    st.radio(
        "Engine",
        EFFICIENCY_BASES,
        key="engine",
        captions=[words.engine_caption(base) for base in EFFICIENCY_BASES],
        help="Ideal reaches the datasheet peaks exactly (the lesson). An engine's costs are fitted on "
        "published measurements of real servers.",
        on_change=_on_efficiency,
        bind="query-params",
    )
    with st.expander("Efficiency numbers", icon=":material/speed:"):
        _numbers(EFFICIENCY_INPUTS, _efficiency_base(gpu_id, model_id))


def _prices() -> None:
    st.subheader("Prices and traffic")
    catalogue = price_catalogue.api_prices()
    if catalogue:
        st.selectbox(
            "Load prices from",
            [p.label for p in catalogue],
            index=None,
            key=PRICE_SOURCE,
            placeholder="An API model's list price…",
            on_change=_on_price_source,
            help=f"Fill the three prices from a provider's list price. Source: {price_catalogue.snapshot_version()}.",
        )
    for name in (
        "input_usd_per_million_tokens",
        "cached_input_usd_per_million_tokens",
        "output_usd_per_million_tokens",
    ):
        inputs.number(PRICING[name], on_change=_on_price_edit)
    replies = inputs.number(PRICING["replies_per_day"])
    days = inputs.number(PRICING["days_per_month"])
    note = words.traffic_note(replies, days)
    if note:
        st.caption(note)


def _flat_of_widgets() -> dict[str, str]:
    """The widgets' values as the scenario's flat form (shown units, as typed)."""
    values = st.session_state
    flat = {"model": values.get("model", presets.TOY_MODEL_ID), "gpu": values.get("gpu", presets.TOY_GPU_ID)}
    flat["engine"] = values.get("engine", "auto")
    for key, described_input in INPUTS.items():
        value = values.get(key)
        if described_input.kind is str:
            name = clean_name(value or "")
            if name:
                flat[key] = name
        elif value is None or value == inputs.AUTO:
            if described_input.optional:
                flat[key] = ""
        else:
            flat[key] = str(int(value)) if described_input.kind is int else repr(float(value))
    return flat


def _build(alerts: Any) -> Scenario:
    flat = _flat_of_widgets()
    try:
        scenario = cached_scenario(tuple(flat.items()))
    except ValueError as error:
        message = str(error)
        key = message.split(" ", 1)[0].rstrip(":,")
        if key in INPUTS:
            message = INPUTS[key].label + message[len(key) :]
        alerts.warning(f"{plain(message, 300)}. Showing the last valid scenario.", icon=":material/warning:")
        return state.current_scenario()
    for key in ("mname", "gname"):
        typed = st.session_state.get(key) or ""
        if typed.strip() != clean_name(typed):
            alerts.warning(f"{INPUTS[key].label}: only letters, digits, spaces and .-+/()#, are kept.")
    return scenario


def _page_inputs(page: str) -> None:
    """The current page's own inputs under its heading; every other page's, out of sight."""
    own = PAGE_INPUTS.get(page, ())
    if own:
        st.subheader(HEADINGS[page])
        for described_input in own:
            inputs.draw(described_input)
    inputs.offscreen(i for name, group in PAGE_INPUTS.items() if name != page for i in group)


def render(page: str, page_path: str) -> Scenario:
    """Draw the sidebar, store and return this run's Scenario (the last valid one on bad input).

    `page` ("latency") picks the page inputs shown; `page_path` ("/latency") is for the share box's link.
    """
    with st.sidebar:
        _page_inputs(page)
        alerts = st.container()
        model_id = _select("model")
        gpu_id = _select("gpu")
        inputs.number(WORKLOAD["gpu_count"])
        _edit_numbers(presets.model_base(model_id), presets.gpu_base(gpu_id))
        st.subheader("Precision and efficiency")
        _precision_and_efficiency(gpu_id, model_id)
        st.subheader("Request")
        for name in ("prompt_tokens", "output_tokens", "batch_size", "cached_prompt_tokens"):
            inputs.number(WORKLOAD[name])
        _prices()
    scenario = _build(alerts)
    state.store_scenario(scenario)
    memory = words.memory_warning(scenario, cached_estimate(scenario).memory)
    if memory:
        alerts.warning(memory, icon=":material/memory:")
    for problem in context_problems(scenario):
        alerts.warning(plain(problem[0].upper() + problem[1:], 400) + ".", icon=":material/straighten:")
    share = st.sidebar.expander(
        "Share or save this scenario", icon=":material/share:", key="sb_share_open", on_change="rerun"
    )
    if share.open:
        with share:
            link.share_box(scenario, page_path)
            st.file_uploader(
                "Load a scenario (JSON)",
                type=["json"],
                key="sb_upload",
                on_change=_on_upload,
                help="A file saved with 'Download scenario (JSON)'. Unknown or bad values are ignored.",
            )
    return scenario
