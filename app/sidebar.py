"""The shared sidebar: widgets in human units → one validated Scenario in SI units.

This is the only place the app converts what people type (GB/s, TFLOP/s, billions of
parameters, ms) into core's SI units, with core.units' constants. `widget_values` and
`scenario_from_widgets` are pure inverses of each other, tested without Streamlit;
`render` draws the widgets (keys `sb_*`, stable, so nothing typed is lost on a rerun or a
page switch), builds the scenario, and on a bad combination shows a warning and keeps the
last valid scenario instead of raising.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import formatting
import price_catalogue
import query
import state
import streamlit as st
from compute import cached_estimate

from core import presets
from core.efficiency import NAMED, default_efficiency
from core.scenario import Scenario
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Pricing, Workload

MODEL_BASE = "app_model_base"  # the spec a custom model keeps its unexposed fields from
GPU_BASE = "app_gpu_base"
EFF_EXPLICIT = "app_eff_explicit"  # True once the user (or a link) chose an efficiency
# Numbers that may be left empty: no attention shape (no KV cache), no rental price.
OPTIONAL = frozenset({"sb_usdh", "sb_layers", "sb_hidden", "sb_qheads", "sb_kvheads", "sb_headdim"})

WEIGHT_BITS = {"16": 16.0, "8": 8.0, "4.5": 4.5, "other": None}
WEIGHT_LABELS = {
    "16": "fp16 / bf16 (16 bits)",
    "8": "fp8 / int8 (8 bits)",
    "4.5": "int4 (4.5 bits: 4-bit + group scales)",
    "other": "Other: bits per weight",
}
KV_BITS = {"16": 16.0, "8": 8.0, "4": 4.0, "other": None}
KV_LABELS = {"16": "16-bit", "8": "8-bit (fp8 / int8)", "4": "4-bit", "other": "Other: bits per value"}
EFFICIENCY_LABELS = {
    "ideal": "Ideal (the lesson's physics)",
    "calibrated": "Calibrated (matches real hardware)",
    "custom": "Custom",
}

# Widget key → spec field. Each widget's unit and its factor to SI are in query.LIMITS (one table).
MODEL_FIELDS = {
    "sb_params": "total_params",
    "sb_active": "active_params",
    "sb_layers": "layers",
    "sb_hidden": "hidden",
    "sb_qheads": "query_heads",
    "sb_kvheads": "kv_heads",
    "sb_headdim": "head_dim",
}
GPU_FIELDS = {
    "sb_bw": "memory_bandwidth_bytes_per_s",
    "sb_flops16": "peak_flops_16bit_per_s",
    "sb_flops8": "peak_flops_8bit_per_s",
    "sb_mem": "memory_bytes",
}
EFFICIENCY_FIELDS = {
    "sb_mbu": "mbu",
    "sb_mfu": "mfu",
    "sb_overhead": "step_overhead_s",
    "sb_seqoverhead": "sequence_overhead_s",
    "sb_allreduce": "allreduce_latency_s",
}
WORKLOAD_FIELDS = {
    "sb_prompt": "prompt_tokens",
    "sb_out": "output_tokens",
    "sb_batch": "batch_size",
    "sb_cached": "cached_prompt_tokens",
    "sb_gpus": "gpu_count",
}
PRICING_FIELDS = {
    "sb_pin": "input_usd_per_million_tokens",
    "sb_pcache": "cached_input_usd_per_million_tokens",
    "sb_pout": "output_usd_per_million_tokens",
    "sb_replies": "replies_per_day",
    "sb_days": "days_per_month",
}

HELP = {
    "sb_model": "Which model's weights are read on every step. Presets carry their source; 'custom' is yours.",
    "sb_gpu": "The accelerator: its memory bandwidth sets decode speed, its TFLOP/s set prefill speed.",
    "sb_gpus": "GPUs sharing one copy of the model (tensor parallel): bandwidth, compute and memory add up.",
    "sb_mname": "A label for your edited model (letters, digits, spaces and .-+/()#,).",
    "sb_params": "Every stored weight, in billions. 7 means 7 billion parameters (14 GB at 16 bits).",
    "sb_active": "Weights one token uses, in billions: equal to the total unless it is a mixture of experts.",
    "sb_layers": "Transformer blocks. With the four fields below it sizes the KV cache; leave all five empty for none.",
    "sb_hidden": "Width of the model's activations (d_model).",
    "sb_qheads": "Attention query heads per layer.",
    "sb_kvheads": "Key/value heads per layer (fewer than query heads with grouped-query attention).",
    "sb_headdim": "Size of each attention head.",
    "sb_gname": "A label for your edited GPU.",
    "sb_bw": "How fast the GPU reads its memory, in GB/s (1 TB/s = 1,000). Decode waits on this.",
    "sb_flops16": "Dense 16-bit tensor throughput (no sparsity), TFLOP/s. Prefill waits on this.",
    "sb_flops8": "Dense 8-bit tensor throughput, TFLOP/s: used when weights are 8-bit.",
    "sb_mem": "Memory per GPU, GB: weights plus KV cache must fit in GPU count × this.",
    "sb_usdh": "Rental price per GPU-hour, USD. Leave empty if unknown; with a price the bill page compares self-hosting.",
    "sb_wprec": "Bits stored per weight. Fewer bits → fewer bytes to read per step → faster decode.",
    "sb_wbits": "Any width, scales included (e.g. 6 for a 6-bit format).",
    "sb_kvprec": "Bits per cached key/value element.",
    "sb_kvbits": "Any width per cached element.",
    "sb_eff": "Ideal reaches the datasheet peaks exactly (the lesson). Calibrated matches published measurements.",
    "sb_mbu": "Memory-bandwidth utilisation: the share of peak bandwidth real software reaches.",
    "sb_mfu": "Model FLOPs utilisation: the share of peak compute real software reaches.",
    "sb_overhead": "A fixed cost added to every forward pass (kernel launches, scheduling), ms.",
    "sb_seqoverhead": "A cost per sequence in the batch per pass (sampling, bookkeeping), µs.",
    "sb_allreduce": "Fixed latency of one all-reduce between GPUs, µs (only with more than one GPU).",
    "sb_prompt": "Tokens in the prompt (about ¾ of a word each). Read in one parallel pass: prefill.",
    "sb_out": "Tokens in the reply. Each one is a full pass over the model: decode.",
    "sb_batch": "Requests decoded together. One weight read serves them all.",
    "sb_cached": "Prompt tokens already in a prefix cache: not prefilled again, billed at the cached price.",
    "sb_price_source": "Fill the three prices from a provider's list price (genai-prices' bundled snapshot).",
    "sb_pin": "What the API charges per million prompt tokens, USD.",
    "sb_pcache": "Per million prompt tokens served from the provider's prompt cache, USD.",
    "sb_pout": "Per million output tokens, USD: usually several times the input price.",
    "sb_replies": "Replies your feature sends per day.",
    "sb_days": "Days billed per month.",
}
LABELS = {
    "sb_params": "Parameters (billions)",
    "sb_active": "Active parameters (billions)",
    "sb_layers": "Layers",
    "sb_hidden": "Hidden size",
    "sb_qheads": "Query heads",
    "sb_kvheads": "KV heads",
    "sb_headdim": "Head dimension",
    "sb_bw": "Memory bandwidth (GB/s)",
    "sb_flops16": "16-bit compute (TFLOP/s)",
    "sb_flops8": "8-bit compute (TFLOP/s)",
    "sb_mem": "Memory per GPU (GB)",
    "sb_usdh": "Price per GPU-hour (USD)",
    "sb_gpus": "GPU count",
    "sb_wbits": "Bits per weight",
    "sb_kvbits": "Bits per KV value",
    "sb_mbu": "MBU",
    "sb_mfu": "MFU",
    "sb_overhead": "Overhead per step (ms)",
    "sb_seqoverhead": "Overhead per sequence (µs)",
    "sb_allreduce": "All-reduce latency (µs)",
    "sb_prompt": "Prompt tokens",
    "sb_out": "Output tokens",
    "sb_batch": "Batch size",
    "sb_cached": "Cached prompt tokens",
    "sb_pin": "Input ($ / M tokens)",
    "sb_pcache": "Cached input ($ / M tokens)",
    "sb_pout": "Output ($ / M tokens)",
    "sb_replies": "Replies per day",
    "sb_days": "Days per month",
}


def _human(key: str, value: float | None) -> float | int | None:
    """SI → the widget's unit; counts stay ints. 12 significant digits undo the float noise of ÷ scale."""
    if value is None:
        return None
    limit = query.LIMITS[key.removeprefix("sb_")]
    return int(value) if limit.integer else float(f"{value / limit.scale:.12g}")


def _si(key: str, value: float | None, whole: bool = False) -> float | int | None:
    """Widget unit → SI. Counts of bytes and parameters are whole numbers (round)."""
    if value is None:
        return None
    limit = query.LIMITS[key.removeprefix("sb_")]
    if limit.integer or whole:
        return round(value * limit.scale)
    return float(f"{value * limit.scale:.12g}")


def _option(bits: float, options: Mapping[str, float | None]) -> str:
    return next((key for key, value in options.items() if value == bits), "other")


def efficiency_values(efficiency: Efficiency) -> dict[str, float]:
    return {key: float(_human(key, getattr(efficiency, name))) for key, name in EFFICIENCY_FIELDS.items()}


def widget_values(scenario: Scenario) -> dict[str, Any]:
    """Every sidebar widget's value for a scenario, in the widgets' units."""
    model, gpu, workload, pricing = scenario.model, scenario.gpu, scenario.workload, scenario.pricing
    values: dict[str, Any] = {
        "sb_model": model.id,
        "sb_mname": model.name if model.id == CUSTOM_ID else "",
        "sb_gpu": gpu.id,
        "sb_gname": gpu.name if gpu.id == CUSTOM_ID else "",
        "sb_usdh": gpu.price_usd_per_hour,
        "sb_wprec": _option(scenario.precision.weight_bits, WEIGHT_BITS),
        "sb_wbits": float(scenario.precision.weight_bits),
        "sb_kvprec": _option(scenario.precision.kv_bits, KV_BITS),
        "sb_kvbits": float(scenario.precision.kv_bits),
        "sb_eff": scenario.efficiency.label if scenario.efficiency.label in EFFICIENCY_LABELS else "custom",
        **efficiency_values(scenario.efficiency),
        **{key: int(getattr(workload, name)) for key, name in WORKLOAD_FIELDS.items()},
        **{key: float(getattr(pricing, name)) for key, name in PRICING_FIELDS.items()},
    }
    values["sb_replies"], values["sb_days"] = int(pricing.replies_per_day), int(pricing.days_per_month)
    values.update({key: _human(key, getattr(model, name)) for key, name in MODEL_FIELDS.items()})
    values.update({key: _human(key, getattr(gpu, name)) for key, name in GPU_FIELDS.items()})
    return values


def _spec(values: Mapping[str, Any], kind: str, base: Model | GPU) -> Model | GPU:
    """The preset when the raw numbers are still the preset's, else a custom spec built on `base`."""
    fields = MODEL_FIELDS if kind == "model" else GPU_FIELDS
    numbers = {name: _si(key, values[key], whole=True) for key, name in fields.items()}
    if kind == "gpu":
        numbers["price_usd_per_hour"] = values["sb_usdh"]
    chosen = values[f"sb_{kind}"]
    if chosen != CUSTOM_ID:
        preset = presets.model(chosen) if kind == "model" else presets.gpu(chosen)
        if replace(preset, **numbers) == preset:
            return preset
        base = preset
    name = query.clean_name(values["sb_mname" if kind == "model" else "sb_gname"] or "")
    fallback = "Custom model" if kind == "model" else "Custom GPU"
    return replace(base, id=CUSTOM_ID, name=name or fallback, **numbers)


def scenario_from_widgets(values: Mapping[str, Any], model_base: Model, gpu_base: GPU) -> Scenario:
    """The sidebar's values → a Scenario. Raises ValueError (from core) on a bad combination."""
    label = values["sb_eff"]
    efficiency = NAMED.get(label) or Efficiency(
        label="custom", **{name: _si(key, values[key]) for key, name in EFFICIENCY_FIELDS.items()}
    )
    return Scenario(
        model=_spec(values, "model", model_base),
        gpu=_spec(values, "gpu", gpu_base),
        precision=Precision(
            weight_bits=WEIGHT_BITS[values["sb_wprec"]] or float(values["sb_wbits"]),
            kv_bits=KV_BITS[values["sb_kvprec"]] or float(values["sb_kvbits"]),
        ),
        efficiency=efficiency,
        workload=Workload(**{name: int(values[key]) for key, name in WORKLOAD_FIELDS.items()}),
        pricing=Pricing(
            **{name: float(values[key]) for key, name in PRICING_FIELDS.items() if key != "sb_days"},
            days_per_month=int(values["sb_days"]),
        ),
    )


def combination_problems(values: Mapping[str, Any]) -> list[str]:
    """Combinations core would reject, said in the sidebar's own words with the allowed range."""
    empty = [key for key in LABELS if key not in OPTIONAL and key in values and values[key] is None]
    if empty:  # a cleared number input gives None
        return [
            f"{LABELS[key]} is empty: type a number from {query.allowed_range(key.removeprefix('sb_'))}."
            for key in empty
        ]
    problems = []
    if values["sb_cached"] > values["sb_prompt"]:
        problems.append(
            f"Cached prompt tokens ({values['sb_cached']:,}) must be from 0 to the prompt tokens"
            f" ({values['sb_prompt']:,})."
        )
    if values["sb_active"] > values["sb_params"]:
        problems.append(
            f"Active parameters ({values['sb_active']:g} B) must be at most the total parameters"
            f" ({values['sb_params']:g} B)."
        )
    shape = [values[key] for key in ("sb_layers", "sb_hidden", "sb_qheads", "sb_kvheads", "sb_headdim")]
    if any(v is None for v in shape) and any(v is not None for v in shape):
        problems.append(
            "Layers, hidden size, query heads, KV heads and head dimension go together:"
            " fill in all five, or leave all five empty for no KV cache."
        )
    elif None not in shape and values["sb_kvheads"] > values["sb_qheads"]:
        problems.append(
            f"KV heads ({values['sb_kvheads']:,}) must be from 1 to the query heads ({values['sb_qheads']:,})."
        )
    return problems


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

STEPS = {
    "sb_params": 0.1,
    "sb_active": 0.1,
    "sb_bw": 100.0,
    "sb_flops16": 10.0,
    "sb_flops8": 10.0,
    "sb_mem": 1.0,
    "sb_usdh": 0.1,
    "sb_wbits": 0.5,
    "sb_kvbits": 0.5,
    "sb_overhead": 0.1,
    "sb_seqoverhead": 1.0,
    "sb_allreduce": 1.0,
    "sb_pin": 0.05,
    "sb_pcache": 0.05,
    "sb_pout": 0.05,
    "sb_prompt": 100,
    "sb_out": 50,
    "sb_cached": 100,
    "sb_replies": 1000,
}


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


def _provenance(kind: str, chosen: str) -> str:
    """Where the preset's numbers come from, for the select's tooltip (markdown-escaped: sources hold '*')."""
    if chosen == CUSTOM_ID:
        return "Custom: your own numbers, under 'Edit the raw numbers'."
    known = presets.model_presets() if kind == "model" else presets.gpu_presets()
    source = known[chosen].provenance
    estimated = " Compute figures estimated: the vendor publishes none." if source.estimated else ""
    return query.plain(f"Source (checked {source.as_of}): {source.source}. {source.notes}{estimated}", 1500)


def _select(kind: str) -> str:
    known = presets.model_presets() if kind == "model" else presets.gpu_presets()
    names = {key: (p.model.name if kind == "model" else p.gpu.name) for key, p in known.items()}  # type: ignore[union-attr]
    # With a key, a widget's identity is the key alone, so the tooltip may follow the choice.
    chosen = st.session_state.get(f"sb_{kind}", CUSTOM_ID)
    return st.selectbox(
        kind.upper() if kind == "gpu" else "Model",
        [*known, CUSTOM_ID],
        key=f"sb_{kind}",
        help=f"{HELP[f'sb_{kind}']}\n\n{_provenance(kind, chosen)}",
        format_func=lambda key: "Custom (edit the raw numbers)" if key == CUSTOM_ID else f"{names[key]} · {key}",
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
        st.text_input(
            "Model name",
            key="sb_mname",
            max_chars=query.NAME_MAX_CHARS,
            help=HELP["sb_mname"],
            placeholder="Custom model",
            on_change=_on_raw_edit,
            args=("model",),
            persist_state="session",
        )
        for key in MODEL_FIELDS:
            _number(key, _on_raw_edit, ("model",))
        st.text_input(
            "GPU name",
            key="sb_gname",
            max_chars=query.NAME_MAX_CHARS,
            help=HELP["sb_gname"],
            placeholder="Custom GPU",
            on_change=_on_raw_edit,
            args=("gpu",),
            persist_state="session",
        )
        for key in [*GPU_FIELDS, "sb_usdh"]:
            _number(key, _on_raw_edit, ("gpu",))


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
    _number("sb_replies")
    _number("sb_days")


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


def _memory_warning(scenario: Scenario) -> str | None:
    plan = cached_estimate(scenario).memory
    if plan.fits:
        return None
    per_gpu = scenario.gpu.memory_bytes
    needed = math.ceil(plan.required_bytes / per_gpu)
    fit = plan.max_batch_that_fits
    batch = f" At most {fit:,} sequences fit." if fit else ""
    return (
        f"Weights + KV cache need {formatting.gigabytes(plan.required_bytes)} but {scenario.workload.gpu_count} ×"
        f" {formatting.gigabytes(per_gpu)} = {formatting.gigabytes(plan.available_bytes)}.{batch} Use at least"
        f" {needed} GPUs, fewer bits per weight, or a smaller batch."
    )


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
    memory = _memory_warning(scenario)
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
