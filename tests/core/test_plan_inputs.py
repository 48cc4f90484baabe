"""The Load and Plan specs: described once, so their flat form round-trips exactly, and bad
values — strict or lenient — are said with the key and what is allowed."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import presets
from core.field_lists import lenient_list, list_text, read_list
from core.fields import inputs
from core.flat import FLAT_KEYS
from core.load import Load
from core.plan_spec import Plan
from core.spec_flat import flat_keys
from core.specs import Workload

GPU_IDS = tuple(presets.gpu_presets())
SETTINGS = settings(max_examples=150, deadline=None)


def subsets(items: tuple) -> st.SearchStrategy[tuple]:
    """Non-empty ordered selections, each item once (the order is kept: it is the plan's order)."""
    return st.lists(st.sampled_from(items), min_size=1, max_size=len(items), unique=True).map(tuple)


loads = st.one_of(
    st.builds(Load, concurrency=st.none() | st.integers(1, 100_000), length_low_fraction=st.floats(0.05, 1.0)),
    st.builds(
        Load,
        request_rate_per_s=st.floats(1e-4, 1e6, allow_subnormal=False),
        length_low_fraction=st.floats(0.05, 1.0),
    ),
)
plans = st.builds(
    Plan,
    peak_to_average=st.floats(1, 100),
    ttft_target_s=st.floats(1e-3, 3600),
    ttft_percentile=st.sampled_from([50, 90, 95, 99]),
    tokens_per_s_per_user=st.floats(0, 100_000),
    gpu_ids=st.just(()) | subsets(GPU_IDS),
    tensor_parallel=subsets((1, 2, 4, 8)),
    weight_bits=subsets((16, 8, 4)),
    max_concurrency=st.integers(1, 100_000),
    min_replicas=st.integers(0, 100_000),
)


@SETTINGS
@given(loads)
def test_a_load_round_trips_exactly(load: Load) -> None:
    assert Load.from_flat(load.to_flat()) == load
    assert Load.from_flat(load.to_flat(minimal=True)) == load
    assert Load.read_flat(load.to_flat()) == (load, [])


@SETTINGS
@given(plans)
def test_a_plan_round_trips_exactly(plan: Plan) -> None:
    assert Plan.from_flat(plan.to_flat()) == plan
    assert Plan.from_flat(plan.to_flat(minimal=True)) == plan
    assert Plan.read_flat(plan.to_flat()) == (plan, [])


def test_the_flat_forms_by_hand() -> None:
    # Every field in its shown unit: the TTFT target in ms, lists comma-separated, empty for none.
    assert Load(concurrency=32).to_flat() == {"conc": "32", "rate": "", "prompts": "", "lenlow": "1"}
    assert Load(concurrency=32, num_prompts=320).to_flat(minimal=True) == {"conc": "32", "prompts": "320"}
    assert Load(request_rate_per_s=2.5, length_low_fraction=0.8).to_flat(minimal=True) == {
        "rate": "2.5",
        "lenlow": "0.8",
    }
    plan = Plan(ttft_target_s=0.25, gpu_ids=("h200", "h100-sxm"), tensor_parallel=(2, 8), weight_bits=(8,))
    assert plan.to_flat(minimal=True) == {"ttft": "250", "cands": "h200,h100-sxm", "tp": "2,8", "wlist": "8"}
    assert Plan().to_flat() == {
        "peak": "3",
        "ttft": "1000",
        "pct": "95",
        "tps": "30",
        "cands": "",
        "tp": "1,2,4,8",
        "wlist": "16,8,4",
        "cmax": "256",
        "floor": "1",
        "discount": "0",  # the GPU price discount in %: 0 is on-demand prices
    }


def test_derived_targets() -> None:
    # 30 tokens/s per user is a TPOT of 1/30 s = 33.3 ms; 0 is no target at all; p95 → 0.95.
    assert Plan().tpot_target_s == pytest.approx(1 / 30)
    assert math.isinf(Plan(tokens_per_s_per_user=0).tpot_target_s)
    assert Plan(ttft_percentile=99).ttft_quantile == 0.99


def test_the_load_varies_the_workload_lengths() -> None:
    # 80-100 % of a 1,000-token prompt: 900 on average (InferenceX's range).
    lengths = Load(length_low_fraction=0.8).lengths(Workload(prompt_tokens=1000, output_tokens=500))
    assert (lengths.prompt_tokens, lengths.output_tokens, lengths.mean_prompt_tokens) == (1000, 500, 900)


def test_keys_are_their_own() -> None:
    # One link carries the scenario, the load and the plan: no key may mean two things.
    keys = [*FLAT_KEYS, *flat_keys(Load), *flat_keys(Plan)]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    ("spec_type", "flat", "message"),
    [
        # Each message written by hand from the field's description: the key, then what is allowed.
        (Load, {"conc": "0"}, "conc must be a whole number from 1 to 100,000 requests, got '0'"),
        (Load, {"conc": "2.5"}, "conc must be a whole number from 1 to 100,000 requests, got '2.5'"),
        (Load, {"rate": "-1"}, "rate must be a number from 0.0001 to 1,000,000 requests/s, got '-1'"),
        (Load, {"lenlow": "0.01"}, "lenlow must be a number from 0.05 to 1, got '0.01'"),
        (Load, {"conc": "4", "rate": "2"}, "rate: request_rate_per_s must be empty when a concurrency is given"),
        (Plan, {"peak": "0.5"}, "peak must be a number from 1 to 100 x, got '0.5'"),
        (Plan, {"ttft": "0"}, "ttft must be a number from 1 to 3,600,000 ms, got '0'"),
        (Plan, {"pct": "97"}, "pct must be one of 50, 90, 95, 99, got '97'"),
        (Plan, {"tps": "-5"}, "tps must be a number from 0 to 100,000 tokens/s, got '-5'"),
        (Plan, {"tp": "3"}, "tp must be a comma-separated list of 1, 2, 4, 8, each once, got '3'"),
        (Plan, {"tp": "2,2"}, "tp must be a comma-separated list of 1, 2, 4, 8, each once, got '2,2'"),
        (Plan, {"tp": ""}, "tp must be a comma-separated list of 1, 2, 4, 8, each once, got ''"),
        (Plan, {"wlist": "16,2"}, "wlist must be a comma-separated list of 16, 8, 4, each once, got '16,2'"),
        (
            Plan,
            {"cands": "h100-sxm,h900"},
            "cands must be a comma-separated list of the 18 ids such as toy-gpu, h100-sxm",
        ),
        (Plan, {"cmax": "0"}, "cmax must be a whole number from 1 to 100,000 requests, got '0'"),
        (Plan, {"floor": "-1"}, "floor must be a whole number from 0 to 100,000 replicas, got '-1'"),
        (Plan, {"gpus": "2"}, "unknown parameter(s): gpus"),
    ],
)
def test_bad_values_name_the_key_and_what_is_allowed(spec_type: type, flat: dict, message: str) -> None:
    with pytest.raises(ValueError) as error:
        spec_type.from_flat(flat)
    assert str(error.value).startswith(message)


def test_lists_read_spaces_and_keep_the_order_given() -> None:
    tp = dict(inputs(Plan))["tensor_parallel"]
    assert read_list(tp, " 8, 2,1 ") == (8, 2, 1)
    assert list_text((8, 2, 1)) == "8,2,1"
    assert Plan.from_flat({"cands": ""}).gpu_ids == ()  # empty: every GPU with a price
    # An item is matched as a number input reads it: full-width '１６' is 16 there (Python's int), and a
    # list refused it; '08' is 8, so '8,08' names 8 twice.
    assert read_list(tp, "１,２") == (1, 2)
    with pytest.raises(ValueError, match=r"^tp must be a comma-separated list of 1, 2, 4, 8, each once, got '8,08'$"):
        read_list(tp, "8,08")
    warnings: list[str] = []
    assert lenient_list(tp, "8,08", warnings) == (8,) and warnings == ["Read 8 once in tp: each item counts once."]
    # Python's digit separator is no digit ('1_6' had read as 16), a choice's digits are read as a number
    # input reads them (pct=９５ was refused), and an empty item is said (the command line refuses '2,,4').
    plan, said = Plan.read_flat({"tp": "2,,4", "wlist": "1_6,8", "pct": "９５"})
    assert (plan.tensor_parallel, plan.weight_bits, plan.ttft_percentile) == ((2, 4), (8,), 95)
    assert said == [
        "Ignored an empty item in tp: two commas in a row, or one at an end.",
        "Ignored 1_6 in wlist: wlist must be a comma-separated list of 16, 8, 4, each once.",
    ]
    assert Plan.from_flat({"pct": "９５"}).ttft_percentile == 95  # strict, as the command line reads it
    with pytest.raises(ValueError, match=r"^wlist must be a comma-separated list of 16, 8, 4, each once, got '1_6'$"):
        Plan.from_flat({"wlist": "1_6"})
    with pytest.raises(ValueError, match=r"^peak must be a number from 1 to 100 x, got '1_0'$"):
        Plan.from_flat({"peak": "1_0"})


def test_a_list_built_in_code_is_checked_too() -> None:
    with pytest.raises(ValueError, match=r"^tensor_parallel must be a comma-separated list of 1, 2, 4, 8"):
        Plan(tensor_parallel=(3,))
    with pytest.raises(ValueError, match=r"^tensor_parallel lists 2 twice$"):
        Plan(tensor_parallel=(2, 2))
    with pytest.raises(ValueError, match=r"^gpu_ids must be .*, got 'h900' in it$"):
        Plan(gpu_ids=("h900",))
    assert Plan(tensor_parallel=[1, 2]).tensor_parallel == (1, 2)  # a list is kept as a tuple: specs hash


def test_the_lenient_reader_keeps_what_it_can_and_says_what_it_dropped() -> None:
    plan, warnings = Plan.read_flat(
        {"tp": "2,3,2", "cands": "h100-sxm,nope", "peak": "500", "pct": "97", "wlist": "", "model": "x"}
    )
    assert plan.tensor_parallel == (2,) and plan.gpu_ids == ("h100-sxm",)
    assert plan.peak_to_average == 100 and plan.ttft_percentile == 95 and plan.weight_bits == (16, 8, 4)
    assert warnings == [
        "peak=500 is outside 1 to 100 x: using 100.",
        "Ignored pct=97: pct must be one of 50, 90, 95, 99.",
        # Eighteen ids are too many for one line: three stand for them (the whole list ran past the cap).
        f"Ignored nope in cands: cands must be a comma-separated list of the {len(GPU_IDS)} ids such as "
        f"{', '.join(GPU_IDS[:3])}, each once (or empty).",
        "Ignored 3 in tp: tp must be a comma-separated list of 1, 2, 4, 8, each once.",
        "Read 2 once in tp: each item counts once.",  # 2,3,2 was read as 2 without a word
        "Ignored wlist: it must be a comma-separated list of 16, 8, 4, each once, not empty.",
    ]
    load, warnings = Load.read_flat({"conc": "4", "rate": "2"})
    assert load == Load(concurrency=4)
    assert warnings == [
        "Ignored rate: request_rate_per_s must be empty when a concurrency is given "
        "(a closed or an open loop, not both), got 2.0."
    ]


@SETTINGS
@given(st.dictionaries(st.sampled_from([*flat_keys(Plan), *flat_keys(Load), "other"]), st.text(max_size=80)))
def test_the_lenient_readers_never_raise(raw: dict[str, str]) -> None:
    plan, plan_warnings = Plan.read_flat(raw)
    load, load_warnings = Load.read_flat(raw)
    assert isinstance(plan, Plan) and isinstance(load, Load)
    for warning in plan_warnings + load_warnings:
        assert any(key in warning for key in [*flat_keys(Plan), *flat_keys(Load)]), warning
