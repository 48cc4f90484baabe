"""One Scenario: everything an estimate depends on, as one frozen value.

The app's sidebar builds it, the URL encodes it, the CLI parses it and every page reads
it. Its flat form is a `{str: str}` dict with short keys, the shape of a URL query
string; `Scenario.from_flat(s.to_flat()) == s` for every valid scenario, exactly.
Presets travel as their id alone (`model=llama-3.1-8b`); anything else travels as
`model=custom` plus every number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from core import presets
from core.efficiency import CALIBRATED, NAMED, default_efficiency
from core.parallel import Machine, effective_machine
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Pricing, Workload


def format_number(value: float | int) -> str:
    """The shortest text that parses back to exactly `value` (no '+', which URLs turn into spaces)."""
    if isinstance(value, int):
        return str(value)
    text = f"{value:.15g}"
    if float(text) != value:
        text = repr(value)
    return text.replace("e+", "e")


def parse_float(key: str, text: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{key} must be a finite number, got {text!r}")
    return value


def parse_int(key: str, text: str) -> int:
    value = parse_float(key, text)
    if not value.is_integer():
        raise ValueError(f"{key} must be a whole number, got {text!r}")
    return int(value)


# A placeholder meaning "the default for this GPU"; never outlives Scenario construction.
AUTO = Efficiency(label="auto")

# Flat key → (spec field, is integer). Short keys keep shared links readable.
_MODEL_KEYS: dict[str, tuple[str, bool]] = {
    "mname": ("name", False),
    "params": ("total_params", False),
    "active": ("active_params", False),
    "layers": ("layers", True),
    "hidden": ("hidden", True),
    "qheads": ("query_heads", True),
    "kvheads": ("kv_heads", True),
    "headdim": ("head_dim", True),
    "experts": ("experts", True),
    "topk": ("experts_per_token", True),
    "kvlatent": ("kv_latent_dim", True),
    "kvrope": ("kv_latent_rope_dim", True),
    "swa": ("sliding_window_tokens", True),
    "swalayers": ("sliding_window_layers", True),
}
_GPU_KEYS: dict[str, tuple[str, bool]] = {
    "gname": ("name", False),
    "bw": ("memory_bandwidth_bytes_per_s", False),
    "flops16": ("peak_flops_16bit_per_s", False),
    "flops8": ("peak_flops_8bit_per_s", False),
    "mem": ("memory_bytes", False),
    "link": ("interconnect_bytes_per_s", False),
    "usdh": ("price_usd_per_hour", False),
}
_PRECISION_KEYS = {"wbits": ("weight_bits", False), "kvbits": ("kv_bits", False)}
_EFFICIENCY_KEYS = {
    "mbu": ("mbu", False),
    "mfu": ("mfu", False),
    "overhead": ("step_overhead_s", False),
    "seqoverhead": ("sequence_overhead_s", False),
    "allreduce": ("allreduce_latency_s", False),
}
_WORKLOAD_KEYS = {
    "prompt": ("prompt_tokens", True),
    "out": ("output_tokens", True),
    "batch": ("batch_size", True),
    "cached": ("cached_prompt_tokens", True),
    "gpus": ("gpu_count", True),
}
_PRICING_KEYS = {
    "pin": ("input_usd_per_million_tokens", False),
    "pcache": ("cached_input_usd_per_million_tokens", False),
    "pout": ("output_usd_per_million_tokens", False),
    "replies": ("replies_per_day", False),
    "days": ("days_per_month", True),
}
_KEY_FOR_FIELD = {
    name: key
    for keys in (_WORKLOAD_KEYS, _PRICING_KEYS, _PRECISION_KEYS, _EFFICIENCY_KEYS, _GPU_KEYS, _MODEL_KEYS)
    for key, (name, _) in keys.items()
}
FLAT_KEYS: tuple[str, ...] = (
    "model",
    *_MODEL_KEYS,
    "gpu",
    *_GPU_KEYS,
    *_PRECISION_KEYS,
    "eff",
    *_EFFICIENCY_KEYS,
    *_WORKLOAD_KEYS,
    *_PRICING_KEYS,
)


def _encode(spec: Any, keys: dict[str, tuple[str, bool]]) -> dict[str, str]:
    out = {}
    for key, (name, _) in keys.items():
        value = getattr(spec, name)
        if value is not None:
            out[key] = value if isinstance(value, str) else format_number(value)
    return out


def _decode(flat: dict[str, str], keys: dict[str, tuple[str, bool]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, (name, is_int) in keys.items():
        if key in flat:
            text = flat[key]
            if name == "name":
                out[name] = text
            else:
                out[name] = parse_int(key, text) if is_int else parse_float(key, text)
    return out


@dataclass(frozen=True, slots=True)
class Scenario:
    """Model on GPUs at a precision and efficiency, serving a workload at a price."""

    model: Model = field(default_factory=lambda: presets.model(presets.TOY_MODEL_ID))
    gpu: GPU = field(default_factory=lambda: presets.gpu(presets.TOY_GPU_ID))
    precision: Precision = field(default_factory=Precision)
    # AUTO resolves on construction: ideal on the lesson's toy GPU, calibrated on real ones.
    efficiency: Efficiency = field(default_factory=lambda: AUTO)
    workload: Workload = field(default_factory=Workload)
    pricing: Pricing = field(default_factory=Pricing)

    def __post_init__(self) -> None:
        if self.efficiency is AUTO:
            object.__setattr__(self, "efficiency", default_efficiency(self.gpu.id))
        # A preset id promises the preset's numbers; edited numbers must say "custom".
        for kind, spec, known in (
            ("model", self.model, presets.model_presets()),
            ("gpu", self.gpu, presets.gpu_presets()),
        ):
            if spec.id == CUSTOM_ID:
                continue
            if spec.id not in known:
                raise ValueError(f"{kind} must be a preset id or 'custom', got {spec.id!r}")
            preset = known[spec.id].model if kind == "model" else known[spec.id].gpu  # type: ignore[union-attr]
            if spec != preset:
                raise ValueError(f"{kind} {spec.id!r} differs from its preset: give it id 'custom'")

    @property
    def machine(self) -> Machine:
        """The tensor-parallel group this scenario runs on, derated by its efficiency."""
        return effective_machine(self.gpu, self.workload.gpu_count, self.efficiency, self.precision.math_bits)

    @classmethod
    def lesson(cls) -> Scenario:
        """The lesson's Part 3 long reply: toy 7B fp16 on the toy GPU, ideal, 200 → 500 tokens."""
        return cls()

    def to_flat(self) -> dict[str, str]:
        flat = {"model": self.model.id}
        if self.model.id == CUSTOM_ID:
            flat.update(_encode(self.model, _MODEL_KEYS))
        flat["gpu"] = self.gpu.id
        if self.gpu.id == CUSTOM_ID:
            flat.update(_encode(self.gpu, _GPU_KEYS))
        flat.update(_encode(self.precision, _PRECISION_KEYS))
        flat["eff"] = self.efficiency.label
        if NAMED.get(self.efficiency.label) != self.efficiency:
            flat.update(_encode(self.efficiency, _EFFICIENCY_KEYS))
        flat.update(_encode(self.workload, _WORKLOAD_KEYS))
        flat.update(_encode(self.pricing, _PRICING_KEYS))
        return flat

    @classmethod
    def from_flat(cls, flat: dict[str, str]) -> Scenario:
        """Parse the flat form; missing keys take the lesson's defaults. Raises ValueError naming the key."""
        try:
            return cls._from_flat(flat)
        except ValueError as error:
            message = str(error)
            first_word = message.split(" ", 1)[0].rstrip(",:")
            key = _KEY_FOR_FIELD.get(first_word)
            named = key is not None and key in flat and key != first_word
            raise ValueError(f"{key}: {message}" if named else message) from None

    @classmethod
    def _from_flat(cls, flat: dict[str, str]) -> Scenario:
        unknown = sorted(set(flat) - set(FLAT_KEYS))
        if unknown:
            raise ValueError(f"unknown parameter(s): {', '.join(unknown)}")
        model = _spec_from_flat(flat, "model", presets.TOY_MODEL_ID, presets.model, _MODEL_KEYS, "Custom model")
        gpu = _spec_from_flat(flat, "gpu", presets.TOY_GPU_ID, presets.gpu, _GPU_KEYS, "Custom GPU")
        label = flat.get("eff") or default_efficiency(gpu.id).label
        base = NAMED.get(label, CALIBRATED)
        efficiency = replace(base, label=label, **_decode(flat, _EFFICIENCY_KEYS))
        return cls(
            model=model,
            gpu=gpu,
            precision=Precision(**_decode(flat, _PRECISION_KEYS)),
            efficiency=efficiency,
            workload=Workload(**_decode(flat, _WORKLOAD_KEYS)),
            pricing=Pricing(**_decode(flat, _PRICING_KEYS)),
        )


def _spec_from_flat(
    flat: dict[str, str], key: str, default_id: str, lookup: Any, keys: dict[str, tuple[str, bool]], custom_name: str
) -> Any:
    spec_id = flat.get(key, default_id)
    if spec_id != CUSTOM_ID:
        stray = sorted(set(keys) & set(flat))
        if stray:
            raise ValueError(f"{', '.join(stray)} can only be given with {key}=custom")
        return lookup(spec_id)
    values = _decode(flat, keys)
    base = lookup(default_id)
    start = {f.name: getattr(base, f.name) for f in fields(base) if f.init}
    if key == "model" and "active_params" not in values and "total_params" in values:
        values["active_params"] = values["total_params"]
    start.update(id=CUSTOM_ID, name=custom_name)
    start.update(values)
    return type(base)(**start)
