"""The shared sidebar: draws the scenario form's widgets and builds one validated Scenario.

The form itself (fields, labels, help, units, widgets ↔ Scenario) is `scenario_form`, pure
and tested without Streamlit. Here: the widgets (keys `sb_*`, stable, so nothing typed is
lost on a rerun or a page switch), the callbacks that keep presets and custom numbers in
step, and `render`, which builds the scenario and, on a bad combination, shows a warning
and keeps the last valid scenario instead of raising.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import price_catalogue
import query
import state
import streamlit as st
from compute import cached_estimate
from scenario_form import (
    EFFICIENCY_LABELS,
    GPU_FIELDS,
    HELP,
    KV_BITS,
    KV_LABELS,
    LABELS,
    MODEL_FIELDS,
    OPTIONAL,
    STEPS,
    WEIGHT_BITS,
    WEIGHT_LABELS,
    combination_problems,
    efficiency_values,
    memory_warning,
    preset_label,
    provenance,
    scenario_from_widgets,
    traffic_note,
    widget_values,
)

from core import presets
from core.efficiency import default_efficiency
from core.scenario import Scenario
from core.specs import CUSTOM_ID

MODEL_BASE = "app_model_base"  # the spec a custom model keeps its unexposed fields from
GPU_BASE = "app_gpu_base"
EFF_EXPLICIT = "app_eff_explicit"  # True once the user (or a link) chose an efficiency


# --- Streamlit: seeding and callbacks (callbacks run before the script, so they may set widget keys)


def seed(scenario: Scenario) -> None:
    """Set every sidebar widget from a scenario (a shared link or a loaded file)."""
    st.session_state.update(widget_values(scenario))
    st.session_state[MODEL_BASE], st.session_state[GPU_BASE] = scenario.model, scenario.gpu
    # A link that carries the GPU's default efficiency has not really chosen one.
    st.session_state[EFF_EXPLICIT] = scenario.efficiency != default_efficiency(scenario.gpu.id)


def _on_preset(kind: str) -> None:
    chosen = st.session_state[f"sb_{kind}"]
    if kind == "gpu" and not st.session_state.get(EFF_EXPLICIT):
        st.session_state["sb_eff"] = default_efficiency(chosen).label
    if chosen == CUSTOM_ID:
        return
    spec = presets.model(chosen) if kind == "model" else presets.gpu(chosen)
    values = widget_values(replace(state.current_scenario(), **{kind: spec}))
    keys = [*(MODEL_FIELDS if kind == "model" else GPU_FIELDS), "sb_mname" if kind == "model" else "sb_gname"]
    keys += ["sb_usdh"] if kind == "gpu" else []
    st.session_state.update({key: values[key] for key in keys})
    st.session_state[MODEL_BASE if kind == "model" else GPU_BASE] = spec


def _on_raw_edit(kind: str) -> None:
    """Editing a preset's number makes it custom; the name says what it was edited from."""
    chosen = st.session_state[f"sb_{kind}"]
    if chosen == CUSTOM_ID:
        return
    spec = presets.model(chosen) if kind == "model" else presets.gpu(chosen)
    st.session_state[MODEL_BASE if kind == "model" else GPU_BASE] = spec
    st.session_state[f"sb_{kind}"] = CUSTOM_ID
    name_key = "sb_mname" if kind == "model" else "sb_gname"
    if not st.session_state.get(name_key):
        st.session_state[name_key] = query.clean_name(f"{spec.name} (edited)")


def _on_efficiency() -> None:
    st.session_state[EFF_EXPLICIT] = True
    if st.session_state["sb_eff"] == "custom":  # start from the numbers in force
        st.session_state.update(efficiency_values(state.current_scenario().efficiency))


def _on_price_source() -> None:
    chosen = st.session_state.get("sb_price_source")
    for price in price_catalogue.api_prices():
        if price.label == chosen:
            st.session_state.update(
                sb_pin=price.input_usd_per_million_tokens,
                sb_pout=price.output_usd_per_million_tokens,
                sb_pcache=price.cached_input_usd_per_million_tokens,
            )


def _on_price_edit() -> None:
    st.session_state["sb_price_source"] = None  # typed prices are no longer that provider's


def _on_upload() -> None:
    uploaded = st.session_state.get("sb_upload")
    if uploaded is None:
        return
    scenario, warnings = query.parse_json(uploaded.getvalue())
    if scenario is None:
        query.note_loaded(state.current_scenario(), warnings)
        return
    seed(scenario)
    query.note_loaded(scenario, warnings)
    st.toast("Scenario loaded from the file.", icon=":material/upload_file:")


# --- Streamlit: drawing -------------------------------------------------------------------


def _number(key: str, on_change: Any = None, args: tuple[Any, ...] = ()) -> Any:
    """A number input whose bounds are the URL parser's (query.LIMITS), so a link and a widget agree."""
    limit = query.LIMITS[key.removeprefix("sb_")]
    cast = int if limit.integer else float
    # persist_state: a widget that is not drawn (closed expander, hidden option) keeps its value.
    return st.number_input(
        LABELS[key],
        min_value=cast(limit.low),
        max_value=cast(limit.high),
        value=None if key in OPTIONAL else "min",  # None: the box may be cleared
        step=cast(STEPS.get(key, 1)),
        format=None if limit.integer else "%g",
        key=key,
        help=HELP[key],
        on_change=on_change,
        args=args,
        persist_state="session",
    )


def _select(kind: str) -> str:
    known = presets.model_presets() if kind == "model" else presets.gpu_presets()
    # With a key, a widget's identity is the key alone, so the tooltip may follow the choice.
    chosen = st.session_state.get(f"sb_{kind}", CUSTOM_ID)
    return st.selectbox(
        kind.upper() if kind == "gpu" else "Model",
        [*known, CUSTOM_ID],
        key=f"sb_{kind}",
        help=f"{HELP[f'sb_{kind}']}\n\n{provenance(kind, chosen)}",
        format_func=lambda key: preset_label(kind, key),
        on_change=_on_preset,
        args=(kind,),
    )


def _raw_numbers() -> None:
    # Lazy: the 13 inputs inside run only while the expander is open (a third of the sidebar's
    # rerun time otherwise). Closed, their keys fall back to the scenario's values (_fill_missing).
    raw = st.expander("Edit the raw numbers", key="sb_raw_open", on_change="rerun")
    if not raw.open:
        return
    with raw:
        st.caption("Changing any number turns the preset into 'custom'. Empty shape fields: no KV cache.")
        raw_sections = (
            ("model", "Model", "sb_mname", list(MODEL_FIELDS)),
            ("gpu", "GPU", "sb_gname", [*GPU_FIELDS, "sb_usdh"]),
        )
        for kind, label, name_key, fields in raw_sections:
            st.text_input(
                f"{label} name",
                key=name_key,
                max_chars=query.NAME_MAX_CHARS,
                help=HELP[name_key],
                placeholder=f"Custom {kind if kind == 'model' else label}",
                on_change=_on_raw_edit,
                args=(kind,),
                persist_state="session",
            )
            for key in fields:
                _number(key, _on_raw_edit, (kind,))


def _precision_and_efficiency() -> None:
    st.selectbox("Weights", list(WEIGHT_BITS), key="sb_wprec", format_func=WEIGHT_LABELS.get, help=HELP["sb_wprec"])
    if st.session_state["sb_wprec"] == "other":
        _number("sb_wbits")
    st.selectbox("KV cache", list(KV_BITS), key="sb_kvprec", format_func=KV_LABELS.get, help=HELP["sb_kvprec"])
    if st.session_state["sb_kvprec"] == "other":
        _number("sb_kvbits")
    st.radio(
        "Efficiency",
        list(EFFICIENCY_LABELS),
        key="sb_eff",
        format_func=EFFICIENCY_LABELS.get,
        help=HELP["sb_eff"],
        on_change=_on_efficiency,
    )
    if st.session_state["sb_eff"] == "custom":
        for key in ("sb_mbu", "sb_mfu"):
            st.slider(
                LABELS[key], min_value=0.01, max_value=1.0, step=0.01, key=key, help=HELP[key], persist_state="session"
            )
        for key in ("sb_overhead", "sb_seqoverhead", "sb_allreduce"):
            _number(key)


def _prices() -> None:
    st.subheader("Prices and traffic")
    catalogue = price_catalogue.api_prices()
    if catalogue:
        st.selectbox(
            "Load prices from",
            [p.label for p in catalogue],
            index=None,
            key="sb_price_source",
            placeholder="An API model's list price…",
            on_change=_on_price_source,
            help=f"{HELP['sb_price_source']} Source: {price_catalogue.snapshot_version()}.",
        )
    for key in ("sb_pin", "sb_pcache", "sb_pout"):
        _number(key, _on_price_edit)
    note = traffic_note(_number("sb_replies"), _number("sb_days"))
    if note:
        st.caption(note)


def _fill_missing() -> None:
    """Widgets not drawn on the last run lost their keys; put back the current scenario's values."""
    current = state.current_scenario()
    present = set(st.session_state.keys())  # one pass: each session-state lookup scans every key
    missing = {key: value for key, value in widget_values(current).items() if key not in present}
    missing.update(
        {key: spec for key, spec in ((MODEL_BASE, current.model), (GPU_BASE, current.gpu)) if key not in present}
    )
    if missing:
        st.session_state.update(missing)


def _build(alerts: Any) -> Scenario:
    snapshot = st.session_state.to_dict()
    values = {key: snapshot.get(key) for key in widget_values(state.current_scenario())}
    try:
        problems = combination_problems(values)
        if problems:
            raise ValueError(" ".join(problems))
        scenario = scenario_from_widgets(values, snapshot[MODEL_BASE], snapshot[GPU_BASE])
    except ValueError as error:
        alerts.warning(f"{query.plain(error, 400)} Showing the last valid scenario.", icon=":material/warning:")
        return state.current_scenario()
    for key in ("sb_mname", "sb_gname"):
        name = snapshot.get(key) or ""
        if name.strip() != query.clean_name(name):
            alerts.warning(
                f"{'Model' if key == 'sb_mname' else 'GPU'} name: only letters, digits, spaces and .-+/()#, are kept."
            )
    return scenario


def render() -> Scenario:
    """Draw the sidebar, store and return this run's Scenario (the last valid one on bad input)."""
    query.restore_once(seed)
    _fill_missing()
    with st.sidebar:
        alerts = st.container()
        _select("model")
        _select("gpu")
        _number("sb_gpus")
        _raw_numbers()
        _precision_and_efficiency()
        st.subheader("Request")
        for key in ("sb_prompt", "sb_out", "sb_batch", "sb_cached"):
            _number(key)
        _prices()
    scenario = _build(alerts)
    state.store_scenario(scenario)
    memory = memory_warning(scenario, cached_estimate(scenario).memory)
    if memory:
        alerts.warning(memory, icon=":material/memory:")
    share = st.sidebar.expander(
        "Share or save this scenario", icon=":material/share:", key="sb_share_open", on_change="rerun"
    )
    if not share.open:
        return scenario
    with share:
        query.render_share(scenario)
        st.file_uploader(
            "Load a scenario (JSON)",
            type=["json"],
            key="sb_upload",
            on_change=_on_upload,
            help="A file saved with 'Download scenario (JSON)'. Unknown or bad values are ignored.",
        )
    return scenario
