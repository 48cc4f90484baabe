"""The sidebar's form, without Streamlit: its fields, words and units, and widgets ↔ Scenario.

This is the only place the app converts what people type (GB/s, TFLOP/s, billions of
parameters, ms, µs) into core's SI units, with the factors in query.LIMITS (one table).
`widget_values` and `scenario_from_widgets` are inverses of each other; `combination_problems`
names what core would reject, in the form's own words. Nothing here draws or reads
session state, so tests call it directly; `sidebar` draws the widgets from these tables.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import formatting
import query

from core import presets
from core.efficiency import NAMED
from core.memory import MemoryPlan
from core.scenario import Scenario
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Pricing, Workload

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

# Each number input's +/- step, in the widget's unit (1 when absent).
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


def human_value(key: str, value: float | None) -> float | int | None:
    """SI → the widget's unit; counts stay ints. 12 significant digits undo the float noise of ÷ scale."""
    if value is None:
        return None
    limit = query.LIMITS[key.removeprefix("sb_")]
    return int(value) if limit.integer else float(f"{value / limit.scale:.12g}")


def si_value(key: str, value: float | None, whole: bool = False) -> float | int | None:
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
    return {key: float(human_value(key, getattr(efficiency, name))) for key, name in EFFICIENCY_FIELDS.items()}


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
    values.update({key: human_value(key, getattr(model, name)) for key, name in MODEL_FIELDS.items()})
    values.update({key: human_value(key, getattr(gpu, name)) for key, name in GPU_FIELDS.items()})
    return values


def _spec(values: Mapping[str, Any], kind: str, base: Model | GPU) -> Model | GPU:
    """The preset when the raw numbers are still the preset's, else a custom spec built on `base`."""
    fields = MODEL_FIELDS if kind == "model" else GPU_FIELDS
    numbers = {name: si_value(key, values[key], whole=True) for key, name in fields.items()}
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
        label="custom", **{name: si_value(key, values[key]) for key, name in EFFICIENCY_FIELDS.items()}
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


def preset_label(kind: str, chosen: str) -> str:
    """What the model or GPU select shows: the preset's own name (its id goes in the tooltip)."""
    if chosen == CUSTOM_ID:
        return "Custom (edit the raw numbers)"
    return presets.model(chosen).name if kind == "model" else presets.gpu(chosen).name


def provenance(kind: str, chosen: str) -> str:
    """The select's tooltip text: the preset's id and where its numbers come from (markdown-escaped: sources hold '*')."""
    if chosen == CUSTOM_ID:
        return "Custom: your own numbers, under 'Edit the raw numbers'."
    known = presets.model_presets() if kind == "model" else presets.gpu_presets()
    source = known[chosen].provenance
    estimated = " Compute figures estimated: the vendor publishes none." if source.estimated else ""
    where = f"Preset id `{chosen}` (`{kind}={chosen}` in a link)."
    return f"{where}\n\n" + query.plain(
        f"Source (checked {source.as_of}): {source.source}. {source.notes}{estimated}", 1500
    )


def traffic_note(replies_per_day: float | None, days_per_month: int | None) -> str | None:
    """The traffic in words, with thousands separators (a number input cannot show them)."""
    if replies_per_day is None or days_per_month is None:
        return None
    return (
        f"{formatting.count(replies_per_day)} replies a day × {days_per_month} days = "
        f"{formatting.count(replies_per_day * days_per_month)} a month."
    )


def memory_warning(scenario: Scenario, plan: MemoryPlan) -> str | None:
    """What to change when weights + KV cache do not fit, or None when they do."""
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
