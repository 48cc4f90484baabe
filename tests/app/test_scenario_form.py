"""The scenario form (app/scenario_form.py): widget values (human units) ↔ Scenario (SI), without Streamlit."""

from __future__ import annotations

from dataclasses import replace

import pytest
import query
import scenario_form

from core import presets
from core.efficiency import CALIBRATED
from core.estimate import estimate
from core.scenario import Scenario
from core.specs import Efficiency

LESSON = Scenario.lesson()


def build(values: dict, scenario: Scenario = LESSON) -> Scenario:
    return scenario_form.scenario_from_widgets(values, scenario.model, scenario.gpu)


@pytest.mark.parametrize("model_id", list(presets.model_presets()))
def test_every_model_preset_survives_the_widgets_and_stays_a_preset(model_id: str) -> None:
    scenario = replace(LESSON, model=presets.model(model_id))
    assert build(scenario_form.widget_values(scenario), scenario) == scenario


@pytest.mark.parametrize("gpu_id", list(presets.gpu_presets()))
def test_every_gpu_preset_survives_the_widgets_and_stays_a_preset(gpu_id: str) -> None:
    scenario = replace(LESSON, gpu=presets.gpu(gpu_id), efficiency=CALIBRATED)
    assert build(scenario_form.widget_values(scenario), scenario) == scenario


@pytest.mark.parametrize("kind", ["model", "gpu"])
def test_every_preset_number_lies_inside_the_widget_bounds(kind: str) -> None:
    # A value outside a number_input's bounds is a Streamlit exception, not a warning.
    specs = presets.model_presets() if kind == "model" else presets.gpu_presets()
    fields = scenario_form.MODEL_FIELDS if kind == "model" else scenario_form.GPU_FIELDS
    for preset_id in specs:
        scenario = replace(LESSON, **{kind: getattr(specs[preset_id], kind)})
        values = scenario_form.widget_values(scenario)
        for key in [*fields, "sb_usdh"] if kind == "gpu" else fields:
            if values[key] is not None:
                limit = query.LIMITS[key.removeprefix("sb_")]
                assert limit.low <= values[key] <= limit.high, (preset_id, key, values[key])


def test_the_lessons_widgets_read_in_human_units() -> None:
    values = scenario_form.widget_values(LESSON)
    assert (values["sb_params"], values["sb_bw"], values["sb_flops16"], values["sb_mem"]) == (7.0, 2000.0, 300.0, 80.0)
    assert (values["sb_wprec"], values["sb_kvprec"], values["sb_eff"]) == ("16", "16", "ideal")
    assert (values["sb_prompt"], values["sb_out"], values["sb_batch"], values["sb_replies"]) == (200, 500, 1, 100_000)
    assert values["sb_layers"] is None  # the toy model has no attention shape: no KV cache


def test_editing_a_number_makes_a_custom_spec_in_si_that_keeps_the_rest_of_the_preset() -> None:
    base = replace(LESSON, model=presets.model("mixtral-8x7b"), gpu=presets.gpu("h100-sxm"))
    values = {**scenario_form.widget_values(base), "sb_bw": 3350.5, "sb_params": 47.5}
    built = build(values, base)
    # 3,350.5 GB/s → 3,350,500,000,000 B/s, 47.5 B → 47,500,000,000: whole numbers, exactly.
    assert built.gpu.memory_bandwidth_bytes_per_s == 3_350_500_000_000
    assert built.model.total_params == 47_500_000_000
    assert (built.model.id, built.gpu.id) == ("custom", "custom")
    assert built.model.experts == 8 and built.gpu.price_usd_per_hour == 3.78  # not exposed, kept
    assert (built.model.name, built.gpu.name) == ("Custom model", "Custom GPU")  # blank names
    assert query.parse_flat(built.to_flat()) == (built, [])  # and it travels by URL


def test_a_custom_name_is_cleaned() -> None:
    values = {**scenario_form.widget_values(LESSON), "sb_model": "custom", "sb_mname": "<i>Tiny</i> 1B"}
    assert build(values).model.name == "iTiny/i 1B"


@pytest.mark.parametrize(("option", "bits"), [("16", 16.0), ("8", 8.0), ("4.5", 4.5)])
def test_weight_precision_options_carry_their_bits(option: str, bits: float) -> None:
    values = {**scenario_form.widget_values(LESSON), "sb_wprec": option}
    assert build(values).precision.weight_bits == bits
    assert scenario_form.widget_values(build(values))["sb_wprec"] == option


def test_other_bit_widths_use_the_number_box() -> None:
    scenario = Scenario.from_flat({"wbits": "6", "kvbits": "5"})
    values = scenario_form.widget_values(scenario)
    assert (values["sb_wprec"], values["sb_wbits"], values["sb_kvprec"], values["sb_kvbits"]) == (
        "other",
        6.0,
        "other",
        5.0,
    )
    assert build(values) == scenario


def test_custom_efficiency_converts_ms_and_us_exactly() -> None:
    efficiency = Efficiency(
        label="custom",
        mbu=0.7,
        mfu=0.45,
        step_overhead_s=0.0007,
        sequence_overhead_s=3.3e-5,
        allreduce_latency_s=1.1e-5,
    )
    scenario = replace(LESSON, efficiency=efficiency)
    values = scenario_form.widget_values(scenario)
    # 0.0007 s shows as 0.7 ms, 3.3e-5 s as 33 µs; float noise (0.7000000000000001) is rounded away.
    assert (values["sb_overhead"], values["sb_seqoverhead"], values["sb_allreduce"]) == (0.7, 33.0, 11.0)
    assert build(values) == scenario


def test_a_named_efficiency_ignores_the_custom_sliders() -> None:
    values = {**scenario_form.widget_values(LESSON), "sb_eff": "calibrated", "sb_mbu": 0.1}
    assert build(values).efficiency == CALIBRATED


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"sb_cached": 300}, "Cached prompt tokens (300) must be from 0 to the prompt tokens (200)"),
        ({"sb_params": 7.0, "sb_active": 8.0}, "Active parameters (8 B) must be at most the total parameters (7 B)"),
        ({"sb_layers": 32}, "fill in all five"),
        (
            {"sb_layers": 32, "sb_hidden": 4096, "sb_qheads": 8, "sb_kvheads": 9, "sb_headdim": 128},
            "KV heads (9) must be from 1 to the query heads (8)",
        ),
        ({"sb_prompt": None}, "Prompt tokens is empty: type a number from 1 to 1,000,000 tokens"),
    ],
)
def test_bad_combinations_are_named_in_the_sidebars_words(change: dict, words: str) -> None:
    values = {**scenario_form.widget_values(LESSON), **change}
    problems = scenario_form.combination_problems(values)
    assert len(problems) == 1 and words in problems[0]


def test_a_valid_scenario_has_no_combination_problems() -> None:
    assert (
        scenario_form.combination_problems(scenario_form.widget_values(Scenario.from_flat({"model": "llama-3.1-70b"})))
        == []
    )


def test_core_still_rejects_what_the_sidebar_does_not_check() -> None:
    # MoE with active == total passes the sidebar's checks; core's message then reaches the warning.
    base = replace(LESSON, model=presets.model("mixtral-8x7b"))
    values = {**scenario_form.widget_values(base), "sb_active": scenario_form.widget_values(base)["sb_params"]}
    assert scenario_form.combination_problems(values) == []
    with pytest.raises(ValueError, match="active_params must be < total_params"):
        build(values, base)


def test_the_selects_show_names_and_the_tooltip_the_id() -> None:
    assert scenario_form.preset_label("gpu", "h100-sxm") == presets.gpu("h100-sxm").name
    assert scenario_form.preset_label("model", "custom") == "Custom (edit the raw numbers)"
    tooltip = scenario_form.provenance("gpu", "h100-sxm")
    assert tooltip.startswith("Preset id `h100-sxm` (`gpu=h100-sxm` in a link).")
    assert "Source \\(checked" in tooltip  # the source text is markdown-escaped


def test_traffic_reads_with_thousands_separators() -> None:
    # 100,000 a day × 30 days = 3,000,000 a month.
    assert scenario_form.traffic_note(100_000, 30) == "100,000 replies a day × 30 days = 3,000,000 a month."
    assert scenario_form.traffic_note(None, 30) is None  # a cleared box


def test_memory_warning_names_the_gpus_needed() -> None:
    scenario = Scenario.from_flat({"model": "llama-3.1-70b", "gpu": "h100-sxm"})
    plan = estimate(scenario).memory
    # 70.55 B parameters × 2 bytes = 141.1 GB of weights + 0.23 GB of KV cache > 80 GB: ⌈141.33 / 80⌉ = 2 GPUs.
    assert scenario_form.memory_warning(scenario, plan) == (
        "Weights + KV cache need 141.33 GB but 1 × 80.00 GB = 80.00 GB. Use at least 2 GPUs, fewer bits per"
        " weight, or a smaller batch."
    )
    fits = replace(scenario, workload=replace(scenario.workload, gpu_count=2))
    assert scenario_form.memory_warning(fits, estimate(fits).memory) is None
