"""GPU and model presets: TOML data files beside this module, validated on first use.

The files hold human units with the unit in the key (GB/s, TFLOP/s, GB, billions of
parameters); this module converts them to the SI specs once. Unknown or missing keys,
duplicate or malformed ids, and entries without `source` and `as_of` are errors, so a
typo in a data file fails loudly in tests rather than quietly skewing an estimate.
See `presets/README.md` for the schema and how to add an entry.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

from core.fields import inputs
from core.specs import CUSTOM_ID, GPU, Model, Precision
from core.units import BYTES_PER_GB, FLOP_PER_TFLOP, PARAMS_PER_BILLION

TOY_GPU_ID = "toy-gpu"
TOY_MODEL_ID = "toy-7b"
_SLUG = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")

_GPU_REQUIRED = {
    "id",
    "name",
    "memory_bandwidth_gb_per_s",
    "peak_tflops_16bit",
    "peak_tflops_8bit",
    "memory_gb",
    "interconnect_gb_per_s",
    "source",
    "as_of",
}
_GPU_OPTIONAL = {
    "peak_tflops_4bit",
    "vector_tflops_fp32",
    "vector_source",
    "price_usd_per_hour",
    "sustained_bandwidth_share",
    "sustained_compute_share",
    "sustained_source",
    "compute_estimated",
    "notes",
}
_SHAPE = {"layers", "hidden", "query_heads", "kv_heads", "head_dim", "context_tokens"}
_MODEL_REQUIRED = {"id", "name", "total_params_b", "active_params_b", "source", "as_of"}
# Whole-number model fields are written in the file under their own names (layers, experts,
# kv_latent_dim, …): the descriptions list them, so a new one needs no change here.
_MODEL_COUNTS = tuple(name for name, described in inputs(Model) if described.kind is int)
_RELEASE = {"release_weight_bits", "release_format"}
_MODEL_OPTIONAL = _SHAPE | set(_MODEL_COUNTS) | _RELEASE | {"release_expert_weight_bits", "notes"}
BF16 = "bf16"  # the release format of a model that names none: 16-bit weights


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a preset's numbers come from."""

    source: str
    as_of: dt.date
    notes: str = ""
    estimated: bool = False


@dataclass(frozen=True, slots=True)
class GPUPreset:
    gpu: GPU
    provenance: Provenance


@dataclass(frozen=True, slots=True)
class ModelPreset:
    model: Model
    context_tokens: int | None
    provenance: Provenance
    # How the publisher ships the weights: the bits per weight a server loads when nobody
    # quantises them (scales and any 16-bit parts averaged in), and the format in words.
    release_weight_bits: float = 16.0
    release_format: str = BF16
    release_expert_weight_bits: float | None = None  # a mixture's experts when shipped narrower (gpt-oss: MXFP4)


def _check_keys(kind: str, entry: dict[str, Any], required: set[str], optional: set[str]) -> str:
    label = f"{kind} preset {entry.get('id', '?')!r}"
    missing = required - entry.keys()
    unknown = entry.keys() - required - optional
    if missing:
        raise ValueError(f"{label}: missing key(s) {sorted(missing)}")
    if unknown:
        raise ValueError(f"{label}: unknown key(s) {sorted(unknown)}")
    if not isinstance(entry["id"], str) or not _SLUG.match(entry["id"]):
        raise ValueError(f"{label}: id must be a lowercase slug like 'h100-sxm'")
    if not isinstance(entry["source"], str) or not entry["source"].strip():
        raise ValueError(f"{label}: source must be non-empty text")
    if not isinstance(entry["as_of"], dt.date):
        raise ValueError(f"{label}: as_of must be a TOML date like 2026-11-29")
    return label


def _provenance(entry: dict[str, Any], estimated: bool = False) -> Provenance:
    return Provenance(entry["source"], entry["as_of"], entry.get("notes", ""), estimated)


def parse_gpu(entry: dict[str, Any]) -> GPUPreset:
    label = _check_keys("GPU", entry, _GPU_REQUIRED, _GPU_OPTIONAL)
    try:
        price = entry.get("price_usd_per_hour")
        gpu = GPU(
            id=entry["id"],
            name=entry["name"],
            memory_bandwidth_bytes_per_s=round(entry["memory_bandwidth_gb_per_s"] * BYTES_PER_GB),
            peak_flops_16bit_per_s=round(entry["peak_tflops_16bit"] * FLOP_PER_TFLOP),
            peak_flops_8bit_per_s=round(entry["peak_tflops_8bit"] * FLOP_PER_TFLOP),
            peak_flops_4bit_per_s=None
            if entry.get("peak_tflops_4bit") is None
            else round(entry["peak_tflops_4bit"] * FLOP_PER_TFLOP),
            memory_bytes=round(entry["memory_gb"] * BYTES_PER_GB),
            interconnect_bytes_per_s=round(entry["interconnect_gb_per_s"] * BYTES_PER_GB),
            vector_flops_per_s=None
            if entry.get("vector_tflops_fp32") is None
            else round(entry["vector_tflops_fp32"] * FLOP_PER_TFLOP),
            price_usd_per_hour=None if price is None else float(price),
            sustained_bandwidth_share=float(entry.get("sustained_bandwidth_share", 1.0)),
            sustained_compute_share=float(entry.get("sustained_compute_share", 1.0)),
        )
        if gpu.vector_flops_per_s is not None and not str(entry.get("vector_source", "")).strip():
            raise ValueError("vector_tflops_fp32 needs vector_source: the datasheet it comes from")
        if gpu.sustained_bandwidth_share != 1 or gpu.sustained_compute_share != 1:
            if not str(entry.get("sustained_source", "")).strip():
                raise ValueError("a sustained share needs sustained_source: the measurements it comes from")
    except (TypeError, ValueError) as error:
        raise ValueError(f"{label}: {error}") from error
    return GPUPreset(gpu, _provenance(entry, bool(entry.get("compute_estimated", False))))


def parse_model(entry: dict[str, Any]) -> ModelPreset:
    label = _check_keys("model", entry, _MODEL_REQUIRED, _MODEL_OPTIONAL)
    present = _SHAPE & entry.keys()
    if present and present != _SHAPE:
        raise ValueError(
            f"{label}: the attention shape needs all of {sorted(_SHAPE)}, missing {sorted(_SHAPE - present)}"
        )
    try:
        model = Model(
            id=entry["id"],
            name=entry["name"],
            total_params=round(entry["total_params_b"] * PARAMS_PER_BILLION),
            active_params=round(entry["active_params_b"] * PARAMS_PER_BILLION),
            **{key: entry.get(key) for key in _MODEL_COUNTS},
        )
    except (TypeError, ValueError) as error:
        raise ValueError(f"{label}: {error}") from error
    release = _RELEASE & entry.keys()
    if release and release != _RELEASE:
        raise ValueError(f"{label}: release_weight_bits and release_format go together")
    bits, words = entry.get("release_weight_bits", 16.0), entry.get("release_format", BF16)
    if isinstance(bits, bool) or not isinstance(bits, (int, float)) or not 1 <= bits <= 32:
        raise ValueError(f"{label}: release_weight_bits must be a number from 1 to 32, got {bits!r}")
    if not isinstance(words, str) or not words.strip():
        raise ValueError(f"{label}: release_format must be non-empty text")
    experts = entry.get("release_expert_weight_bits")
    if experts is not None:
        if not release or not model.is_moe:
            raise ValueError(f"{label}: release_expert_weight_bits needs a mixture of experts and its release_format")
        if isinstance(experts, bool) or not isinstance(experts, (int, float)) or not 1 <= experts <= 32:
            raise ValueError(f"{label}: release_expert_weight_bits must be a number from 1 to 32, got {experts!r}")
    return ModelPreset(
        model, entry.get("context_tokens"), _provenance(entry), float(bits), words,
        None if experts is None else float(experts),
    )  # fmt: skip


def _load(filename: str, table: str) -> list[dict[str, Any]]:
    text = resources.files("core").joinpath("presets", filename).read_text(encoding="utf-8")
    data = tomllib.loads(text)
    if set(data) != {table}:
        raise ValueError(f"{filename}: expected only [[{table}]] tables, got {sorted(data)}")
    entries: list[dict[str, Any]] = data[table]
    ids = [str(entry.get("id")) for entry in entries]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"{filename}: duplicate id(s) {duplicates}")
    return entries


@cache
def gpu_presets() -> dict[str, GPUPreset]:
    """Every GPU preset by id, in file order (loaded and validated once, on first use)."""
    return {p.gpu.id: p for p in map(parse_gpu, _load("gpus.toml", "gpu"))}


@cache
def model_presets() -> dict[str, ModelPreset]:
    """Every model preset by id, in file order (loaded and validated once, on first use)."""
    return {p.model.id: p for p in map(parse_model, _load("models.toml", "model"))}


def gpu(preset_id: str) -> GPU:
    try:
        return gpu_presets()[preset_id].gpu
    except KeyError:
        raise ValueError(f"gpu {preset_id!r} is not a preset; known: {', '.join(gpu_presets())}") from None


def name_words(text: str) -> tuple[str, ...]:
    """Runs of letters and digits, case ignored: "Llama-3.1-70B" → ("llama", "3", "1", "70b")."""
    return tuple(re.findall(r"[a-z0-9]+", text.lower()))


def _runs_at(given: tuple[str, ...], own: tuple[str, ...]) -> list[int]:
    """Where `own`'s words run together in `given`: the index after each run."""
    return [i + len(own) for i in range(len(given) - len(own) + 1) if given[i : i + len(own)] == own]


def gpu_like(name: str) -> GPU | None:
    """The preset a GPU named in free text is: the longest preset id whose words run together in the name.

    Words are runs of letters and digits, case ignored: "A100-80GB-SXM" and "NVIDIA A100 80GB
    SXM" are a100-80gb-sxm, "H100-SXM-80GB" h100-sxm, "AMD Instinct MI300X" mi300x; "L40" is
    no preset (l40s is another card), nor is "A100" alone (which memory?) or "H100" alone (SXM or
    PCIe: 3.35 or 2.0 TB/s). Published measurements name their GPU this way; they take the
    preset's sustained shares.
    """
    given = name_words(name)
    found = [
        (len(name_words(preset_id)), preset_id) for preset_id in gpu_presets() if _runs_at(given, name_words(preset_id))
    ]
    return gpu(max(found)[1]) if found else None


# Checkpoints published under another name with a preset's architecture (the same layers, heads and
# experts): DeepSeek-R1 and its 0528 update are DeepSeek-V3's network trained further; Llama 3 8B and
# 70B are Llama 3.1's shapes with an 8k context (3.1 added only its RoPE scaling to 128k).
ARCHITECTURE_ALIASES = {"deepseek-r1": "deepseek-v3", "llama-3-8b": "llama-3.1-8b", "llama-3-70b": "llama-3.1-70b"}


def model_like(name: str) -> str | None:
    """The preset id a model named in free text is: the longest preset id (or alias) whose words run
    together in the name, not followed by a further version number.

    "meta-llama/Llama-3.3-70B-Instruct" is llama-3.3-70b, "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"
    qwen3-235b-a22b, "deepseek-ai/DeepSeek-R1-0528" and "Meta-Llama-3-70B-Instruct" their architectures'
    presets (`ARCHITECTURE_ALIASES`); "DeepSeek-V3.2" is none (a 1- or 2-digit number after the run
    continues the version: V3.2's sparse attention is not V3's), nor "Llama-2-70B-chat" llama-3's,
    while a date such as 0528 or 2507 is a checkpoint's, not a version's.
    """
    given = name_words(name)
    candidates = {**{preset_id: preset_id for preset_id in model_presets()}, **ARCHITECTURE_ALIASES}
    found = []
    for written, preset_id in candidates.items():
        own = name_words(written)
        for end in _runs_at(given, own):
            follows = given[end] if end < len(given) else ""
            if not (follows.isdigit() and len(follows) <= 2):
                found.append((len(own), preset_id))
    return max(found)[1] if found else None


def model(preset_id: str) -> Model:
    try:
        return model_presets()[preset_id].model
    except KeyError:
        raise ValueError(f"model {preset_id!r} is not a preset; known: {', '.join(model_presets())}") from None


@cache
def custom_model() -> Model:
    """The base a from-scratch model starts from: the lesson's toy numbers under the id 'custom'."""
    return replace(model(TOY_MODEL_ID), id=CUSTOM_ID, name="Custom model")


@cache
def custom_gpu() -> GPU:
    """The base a from-scratch GPU starts from: the lesson's toy GPU under the id 'custom'."""
    return replace(gpu(TOY_GPU_ID), id=CUSTOM_ID, name="Custom GPU")


def release_precision(model_id: str) -> Precision:
    """The precision a model is served in when nobody quantises it: its publisher's weights as shipped.

    Most checkpoints ship 16-bit (bf16) weights; DeepSeek-V3 ships FP8 (8 bits, so 8-bit maths
    by default) and gpt-oss MXFP4 experts (4.25 bits) beside bf16 attention, router and
    embeddings (16). The KV cache stays 16-bit: an fp8 cache is the server's choice.
    A custom model, or one no preset names, starts from 16-bit.
    """
    preset = model_presets().get(model_id)
    if preset is None:
        return Precision()
    return Precision(weight_bits=preset.release_weight_bits, expert_weight_bits=preset.release_expert_weight_bits)


def release_format(model_id: str) -> str:
    """The release format in words ("FP8 (e4m3, 128 × 128 block scales)"), "bf16" when none is named."""
    preset = model_presets().get(model_id)
    return BF16 if preset is None else preset.release_format


def model_base(base_id: str) -> Model:
    """The spec a model's edits apply to: a preset, or the custom base."""
    return custom_model() if base_id == CUSTOM_ID else model(base_id)


def gpu_base(base_id: str) -> GPU:
    """The spec a GPU's edits apply to: a preset, or the custom base."""
    return custom_gpu() if base_id == CUSTOM_ID else gpu(base_id)
