"""The lenient flat reader (core.flat.read_flat): links come from strangers, so it never raises."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import presets
from core.efficiency import CALIBRATED, IDEAL
from core.flat import FLAT_KEYS, MAX_KEYS, read_flat
from core.load import Load
from core.plan_spec import Plan
from core.scenario import Scenario
from core.spec_flat import spec_from_flat
from core.specs import Pricing, Workload

LLAMA_70B_FP8 = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "engine": "typical"}
# Values a hostile or careless link carries; the property test below draws from these and from any text.
HOSTILE = (
    "abc",
    "",
    " ",
    "NaN",
    "inf",
    "-inf",
    "1e308",
    "-1e308",
    "1e400",
    "1e1000000",  # past Decimal's own exponent limit: it raised decimal.Overflow
    "-1e1000000",
    "-1",
    "--5",
    "0x10",
    "1,5",
    "7000000000.123456",
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    ":red[boom]",
    "$x$",
    "x" * 10_000,
    "\x00\n\t",
    "\u202egnp.exe",
)


def read(flat: dict[str, str]) -> tuple[Scenario, list[str]]:
    _, scenario, warnings = read_flat(flat, Scenario)
    return scenario, warnings


def edited_scenario() -> Scenario:
    """Mixtral edited, an H100 edited, calibrated edited, and every workload and price set."""
    model = replace(presets.model("mixtral-8x7b"), name="My MoE (v2)", total_params=47e9)
    gpu = replace(presets.gpu("h100-sxm"), name="H100 at 3.5 TB/s", memory_bandwidth_bytes_per_s=3.5e12)
    return Scenario(
        model=model,
        gpu=gpu,
        efficiency=replace(CALIBRATED, mbu=0.7, step_overhead_s=0.003),
        workload=Workload(prompt_tokens=4000, output_tokens=800, batch_size=32, cached_prompt_tokens=1000, gpu_count=4),
        pricing=Pricing(2.5, 1.25, 10.0, 12_345, 31),
    )


ROUND_TRIP = [
    Scenario.lesson(),
    Scenario.from_flat(LLAMA_70B_FP8),
    Scenario.from_flat({"model": "deepseek-v3", "gpu": "mi300x", "gpus": "8", "wbits": "4.5", "kvbits": "8"}),
    edited_scenario(),
]


@pytest.mark.parametrize("scenario", ROUND_TRIP, ids=["lesson", "llama70b-fp8", "deepseek-int4", "edited"])
def test_a_valid_link_reads_back_exactly_without_a_warning(scenario: Scenario) -> None:
    for form in (scenario.to_flat(), scenario.to_flat(minimal=True)):
        clean, parsed, warnings = read_flat(form, Scenario)
        assert (parsed, warnings) == (scenario, [])
        assert clean == scenario.to_flat(minimal=True)  # the cleaned link is the short form


def test_an_empty_link_is_the_lesson() -> None:
    assert read_flat({}, Scenario) == ({}, Scenario.lesson(), [])


@pytest.mark.parametrize(
    ("flat", "field", "expected", "allowed"),
    [
        # Each bound is the field's own (the specs gathered in core/specs.py), in the unit the link carries.
        ({"prompt": "1e308"}, ("workload", "prompt_tokens"), 10_000_000, "1 to 10,000,000 tokens"),
        ({"out": "0"}, ("workload", "output_tokens"), 1, "1 to 1,000,000 tokens"),
        ({"out": "1e400"}, ("workload", "output_tokens"), 1_000_000, "1 to 1,000,000 tokens"),
        ({"batch": "5000000"}, ("workload", "batch_size"), 1_000_000, "1 to 1,000,000 requests"),
        ({"gpus": "-3"}, ("workload", "gpu_count"), 1, "1 to 1,024 GPUs"),
        ({"pin": "-1"}, ("pricing", "input_usd_per_million_tokens"), 0.0, "0 to 10,000 USD"),
        ({"pout": "50000"}, ("pricing", "output_usd_per_million_tokens"), 1e4, "0 to 10,000 USD"),
        ({"days": "99"}, ("pricing", "days_per_month"), 31, "1 to 31 days"),
        ({"wbits": "0"}, ("precision", "weight_bits"), 1.0, "1 to 32 bits"),
        # 7e9 billion parameters is not 7e9 parameters: the link carries billions.
        ({"params": "7000000000.123456"}, ("model", "total_params"), 1e14, "0.001 to 100,000 billion parameters"),
        ({"allreduce": "1e9"}, ("efficiency", "allreduce_latency_s"), 0.1, "0 to 100,000 µs"),
    ],
)
def test_out_of_range_values_are_clamped_with_a_warning_naming_the_key(flat, field, expected, allowed) -> None:
    scenario, warnings = read(flat)
    assert getattr(getattr(scenario, field[0]), field[1]) == expected
    assert len(warnings) == 1
    assert warnings[0].startswith(next(iter(flat))) and allowed in warnings[0]


def test_a_bound_without_a_ceiling_reads_as_a_sentence() -> None:
    # kv_heads has only a floor (its ceiling is query_heads, not given here): "outside at least 1" read wrong.
    _, warnings = read({"model": "custom", "kvheads": "-1"})
    assert warnings[0] == "kvheads=-1 is not at least 1: using 1."
    # active's ceiling is total_params, unknown here: the floor is still stated, in the link's billions.
    _, warnings = read({"model": "custom", "active": "inf"})
    assert warnings == ["Ignored active=inf: active must be a finite number of at least 0.001 billion parameters."]


def test_a_number_past_decimals_own_limit_clamps_like_any_other() -> None:
    scenario, warnings = read({"prompt": "1e1000000", "bw": "-1e1000000", "gpu": "h100-sxm"})
    assert scenario.workload.prompt_tokens == 10_000_000 and scenario.gpu.memory_bandwidth_bytes_per_s == 1e9
    assert warnings == [
        "bw=-1e1000000 is outside 1 to 1,000,000 GB/s: using 1.",
        "prompt=1e1000000 is outside 1 to 10,000,000 tokens: using 10,000,000.",
    ]


@pytest.mark.parametrize(
    ("flat", "message"),
    [
        ({"prompt": 1000}, "prompt must be text, got int"),  # AttributeError: 'int' object has no attribute 'strip'
        ({"prompt": None}, "prompt must be text, got NoneType"),
        ({1: "2"}, "parameter names must be text, got 1"),  # TypeError from a join
    ],
)
def test_the_strict_reader_takes_text_and_says_so_otherwise(flat, message) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        Scenario.from_flat(flat)


@pytest.mark.parametrize("spec_type", [Load, Plan])
@pytest.mark.parametrize(
    ("flat", "message"),
    [
        ({"conc": 3}, "conc must be text, got int"),  # AttributeError: 'int' object has no attribute 'strip'
        ({"tp": ["1"]}, "tp must be text, got list"),  # AttributeError: 'list' object has no attribute 'split'
        ({3: "3"}, "parameter names must be text, got 3"),  # TypeError: 'int' object is not subscriptable
    ],
)
def test_the_loads_and_plans_strict_readers_take_text_too(spec_type, flat, message) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        spec_from_flat(spec_type, flat)


def test_a_name_warning_says_what_was_kept_and_a_spaced_key_is_quoted() -> None:
    _, warnings = read({"mname": "<b>x</b>"})
    assert warnings == ["mname: kept 'bx/b', its letters, digits, spaces and . - + / ( ) # , (at most 60 characters)."]
    _, warnings = read({"mname": "   "})  # nothing kept: it said "kept only letters …"
    assert warnings == ["Ignored mname: a name needs letters or digits (and may hold spaces and . - + / ( ) # ,)."]
    _, warnings = read({"prompt ": "5"})  # read as the known key "prompt" when printed bare
    assert warnings == ["Ignored unknown parameter(s): 'prompt '."]


def test_many_bad_values_each_keep_their_warning() -> None:
    # Issue 11: a 12+-digit value once silenced every other warning about the link.
    scenario, warnings = read({"out": "1e400", "model": "custom", "params": "7000000000.123456", "engine": "x"})
    assert [w.split("=")[0].split(" ")[-1] for w in warnings] == ["params", "engine", "out"]  # in the link's order
    assert scenario.workload.output_tokens == 1_000_000


def test_a_fraction_where_a_count_is_needed_is_rounded_with_a_warning() -> None:
    scenario, warnings = read({"replies": "1.5", "out": "499.6"})
    assert scenario.pricing.replies_per_day == 2 and scenario.workload.output_tokens == 500
    assert len(warnings) == 2 and "whole number" in warnings[0]


def test_cross_field_limits_are_clamped_to_the_field_they_depend_on() -> None:
    # cached ≤ prompt (default prompt 200), active ≤ total (70 billion), KV heads ≤ query heads (64).
    flat = {
        "cached": "500",
        "model": "custom",
        "params": "70",
        "active": "80",
        "layers": "80",
        "hidden": "8192",
        "qheads": "64",
        "kvheads": "65",
        "headdim": "128",
    }
    scenario, warnings = read(flat)
    assert scenario.workload.cached_prompt_tokens == 200
    assert scenario.model.active_params == 70e9
    assert scenario.model.kv_heads == 64
    assert sorted(warnings) == [
        "active=80 must be at most params (70): using 70.",
        "cached=500 must be at most prompt (200): using 200.",
        "kvheads=65 must be at most qheads (64): using 64.",
    ]
    # A bound one below its field is said as "below": DeepSeek-V3's 64-wide rope part of its 576-wide latent.
    _, warnings = read({"model": "deepseek-v3", "kvrope": "600"})
    assert warnings == ["kvrope=600 must be below kvlatent (576): using 575."]  # it said "exceeds kvlatent (575)"


def test_a_typed_bound_under_a_kept_value_is_raised_to_it() -> None:
    # Llama 3.1 8B keeps its 8 KV heads; 7 query heads cannot group them. The warning named kvheads, which
    # the link never gave, and the whole model section was dropped.
    scenario, warnings = read({"model": "llama-3.1-8b", "qheads": "7"})
    assert warnings == ["qheads=7 must be at least kvheads (8): using 8."]
    assert (scenario.model.query_heads, scenario.model.kv_heads) == (8, 8)
    # DeepSeek-V3's 64-wide rope part must stay below its latent: 60 is raised to 65.
    scenario, warnings = read({"model": "deepseek-v3", "kvlatent": "60"})
    assert warnings == ["kvlatent=60 must be above kvrope (64): using 65."]
    assert scenario.model.kv_latent_dim == 65


def test_too_many_cache_writes_are_clamped_not_the_whole_workload_dropped() -> None:
    # 1,000-token prompts, 900 cached: at most 100 can be written. 200 dropped prompt, out, batch and cached too.
    scenario, warnings = read({"prompt": "1000", "out": "50", "batch": "8", "cached": "900", "cwrite": "200"})
    assert warnings == ["cwrite=200 must be at most prompt - cached (100): using 100."]
    w = scenario.workload
    assert (w.prompt_tokens, w.output_tokens, w.batch_size, w.cached_prompt_tokens, w.cache_write_tokens) == (
        1000, 50, 8, 900, 100
    )  # fmt: skip


def test_a_section_ignored_after_a_clamp_says_only_that_it_was_ignored() -> None:
    # Mixtral with 9 of 8 experts per token: topk was clamped to 7 ("using 7") and then the section
    # ignored (7 experts need 40.86 B active): the two warnings contradicted each other.
    scenario, warnings = read({"model": "mixtral-8x7b", "topk": "9"})
    assert scenario.model.experts_per_token == 2  # Mixtral's own
    assert len(warnings) == 1 and warnings[0].startswith("Ignored the model settings: topk: ")


def test_a_section_core_rejects_falls_back_to_its_base_alone() -> None:
    # Layers without the rest of the attention shape: the model section is dropped, the rest kept.
    scenario, warnings = read({"model": "custom", "layers": "80", "out": "1000"})
    assert scenario.model == presets.custom_model()
    assert scenario.workload.output_tokens == 1000
    assert len(warnings) == 1 and "model settings" in warnings[0]


def test_numbers_beside_a_preset_are_edits_of_it() -> None:
    scenario, warnings = read({"gpu": "h100-sxm", "bw": "5000", "mname": "x"})
    assert warnings == []
    assert scenario.gpu == replace(presets.gpu("h100-sxm"), memory_bandwidth_bytes_per_s=5e12)
    assert scenario.model == replace(presets.model(presets.TOY_MODEL_ID), name="x")


def test_unknown_preset_ids_fall_back_to_the_lesson() -> None:
    scenario, warnings = read({"model": "gpt-17", "gpu": "h100-sxm"})
    assert scenario.model.id == presets.TOY_MODEL_ID and scenario.gpu.id == "h100-sxm"
    assert len(warnings) == 1 and "gpt-17" in warnings[0]


def test_efficiency_numbers_are_edits_of_the_named_set() -> None:
    scenario, warnings = read({"engine": "ideal", "mbu": "0.5"})
    assert scenario.efficiency == replace(IDEAL, mbu=0.5) and warnings == []  # MFU and overheads stay ideal's
    assert read({"gpu": "h100-sxm"})[0].efficiency == CALIBRATED
    assert read({})[0].efficiency == IDEAL


def test_many_unknown_keys_are_one_warning() -> None:
    scenario, warnings = read({f"junk{i}": "1" for i in range(1000)})
    assert scenario == Scenario.lesson()
    # Only the first MAX_KEYS are read, and that is said: "and 195 more" alone undercounted 1,000 keys.
    assert warnings == [
        f"Read only the first {MAX_KEYS} of the link's 1,000 parameters.",
        f"Ignored unknown parameter(s): junk0, junk1, junk2, junk3, junk4 and {MAX_KEYS - 5} more.",
    ]
    assert len(read({f"junk{i}": "1" for i in range(MAX_KEYS)})[1]) == 1  # at the limit: nothing left unread


def test_keys_the_caller_reads_itself_are_not_unknown() -> None:
    _, _, warnings = read_flat({"seed": "7", "junk": "1"}, Scenario, other_keys={"seed"})
    assert warnings == ["Ignored unknown parameter(s): junk."]


def test_a_name_keeps_only_plain_characters() -> None:
    scenario, warnings = read({"model": "custom", "mname": "<b>Big</b> [model](x) v2 \u202e"})
    assert scenario.model.name == "bBig/b model(x) v2"
    assert len(warnings) == 1


def test_a_long_value_is_ignored_and_not_echoed() -> None:
    scenario, warnings = read({"out": "9" * 10_000})
    assert scenario.workload.output_tokens == 500
    assert warnings == ["Ignored out: its value is 10,000 characters long."]


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*FLAT_KEYS, "zzz"]),
        st.sampled_from(HOSTILE) | st.text(max_size=30) | st.floats().map(repr) | st.integers().map(str),
        max_size=12,
    )
)
def test_any_link_gives_a_valid_scenario_and_warnings_that_name_the_key(flat: dict[str, str]) -> None:
    clean, scenario, warnings = read_flat(flat, Scenario)
    assert isinstance(scenario, Scenario)
    for text in warnings:
        assert isinstance(text, str) and len(text) < 400  # a 10,000-character value is not repeated back
        assert all(c.isprintable() for c in text)
    # Every value the strict reader rejects on its own is named in a warning (or its whole section is),
    # unless another key made it valid and it was kept as given ({params: 8, active: 8} on the toy).
    joined = " ".join(warnings)
    for key, value in flat.items():
        if key == "zzz" or clean.get(key) == value:
            continue
        try:
            Scenario.from_flat({key: value})
        except ValueError:
            assert key in joined or "settings:" in joined, (key, value, warnings)
    # What the app writes back reads cleanly: the same scenario, no warning.
    assert read_flat(clean, Scenario) == (clean, scenario, [])


def test_an_old_custom_efficiency_link_keeps_its_numbers_and_an_out_of_range_one_is_said() -> None:
    # Issue 11: `/?eff=custom&allreduce=1` was clamped without a word. `custom` (older links, every
    # number written out) reads as the typical engine's base; 1 µs is inside the range: kept exactly.
    flat, scenario, warnings = read_flat({"eff": "custom", "allreduce": "1"}, Scenario)
    assert scenario.efficiency.allreduce_latency_s == 1e-6 and flat["allreduce"] == "1" and warnings == []
    # Out of range: clamped, and said with the key and its range.
    _, scenario, warnings = read_flat({"eff": "custom", "allreduce": "1e12"}, Scenario)
    assert warnings == ["allreduce=1e12 is outside 0 to 100,000 µs: using 100,000."]
    assert scenario.efficiency.allreduce_latency_s == pytest.approx(0.1)


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3"])
def test_an_engines_cost_at_every_layer_count_a_model_may_have_reads(model_id: str) -> None:
    # HF transformers' host launches a layer in 1.17 ms (+ 80 µs per MoE layer): at 1,000 layers, the most a
    # link may give, its step costs 1.17-1.25 s, and the link raised "step_overhead_s must be <= 1" (a crash).
    scenario, warnings = read({"model": model_id, "engine": "hf-transformers", "layers": "1000"})
    assert warnings == [] and scenario.model.layers == 1000
    assert scenario.efficiency.step_overhead_s == pytest.approx(
        1000 * (1.17e-3 + (80e-6 if scenario.model.is_moe else 0))
    )


def test_an_older_key_beside_its_new_name_is_said() -> None:
    # eff= is engine='s older name: both given, engine wins (as before), now with a word (the CLI refuses the pair).
    scenario, warnings = read({"eff": "vllm", "engine": "sglang"})
    assert scenario.efficiency.label == "sglang"
    assert warnings == ["Ignored eff=vllm: it is engine's older name, and engine is given."]
    assert read({"eff": "vllm", "engine": "vllm"})[1] == [] and read({"eff": "vllm"})[0].efficiency.label == "vllm"
