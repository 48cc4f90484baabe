"""Options side by side (core/compare.py): each option's bill derived by hand, a fleet is the plan's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core import presets
from core.compare import PINNED, THIS, bill, compare, fleet_engine_id, option_ids, scenario_options, self_hosted
from core.efficiency import efficiency_base
from core.estimate import estimate
from core.lengths import RequestLengths
from core.plan import monthly_usd_at, plan
from core.plan_spec import Plan
from core.scenario import Scenario

# The sidebar's traffic: 1,000,000 replies a day of 1,000 → 300 tokens, 30 days.
SCENARIO = Scenario.from_flat({"replies": "1000000", "prompt": "1000", "out": "300"})
SPEC = Plan()


def test_api_options_are_billed_at_their_list_prices() -> None:
    mini, haiku = compare(("openai/gpt-4.1-mini", "anthropic/claude-haiku-4-5"), SCENARIO, SPEC)
    # gpt-4.1-mini: 1,000 × $0.40 + 300 × $1.60 per million = $0.00088 a reply; × 1,000,000 × 30 = $26,400.
    assert mini.cost_per_reply_usd == pytest.approx(0.00088)
    assert mini.monthly_usd == pytest.approx(26_400) and mini.yearly_usd == pytest.approx(316_800)
    # claude-haiku-4-5: 1,000 × $1 + 300 × $5 per million = $0.0025 a reply; × 3e7 = $75,000.
    assert haiku.monthly_usd == pytest.approx(75_000)
    assert mini.latency_s is None and mini.kind == "api"  # not estimated
    assert bill(mini, 30)(np.array([0.0, 2e6])) == pytest.approx([0, 52_800])  # a line through zero


def test_a_self_hosted_option_is_the_plans_cheapest_fleet_on_that_gpu() -> None:
    (fleet,) = compare(("llama-3.1-8b on l4",), SCENARIO, SPEC)
    model = presets.model("llama-3.1-8b")
    hosted = replace(SCENARIO, model=model, gpu=presets.gpu("l4"), efficiency=efficiency_base("typical", model))
    expected = plan(hosted, replace(SPEC, gpu_ids=("l4",)), RequestLengths(1000, 300))
    best = expected.best
    assert best is not None and fleet.kind == "self-hosted"
    assert fleet.monthly_usd == pytest.approx(best.monthly_cost_usd)
    assert fleet.cost_per_reply_usd == pytest.approx(best.monthly_cost_usd / 3e7)
    # Its latency is the plan's at the peak: the mean end to end, TTFT at the target percentile (p95).
    assert fleet.latency_s == pytest.approx(float(best.point.e2e_s))
    assert fleet.ttft_s == pytest.approx(float(best.point.ttft_p95_s))
    assert best.setup.gpu.id == "l4" and "NVIDIA L4" in fleet.note
    r = np.array([1e4, 1e6, 1e8])
    assert bill(fleet, 30)(r) == pytest.approx(monthly_usd_at(expected, r))


def test_a_self_hosted_option_names_the_engine_it_was_sized_on() -> None:
    # The same option on the sidebar's engine: the typical engine's fleet and llama.cpp's (four slots a
    # replica, so many more replicas) cost several-fold apart, so the label says which.
    (typical,) = compare(("llama-3.1-8b on l4",), SCENARIO, SPEC)
    assert typical.label == "Llama 3.1 8B on NVIDIA L4 24GB, self-hosted on the typical engine"
    on_llama_cpp = replace(SCENARIO, efficiency=efficiency_base("llama.cpp", presets.model("llama-3.1-8b")))
    (fleet,) = compare(("llama-3.1-8b on l4",), on_llama_cpp, SPEC)
    assert fleet.label == "Llama 3.1 8B on NVIDIA L4 24GB, self-hosted on llama.cpp (NVIDIA, Intel, AMD Instinct)"
    assert fleet.monthly_usd is not None and typical.monthly_usd is not None
    assert fleet.monthly_usd > 2 * typical.monthly_usd
    # The lesson's ideal machine is no engine: its fleets are sized on the typical engine, and say so.
    (lesson,) = compare(
        ("llama-3.1-8b on l4",), replace(SCENARIO, efficiency=efficiency_base("ideal", SCENARIO.model)), SPEC
    )
    assert lesson.label.endswith("self-hosted on the typical engine")


def test_ideal_physics_chosen_for_a_real_gpu_sizes_the_fleet_the_plan_sizes() -> None:
    # Ideal is the automatic choice only on the lesson's toy GPU (the test above): chosen for a real
    # one, the Capacity plan searches ideal physics, so Compare's fleet must be that plan's, not the
    # typical engine's (they were once different fleets on two pages of one scenario).
    chosen = replace(SCENARIO, gpu=presets.gpu("h100-sxm"), efficiency=efficiency_base("ideal", SCENARIO.model))
    (fleet,) = compare(("llama-3.1-8b on l4",), chosen, SPEC)
    model = presets.model("llama-3.1-8b")
    hosted = replace(chosen, model=model, gpu=presets.gpu("l4"), efficiency=efficiency_base("ideal", model))
    best = plan(hosted, replace(SPEC, gpu_ids=("l4",)), RequestLengths(1000, 300)).best
    assert best is not None and fleet.monthly_usd == pytest.approx(best.monthly_cost_usd)
    assert fleet.label == "Llama 3.1 8B on NVIDIA L4 24GB, self-hosted on ideal physics (the lesson's)"
    # Ideal kernels (MBU = MFU = 1, no fixed costs) serve more per GPU: a strictly smaller bill.
    (typical,) = compare(("llama-3.1-8b on l4",), SCENARIO, SPEC)
    assert typical.monthly_usd is not None and fleet.monthly_usd < typical.monthly_usd
    # An explicit engine_id (what the app passes: the engine its plan searched) overrides the default.
    (on_vllm,) = compare(("llama-3.1-8b on l4",), chosen, SPEC, engine_id="vllm")
    assert on_vllm.label.endswith("self-hosted on vLLM") and "vLLM; autoscaled" in on_vllm.note


@pytest.mark.parametrize(
    ("gpu_id", "chosen", "sized_on"),
    [
        ("toy-gpu", None, "typical"),  # not told: on the toy GPU ideal is the automatic choice
        ("h100-sxm", None, "ideal"),  # not told: on a real GPU ideal can only have been chosen
        ("toy-gpu", True, "ideal"),  # the app's engine input set to ideal, or the CLI's --ideal
        ("h100-sxm", False, "typical"),  # told it was automatic
    ],
)
def test_one_rule_sizes_every_fleet_on_the_lessons_physics_only_when_chosen(
    gpu_id: str, chosen: bool | None, sized_on: str
) -> None:
    # The Capacity plan's page, Compare's options and `python -m core plan` all ask this one function
    # (once three rules that disagreed on an explicit "ideal" on the toy GPU).
    ideal = replace(SCENARIO, gpu=presets.gpu(gpu_id), efficiency=efficiency_base("ideal", SCENARIO.model))
    assert fleet_engine_id(ideal, chosen) == sized_on
    on_vllm = replace(ideal, efficiency=efficiency_base("vllm", SCENARIO.model))
    assert fleet_engine_id(on_vllm, chosen) == "vllm"  # an engine is always its own


def test_a_fleet_that_meets_no_target_has_no_bill_and_says_why() -> None:
    (fleet,) = compare(("llama-3.1-405b on l4",), SCENARIO, SPEC)  # 405 B parameters do not fit 8 × 24 GB
    assert fleet.monthly_usd is None and fleet.cost_per_reply_usd is None and fleet.latency_s is None
    # Each of the 12 setups fails on memory, each with its own figures: the note gives the nearest one,
    # TP 8 at 4-bit: 228.3 GB of weights against 0.9 × 8 × 24 GB - 8 × 3 GiB = 147.0 GB.
    assert fleet.note.startswith("none of 12 setups meets the targets; the largest, NVIDIA L4 24GB, TP 8, 4-bit int4: ")
    assert fleet.note.endswith("228.3 GB of weights exceed the 147.0 GB the typical engine may use on 8 × 24 GB")
    assert np.isnan(bill(fleet, 30)(np.array([1e6]))).all()


def test_scenario_options_are_their_own_estimates_with_the_likely_range() -> None:
    edited = Scenario.from_flat({"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "vllm", "out": "800"})
    this, pinned = compare((THIS, PINNED), edited, SPEC, pinned=SCENARIO)
    est = estimate(edited)
    assert (this.cost_per_reply_usd, this.monthly_usd, this.latency_s) == (
        est.cost_per_reply_usd, est.monthly_cost_usd, est.total_s)  # fmt: skip
    assert this.latency_low_s < this.latency_s < this.latency_high_s and this.confidence in (
        "calibrated",
        "extrapolated",
    )
    # The pinned lesson scenario: the lesson's exact figures ($0.00095 a reply: 1,000 × 0.5 + 300 × 1.5
    # per million; 46.67 ms + 300 × 7 ms = 2.147 s) and no range (ideal physics is a calculation).
    assert pinned.cost_per_reply_usd == pytest.approx(0.00095)
    assert pinned.latency_s == pytest.approx(2.146667, rel=1e-5) and pinned.latency_low_s is None


def test_bad_options_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="at most 4"):
        compare(("openai/gpt-4.1-mini",) * 5, SCENARIO, SPEC)
    with pytest.raises(ValueError, match="nothing is pinned|none is pinned"):
        compare((PINNED,), SCENARIO, SPEC)
    with pytest.raises(ValueError, match="gpt-4.1-mini"):  # the closest ids are suggested
        compare(("openai/gpt-4.1-minx",), SCENARIO, SPEC)


def test_the_option_ids() -> None:
    ids = option_ids()
    assert ids[:2] == (THIS, PINNED) and "openai/gpt-4.1-mini" in ids and "llama-3.1-8b on l4" in ids
    assert len(ids) == len(set(ids))
    assert self_hosted("llama-3.1-8b on l4") == ("llama-3.1-8b", "l4")
    assert self_hosted("openai/gpt-4.1-mini") is None and self_hosted("nope on l4") is None
    # Only GPUs with a rental price can be billed: none without one is offered.
    assert not any(i.endswith(" on mi300x") for i in ids) or presets.gpu("mi300x").price_usd_per_hour is not None


@pytest.mark.parametrize(
    ("flat", "expected"),
    [
        # What the sidebar chose, as Compare's ids: the API, and the preset model on its priced preset GPU.
        (
            {"model": "llama-3.1-70b", "gpu": "h100-sxm", "api": "openai/gpt-4o"},
            ("openai/gpt-4o", "llama-3.1-70b on h100-sxm"),
        ),
        # The lesson's toy on its toy GPU: no KV cache and no rental price, so no fleet to compare; no API.
        ({}, ()),
        ({"api": "openai/gpt-4o"}, ("openai/gpt-4o",)),
        # Edited numbers are not the preset a "model on GPU" option sizes: only the API is named.
        ({"model": "llama-3.1-70b", "gpu": "h100-sxm", "layers": "40", "api": "openai/gpt-4o"}, ("openai/gpt-4o",)),
    ],
)
def test_the_options_a_scenario_names_are_its_api_and_its_preset_fleet(flat, expected) -> None:
    found = scenario_options(Scenario.from_flat(flat))
    assert found == expected
    assert set(found) <= set(option_ids())  # every one is an option Compare accepts


def test_a_scenario_on_4_bit_maths_compares_fleets_on_gpus_without_them() -> None:
    # B200 with 4-bit maths in the sidebar; the H100 option has no 4-bit tensor cores. The plan sizes each
    # setup at its own precision, so the option is the same fleet as from the plain B200 scenario.
    four = compare(
        ("llama-3.1-8b on h100-sxm",), Scenario.from_flat({"gpu": "b200", "wbits": "4.5", "cbits": "4"}), SPEC
    )[0]
    plain = compare(("llama-3.1-8b on h100-sxm",), Scenario.from_flat({"gpu": "b200", "wbits": "4.5"}), SPEC)[0]
    assert four.monthly_usd is not None and four.monthly_usd == pytest.approx(plain.monthly_usd)
