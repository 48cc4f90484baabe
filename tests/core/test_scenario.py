"""The Scenario and its flat {str: str} form, by example (the round trip is a property elsewhere)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core import presets
from core.efficiency import CALIBRATED, IDEAL, default_efficiency, efficiency_base
from core.engine import VLLM
from core.fields import flat_text, inputs, si_from_text
from core.flat import FLAT_KEYS, read_flat
from core.scenario import Scenario
from core.specs import Precision, Pricing, Workload

# The lesson's Part 3 long reply: toy 7B in fp16 on the toy GPU, ideal, 200 → 500 tokens,
# $0.50 / $0.50 / $1.50 per million, 100,000 replies a day for 30 days.
LESSON_FLAT = {
    "model": "toy-7b",
    "gpu": "toy-gpu",
    "wbits": "16",
    "kvbits": "16",
    "engine": "ideal",
    "prompt": "200",
    "out": "500",
    "batch": "1",
    "cached": "0",
    "gpus": "1",
    "cwrite": "0",
    "pin": "0.5",
    "pcache": "0.5",
    "pout": "1.5",
    "replies": "100000",
    "days": "30",
}
MODEL_ONLY_KEYS = {
    "mname",
    "params",
    "active",
    "layers",
    "hidden",
    "qheads",
    "kvheads",
    "headdim",
    "experts",
    "topk",
    "kvlatent",
    "swa",
    "swalayers",
}
GPU_ONLY_KEYS = {"gname", "bw", "flops16", "flops8", "mem", "link", "usdh"}


def test_lesson_flat_form_is_exact() -> None:
    flat = Scenario.lesson().to_flat()
    assert flat == LESSON_FLAT
    # Deterministic order (a shared link should not reshuffle): the order of FLAT_KEYS.
    assert list(flat) == [key for key in FLAT_KEYS if key in flat]


def test_lesson_is_the_default_and_the_empty_flat_form() -> None:
    lesson = Scenario.lesson()
    assert lesson == Scenario()
    assert Scenario.from_flat({}) == lesson
    assert Scenario.from_flat(LESSON_FLAT) == lesson
    assert lesson.model == presets.model("toy-7b") and lesson.gpu == presets.gpu("toy-gpu")
    assert lesson.efficiency == IDEAL
    assert (lesson.workload, lesson.pricing, lesson.precision) == (Workload(), Pricing(), Precision())


def test_preset_scenario_encodes_ids_only() -> None:
    scenario = Scenario(
        model=presets.model("llama-3.1-8b"),
        gpu=presets.gpu("h100-sxm"),
        efficiency=efficiency_base("typical", presets.model("llama-3.1-8b")),
        precision=Precision(weight_bits=8, kv_bits=8),
        workload=Workload(1000, 200, 8, 100, 2),
    )
    flat = scenario.to_flat()
    assert (flat["model"], flat["gpu"], flat["engine"]) == ("llama-3.1-8b", "h100-sxm", "typical")
    assert set(flat) & (MODEL_ONLY_KEYS | GPU_ONLY_KEYS | {"mbu", "mfu", "overhead"}) == set()
    # The short form keeps only what differs from the lesson: the ids, the bits and the workload.
    assert scenario.to_flat(minimal=True) == {
        "model": "llama-3.1-8b",
        "gpu": "h100-sxm",
        "wbits": "8",
        "kvbits": "8",
        "prompt": "1000",
        "out": "200",
        "batch": "8",
        "cached": "100",
        "gpus": "2",
    }
    assert (flat["wbits"], flat["prompt"], flat["cached"], flat["gpus"]) == ("8", "1000", "100", "2")
    assert Scenario.from_flat(flat) == scenario


def test_an_edited_preset_travels_as_its_id_and_the_edited_numbers() -> None:
    gpu = replace(presets.gpu("h100-sxm"), memory_bytes=94e9, name="H100 NVL-ish")
    model = replace(presets.model("mixtral-8x7b"), layers=40, experts_per_token=1, active_params=7e9)
    scenario = Scenario(model=model, gpu=gpu)
    flat = scenario.to_flat()
    # Shown units: 94e9 bytes are "94" GB; 7e9 parameters are "7" billion.
    edits = {"mname", "layers", "topk", "active", "gname", "mem"} & set(flat)
    assert {k: flat[k] for k in edits} == {
        "layers": "40",
        "topk": "1",
        "active": "7",
        "gname": "H100 NVL-ish",
        "mem": "94",
    }
    assert (flat["model"], flat["gpu"], flat["engine"]) == ("mixtral-8x7b", "h100-sxm", "typical")
    assert Scenario.from_flat(flat) == scenario
    assert scenario.model_is_edited and scenario.gpu_is_edited
    assert not Scenario(gpu=presets.gpu("h100-sxm")).gpu_is_edited


def test_custom_starts_from_the_lesson_numbers() -> None:
    # A from-scratch model: the toy's 7e9 parameters and no attention shape, plus what is given.
    model = Scenario.from_flat({"model": "custom", "params": "13"}).model
    # A dense base: active parameters follow the total when only the total is given (13 billion).
    assert (model.id, model.name, model.total_params, model.active_params) == ("custom", "Custom model", 13e9, 13e9)
    assert model.layers is None
    gpu = Scenario.from_flat({"gpu": "custom", "bw": "1000"}).gpu
    # The toy GPU's 300 TFLOP/s kept, bandwidth replaced: 1,000 GB/s = 1e12 B/s.
    assert (gpu.id, gpu.name, gpu.memory_bandwidth_bytes_per_s, gpu.peak_flops_16bit_per_s) == (
        "custom",
        "Custom GPU",
        1e12,
        3e14,
    )


def test_optional_numbers_clear_with_an_empty_value() -> None:
    # Llama 3.1 8B without its attention shape: no KV cache (all five given empty together).
    flat = {"model": "llama-3.1-8b", **dict.fromkeys(("layers", "hidden", "qheads", "kvheads", "headdim"), "")}
    model = Scenario.from_flat(flat).model
    assert model.layers is None and model.kv_elements_per_token_per_layer == 0
    assert Scenario.from_flat(Scenario(model=model).to_flat()).model == model


@pytest.mark.parametrize(
    "flat",
    [{"model": "custom", "mname": "My model"}, {"gpu": "custom", "gname": "My GPU"}],
    ids=["model", "gpu"],
)
def test_custom_names_parse(flat: dict[str, str]) -> None:
    scenario = Scenario.from_flat(flat)
    assert (scenario.model.name if "mname" in flat else scenario.gpu.name) == (flat.get("mname") or flat["gname"])


def test_edited_efficiency_travels_as_its_base_and_the_edits() -> None:
    edited = replace(CALIBRATED, mbu=0.7, step_overhead_s=1e-3)
    flat = Scenario(gpu=presets.gpu("h100-sxm"), efficiency=edited).to_flat()
    # 1e-3 s is "1" ms; the untouched calibrated numbers stay out of the link.
    assert {k: flat[k] for k in ("engine", "mbu", "overhead")} == {"engine": "typical", "mbu": "0.7", "overhead": "1"}
    assert {"mfu", "seqoverhead", "allreduce"} & set(flat) == set()
    assert Scenario.from_flat(flat).efficiency == edited
    # Older links said eff=custom with every number: read as edits of the calibrated set.
    old = {"eff": "custom", "mbu": "0.7", "mfu": "0.56", "overhead": "1", "seqoverhead": "14", "allreduce": "24"}
    assert Scenario.from_flat(old).efficiency == replace(
        CALIBRATED, mbu=0.7, mfu=0.56, step_overhead_s=1e-3, sequence_overhead_s=14e-6, allreduce_latency_s=24e-6
    )


@pytest.mark.parametrize(
    ("flat", "message"),
    [
        pytest.param({"bogus": "1", "zzz": "2"}, r"^unknown parameter\(s\): bogus, zzz$", id="unknown-keys"),
        pytest.param(
            {"batch": "abc"}, r"^batch must be a whole number from 1 to 1,000,000 requests, got 'abc'$", id="batch-text"
        ),
        pytest.param({"batch": "1.5"}, r"^batch must be a whole number from 1 .*, got '1.5'$", id="batch-fraction"),
        pytest.param({"batch": "0"}, r"^batch must be a whole number from 1 .*, got '0'$", id="batch-zero"),
        pytest.param({"prompt": "nan"}, r"^prompt must be a whole number from 1 .*, got 'nan'$", id="prompt-nan"),
        pytest.param(
            {"pin": "inf"}, r"^pin must be a number from 0 to 10,000 USD per million tokens, got 'inf'$", id="price-inf"
        ),
        pytest.param({"wbits": ""}, r"^wbits must be a number from 1 to 32 bits, got ''$", id="empty"),
        pytest.param(
            # The closest ids, as a wrong API id is answered.
            {"model": "llama-9"},
            r"^model must be 'custom' or a preset id \(closest: llama-2-7b, llama-2-70b, llama-2-13b\), got 'llama-9'$",
            id="model",
        ),
        pytest.param(
            {"gpu": "h100"},
            r"^gpu must be 'custom' or a preset id \(closest: h100-sxm, h100-pcie, h200\), got 'h100'$",
            id="gpu",
        ),
        pytest.param(
            {"gpu": "zzz"}, r"^gpu must be 'custom' or a preset id \(such as toy-gpu\), got 'zzz'$", id="none"
        ),
        pytest.param(
            {"engine": "mine"},
            r"^engine must be one of auto, ideal, typical, vllm, trtllm, sglang, llama.cpp, llama.cpp-metal, llama.cpp-radeon, mlx, "
            r"hf-transformers, "
            r"got 'mine'$",
            id="engine",
        ),
        pytest.param(
            {"prompt": "10", "cached": "11"},
            r"^cached must be a whole number from 0 to 10 tokens \(prompt\), got '11'$",
            id="cached>prompt",
        ),
        pytest.param(
            {"model": "custom", "params": "-1"},
            r"^params must be a number from 0.001 to 100,000 billion parameters, got '-1'$",
            id="custom-params",
        ),
        pytest.param({"mbu": "1.5"}, r"^mbu must be a number from 0.01 to 1, got '1.5'$", id="mbu>1"),
        pytest.param(
            {"layers": "32"}, r"^layers, hidden, query_heads, kv_heads and head_dim must be given together", id="shape"
        ),
        # A value is echoed at most 40 characters long.
        pytest.param({"out": "9" * 500}, r"^out must be .*, got '9{40}…'$", id="long-value"),
    ],
)
def test_from_flat_errors_name_the_key(flat: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Scenario.from_flat(flat)


def test_scenario_rejects_unknown_ids() -> None:
    edited = replace(presets.model("llama-3.1-8b"), total_params=8.1e9)
    assert Scenario(model=edited).model.total_params == 8.1e9  # an edited preset keeps its id
    with pytest.raises(ValueError, match=r"^model must be a preset id or 'custom', got 'my-model'$"):
        Scenario(model=replace(edited, id="my-model"))
    with pytest.raises(ValueError, match=r"^gpu must be a preset id or 'custom', got 'h1000'$"):
        Scenario(gpu=replace(presets.gpu("h100-sxm"), id="h1000"))


def test_missing_keys_take_defaults() -> None:
    scenario = Scenario.from_flat({"batch": "8", "pout": "10"})
    assert scenario == Scenario(workload=Workload(batch_size=8), pricing=Pricing(output_usd_per_million_tokens=10))


@pytest.mark.parametrize(
    ("flat", "label"),
    [
        ({}, "ideal"),
        ({"gpu": "toy-gpu"}, "ideal"),
        ({"gpu": "h100-sxm"}, "typical"),
        ({"gpu": "m2-ultra"}, "typical"),
        ({"gpu": "custom", "bw": "1000", "flops16": "100"}, "typical"),  # custom hardware is real hardware
        ({"gpu": "h100-sxm", "engine": "ideal"}, "ideal"),
        ({"gpu": "toy-gpu", "eff": "calibrated"}, "typical"),  # older links: eff= and its old name
        ({"gpu": "toy-gpu", "engine": "vllm"}, "vllm"),
        ({"gpu": "h100-sxm", "engine": "auto"}, "typical"),
    ],
)
def test_efficiency_defaults_by_gpu(flat: dict[str, str], label: str) -> None:
    efficiency = Scenario.from_flat(flat).efficiency
    assert efficiency.label == label
    assert (
        efficiency == {"ideal": IDEAL, "typical": CALIBRATED, "vllm": VLLM.efficiency(presets.model("toy-7b"))}[label]
    )


def test_default_efficiency_function() -> None:
    assert default_efficiency("toy-gpu") is IDEAL
    assert default_efficiency("h100-sxm") is CALIBRATED
    assert default_efficiency("custom") is CALIBRATED


def test_direct_construction_defaults_efficiency_by_gpu() -> None:
    # Issue 2, section 4: real GPUs default to calibrated, only the toy GPU to ideal.
    assert Scenario(gpu=presets.gpu("h100-sxm")).efficiency == CALIBRATED
    assert Scenario(gpu=replace(presets.gpu("toy-gpu"), id="custom")).efficiency == CALIBRATED
    assert Scenario(gpu=presets.gpu("toy-gpu")).efficiency == IDEAL
    assert Scenario(gpu=presets.gpu("h100-sxm"), efficiency=IDEAL).efficiency == IDEAL


def test_a_model_without_a_precision_is_served_as_it_ships() -> None:
    # DeepSeek-V3 ships FP8: built directly, from a link without wbits, or read leniently, it is 8-bit with
    # 8-bit maths by default; its short link says nothing of the precision, and 16 bits must be asked for.
    deepseek = presets.model("deepseek-v3")
    assert Scenario(model=deepseek).precision == Precision(weight_bits=8)
    linked = Scenario.from_flat({"model": "deepseek-v3", "gpu": "h200", "gpus": "8"})
    assert linked.precision == Precision(weight_bits=8) and linked.precision.math_bits == 8
    assert "wbits" not in linked.to_flat(minimal=True)
    assert read_flat({"model": "deepseek-v3"}, Scenario)[1].precision.weight_bits == 8
    wide = Scenario.from_flat({"model": "deepseek-v3", "wbits": "16"})
    assert wide.precision.weight_bits == 16 and wide.to_flat(minimal=True)["wbits"] == "16"
    assert Scenario.from_flat(wide.to_flat(minimal=True)) == wide
    # An explicit Precision() is a choice, not the default; a bf16 model's release is 16 bits.
    assert Scenario(model=deepseek, precision=Precision()).precision.weight_bits == 16
    assert Scenario(model=presets.model("llama-3.1-70b")).precision == Precision()
    # A model edited from its preset keeps the preset's release; a custom model starts at 16.
    edited = Scenario.from_flat({"model": "gpt-oss-120b", "layers": "30"})
    assert (edited.precision.weight_bits, edited.precision.expert_weight_bits) == (16, 4.25)
    assert edited.precision.math_bits == 16 and edited.precision.dequantises  # MXFP4 experts dequantised
    # Its experts' width travels in a link like the weights' (and, as shipped, is left out of the short one).
    narrower = Scenario.from_flat({"model": "gpt-oss-120b", "ebits": "8"})
    assert narrower.precision.expert_weight_bits == 8 and narrower.to_flat(minimal=True)["ebits"] == "8"
    assert "ebits" not in Scenario.from_flat({"model": "gpt-oss-120b"}).to_flat(minimal=True)
    assert Scenario.from_flat({"model": "custom"}).precision == Precision()


BANDWIDTH = dict(inputs(type(presets.gpu("h100-sxm"))))["memory_bandwidth_bytes_per_s"]
OVERHEAD = dict(inputs(type(IDEAL)))["step_overhead_s"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.35e12, "3350"),  # bytes/s shown in GB/s
        (1e15, "1000000"),
        (1.5e9, "1.5"),
        (2.039e12, "2039"),
        (1e9 / 3, "0.3333333333333333"),
        (1234567890123.0, "1234.567890123"),
    ],
)
def test_flat_text_in_the_shown_unit_reads_back_exactly(value: float, text: str) -> None:
    assert flat_text(BANDWIDTH, value) == text
    assert si_from_text(BANDWIDTH, text) == value


@pytest.mark.parametrize(("value", "text"), [(2.5e-3, "2.5"), (1e-3, "1"), (14e-6, "0.014"), (0.1 + 0.2, None)])
def test_flat_text_of_seconds_in_milliseconds(value: float, text: str | None) -> None:
    written = flat_text(OVERHEAD, value)
    if text is not None:
        assert written == text
    assert si_from_text(OVERHEAD, written) == value  # 0.30000000000000004 s too, exactly
