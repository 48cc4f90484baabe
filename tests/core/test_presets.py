"""Presets are data: every entry loads, carries its provenance, and avoids the known traps.

Golden values are copied from the project's reference tables (../shared/reference/
gpus.csv and models.csv, with the sources named there) and hard-coded here, so the
suite runs on a machine without ../shared.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from core import presets
from core.memory import kv_bytes_per_token, weight_bytes
from core.specs import Precision

SLUG = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
PRESET_DIR = resources.files("core").joinpath("presets")


def _raw(filename: str, table: str) -> list[dict[str, Any]]:
    return tomllib.loads(PRESET_DIR.joinpath(filename).read_text(encoding="utf-8"))[table]


RAW = {"gpus.toml": _raw("gpus.toml", "gpu"), "models.toml": _raw("models.toml", "model")}

REQUIRED_GPUS = {
    "toy-gpu",
    "h100-sxm",
    "h100-pcie",
    "h200",
    "b200",
    "a100-80gb-sxm",
    "a100-40gb",
    "l40s",
    "l4",
    "a10g",
    "rtx-4090",
    "mi300x",
    "m2-ultra",
}
REQUIRED_MODELS = {
    "toy-7b",
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "mistral-7b",
    "mixtral-8x7b",
    "qwen2.5-7b",
    "qwen2.5-72b",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "deepseek-v3",
}


# ---------------------------------------------------------------- the files as shipped


def test_every_preset_loads() -> None:
    gpus, models = presets.gpu_presets(), presets.model_presets()
    assert len(gpus) == len(RAW["gpus.toml"])
    assert len(models) == len(RAW["models.toml"])
    assert list(gpus) == [entry["id"] for entry in RAW["gpus.toml"]]  # file order
    assert list(models) == [entry["id"] for entry in RAW["models.toml"]]
    for preset_id, preset in gpus.items():
        assert preset.gpu.id == preset_id
    for preset_id, preset in models.items():
        assert preset.model.id == preset_id


def test_required_presets_exist() -> None:
    assert REQUIRED_GPUS <= set(presets.gpu_presets())
    assert REQUIRED_MODELS <= set(presets.model_presets())


@pytest.mark.parametrize("filename", RAW)
def test_raw_ids_are_unique_slugs(filename: str) -> None:
    ids = [entry["id"] for entry in RAW[filename]]
    assert len(ids) == len(set(ids))
    assert [i for i in ids if not SLUG.match(i)] == []


@pytest.mark.parametrize("filename", RAW)
def test_raw_entries_have_source_and_as_of_date(filename: str) -> None:
    for entry in RAW[filename]:
        assert isinstance(entry["source"], str) and entry["source"].strip(), entry["id"]
        # A TOML date parses to datetime.date; a datetime or a quoted string is not a date.
        assert type(entry["as_of"]) is dt.date, entry["id"]
        assert dt.date(2020, 1, 1) <= entry["as_of"] <= dt.date(2030, 1, 1), entry["id"]


def test_loaded_provenance_matches_the_files() -> None:
    loaded = {**presets.gpu_presets(), **presets.model_presets()}
    for entry in RAW["gpus.toml"] + RAW["models.toml"]:
        provenance = loaded[entry["id"]].provenance
        assert (provenance.source, provenance.as_of, provenance.notes) == (
            entry["source"],
            entry["as_of"],
            entry.get("notes", ""),
        )


def test_vendorless_compute_figures_are_marked_estimated() -> None:
    # Reference README: "A10G compute and Apple M2 Ultra compute are not published by the
    # vendors: mark such presets' figures as estimates."
    gpus = presets.gpu_presets()
    assert gpus["a10g"].provenance.estimated
    assert gpus["m2-ultra"].provenance.estimated
    assert not gpus["h100-sxm"].provenance.estimated


def test_readme_documents_every_schema_key() -> None:
    readme = PRESET_DIR.joinpath("README.md").read_text(encoding="utf-8")
    gpu_section, model_section = readme.split("## models.toml")
    gpu_keys = presets._GPU_REQUIRED | presets._GPU_OPTIONAL
    model_keys = presets._MODEL_REQUIRED | presets._MODEL_OPTIONAL
    assert {k for k in gpu_keys if f"`{k}`" not in gpu_section} == set()
    assert {k for k in model_keys if f"`{k}`" not in model_section} == set()


def test_only_the_toy_model_lacks_an_attention_shape() -> None:
    shapeless = {i for i, p in presets.model_presets().items() if not p.model.has_attention_shape}
    assert shapeless == {"toy-7b"}
    for preset_id, preset in presets.model_presets().items():
        assert (preset.context_tokens is None) == (preset_id == "toy-7b")


# ---------------------------------------------------------------- golden values and traps


def test_toy_gpu_and_model_are_the_lessons() -> None:
    gpu = presets.gpu("toy-gpu")
    # The lesson: 2 TB/s, 300 TFLOP/s.
    assert gpu.memory_bandwidth_bytes_per_s == 2e12
    assert gpu.peak_flops_16bit_per_s == 300e12
    assert gpu.price_usd_per_hour is None
    model = presets.model("toy-7b")
    # The lesson: 7B parameters, nothing else, so no KV cache.
    assert (model.total_params, model.active_params) == (7e9, 7e9)
    assert model.layers is None and not model.is_moe
    assert kv_bytes_per_token(model, Precision()) == 0


def test_h100_sxm_dense_not_sparse() -> None:
    gpu = presets.gpu("h100-sxm")
    # NVIDIA's 1,979 BF16 TFLOP/s is with 2:4 sparsity; dense is half, 989.5 (reference: 989).
    assert gpu.peak_flops_16bit_per_s == pytest.approx(989e12, rel=1e-3)
    assert gpu.peak_flops_8bit_per_s == pytest.approx(1979e12, rel=1e-3)
    # Datasheet 3.35 TB/s; the 3.0 TB/s of launch material is stale.
    assert gpu.memory_bandwidth_bytes_per_s == pytest.approx(3.35e12, rel=1e-12)
    # NVLink 4: 900 GB/s bidirectional = 450 per direction.
    assert gpu.interconnect_bytes_per_s == pytest.approx(450e9, rel=1e-12)


# Reference gpus.csv (mem_bw_GBps, bf16_dense_TFLOPS, memory_GB), sources named there.
# Tolerance 0.1 %: the presets keep the half-of-sparse value (989.5) where the table rounds (989).
GPU_GOLDENS = {
    "h100-pcie": (2000, 756, 80),
    "h200": (4800, 989, 141),
    "b200": (7700, 2250, 180),
    "a100-80gb-sxm": (2039, 312, 80),
    "a100-40gb": (1555, 312, 40),
    "l40s": (864, 362.05, 48),
    "l4": (300, 121, 24),
    "rtx-4090": (1008, 165.2, 24),  # FP32-accumulate rate, not the 330 of FP16 accumulate
    "mi300x": (5300, 1307.4, 192),
}


@pytest.mark.parametrize(("preset_id", "golden"), GPU_GOLDENS.items())
def test_gpu_datasheet_values(preset_id: str, golden: tuple[float, float, float]) -> None:
    bandwidth_gb_s, tflops_16, memory_gb = golden
    gpu = presets.gpu(preset_id)
    assert gpu.memory_bandwidth_bytes_per_s == pytest.approx(bandwidth_gb_s * 1e9, rel=1e-3)
    assert gpu.peak_flops_16bit_per_s == pytest.approx(tflops_16 * 1e12, rel=1e-3)
    assert gpu.memory_bytes == pytest.approx(memory_gb * 1e9, rel=1e-3)


# Reference models.csv, kv_bytes_per_token_bf16 (its kv_arithmetic column beside each).
KV_GOLDENS = {
    "llama-2-7b": 524_288,  # 2 × 32 layers × 32 KV heads × 128 × 2 bytes: no GQA
    "llama-2-13b": 819_200,  # 2 × 40 × 40 × 128 × 2: no GQA
    "llama-3.1-8b": 131_072,  # 2 × 32 × 8 × 128 × 2
    "llama-3.1-405b": 516_096,  # 2 × 126 × 8 × 128 × 2: 8 KV heads (early configs said 16)
    "qwen2.5-7b": 57_344,  # 2 × 28 × 4 × 128 × 2
    "gpt-oss-20b": 49_152,  # 2 × 24 × 8 × 64 × 2: head_dim 64, not 2880 / 64 = 45
    "deepseek-v3": 70_272,  # 61 × (512 + 64) × 2: the MLA latent, not per-head K and V
    "llama-2-70b": 327_680,  # 2 × 80 × 8 × 128 × 2
    "mixtral-8x7b": 131_072,  # 2 × 32 × 8 × 128 × 2
    "gpt-oss-120b": 73_728,  # 2 × 36 × 8 × 64 × 2
}


@pytest.mark.parametrize(("preset_id", "golden"), KV_GOLDENS.items())
def test_kv_bytes_per_token_at_16_bit(preset_id: str, golden: int) -> None:
    assert kv_bytes_per_token(presets.model(preset_id), Precision(weight_bits=16, kv_bits=16)) == golden


def test_attention_shape_traps() -> None:
    assert presets.model("gpt-oss-20b").head_dim == 64
    assert presets.model("llama-3.1-405b").kv_heads == 8
    assert presets.model("deepseek-v3").kv_latent_dim == 576  # kv_lora_rank 512 + rope 64
    oss = presets.model("gpt-oss-20b")
    # Alternating layers use a 128-token window: 12 of 24.
    assert (oss.sliding_window_tokens, oss.sliding_window_layers) == (128, 12)


def test_moe_presets_split_into_positive_shared_and_expert_weights() -> None:
    moe = {i: p.model for i, p in presets.model_presets().items() if p.model.is_moe}
    assert {"mixtral-8x7b", "gpt-oss-20b", "gpt-oss-120b", "deepseek-v3"} <= set(moe)
    for preset_id, model in moe.items():
        assert model.params_per_expert > 0, preset_id
        assert model.shared_params > 0, preset_id
        assert model.active_params < model.total_params, preset_id
    # Mixtral (reference: 46.703B total, 12.880B active): (46.7 - 12.88) / (8 - 2) = 5.64B per expert.
    assert moe["mixtral-8x7b"].params_per_expert == pytest.approx(5.64e9, rel=2e-3)


# ---------------------------------------------------------------- the loader rejects bad data


def _gpu_entry(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = dict(
        id="test-gpu",
        name="Test",
        memory_bandwidth_gb_per_s=1000.0,
        peak_tflops_16bit=100.0,
        peak_tflops_8bit=200.0,
        memory_gb=40.0,
        interconnect_gb_per_s=32.0,
        source="a datasheet",
        as_of=dt.date(2026, 1, 1),
    )
    entry.update(changes)
    return {k: v for k, v in entry.items() if v is not ...}


def _model_entry(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = dict(
        id="test-model",
        name="Test",
        total_params_b=8.0,
        active_params_b=8.0,
        layers=32,
        hidden=4096,
        query_heads=32,
        kv_heads=8,
        head_dim=128,
        context_tokens=8192,
        source="a config",
        as_of=dt.date(2026, 1, 1),
    )
    entry.update(changes)
    return {k: v for k, v in entry.items() if v is not ...}


def test_valid_entries_convert_human_units_to_si() -> None:
    preset = presets.parse_gpu(_gpu_entry(price_usd_per_hour=2, compute_estimated=True, notes="n"))
    # 1000 GB/s = 1e12 B/s; 100 TFLOP/s = 1e14; 40 GB = 4e10 B; 32 GB/s = 3.2e10 B/s.
    assert (preset.gpu.memory_bandwidth_bytes_per_s, preset.gpu.peak_flops_16bit_per_s) == (1e12, 1e14)
    assert (preset.gpu.peak_flops_8bit_per_s, preset.gpu.memory_bytes) == (2e14, 4e10)
    assert (preset.gpu.interconnect_bytes_per_s, preset.gpu.price_usd_per_hour) == (3.2e10, 2.0)
    assert preset.provenance == presets.Provenance("a datasheet", dt.date(2026, 1, 1), "n", True)
    model = presets.parse_model(_model_entry())
    assert (model.model.total_params, model.model.kv_heads, model.context_tokens) == (8e9, 8, 8192)
    assert not model.provenance.estimated


@pytest.mark.parametrize(
    ("parse", "entry", "message"),
    [
        pytest.param(
            presets.parse_gpu,
            _gpu_entry(bandwidth=1.0),
            r"GPU preset 'test-gpu': unknown key\(s\) \['bandwidth'\]",
            id="gpu-unknown-key",
        ),
        pytest.param(
            presets.parse_gpu,
            _gpu_entry(memory_gb=...),
            r"GPU preset 'test-gpu': missing key\(s\) \['memory_gb'\]",
            id="gpu-missing-key",
        ),
        pytest.param(presets.parse_gpu, _gpu_entry(as_of=...), r"missing key\(s\) \['as_of'\]", id="gpu-missing-as-of"),
        pytest.param(
            presets.parse_gpu, _gpu_entry(source=...), r"missing key\(s\) \['source'\]", id="gpu-missing-source"
        ),
        pytest.param(
            presets.parse_gpu, _gpu_entry(as_of="2026-01-01"), r"as_of must be a TOML date", id="gpu-as-of-string"
        ),
        pytest.param(
            presets.parse_gpu, _gpu_entry(source="  "), r"source must be non-empty text", id="gpu-blank-source"
        ),
        pytest.param(
            presets.parse_gpu,
            _gpu_entry(memory_bandwidth_gb_per_s=-1.0),
            r"^GPU preset 'test-gpu': memory_bandwidth_bytes_per_s must be >= 1,000,000",
            id="gpu-bad-value",
        ),
        pytest.param(
            presets.parse_gpu, _gpu_entry(peak_tflops_16bit="fast"), r"^GPU preset 'test-gpu': ", id="gpu-text-value"
        ),
        pytest.param(
            presets.parse_gpu,
            _gpu_entry(sustained_compute_share=0.6),
            r"a sustained share needs sustained_source",
            id="gpu-share-without-its-source",
        ),
        pytest.param(
            presets.parse_gpu,
            _gpu_entry(sustained_compute_share=1.2, sustained_source="x"),
            r"sustained_compute_share must be >= 0.1 and <= 1",
            id="gpu-share-above-the-reference",
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(params_b=1.0),
            r"model preset 'test-model': unknown key\(s\) \['params_b'\]",
            id="model-unknown-key",
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(total_params_b=...),
            r"missing key\(s\) \['total_params_b'\]",
            id="model-missing-key",
        ),
        pytest.param(
            presets.parse_model, _model_entry(as_of=...), r"missing key\(s\) \['as_of'\]", id="model-missing-as-of"
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(head_dim=...),
            r"attention shape needs all of .* missing \['head_dim'\]",
            id="model-partial-shape",
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(context_tokens=...),
            r"missing \['context_tokens'\]",
            id="model-shape-without-context",
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(kv_heads=64),
            r"^model preset 'test-model': kv_heads must be a whole number >= 1 and <= 32, got 64$",
            id="model-bad-value",
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(experts=8),
            r"experts and experts_per_token must be given together",
            id="model-experts-alone",
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(release_weight_bits=8),
            r"release_weight_bits and release_format go together",
            id="model-release-bits-alone",
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(release_weight_bits=0.5, release_format="FP8"),
            r"release_weight_bits must be a number from 1 to 32, got 0.5",
            id="model-release-bits-out-of-range",
        ),
        pytest.param(
            presets.parse_model,
            _model_entry(release_weight_bits=8, release_format=" "),
            r"release_format must be non-empty text",
            id="model-release-format-empty",
        ),
    ],
)
def test_loader_rejects_bad_entries(parse: Any, entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse(entry)


@pytest.mark.parametrize(
    "bad_id", ["H100-SXM", "h100_sxm", "h100 sxm", "h100--sxm", "-h100", "h100.", "", "h100/sxm", 7]
)
@pytest.mark.parametrize("parse", [presets.parse_gpu, presets.parse_model], ids=["gpu", "model"])
def test_loader_rejects_malformed_ids(parse: Any, bad_id: object) -> None:
    entry = _gpu_entry(id=bad_id) if parse is presets.parse_gpu else _model_entry(id=bad_id)
    with pytest.raises(ValueError, match=r"id must be a lowercase slug"):
        parse(entry)


@pytest.mark.parametrize("good_id", ["llama-3.1-8b", "qwen2.5-7b", "h100", "a.b-c"])
def test_loader_accepts_dotted_slugs(good_id: str) -> None:
    assert presets.parse_model(_model_entry(id=good_id)).model.id == good_id


def _load_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filename: str, text: str) -> list[dict[str, Any]]:
    (tmp_path / "presets").mkdir(exist_ok=True)
    (tmp_path / "presets" / filename).write_text(text, encoding="utf-8")
    monkeypatch.setattr(presets, "resources", SimpleNamespace(files=lambda package: tmp_path))
    return presets._load(filename, "gpu")


GPU_TOML = """
[[gpu]]
id = "{id}"
name = "A"
memory_bandwidth_gb_per_s = 1000.0
peak_tflops_16bit = 100.0
peak_tflops_8bit = 100.0
memory_gb = 40.0
interconnect_gb_per_s = 32.0
source = "s"
as_of = 2026-01-01
"""


def test_load_rejects_duplicate_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = GPU_TOML.format(id="a") + GPU_TOML.format(id="b") + GPU_TOML.format(id="a")
    with pytest.raises(ValueError, match=r"^gpus.toml: duplicate id\(s\) \['a'\]$"):
        _load_from(tmp_path, monkeypatch, "gpus.toml", text)


def test_load_rejects_other_top_level_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=r"expected only \[\[gpu\]\] tables"):
        _load_from(tmp_path, monkeypatch, "gpus.toml", GPU_TOML.format(id="a") + "\n[extra]\nx = 1\n")


def test_load_returns_distinct_entries_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = _load_from(tmp_path, monkeypatch, "gpus.toml", GPU_TOML.format(id="b") + GPU_TOML.format(id="a"))
    assert [e["id"] for e in entries] == ["b", "a"]
    assert entries[0]["as_of"] == dt.date(2026, 1, 1)


def test_unknown_preset_id_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"gpu 'h100' is not a preset; known: toy-gpu, h100-sxm"):
        presets.gpu("h100")
    with pytest.raises(ValueError, match=r"model 'llama' is not a preset; known: toy-7b, llama-2-7b"):
        presets.model("llama")


def test_four_bit_peaks_only_where_a_datasheet_gives_one():
    # Dense NVFP4/MXFP4: Blackwell (B200 9,000 = 18 PF sparse / 2; B300 13,125 = 105 PF dense / 8)
    # and CDNA 4 (MI355X 10,066.3 = twice its 5,033.2 FP8). Hopper, Ada, Ampere, CDNA 3, TPU v5e
    # and Apple have no 4-bit floating-point tensor cores.
    four_bit = {gid: p.gpu.peak_flops_4bit_per_s for gid, p in presets.gpu_presets().items()}
    assert {gid: v for gid, v in four_bit.items() if v is not None} == {
        "b200": 9000e12,
        "b300": 13125e12,
        "mi355x": 10066.3e12,
    }
    for gid in ("b200", "b300", "mi355x"):
        gpu = presets.gpu(gid)
        assert gpu.peak_flops_4bit_per_s > gpu.peak_flops_8bit_per_s > gpu.peak_flops_16bit_per_s


def test_every_price_names_its_source_and_date():
    # One on-demand price per GPU-hour, its list and date in the notes (H200 and B200: Spheron, 2026-03-17).
    priced = {gid: p for gid, p in presets.gpu_presets().items() if p.gpu.price_usd_per_hour is not None}
    assert (priced["h200"].gpu.price_usd_per_hour, priced["b200"].gpu.price_usd_per_hour) == (4.54, 6.03)
    for preset in priced.values():
        assert "Price:" in preset.provenance.notes and "/h" in preset.provenance.notes


@pytest.mark.parametrize(
    ("preset_id", "bandwidth", "compute"),
    [
        # Microbenchmarks ÷ the reference H100 SXM's (0.887 of its datasheet bandwidth, 0.795 of its
        # 16-bit peak); core/presets/gpus.toml gives each figure and its source.
        ("mi300x", 0.85, 0.64),  # 0.752 / 0.887 and 0.511 / 0.795 (power-limited clocks under GEMM)
        ("mi325x", 1.0, 0.80),  # 0.636 / 0.795; no bandwidth measurement
        ("b200", 1.0, 0.96),  # 0.765 / 0.795
        ("a100-80gb-sxm", 0.88, 1.0),  # 0.782 / 0.887; its GEMMs reach 0.85, above the reference
        ("h100-sxm", 1.0, 1.0),  # the reference itself
        ("rtx-4090", 1.0, 1.0),  # measured above the reference: never above 1
        # hipBLASLt median 34.4 of 59.4 TFLOP/s = 0.579 / 0.795; copy 0.83 of 256 GB/s: not clearly below 0.887
        ("radeon-8060s", 1.0, 0.73),
    ],
)
def test_sustained_shares(preset_id: str, bandwidth: float, compute: float) -> None:
    gpu = presets.gpu(preset_id)
    assert (gpu.sustained_bandwidth_share, gpu.sustained_compute_share) == (bandwidth, compute)


@pytest.mark.parametrize(
    ("name", "preset_id"),
    [
        ("A100-80GB-SXM", "a100-80gb-sxm"),
        ("NVIDIA A100 80GB SXM", "a100-80gb-sxm"),
        ("A100-40GB-SXM", "a100-40gb"),
        ("H100-SXM-80GB", "h100-sxm"),
        ("H100-PCIe-80GB", "h100-pcie"),
        ("H200-SXM-141GB", "h200"),
        ("AMD Instinct MI300X", "mi300x"),
        ("MI325X", "mi325x"),
        ("RTX-4090-24GB", "rtx-4090"),
        ("L40S", "l40s"),
        ("L40", None),  # not an L4: a model number must not run on
        ("A100", None),  # which memory?
        ("RTX-3090", None),  # no preset
        ("Radeon-8060S-StrixHalo", "radeon-8060s"),  # how the measurement files name it
        ("AMD Radeon 8060S", "radeon-8060s"),
    ],
)
def test_a_gpu_named_in_free_text_is_its_preset(name: str, preset_id: str | None) -> None:
    found = presets.gpu_like(name)
    assert (found.id if found else None) == preset_id


@pytest.mark.parametrize(
    ("name", "preset_id"),
    [
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"),  # an org, a suffix
        ("Llama 3.1 8B", "llama-3.1-8b"),  # the preset's display name
        ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "qwen3-235b-a22b"),  # a date and a precision after it
        ("Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("openai/gpt-oss-20b", "gpt-oss-20b"),  # not gpt-oss-120b: words, not characters
        ("deepseek-ai/DeepSeek-R1-0528", "deepseek-v3"),  # an architecture alias, a checkpoint's date
        ("nvidia/DeepSeek-R1-FP4", "deepseek-v3"),
        ("DeepSeek-V3-0324", "deepseek-v3"),
        ("DeepSeek-V3.2", None),  # a version after the run: not V3's attention
        ("meta-llama/Meta-Llama-3-70B-Instruct", "llama-3.1-70b"),  # Llama 3's shapes are 3.1's (8k context)
        ("Llama-3.1-8B-Instruct", "llama-3.1-8b"),  # not the llama-3-8b alias: "3" is followed by "1"
        ("Llama-2-70B-chat", "llama-2-70b"),
        ("Llama-3.2-70B", None),  # no such preset, and not Llama 3's alias: "3" is followed by "2"
        ("Qwen2-7B-Instruct", None),  # Qwen2 is not Qwen2.5
        ("GPT-9", None),
    ],
)
def test_a_model_named_in_free_text_is_its_preset(name: str, preset_id: str | None) -> None:
    assert presets.model_like(name) == preset_id


def test_the_strix_halo_runs_its_matmuls_at_its_sustained_share() -> None:
    # Llama 3.1 8B in 16 bits on the Radeon 8060S under the typical engine (MBU 0.88, MFU 0.88):
    # compute 59.4e12 × 0.73 (hipBLASLt against an H100's GEMMs) × 0.88 = 38.16 TFLOP/s;
    # bandwidth 256e9 × 1 × 0.88 = 225.28 GB/s (its copy kernels not clearly below an H100's).
    from core import Scenario, estimate

    machine = estimate(
        Scenario.from_flat({"model": "llama-3.1-8b", "gpu": "radeon-8060s", "engine": "typical"})
    ).machine
    assert machine.compute_flops_per_s == pytest.approx(38.157e12, rel=1e-4)
    assert machine.bandwidth_bytes_per_s == pytest.approx(225.28e9, rel=1e-9)


@pytest.mark.parametrize(
    ("model_id", "bits", "expert_bits", "words", "checkpoint_gb"),
    [
        ("deepseek-v3", 8.0, None, "FP8 (e4m3)", None),  # config.json quantization_config: fp8, e4m3, 128 × 128 blocks
        # MXFP4 experts at 4.25 bits, the rest at 16: 114.70 B × 4.25 / 8 + 2.13 B × 2 = 60.93 + 4.25 = 65.19 GB, the
        # model card's 60.8 GiB (65.3 GB); the 20b: 19.11 × 4.25 / 8 + 1.80 × 2 = 13.75 GB, its 12.8 GiB.
        ("gpt-oss-120b", 16.0, 4.25, "MXFP4 experts", 65.19),
        ("gpt-oss-20b", 16.0, 4.25, "MXFP4 experts", 13.75),
        ("llama-3.1-70b", 16.0, None, "bf16", None),  # no release format named: a bf16 checkpoint
        ("custom", 16.0, None, "bf16", None),
    ],
)
def test_a_model_presets_release_precision(model_id, bits, expert_bits, words, checkpoint_gb) -> None:
    released = presets.release_precision(model_id)
    assert (released.weight_bits, released.expert_weight_bits) == (bits, expert_bits)
    assert released.kv_bits == 16  # an fp8 KV cache is the server's choice
    if checkpoint_gb is not None:
        assert weight_bytes(presets.model(model_id), released) / 1e9 == pytest.approx(checkpoint_gb, abs=0.01)
    assert presets.release_format(model_id).startswith(words)
