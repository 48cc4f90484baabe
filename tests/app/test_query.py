"""The lenient URL / JSON parser (app/query.py), without Streamlit: links come from strangers."""

from __future__ import annotations

import json
from dataclasses import replace
from urllib.parse import parse_qsl

import pytest
import query
from hypothesis import given, settings
from hypothesis import strategies as st

from core import presets
from core.efficiency import CALIBRATED, IDEAL
from core.scenario import FLAT_KEYS, Scenario
from core.specs import Efficiency, Pricing, Workload

LLAMA_70B_FP8 = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "eff": "calibrated"}
HOSTILE = (
    "abc",
    "",
    " ",
    "NaN",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "-1",
    "--5",
    "0x10",
    "1,5",
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    ":red[boom]",
    "$x$",
    "x" * 10_000,
    "\x00\n\t",
)
ID_KEYS = {"model", "gpu", "eff"}
NAME_KEYS = set(query.NAME_KEYS)


def unescape(text: str) -> str:
    return text.replace("\\", "")


def custom_scenario() -> Scenario:
    """A custom model (MoE, from Mixtral) on a custom GPU with custom efficiency: every key in the URL."""
    model = replace(presets.model("mixtral-8x7b"), id="custom", name="My MoE (v2)", total_params=47e9)
    gpu = replace(presets.gpu("h100-sxm"), id="custom", name="H100 at 3.5 TB/s", memory_bandwidth_bytes_per_s=3.5e12)
    efficiency = Efficiency(
        label="custom", mbu=0.7, mfu=0.4, step_overhead_s=0.003, sequence_overhead_s=2e-5, allreduce_latency_s=1e-5
    )
    return Scenario(
        model=model,
        gpu=gpu,
        efficiency=efficiency,
        workload=Workload(prompt_tokens=4000, output_tokens=800, batch_size=32, cached_prompt_tokens=1000, gpu_count=4),
        pricing=Pricing(2.5, 1.25, 10.0, 12_345, 31),
    )


ROUND_TRIP = [
    Scenario.lesson(),
    Scenario.from_flat(LLAMA_70B_FP8),
    Scenario.from_flat({"model": "deepseek-v3", "gpu": "mi300x", "gpus": "8", "wbits": "4.5", "kvbits": "8"}),
    custom_scenario(),
]


@pytest.mark.parametrize("scenario", ROUND_TRIP, ids=["lesson", "llama70b-fp8", "deepseek-int4", "custom"])
def test_a_valid_scenario_round_trips_without_a_warning(scenario: Scenario) -> None:
    parsed, warnings = query.parse_flat(scenario.to_flat())
    assert warnings == []
    assert parsed == scenario
    # Written back and read again, still the same (text may differ: 1979000000000000 vs 1.979e15).
    assert query.parse_flat(parsed.to_flat()) == (scenario, [])


def test_an_empty_query_is_the_lesson() -> None:
    assert query.parse_flat({}) == (Scenario.lesson(), [])


def test_the_sections_partition_the_flat_keys_and_limits_cover_every_number() -> None:
    # A key core adds later must get UI bounds here, or this fails (rather than being unparseable).
    assert sum((list(keys) for keys in query.SECTIONS.values()), []) == list(FLAT_KEYS)
    assert set(query.LIMITS) == set(FLAT_KEYS) - ID_KEYS - NAME_KEYS


@pytest.mark.parametrize("key", FLAT_KEYS)
@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_garbage_in_any_parameter_is_a_warning_naming_it_never_an_exception(key: str, value: str) -> None:
    # In a custom context so the custom-only keys are parsed for what they hold, not ignored as stray.
    context = {"model": "custom", "gpu": "custom", "eff": "custom"}
    scenario, warnings = query.parse_flat({**context, key: value})
    assert isinstance(scenario, Scenario)
    shown = unescape(" ".join(warnings))
    if key in NAME_KEYS:
        # Names keep letters, digits, spaces and .-+/()#, only; a warning says so when anything was dropped.
        assert set(scenario.model.name + scenario.gpu.name) <= set(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .-+/()#,"
        )
        return
    if key == "eff" and value.strip().lower() == "custom":
        return
    assert warnings, f"{key}={value[:20]!r} gave no warning"
    assert key in shown
    for text in warnings:  # markup is escaped: nothing renders as a tag, a link or a colour
        assert "<script>" not in text and "](" not in text and ":red[" not in text and "$x$" not in text
        assert len(text) < 400


@pytest.mark.parametrize(
    ("flat", "field", "expected", "allowed"),
    [
        # 1e308 tokens would freeze every sweep: clamped to the UI's 1,000,000.
        ({"prompt": "1e308"}, ("workload", "prompt_tokens"), 1_000_000, "1 to 1,000,000 tokens"),
        ({"out": "0"}, ("workload", "output_tokens"), 1, "1 to 200,000 tokens"),
        ({"batch": "5000"}, ("workload", "batch_size"), 4096, "1 to 4,096"),
        ({"gpus": "-3"}, ("workload", "gpu_count"), 1, "1 to 64 GPUs"),
        ({"pin": "-1"}, ("pricing", "input_usd_per_million_tokens"), 0.0, "0 to 1,000 USD"),
        ({"pout": "5000"}, ("pricing", "output_usd_per_million_tokens"), 1000.0, "0 to 1,000 USD"),
        ({"days": "99"}, ("pricing", "days_per_month"), 31, "1 to 31 days"),
        ({"wbits": "0"}, ("precision", "weight_bits"), 1.0, "1 to 32 bits"),
    ],
)
def test_out_of_range_values_are_clamped_to_the_ui_bounds(flat, field, expected, allowed) -> None:
    scenario, warnings = query.parse_flat(flat)
    assert getattr(getattr(scenario, field[0]), field[1]) == expected
    assert len(warnings) == 1
    assert next(iter(flat)) in warnings[0] and allowed in unescape(warnings[0])


def test_a_fraction_where_a_count_is_needed_is_rounded_with_a_warning() -> None:
    scenario, warnings = query.parse_flat({"replies": "1.5", "out": "499.6"})
    assert scenario.pricing.replies_per_day == 2 and scenario.workload.output_tokens == 500
    assert len(warnings) == 2 and "whole number" in warnings[0]


def test_cross_field_limits_are_clamped_to_the_field_they_depend_on() -> None:
    # cached ≤ prompt (default prompt 200), active ≤ total, KV heads ≤ query heads.
    flat = {
        "cached": "500",
        "model": "custom",
        "params": "70e9",
        "active": "80e9",
        "layers": "80",
        "hidden": "8192",
        "qheads": "64",
        "kvheads": "65",
        "headdim": "128",
    }
    scenario, warnings = query.parse_flat(flat)
    assert scenario.workload.cached_prompt_tokens == 200
    assert scenario.model.active_params == 70e9
    assert scenario.model.kv_heads == 64
    assert len(warnings) == 3


def test_a_section_core_rejects_falls_back_to_its_defaults_alone() -> None:
    # Layers without the rest of the attention shape: the model section is dropped, the rest kept.
    scenario, warnings = query.parse_flat({"model": "custom", "layers": "80", "out": "1000"})
    assert scenario.model == presets.model(presets.TOY_MODEL_ID)
    assert scenario.workload.output_tokens == 1000
    assert len(warnings) == 1 and "model settings" in warnings[0]


def test_custom_only_keys_on_a_preset_are_ignored_with_a_warning() -> None:
    scenario, warnings = query.parse_flat({"gpu": "h100-sxm", "bw": "5e12", "mname": "x"})
    assert scenario.gpu == presets.gpu("h100-sxm")
    assert scenario.model == presets.model(presets.TOY_MODEL_ID)
    assert ["bw" in w for w in warnings] == [False, True] or ["bw" in w for w in warnings] == [True, False]


def test_unknown_preset_ids_fall_back_to_the_lesson_and_ids_are_case_insensitive() -> None:
    scenario, warnings = query.parse_flat({"model": "gpt-17", "gpu": "H100-SXM"})
    assert scenario.model.id == presets.TOY_MODEL_ID and scenario.gpu.id == "h100-sxm"
    assert len(warnings) == 1 and "gpt" in warnings[0]


def test_efficiency_numbers_that_change_a_named_set_make_it_custom_from_that_set() -> None:
    scenario, warnings = query.parse_flat({"eff": "ideal", "mbu": "0.5"})
    assert scenario.efficiency == replace(IDEAL, label="custom", mbu=0.5)  # MFU and overheads stay ideal's
    assert len(warnings) == 1 and "custom" in warnings[0]
    # Restating a named set's own numbers is not a change.
    assert query.parse_flat({"eff": "calibrated", "mbu": str(CALIBRATED.mbu)}) == (Scenario(efficiency=CALIBRATED), [])


def test_the_default_efficiency_follows_the_gpu_when_none_is_given() -> None:
    assert query.parse_flat({"gpu": "h100-sxm"})[0].efficiency == CALIBRATED
    assert query.parse_flat({})[0].efficiency == IDEAL


def test_many_unknown_keys_are_one_warning() -> None:
    flat = {f"junk{i}": "1" for i in range(1000)}
    scenario, warnings = query.parse_flat(flat)
    assert scenario == Scenario.lesson()
    assert len(warnings) == 1 and "and 195 more" in warnings[0]  # only the first MAX_KEYS (200) are read


def test_a_custom_name_keeps_only_plain_characters() -> None:
    scenario, warnings = query.parse_flat({"model": "custom", "mname": "<b>Big</b> [model](x) v2"})
    assert scenario.model.name == "bBig/b model(x) v2"
    assert len(warnings) == 1


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*FLAT_KEYS, "zzz"]),
        st.one_of(st.text(max_size=30), st.floats().map(repr), st.integers().map(str)),
        max_size=12,
    )
)
def test_any_dict_of_text_gives_a_scenario_inside_the_ui_bounds(flat: dict[str, str]) -> None:
    scenario, warnings = query.parse_flat(flat)
    assert all(isinstance(w, str) for w in warnings)
    for key, text in scenario.to_flat().items():
        if key in query.LIMITS:
            limit = query.LIMITS[key]
            assert limit.low * limit.scale * (1 - 1e-12) <= float(text) <= limit.high * limit.scale * (1 + 1e-12), key
    again, more = query.parse_flat(scenario.to_flat())  # what the app writes back parses cleanly
    assert again == scenario and more == []


def test_plain_escapes_every_markdown_punctuation_mark() -> None:
    assert query.plain("<a>[b](c) *d* $e$ :red[f]") == r"\<a\>\[b\]\(c\) \*d\* \$e\$ \:red\[f\]"
    assert query.plain("x" * 100, 10) == "x" * 10 + "…"
    assert query.plain("a\nb\x00") == r"a\?b\?"  # control characters shown as an (escaped) ?


def test_link_query_is_the_flat_form_in_a_relative_link() -> None:
    scenario = Scenario.from_flat(LLAMA_70B_FP8)
    link = query.link_query(scenario)
    assert link.startswith("?model=llama-3.1-70b&gpu=h100-sxm&")
    assert dict(parse_qsl(link[1:])) == scenario.to_flat()


def test_a_downloaded_scenario_file_loads_back_exactly() -> None:
    scenario = custom_scenario()
    assert query.parse_json(query.scenario_json(scenario).encode()) == (scenario, [])


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "one JSON object"),
        (b"[" * 100_000, "is 100,000 bytes"),  # over the size limit before any parsing
        (b"[" * 60_000 + b"]" * 60_000, "bytes"),
        (b'{"a": ' * 5000 + b"1" + b"}" * 5000, "not JSON"),  # deep nesting: RecursionError, caught
    ],
)
def test_an_unreadable_file_is_one_message_and_no_scenario(data: bytes, reason: str) -> None:
    scenario, warnings = query.parse_json(data)
    assert scenario is None
    assert len(warnings) == 1 and reason in warnings[0]


def test_a_file_with_numbers_nested_values_and_garbage_loads_what_it_can() -> None:
    data = json.dumps({"out": 1000, "batch": 8.0, "pin": "abc", "model": {"x": 1}, "gpus": True}).encode()
    scenario, warnings = query.parse_json(data)
    assert scenario is not None
    assert (scenario.workload.output_tokens, scenario.workload.batch_size) == (1000, 8)
    assert scenario.pricing.input_usd_per_million_tokens == 0.5  # the default: "abc" was ignored
    assert len(warnings) == 3  # model (nested), gpus (a boolean), pin (not a number)


def test_a_scaled_field_states_its_range_in_the_links_si_units_too() -> None:
    # The URL carries parameters, not billions: params=70 means 70 parameters, far below the floor.
    scenario, warnings = query.parse_flat({"model": "custom", "params": "70"})
    assert scenario.model.total_params == 1_000_000
    assert warnings == [
        "params=70 is outside 1,000,000 to 100,000,000,000,000 (0.001 to 100,000 billion parameters): using 1,000,000."
    ]
