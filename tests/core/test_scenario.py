"""The Scenario and its flat {str: str} form, by example (the round trip is a property elsewhere)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from core import presets
from core.efficiency import CALIBRATED, IDEAL, default_efficiency
from core.scenario import FLAT_KEYS, Scenario, format_number, parse_float, parse_int
from core.specs import Efficiency, Precision, Pricing, Workload

# The lesson's Part 3 long reply: toy 7B in fp16 on the toy GPU, ideal, 200 → 500 tokens,
# $0.50 / $0.50 / $1.50 per million, 100,000 replies a day for 30 days.
LESSON_FLAT = {
    "model": "toy-7b",
    "gpu": "toy-gpu",
    "wbits": "16",
    "kvbits": "16",
    "eff": "ideal",
    "prompt": "200",
    "out": "500",
    "batch": "1",
    "cached": "0",
    "gpus": "1",
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
    "kvrope",
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
        efficiency=CALIBRATED,
        precision=Precision(weight_bits=8, kv_bits=8),
        workload=Workload(1000, 200, 8, 100, 2),
    )
    flat = scenario.to_flat()
    assert (flat["model"], flat["gpu"], flat["eff"]) == ("llama-3.1-8b", "h100-sxm", "calibrated")
    assert set(flat) & (MODEL_ONLY_KEYS | GPU_ONLY_KEYS | {"mbu", "mfu", "overhead"}) == set()
    assert (flat["wbits"], flat["prompt"], flat["cached"], flat["gpus"]) == ("8", "1000", "100", "2")
    assert Scenario.from_flat(flat) == scenario


def test_custom_model_and_gpu_encode_every_number() -> None:
    gpu = replace(presets.gpu("h100-sxm"), id="custom", name="My GPU")
    model = replace(presets.model("mixtral-8x7b"), id="custom", name="My MoE")
    flat = Scenario(model=model, gpu=gpu).to_flat()
    expected_custom = {
        "model": "custom",
        "mname": "My MoE",
        "params": "46700000000",
        "active": "12880000000",
        "layers": "32",
        "hidden": "4096",
        "qheads": "32",
        "kvheads": "8",
        "headdim": "128",
        "experts": "8",
        "topk": "2",
        "gpu": "custom",
        "gname": "My GPU",
        "bw": "3350000000000",
        "flops16": "989500000000000",
        "flops8": "1979000000000000",
        "mem": "80000000000",
        "link": "450000000000",
        "usdh": "3.78",
        "eff": "calibrated",  # a custom GPU is real hardware
    }
    assert flat == {**LESSON_FLAT, **expected_custom}
    # None fields (no latent, no window) are left out rather than written as "None".
    assert {"kvlatent", "kvrope", "swa", "swalayers"} & set(flat) == set()


@pytest.mark.parametrize(
    "flat",
    [{"model": "custom", "mname": "My model"}, {"gpu": "custom", "gname": "My GPU"}],
    ids=["model", "gpu"],
)
def test_custom_names_parse(flat: dict[str, str]) -> None:
    scenario = Scenario.from_flat(flat)
    assert (scenario.model.name if "mname" in flat else scenario.gpu.name) == (flat.get("mname") or flat["gname"])


def test_custom_scenario_round_trips() -> None:
    gpu = replace(presets.gpu("h100-sxm"), id="custom", name="My GPU")
    model = replace(presets.model("gpt-oss-20b"), id="custom", name="My MoE")
    scenario = Scenario(model=model, gpu=gpu)
    assert Scenario.from_flat(scenario.to_flat()) == scenario


def test_custom_efficiency_encodes_every_number_and_named_ones_only_the_label() -> None:
    custom = Efficiency(
        label="mine", mbu=0.7, mfu=0.4, step_overhead_s=1e-3, sequence_overhead_s=0, allreduce_latency_s=5e-6
    )
    flat = Scenario(efficiency=custom).to_flat()
    assert {k: flat[k] for k in ("eff", "mbu", "mfu", "overhead", "seqoverhead", "allreduce")} == {
        "eff": "mine",
        "mbu": "0.7",
        "mfu": "0.4",
        "overhead": "0.001",
        "seqoverhead": "0",
        "allreduce": "5e-06",
    }
    assert Scenario.from_flat(flat).efficiency == custom
    # A named efficiency with an edited number is no longer the named one: every number travels.
    edited = replace(CALIBRATED, mbu=0.5)
    assert Scenario.from_flat(Scenario(efficiency=edited).to_flat()).efficiency == edited
    assert "mbu" not in Scenario(efficiency=CALIBRATED).to_flat()


@pytest.mark.parametrize(
    ("flat", "message"),
    [
        pytest.param({"bogus": "1", "zzz": "2"}, r"^unknown parameter\(s\): bogus, zzz$", id="unknown-keys"),
        pytest.param({"batch": "abc"}, r"^batch must be a number, got 'abc'$", id="batch-text"),
        pytest.param({"batch": "1.5"}, r"^batch must be a whole number, got '1.5'$", id="batch-fraction"),
        pytest.param({"prompt": "nan"}, r"^prompt must be a finite number, got 'nan'$", id="prompt-nan"),
        pytest.param({"pin": "inf"}, r"^pin must be a finite number, got 'inf'$", id="price-inf"),
        pytest.param({"wbits": ""}, r"^wbits must be a number, got ''$", id="empty"),
        pytest.param(
            {"model": "llama-3.1-8b", "layers": "3", "params": "1e9"},
            r"^layers, params can only be given with model=custom$",
            id="model-keys-with-preset",
        ),
        pytest.param(
            {"gpu": "h100-sxm", "bw": "1e12"}, r"^bw can only be given with gpu=custom$", id="gpu-keys-with-preset"
        ),
        pytest.param({"layers": "3"}, r"^layers can only be given with model=custom$", id="model-keys-with-default"),
        pytest.param({"model": "llama-9"}, r"^model 'llama-9' is not a preset; known: toy-7b, ", id="unknown-model"),
        pytest.param({"gpu": "h100"}, r"^gpu 'h100' is not a preset; known: toy-gpu, ", id="unknown-gpu"),
        # Range errors come from the spec, prefixed with the URL key that carried the value.
        pytest.param(
            {"batch": "0"}, r"^batch: batch_size must be a whole number >= 1 and <= 1,000,000, got 0$", id="batch-zero"
        ),
        pytest.param(
            {"prompt": "10", "cached": "11"},
            r"^cached: cached_prompt_tokens must be a whole number >= 0 and <= 10, got 11$",
            id="cached>prompt",
        ),
        pytest.param(
            {"model": "custom", "params": "-1"},
            r"^params: total_params must be >= 1,000 and <= 1e\+14, got -1.0$",
            id="custom-params",
        ),
        pytest.param({"eff": "mine", "mbu": "1.5"}, r"^mbu must be >= 0.01 and <= 1, got 1.5$", id="mbu>1"),
    ],
)
def test_from_flat_errors_name_the_key(flat: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Scenario.from_flat(flat)


def test_edited_preset_must_say_custom() -> None:
    edited = replace(presets.model("llama-3.1-8b"), total_params=8.1e9)
    with pytest.raises(ValueError, match=r"^model 'llama-3.1-8b' differs from its preset: give it id 'custom'$"):
        Scenario(model=edited)
    with pytest.raises(ValueError, match=r"^gpu 'h100-sxm' differs from its preset"):
        Scenario(gpu=replace(presets.gpu("h100-sxm"), memory_bytes=96e9))
    with pytest.raises(ValueError, match=r"^model must be a preset id or 'custom', got 'my-model'$"):
        Scenario(model=replace(edited, id="my-model"))
    # The same numbers under "custom" are fine.
    assert Scenario(model=replace(edited, id="custom")).model.total_params == 8.1e9


def test_missing_keys_take_defaults() -> None:
    scenario = Scenario.from_flat({"batch": "8", "pout": "10"})
    assert scenario == Scenario(workload=Workload(batch_size=8), pricing=Pricing(output_usd_per_million_tokens=10))


def test_custom_model_from_few_keys() -> None:
    # Missing numbers come from the toy model; active defaults to total (a dense model).
    model = Scenario.from_flat({"model": "custom", "params": "13e9"}).model
    assert (model.id, model.name, model.total_params, model.active_params) == ("custom", "Custom model", 13e9, 13e9)
    assert model.layers is None
    gpu = Scenario.from_flat({"gpu": "custom", "bw": "1e12"}).gpu
    # Toy GPU's 300 TFLOP/s kept, bandwidth replaced.
    assert (gpu.id, gpu.name, gpu.memory_bandwidth_bytes_per_s, gpu.peak_flops_16bit_per_s) == (
        "custom",
        "Custom GPU",
        1e12,
        3e14,
    )


@pytest.mark.parametrize(
    ("flat", "label"),
    [
        ({}, "ideal"),
        ({"gpu": "toy-gpu"}, "ideal"),
        ({"gpu": "h100-sxm"}, "calibrated"),
        ({"gpu": "m2-ultra"}, "calibrated"),
        ({"gpu": "custom", "bw": "1e12", "flops16": "1e14"}, "calibrated"),  # custom hardware is real hardware
        ({"gpu": "h100-sxm", "eff": "ideal"}, "ideal"),
        ({"gpu": "toy-gpu", "eff": "calibrated"}, "calibrated"),
    ],
)
def test_efficiency_defaults_by_gpu(flat: dict[str, str], label: str) -> None:
    efficiency = Scenario.from_flat(flat).efficiency
    assert efficiency.label == label
    assert efficiency == {"ideal": IDEAL, "calibrated": CALIBRATED}[label]


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


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (16, "16"),
        (16.0, "16"),  # integral floats drop ".0"
        (0.5, "0.5"),
        (100_000, "100000"),
        (1e5, "100000"),
        (3.35e12, "3350000000000"),
        (1e15, "1e15"),  # not "1e+15": a '+' in a URL query decodes to a space
        (1e300, "1e300"),
        (0.1, "0.1"),
        (2.4e-05, "2.4e-05"),
        (0.1 + 0.2, "0.30000000000000004"),  # 15 digits would say 0.3, which is another float
        (1 / 3, "0.3333333333333333"),
        (-2.5, "-2.5"),
    ],
)
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text
    assert float(text) == value


def test_format_number_never_writes_plus_for_large_values() -> None:
    # 17 significant digits above 1e16, where repr() writes '1.2345678901234566e+17'.
    value = 1.2345678901234566e17
    assert repr(value) == "1.2345678901234566e+17"
    assert format_number(value) == "1.2345678901234566e17"
    assert float(format_number(value)) == value


def test_parsers() -> None:
    assert parse_float("bw", "1e12") == 1e12
    assert parse_int("batch", "1e3") == 1000 and isinstance(parse_int("batch", "1e3"), int)
    with pytest.raises(ValueError, match=r"^bw must be a finite number, got '-inf'$"):
        parse_float("bw", "-inf")
    assert math.isclose(parse_float("x", " 2.5 "), 2.5)
