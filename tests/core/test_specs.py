"""Bad input for every spec field: a ValueError naming the field, the value and the allowed range.

The case table lists each field once with its allowed range as the message must state it;
`_bad_values` expands it into negative, zero, NaN, inf, 1e308, text, None, bool, float-for-int
and above-the-bound cases. Cross-field rules and valid edge values follow.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

from core.scenario import Scenario
from core.specs import GPU, Efficiency, Model, Precision, Pricing, Workload

# A valid instance of each spec. Model is a mixture of experts with the full attention
# shape, a latent KV and sliding windows, so every optional field is present and
# checked (a missing shape would raise the "given together" error first).
BASE: dict[type, dict[str, Any]] = {
    GPU: dict(
        id="custom",
        name="Test GPU",
        memory_bandwidth_bytes_per_s=2e12,
        peak_flops_16bit_per_s=3e14,
        peak_flops_8bit_per_s=6e14,
        memory_bytes=8e10,
        interconnect_bytes_per_s=4.5e11,
        peak_flops_4bit_per_s=1.2e15,
        vector_flops_per_s=6e13,
        price_usd_per_hour=2.0,
        sustained_bandwidth_share=0.9,
        sustained_compute_share=0.7,
    ),
    Model: dict(
        id="custom",
        name="Test MoE",
        total_params=46.7e9,
        active_params=12.9e9,
        layers=32,
        hidden=4096,
        query_heads=32,
        kv_heads=8,
        head_dim=128,
        experts=8,
        experts_per_token=2,
        kv_latent_dim=512,
        sliding_window_tokens=4096,
        sliding_window_layers=16,
        kv_latent_rope_dim=64,
    ),
    Precision: dict(weight_bits=16.0, kv_bits=16.0, compute_bits=16, expert_weight_bits=None),
    Efficiency: dict(
        label="custom",
        mbu=0.8,
        mfu=0.5,
        step_overhead_s=1e-3,
        launches_overlap=True,
        sequence_overhead_s=1e-5,
        allreduce_latency_s=2e-5,
        request_overhead_s=5e-2,
        request_overhead_per_doubling_s=1.4e-2,
        stream_overhead_s=5e-4,
        expert_overhead_s=2e-6,
        expert_padding_tokens=120.0,
        dequant_bandwidth=0.7,
        dequant_compute=0.6,
        unpack_flop_per_weight=12.0,
    ),
    Workload: dict(
        prompt_tokens=200, output_tokens=500, batch_size=8, cached_prompt_tokens=100, gpu_count=2, cache_write_tokens=0
    ),
    Pricing: dict(
        input_usd_per_million_tokens=0.5,
        cached_input_usd_per_million_tokens=0.25,
        output_usd_per_million_tokens=1.5,
        replies_per_day=100_000,
        days_per_month=30,
        cache_write_usd_per_million_tokens=0.625,
        api_model=None,
    ),
}


@dataclasses.dataclass(frozen=True)
class Field:
    """One numeric field: its kind, its bounds, and the range text the message must contain."""

    cls: type
    name: str
    kind: str  # "float" or "int"
    low: float
    low_open: bool
    high: float
    allowed: str
    optional: bool = False  # None is a valid value


# Ranges written by hand from the descriptions in the specs core/specs.py gathers (a changed bound fails here);
# the text is what core.validation renders
# (integers below 1e13 with thousands separators, larger bounds in %g form).
FIELDS = [
    Field(GPU, "memory_bandwidth_bytes_per_s", "float", 1e9, False, 1e15, ">= 1,000,000,000 and <= 1e+15"),
    Field(GPU, "peak_flops_16bit_per_s", "float", 1e11, False, 1e18, ">= 100,000,000,000 and <= 1e+18"),
    Field(GPU, "peak_flops_8bit_per_s", "float", 1e11, False, 1e18, ">= 100,000,000,000 and <= 1e+18"),
    Field(GPU, "memory_bytes", "float", 1e8, False, 1e14, ">= 100,000,000 and <= 1e+14"),
    Field(GPU, "interconnect_bytes_per_s", "float", 1e8, False, 1e14, ">= 100,000,000 and <= 1e+14"),
    Field(GPU, "peak_flops_4bit_per_s", "float", 1e11, False, 1e18, ">= 100,000,000,000 and <= 1e+18", optional=True),
    Field(GPU, "vector_flops_per_s", "float", 1e11, False, 1e17, ">= 100,000,000,000 and <= 1e+17", optional=True),
    Field(GPU, "price_usd_per_hour", "float", 0, False, 1e4, ">= 0 and <= 10,000", optional=True),
    Field(GPU, "sustained_bandwidth_share", "float", 0.1, False, 1, ">= 0.1 and <= 1"),
    Field(GPU, "sustained_compute_share", "float", 0.1, False, 1, ">= 0.1 and <= 1"),
    Field(Model, "total_params", "float", 1e6, False, 1e14, ">= 1,000,000 and <= 1e+14"),
    # Bounded by total_params (46.7e9 in BASE).
    Field(Model, "active_params", "float", 1e6, False, 46.7e9, ">= 1,000,000 and <= 46,700,000,000"),
    Field(Model, "layers", "int", 1, False, 1000, ">= 1 and <= 1,000"),
    Field(Model, "hidden", "int", 1, False, 1_000_000, ">= 1 and <= 1,000,000"),
    Field(Model, "query_heads", "int", 1, False, 10_000, ">= 1 and <= 10,000"),
    # Bounded by query_heads (32 in BASE): more KV heads than query heads is no attention at all.
    Field(Model, "kv_heads", "int", 1, False, 32, ">= 1 and <= 32"),
    Field(Model, "head_dim", "int", 1, False, 10_000, ">= 1 and <= 10,000"),
    Field(Model, "experts", "int", 2, False, 100_000, ">= 2 and <= 100,000"),
    # Bounded by experts - 1 (8 - 1 in BASE): a token that uses every expert is a dense model.
    Field(Model, "experts_per_token", "int", 1, False, 7, ">= 1 and <= 7"),
    Field(Model, "kv_latent_dim", "int", 1, False, 1_000_000, ">= 1 and <= 1,000,000", optional=True),
    # Bounded by kv_latent_dim - 1 (512 in BASE): the RoPE key is part of the latent.
    Field(Model, "kv_latent_rope_dim", "int", 0, False, 511, ">= 0 and <= 511", optional=True),
    Field(Model, "sliding_window_tokens", "int", 1, False, 10_000_000, ">= 1 and <= 10,000,000"),
    # Bounded by layers (32 in BASE).
    Field(Model, "sliding_window_layers", "int", 1, False, 32, ">= 1 and <= 32"),
    Field(Precision, "weight_bits", "float", 1, False, 32, ">= 1 and <= 32"),
    Field(Precision, "kv_bits", "float", 1, False, 32, ">= 1 and <= 32"),
    # 16, 8 or 4 (checked after the range): the range's own edges are the allowed extremes.
    Field(Precision, "compute_bits", "int", 4, False, 16, ">= 4 and <= 16", optional=True),
    Field(Precision, "expert_weight_bits", "float", 1, False, 32, ">= 1 and <= 32", optional=True),
    Field(Efficiency, "mbu", "float", 0.01, False, 1, ">= 0.01 and <= 1"),
    Field(Efficiency, "mfu", "float", 0.01, False, 1, ">= 0.01 and <= 1"),
    Field(Efficiency, "step_overhead_s", "float", 0, False, 10, ">= 0 and <= 10"),
    Field(Efficiency, "sequence_overhead_s", "float", 0, False, 0.01, ">= 0 and <= 0.01"),
    Field(Efficiency, "allreduce_latency_s", "float", 0, False, 0.1, ">= 0 and <= 0.1"),
    Field(Efficiency, "request_overhead_s", "float", 0, False, 10, ">= 0 and <= 10"),
    Field(Efficiency, "request_overhead_per_doubling_s", "float", 0, False, 1, ">= 0 and <= 1"),
    Field(Efficiency, "stream_overhead_s", "float", 0, False, 0.01, ">= 0 and <= 0.01"),
    Field(Efficiency, "expert_overhead_s", "float", 0, False, 0.001, ">= 0 and <= 0.001"),
    Field(Efficiency, "expert_padding_tokens", "float", 0, False, 100_000, ">= 0 and <= 100,000"),
    Field(Efficiency, "dequant_bandwidth", "float", 0.01, False, 1, ">= 0.01 and <= 1"),
    Field(Efficiency, "dequant_compute", "float", 0.01, False, 1, ">= 0.01 and <= 1"),
    Field(Efficiency, "unpack_flop_per_weight", "float", 0, False, 1000, ">= 0 and <= 1,000"),
    Field(Workload, "prompt_tokens", "int", 1, False, 10_000_000, ">= 1 and <= 10,000,000"),
    Field(Workload, "output_tokens", "int", 1, False, 1_000_000, ">= 1 and <= 1,000,000"),
    Field(Workload, "batch_size", "int", 1, False, 1_000_000, ">= 1 and <= 1,000,000"),
    # Bounded by prompt_tokens (200 in BASE).
    Field(Workload, "cached_prompt_tokens", "int", 0, False, 200, ">= 0 and <= 200"),
    Field(Workload, "gpu_count", "int", 1, False, 1024, ">= 1 and <= 1,024"),
    # Bounded by prompt_tokens (200 in BASE); the sum with the cached tokens is checked after.
    # Bounded by prompt_tokens - cached_prompt_tokens (200 - 100 in BASE): writes and reads share the prompt.
    Field(Workload, "cache_write_tokens", "int", 0, False, 100, ">= 0 and <= 100"),
    Field(Pricing, "input_usd_per_million_tokens", "float", 0, False, 1e4, ">= 0 and <= 10,000"),
    Field(Pricing, "cached_input_usd_per_million_tokens", "float", 0, False, 1e4, ">= 0 and <= 10,000"),
    Field(Pricing, "output_usd_per_million_tokens", "float", 0, False, 1e4, ">= 0 and <= 10,000"),
    Field(Pricing, "replies_per_day", "int", 0, False, 1e12, ">= 0 and <= 1,000,000,000,000"),
    Field(Pricing, "days_per_month", "int", 1, False, 31, ">= 1 and <= 31"),
    Field(Pricing, "cache_write_usd_per_million_tokens", "float", 0, False, 1e4, ">= 0 and <= 10,000", optional=True),
]

# Fields whose None is a cross-field error rather than a range error: the attention shape
# and the MoE / sliding-window pairs must come together (tested below).
_NONE_IS_CROSS_FIELD = {
    "layers",
    "hidden",
    "query_heads",
    "kv_heads",
    "head_dim",
    "experts",
    "experts_per_token",
    "sliding_window_tokens",
    "sliding_window_layers",
}


def _above(field: Field) -> float:
    """The smallest value past the upper bound: the bound itself is allowed."""
    return field.high + 1 if field.kind == "int" else math.nextafter(field.high, math.inf)


def _echoed(value: object) -> str:
    """A bad value as messages repeat it: its repr, cut at 40 characters (10**400 is not echoed whole)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def _bad_values(field: Field) -> list[tuple[str, object]]:
    cases: list[tuple[str, object]] = [
        ("negative", -1 if field.kind == "int" else -0.5),
        ("nan", math.nan),
        ("inf", math.inf),
        ("-inf", -math.inf),
        ("1e308", 1e308),
        ("string", "12"),
        ("bool", True),
        ("above", _above(field)),
    ]
    if field.low_open or field.low > 0:
        cases.append(("zero", 0 if field.kind == "int" else 0.0))
    if field.kind == "int":
        cases.append(("float-for-int", float(BASE[field.cls][field.name])))
        cases.append(("huge-int", 10**400))
    if not field.optional and field.name not in _NONE_IS_CROSS_FIELD:
        cases.append(("none", None))
    return cases


BAD_CASES = [(field, value) for field in FIELDS for _, value in _bad_values(field)]


def test_table_covers_every_numeric_field() -> None:
    """Every dataclass field is either in the table or a text field tested separately."""
    text_fields = {
        (GPU, "id"),
        (GPU, "name"),
        (Model, "id"),
        (Model, "name"),
        (Efficiency, "label"),
        (Pricing, "api_model"),
    }
    switches = {(Efficiency, "launches_overlap")}  # a true/false field: test_a_switch_takes_only_true_or_false
    listed = {(f.cls, f.name) for f in FIELDS}
    # Model's derived fields (init=False) are computed, not given, so not validated.
    every = {(cls, f.name) for cls in BASE for f in dataclasses.fields(cls) if f.init}
    assert every - text_fields - switches == listed


@pytest.mark.parametrize("value", [1, 0, "true", None, 1.0])
def test_a_switch_takes_only_true_or_false(value: object) -> None:
    # 1 and "true" are what a careless caller passes; a switch must say it wants true or false.
    with pytest.raises(ValueError, match=r"^launches_overlap must be true or false, got "):
        Efficiency(**{**BASE[Efficiency], "launches_overlap": value})


def test_a_switch_keeps_a_plain_bool() -> None:
    # numpy's bool_ (a comparison over arrays) is stored as Python's bool, as numbers are stored as float.
    spec = Efficiency(**{**BASE[Efficiency], "launches_overlap": np.bool_(True)})
    assert spec.launches_overlap is True


def test_base_values_are_valid() -> None:
    for cls, kwargs in BASE.items():
        spec = cls(**kwargs)
        assert {f.name: getattr(spec, f.name) for f in dataclasses.fields(cls) if f.init} == kwargs


def _bad_value_problem(field: Field, value: object) -> str | None:
    """Why `value` in `field` is not refused with the message the brief asks for; None when it is."""
    try:
        field.cls(**{**BASE[field.cls], field.name: value})
    except ValueError as raised:
        message = str(raised)
    else:
        return "accepted"
    if not message.startswith(f"{field.name} must be ") or field.allowed not in message:
        return message
    if not message.endswith(f"got {_echoed(value)}") or (field.kind == "int" and "whole number" not in message):
        return message
    return None


def test_bad_value_names_field_value_and_range() -> None:
    # One function over the whole table (every numeric field × every kind of bad value: ~450 pairs),
    # not one collected case per pair: the count of tests stays honest (issue 7).
    problems = {(f.cls.__name__, f.name, repr(v)): p for f, v in BAD_CASES if (p := _bad_value_problem(f, v))}
    assert len(BAD_CASES) > 400 and not problems, problems


def test_message_shape_matches_the_brief() -> None:
    with pytest.raises(ValueError, match=r"^batch_size must be a whole number >= 1 and <= 1,000,000, got 0$"):
        Workload(batch_size=0)
    with pytest.raises(ValueError, match=r"^mbu must be a finite number >= 0.01 and <= 1, got nan$"):
        Efficiency(mbu=math.nan)


# Fields that bound another: at their own edge the dependent field must move too.
_COMPANIONS: dict[tuple[str, float], dict[str, Any]] = {
    ("layers", 1): dict(sliding_window_layers=1),
    ("query_heads", 1): dict(kv_heads=1),
    # Fewer experts, or more per token, raise the active floor total × k / E above 12.9e9.
    ("experts", 2): dict(experts_per_token=1, active_params=46.7e9 / 2),
    ("experts_per_token", 7): dict(active_params=46.7e9 * 7 / 8),
    ("total_params", 1e14): dict(active_params=1e14 * 2 / 8),
    ("prompt_tokens", 1): dict(cached_prompt_tokens=0),
    ("cache_write_tokens", 100): dict(cached_prompt_tokens=0),  # writes + reads ≤ the prompt
    ("kv_latent_dim", 1): dict(kv_latent_rope_dim=0),
    # active == total is the edge for a dense model; a mixture of experts needs active < total.
    ("active_params", 46.7e9): dict(experts=None, experts_per_token=None),
    # The smallest model: a million parameters, dense (no experts to route to).
    ("total_params", 1e6): dict(active_params=1e6, experts=None, experts_per_token=None),
    ("active_params", 1e6): dict(experts=None, experts_per_token=None),
    ("compute_bits", 4): dict(weight_bits=4.5),  # 4-bit maths multiplies 4-bit weights (NVFP4: 4.5 with scales)
}


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f"{f.cls.__name__}.{f.name}")
def test_bounds_themselves_are_accepted(field: Field) -> None:
    edges = [field.high] if field.low_open else [field.low, field.high]
    for edge in edges:
        value = int(edge) if field.kind == "int" else float(edge)
        companions = _COMPANIONS.get((field.name, edge), {})
        spec = field.cls(**{**BASE[field.cls], **companions, field.name: value})
        assert getattr(spec, field.name) == value


TEXT_FIELDS = [
    (GPU, "id", "gpu id", 60),
    (GPU, "name", "name", 60),
    (Model, "id", "model id", 60),
    (Model, "name", "name", 60),
    (Efficiency, "label", "efficiency label", 40),
]


@pytest.mark.parametrize(("cls", "name", "label", "max_length"), TEXT_FIELDS)
@pytest.mark.parametrize(
    "value",
    ["", "   ", None, 7, "x" * 201, "a\x00b", "a\u202eb"],
    ids=["empty", "blank", "none", "int", "too-long", "nul", "bidi-override"],
)
def test_bad_text_names_field_and_limit(cls: type, name: str, label: str, max_length: int, value: object) -> None:
    with pytest.raises(ValueError) as raised:
        cls(**{**BASE[cls], name: value})
    assert str(raised.value) == (
        f"{label} must be non-empty printable text of at most {max_length} characters, got {_echoed(value)}"
    )


@pytest.mark.parametrize(("cls", "name", "label", "max_length"), TEXT_FIELDS)
def test_text_at_its_length_limit_is_accepted(cls: type, name: str, label: str, max_length: int) -> None:
    assert getattr(cls(**{**BASE[cls], name: "a" * max_length}), name) == "a" * max_length
    with pytest.raises(ValueError, match=label):
        cls(**{**BASE[cls], name: "a" * (max_length + 1)})


def _model(**changes: Any) -> Model:
    return Model(**{**BASE[Model], **changes})


DENSE = dict(experts=None, experts_per_token=None, active_params=BASE[Model]["total_params"])
NO_SHAPE = dict(layers=None, hidden=None, query_heads=None, kv_heads=None, head_dim=None)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        pytest.param(
            dict(active_params=46.8e9),
            r"^active_params must be >= 1,000,000 and <= 46,700,000,000, got 46800000000\.0$",
            id="active>total",
        ),
        pytest.param(
            dict(kv_heads=33), r"^kv_heads must be a whole number >= 1 and <= 32, got 33$", id="kv>query-heads"
        ),
        pytest.param(
            dict(layers=None),
            r"^layers, hidden, query_heads, kv_heads and head_dim must be given together",
            id="shape-no-layers",
        ),
        pytest.param(dict(head_dim=None), r"must be given together or not at all", id="shape-no-head-dim"),
        pytest.param(dict(kv_heads=None), r"must be given together or not at all", id="shape-no-kv-heads"),
        pytest.param(
            dict(experts_per_token=None),
            r"^experts and experts_per_token must be given together",
            id="experts-without-k",
        ),
        pytest.param(
            dict(experts=None), r"^experts and experts_per_token must be given together", id="k-without-experts"
        ),
        pytest.param(
            dict(experts_per_token=8),
            r"^experts_per_token must be a whole number >= 1 and <= 7, got 8$",
            id="k==experts",
        ),
        pytest.param(
            dict(experts_per_token=9),
            r"^experts_per_token must be a whole number >= 1 and <= 7, got 9$",
            id="k>experts",
        ),
        pytest.param(
            dict(active_params=46.7e9),
            r"^active_params must be below total_params \(46\.70 billion\) for a mixture of experts, got 46\.70 billion$",
            id="moe-active==total",
        ),
        pytest.param(
            dict(sliding_window_layers=33),
            r"^sliding_window_layers must be a whole number >= 1 and <= 32, got 33$",
            id="window-layers>layers",
        ),
        pytest.param(
            dict(sliding_window_layers=None),
            r"^sliding_window_tokens and sliding_window_layers must be given together$",
            id="window-without-layers",
        ),
        pytest.param(
            dict(sliding_window_tokens=None),
            r"^sliding_window_tokens and sliding_window_layers must be given together$",
            id="layers-without-window",
        ),
        pytest.param(
            dict(**NO_SHAPE, sliding_window_tokens=None, sliding_window_layers=None),
            r"^kv_latent_dim and sliding_window_tokens need the attention shape",
            id="latent-without-shape",
        ),
        pytest.param(
            dict(**NO_SHAPE, kv_latent_dim=None),
            r"^kv_latent_dim and sliding_window_tokens need the attention shape",
            id="window-without-shape",
        ),
        pytest.param(
            dict(kv_latent_dim=None), r"^kv_latent_rope_dim needs kv_latent_dim", id="latent-rope-without-latent"
        ),
    ],
)
def test_model_cross_field_rules(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _model(**changes)


def test_cached_prompt_tokens_above_prompt_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"^cached_prompt_tokens must be a whole number >= 0 and <= 50, got 51$"):
        Workload(prompt_tokens=50, cached_prompt_tokens=51)


def test_moe_active_share_below_its_routed_experts_is_rejected() -> None:
    # In billions: one routed expert is (100 - 10) / (2 - 1) = 90, yet a token would use only 10 in
    # all: the shared weights would be 10 - 90 = -80. The floor is 100 × 1 / 2 = 50.
    with pytest.raises(
        ValueError, match=r"^active_params must be ≥ .*= 50\.00 billion \(1 routed expert\), got 10\.00 billion$"
    ):
        Model(
            id="custom",
            name="m",
            total_params=100_000_000_000,
            active_params=10_000_000_000,
            experts=2,
            experts_per_token=1,
        )
    # At the floor the shared weights are exactly zero: 50 - 1 × (100 - 50) / 1 = 0.
    assert (
        Model(
            id="custom",
            name="m",
            total_params=100_000_000_000,
            active_params=50_000_000_000,
            experts=2,
            experts_per_token=1,
        ).shared_params
        == 0
    )


@pytest.mark.parametrize(
    ("cls", "changes"),
    [
        pytest.param(Precision, dict(weight_bits=2.5), id="weight-bits-2.5"),
        pytest.param(Precision, dict(weight_bits=4.5, kv_bits=8), id="weight-bits-4.5"),
        pytest.param(Precision, dict(kv_bits=32), id="kv-bits-32"),
        pytest.param(Workload, dict(cached_prompt_tokens=200), id="cached==prompt"),
        pytest.param(Workload, dict(cached_prompt_tokens=0), id="cached-0"),
        pytest.param(Pricing, dict(replies_per_day=0), id="replies-0"),
        pytest.param(Pricing, dict(replies_per_day=2_500_000), id="replies-millions"),
        pytest.param(Pricing, dict(input_usd_per_million_tokens=0, output_usd_per_million_tokens=0), id="free-api"),
        pytest.param(GPU, dict(price_usd_per_hour=None), id="gpu-no-price"),
        pytest.param(GPU, dict(price_usd_per_hour=0), id="gpu-free"),
        pytest.param(
            Efficiency, dict(mbu=1, mfu=1, step_overhead_s=0, sequence_overhead_s=0, allreduce_latency_s=0), id="ideal"
        ),
        pytest.param(Model, dict(kv_heads=32), id="kv-heads==query-heads"),
        pytest.param(Model, dict(experts_per_token=7, active_params=46.7e9 * 7 / 8), id="k==experts-1"),
        pytest.param(Model, dict(sliding_window_layers=32), id="every-layer-windowed"),
        pytest.param(Model, dict(kv_latent_dim=None, kv_latent_rope_dim=None), id="no-latent"),
        pytest.param(Model, dict(DENSE), id="dense-active==total"),
        pytest.param(
            Model,
            dict(
                **DENSE,
                **NO_SHAPE,
                kv_latent_dim=None,
                kv_latent_rope_dim=None,
                sliding_window_tokens=None,
                sliding_window_layers=None,
            ),
            id="no-shape",
        ),
        pytest.param(
            Model,
            dict(
                total_params=7_000_000_000,
                active_params=7_000_000_000,
                **{k: None for k in ("experts", "experts_per_token")},
            ),
            id="int-params",
        ),
    ],
)
def test_valid_edge_values_are_accepted(cls: type, changes: dict[str, Any]) -> None:
    spec = cls(**{**BASE[cls], **changes})
    for name, value in changes.items():
        assert getattr(spec, name) == value


def test_specs_are_frozen_and_hashable() -> None:
    for cls, kwargs in BASE.items():
        spec = cls(**kwargs)
        assert hash(spec) == hash(cls(**kwargs))
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(spec, dataclasses.fields(cls)[0].name, None)


@pytest.mark.parametrize(
    ("weight_bits", "math_bits"), [(16, 16), (8, 8), (8.0, 8), (4.5, 16), (4, 16), (2.5, 16), (32, 16)]
)
def test_math_bits_is_8_only_for_8_bit_weights(weight_bits: float, math_bits: int) -> None:
    # Assumption in Precision.math_bits: 8-bit weights run W8A8; anything else dequantises to 16-bit.
    assert Precision(weight_bits=weight_bits).math_bits == math_bits


def test_gpu_peak_flops_follows_math_bits() -> None:
    gpu = GPU(**BASE[GPU])
    assert gpu.peak_flops_per_s(8) == 6e14
    assert gpu.peak_flops_per_s(16) == 3e14


def test_efficiency_is_ideal_only_with_nothing_added() -> None:
    assert Efficiency().is_ideal
    assert not Efficiency(mbu=0.99).is_ideal
    assert not Efficiency(allreduce_latency_s=1e-6).is_ideal


def test_model_derived_moe_split() -> None:
    model = _model()
    # (46.7e9 - 12.9e9) / (8 - 2) = 5.6333e9 per routed expert; shared = 12.9e9 - 2 × 5.6333e9 = 1.6333e9
    assert model.params_per_expert == pytest.approx(33.8e9 / 6, rel=1e-12)
    assert model.shared_params == pytest.approx(12.9e9 - 2 * 33.8e9 / 6, rel=1e-12)
    # The latent replaces 2 × kv_heads × head_dim; 32 - 16 windowed layers attend fully.
    assert model.kv_elements_per_token_per_layer == 512
    assert model.full_attention_layers == 16
    assert _model(kv_latent_dim=None, kv_latent_rope_dim=None).kv_elements_per_token_per_layer == 2 * 8 * 128
    dense = _model(**DENSE)
    assert (dense.params_per_expert, dense.shared_params, dense.is_moe) == (0.0, 46.7e9, False)


def test_numpy_scalars_become_plain_numbers_in_specs_and_links() -> None:
    # Issue 11: specs kept numpy scalars as given, so to_flat wrote `np.float64(…)`.
    work = Workload(batch_size=np.int64(8), output_tokens=np.int32(300))
    assert type(work.batch_size) is int and type(work.output_tokens) is int
    eff = Efficiency(mbu=np.float64(0.5))
    assert type(eff.mbu) is float
    flat = Scenario(workload=work, efficiency=eff).to_flat(minimal=True)
    assert flat["batch"] == "8" and flat["out"] == "300" and flat["mbu"] == "0.5"


@pytest.mark.parametrize(
    ("weight_bits", "compute_bits", "allowed"),
    [
        (16.0, 8, False),  # accepted, and costed as fp8 weights' maths on 16-bit bytes
        (16.0, 4, False),
        (8.0, 4, False),
        (9.05, 8, True),  # int8 with per-group scales (measurements_fresh3.csv)
        (8.0, 8, True),
        (4.5, 4, True),  # NVFP4 with its scales
        (4.5, 16, True),  # weight-only int4 dequantised to 16-bit maths
    ],
)
def test_narrow_maths_needs_weights_stored_that_narrow(weight_bits, compute_bits, allowed) -> None:
    if allowed:
        assert Precision(weight_bits=weight_bits, compute_bits=compute_bits).math_bits == compute_bits
    else:
        with pytest.raises(ValueError, match=rf"^compute_bits {compute_bits} multiplies {compute_bits}-bit weights: "):
            Precision(weight_bits=weight_bits, compute_bits=compute_bits)


@pytest.mark.parametrize(
    ("weight_bits", "expert_bits", "compute_bits", "allowed", "field"),
    [
        # gpt-oss as shipped: bf16 beside MXFP4 experts; 4-bit maths multiplies the experts, whose width counts.
        (16.0, 4.25, 4, True, None),
        (16.0, 4.25, 16, True, None),
        (16.0, 8.0, 4, False, "expert_weight_bits"),
        (4.5, 16.0, 8, False, "expert_weight_bits"),  # 16-bit experts in 8-bit maths, however narrow the rest
    ],
)
def test_narrow_maths_on_narrower_experts_counts_their_width(weight_bits, expert_bits, compute_bits, allowed, field):
    precision = dict(weight_bits=weight_bits, expert_weight_bits=expert_bits, compute_bits=compute_bits)
    if allowed:
        made = Precision(**precision)
        assert made.narrowest_weight_bits == min(weight_bits, expert_bits)
        assert made.dequantises == (min(weight_bits, expert_bits) < compute_bits)
    else:
        with pytest.raises(ValueError, match=rf"set {field} to {compute_bits} "):
            Precision(**precision)
