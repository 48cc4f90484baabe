"""Hypothesis properties of the cost model (STYLE lesson 10, issue 2 section 6).

The strategies build valid specs over wide ranges: dense and mixture-of-experts models,
with and without an attention shape, latent KV and sliding windows; custom and preset GPUs;
ideal, calibrated and custom efficiencies; tensor parallel up to 16 GPUs.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import presets
from core.batching import MAX_SEARCH_BATCH, critical_batch, sweep_batch_sizes
from core.billing import monthly_cost_usd
from core.efficiency import BASES, CALIBRATED, IDEAL
from core.estimate import estimate
from core.fields import flat_text, inputs, si_from_text
from core.memory import memory_plan
from core.parallel import effective_machine
from core.phases import decode_step, decode_time_s, prefill
from core.reply import latency, mean_decode_step
from core.scenario import Scenario
from core.specs import GPU, Efficiency, Model, Precision, Pricing, Workload

SETTINGS = settings(max_examples=150, deadline=None)
FEW = settings(max_examples=100, deadline=None)


def log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    """Floats spread evenly over orders of magnitude (and full 17-digit mantissas)."""
    return st.floats(math.log10(low), math.log10(high)).map(lambda exponent: 10.0**exponent)


names = st.text(min_size=1, max_size=30).filter(lambda t: bool(t.strip()) and t.isprintable())


@st.composite
def custom_models(draw: st.DrawFn, shape: bool | None = None, window: bool | None = None) -> Model:
    total = draw(log_uniform(1e8, 2e12))
    experts = k = None
    active = total
    if draw(st.booleans()):
        experts = draw(st.integers(2, 256))
        k = draw(st.integers(1, experts - 1))
        # Active share at least k/E (the spec's floor: shared weights are never negative).
        active = total * (k / experts + (1 - k / experts) * draw(st.floats(0.01, 0.99)))
    fields: dict[str, object] = {}
    if shape if shape is not None else draw(st.booleans()):
        layers = draw(st.integers(1, 128))
        query_heads = draw(st.integers(1, 128))
        fields = dict(
            layers=layers,
            hidden=draw(st.integers(64, 16384)),
            query_heads=query_heads,
            kv_heads=draw(st.integers(1, query_heads)),
            head_dim=draw(st.integers(16, 256)),
            kv_latent_dim=draw(st.none() | st.integers(16, 1024)),
        )
        if fields["kv_latent_dim"] is not None:
            fields["kv_latent_rope_dim"] = draw(st.none() | st.integers(0, 15))
        if window if window is not None else draw(st.booleans()):
            fields.update(
                sliding_window_tokens=draw(st.integers(1, 8192)),
                sliding_window_layers=draw(st.integers(1, layers)),
            )
    return Model(
        id="custom",
        name=draw(names),
        total_params=total,
        active_params=active,
        experts=experts,
        experts_per_token=k,
        **fields,
    )


preset_models = st.sampled_from(sorted(presets.model_presets())).map(presets.model)
preset_gpus = st.sampled_from(sorted(presets.gpu_presets())).map(presets.gpu)
models = custom_models() | preset_models


@st.composite
def custom_gpus(draw: st.DrawFn) -> GPU:
    return GPU(
        id="custom",
        name=draw(names),
        memory_bandwidth_bytes_per_s=draw(log_uniform(1e10, 1e14)),
        peak_flops_16bit_per_s=draw(log_uniform(1e12, 1e16)),
        peak_flops_8bit_per_s=draw(log_uniform(1e12, 1e16)),
        memory_bytes=draw(log_uniform(1e9, 1e12)),
        interconnect_bytes_per_s=draw(log_uniform(1e9, 1e12)),
        price_usd_per_hour=draw(st.none() | st.floats(0, 100)),
    )


gpus = custom_gpus() | preset_gpus
custom_efficiencies = st.builds(
    Efficiency,
    label=st.sampled_from(BASES),  # the set the edited numbers start from
    mbu=st.floats(0.05, 1),
    mfu=st.floats(0.05, 1),
    step_overhead_s=st.floats(0, 0.01),
    launches_overlap=st.booleans(),
    sequence_overhead_s=st.floats(0, 1e-4),
    allreduce_latency_s=st.floats(0, 1e-4),
    request_overhead_s=st.floats(0, 0.2),
    expert_overhead_s=st.floats(0, 1e-5),
    dequant_bandwidth=st.floats(0.05, 1),
    dequant_compute=st.floats(0.05, 1),
)
efficiencies = st.sampled_from([IDEAL, CALIBRATED]) | custom_efficiencies
precisions = st.builds(
    Precision,
    weight_bits=st.sampled_from([16.0, 8.0, 4.5, 4.0, 2.5]) | st.floats(1, 32),
    kv_bits=st.sampled_from([16.0, 8.0, 4.0]) | st.floats(1, 32),
)


@st.composite
def workloads(draw: st.DrawFn, max_output: int = 100_000, max_batch: int = 4096) -> Workload:
    prompt = draw(st.integers(1, 100_000))
    return Workload(
        prompt_tokens=prompt,
        output_tokens=draw(st.integers(1, max_output)),
        batch_size=draw(st.integers(1, max_batch)),
        cached_prompt_tokens=draw(st.integers(0, prompt)),
        gpu_count=draw(st.integers(1, 16)),
    )


pricings = st.builds(
    Pricing,
    input_usd_per_million_tokens=st.floats(0, 100),
    cached_input_usd_per_million_tokens=st.floats(0, 100),
    output_usd_per_million_tokens=st.floats(0, 100),
    replies_per_day=st.integers(0, 10**9),
    days_per_month=st.integers(1, 31),
)
scenarios = st.builds(
    Scenario,
    model=models,
    gpu=gpus,
    precision=precisions,
    efficiency=efficiencies,
    workload=workloads(),
    pricing=pricings,
)
preset_scenarios = st.builds(
    Scenario,
    model=preset_models,
    gpu=preset_gpus,
    precision=precisions,
    efficiency=st.sampled_from([IDEAL, CALIBRATED]),
    workload=workloads(),
    pricing=pricings,
)


def machine_of(gpu: GPU, gpu_count: int, efficiency: Efficiency, precision: Precision):
    return effective_machine(gpu, gpu_count, efficiency, precision)


def rel(a: float, b: float, tol: float = 1e-12) -> bool:
    return math.isclose(a, b, rel_tol=tol, abs_tol=0.0)


# ---------------------------------------------------------------- memory-bound time ∝ 1/bandwidth


@SETTINGS
@given(models, gpus, precisions, efficiencies, st.integers(1, 16), st.integers(1, 4096), st.integers(0, 100_000))
def test_memory_time_scales_as_inverse_bandwidth(model, gpu, precision, efficiency, gpu_count, batch, context):
    # Dequantised weights stream at the slower of the bandwidth and the vector cores' unpacking
    # (`effective_machine`): both double, or the cap would hold the weights' time where it was.
    vector = None if gpu.vector_flops_per_s is None else 2 * gpu.vector_flops_per_s
    faster = replace(
        gpu, id="custom", memory_bandwidth_bytes_per_s=2 * gpu.memory_bandwidth_bytes_per_s, vector_flops_per_s=vector
    )
    slow_machine = machine_of(gpu, gpu_count, efficiency, precision)
    fast_machine = machine_of(faster, gpu_count, efficiency, precision)
    for step_of in (
        lambda m: decode_step(model, precision, m, batch, context),
        lambda m: prefill(model, precision, m, max(context, 1), batch),
    ):
        slow, fast = step_of(slow_machine), step_of(fast_machine)
        assert rel(fast.memory_time_s, slow.memory_time_s / 2)
        assert fast.compute_time_s == slow.compute_time_s
        assert fast.bytes_moved == slow.bytes_moved


@SETTINGS
@given(models, precisions, log_uniform(1e10, 1e12), st.integers(1, 64), st.integers(0, 50_000), st.integers(1, 300))
def test_memory_bound_decode_time_halves_when_bandwidth_doubles(model, precision, bandwidth, batch, prompt, output):
    # Compute at the 1e18 FLOP/s ceiling keeps the balance >= 1e6 FLOP/byte, far above any
    # decode intensity here, so every step is memory-bound; IDEAL on one GPU adds no fixed cost.
    gpu = GPU("custom", "g", bandwidth, 1e18, 1e18, 1e12, 1e11)
    faster = replace(gpu, memory_bandwidth_bytes_per_s=2 * bandwidth)
    slow_machine, fast_machine = (machine_of(g, 1, IDEAL, precision) for g in (gpu, faster))
    slow, fast = (
        decode_step(model, precision, slow_machine, batch, prompt),
        decode_step(model, precision, fast_machine, batch, prompt),
    )
    assert (slow.bound, fast.bound, slow.fixed_time_s) == ("memory", "memory", 0.0)
    assert rel(fast.time_s, slow.time_s / 2)
    slow_reply = decode_time_s(model, precision, slow_machine, prompt, output, batch)
    fast_reply = decode_time_s(model, precision, fast_machine, prompt, output, batch)
    assert rel(float(fast_reply), float(slow_reply) / 2, 1e-9)


# ---------------------------------------------------------------- the bound


@SETTINGS
@given(models, gpus, precisions, efficiencies, st.integers(1, 16), st.integers(1, 100_000), st.integers(0, 100_000))
def test_bound_is_compute_exactly_when_intensity_exceeds_balance(
    model, gpu, precision, efficiency, gpu_count, batch, context
):
    machine = machine_of(gpu, gpu_count, efficiency, precision)
    for step in (
        decode_step(model, precision, machine, batch, context),
        prefill(model, precision, machine, max(context, 1), batch),
    ):
        assert step.intensity_flop_per_byte == step.flops / step.bytes_moved
        # balance = compute / bandwidth of the derated tensor-parallel group (a dequantising
        # engine's weights, or attention at another precision, move at other rates: the
        # step's own ridge, from its times)
        if machine.uniform:
            assert step.balance_flop_per_byte == machine.compute_flops_per_s / machine.bandwidth_bytes_per_s
        assert (step.bound == "compute") == (step.intensity_flop_per_byte > step.balance_flop_per_byte)
        # ... and the bound names the slower side of the roofline (up to rounding at the ridge).
        slower = max(step.memory_time_s, step.compute_time_s)
        side = step.compute_time_s if step.bound == "compute" else step.memory_time_s
        assert rel(side, slower, 1e-12)
        # An eager engine's launches are the host's and overlap the rest: the step takes the longer.
        assert step.host_time_s == (efficiency.step_overhead_s if efficiency.launches_overlap else 0.0)
        assert step.time_s == max(slower + step.fixed_time_s, step.host_time_s)


def test_bound_on_the_ridge_is_memory() -> None:
    # The lesson: batch 150 on the 150 FLOP/byte toy machine has intensity exactly 150 → "memory";
    # batch 151 → 151 > 150 → "compute".
    machine = machine_of(presets.gpu("toy-gpu"), 1, IDEAL, Precision())
    model = presets.model("toy-7b")
    assert decode_step(model, Precision(), machine, 150).intensity_flop_per_byte == 150
    assert decode_step(model, Precision(), machine, 150).bound == "memory"
    assert decode_step(model, Precision(), machine, 151).bound == "compute"


# ---------------------------------------------------------------- the bill


@SETTINGS
@given(scenarios, st.integers(0, 10**9), st.integers(0, 1000))
def test_bill_is_linear_in_replies_per_day(scenario, replies, factor):
    # replies × factor <= 1e9 × 1000 = 1e12, the largest valid replies_per_day.
    base = estimate(replace(scenario, pricing=replace(scenario.pricing, replies_per_day=replies)))
    scaled = estimate(replace(scenario, pricing=replace(scenario.pricing, replies_per_day=factor * replies)))
    assert scaled.cost_per_reply_usd == base.cost_per_reply_usd
    assert math.isclose(scaled.monthly_cost_usd, factor * base.monthly_cost_usd, rel_tol=1e-12, abs_tol=1e-300)
    # monthly = per reply × replies per day × days
    days = scenario.pricing.days_per_month
    assert rel(base.monthly_cost_usd, base.cost_per_reply_usd * replies * days)
    assert rel(float(monthly_cost_usd(2.0, 3 * replies, days)), 3 * float(monthly_cost_usd(2.0, replies, days)))


# ---------------------------------------------------------------- latency along the reply


@SETTINGS
@given(
    custom_models(shape=False) | st.just(presets.model("toy-7b")),
    gpus,
    precisions,
    efficiencies,
    workloads(max_output=10_000),
)
def test_latency_without_kv_cache_is_linear_in_output_tokens(model, gpu, precision, efficiency, workload):
    machine = machine_of(gpu, workload.gpu_count, efficiency, precision)
    prompt, batch, cached, m = (
        workload.prompt_tokens,
        workload.batch_size,
        workload.cached_prompt_tokens,
        workload.output_tokens,
    )
    tpot = decode_step(model, precision, machine, batch, prompt).time_s
    # No KV cache: every step is the same wherever the context stands.
    assert decode_step(model, precision, machine, batch, prompt + 10_000).time_s == tpot
    totals = [latency(model, precision, machine, prompt, m + i, batch, cached).total_s for i in range(3)]
    ttft = machine.request_overhead_s + prefill(model, precision, machine, prompt, batch, cached).time_s
    for i, total in enumerate(totals):
        assert rel(total, ttft + (m + i) * tpot)  # total(M) = TTFT + M × TPOT
    assert rel(totals[1] - totals[0], totals[2] - totals[1], 1e-9)  # equal spacing
    assert rel(latency(model, precision, machine, prompt, m, batch, cached).tpot_s, tpot)


def brute_force_decode_s(model, precision, machine, prompt, output, batch) -> float:
    """The definition the closed form replaces: step j runs at context prompt + j."""
    return sum(decode_step(model, precision, machine, batch, prompt + j).time_s for j in range(output))


@st.composite
def kv_cases(draw: st.DrawFn):
    model = draw(custom_models(shape=True) | preset_models.filter(lambda m: m.has_attention_shape))
    output = draw(st.integers(1, 300))
    if model.sliding_window_tokens is not None and draw(st.booleans()):
        # Prompts just below, at and above the window, so the reply crosses its knees.
        prompt = max(1, model.sliding_window_tokens + draw(st.integers(-output - 2, 3)))
    else:
        prompt = draw(st.integers(1, 20_000))
    return model, prompt, output


@SETTINGS
@given(kv_cases(), gpus, precisions, efficiencies, st.integers(1, 256), st.integers(1, 8))
def test_decode_time_closed_form_equals_the_loop(case, gpu, precision, efficiency, batch, gpu_count):
    model, prompt, output = case
    machine = machine_of(gpu, gpu_count, efficiency, precision)
    closed = float(decode_time_s(model, precision, machine, prompt, output, batch))
    assert rel(closed, brute_force_decode_s(model, precision, machine, prompt, output, batch), 1e-9)
    # No step is quicker than an eager engine's host launches (0 for every other engine).
    assert closed >= output * machine.host_time_s * (1 - 1e-12)


@SETTINGS
@given(kv_cases(), gpus, precisions, efficiencies, st.integers(1, 256), st.integers(1, 8))
def test_the_decode_step_is_the_mean_of_the_reply_steps(case, gpu, precision, efficiency, batch, gpu_count):
    # One definition: bytes, FLOPs and time are the means of the M steps the reply runs.
    model, prompt, output = case
    machine = machine_of(gpu, gpu_count, efficiency, precision)
    steps = [decode_step(model, precision, machine, batch, prompt + j) for j in range(output)]
    mean = mean_decode_step(model, precision, machine, prompt, output, batch)
    assert rel(mean.bytes_moved, sum(s.bytes_moved for s in steps) / output, 1e-9)
    assert rel(mean.flops, sum(s.flops for s in steps) / output, 1e-9)
    assert rel(mean.time_s, sum(s.time_s for s in steps) / output, 1e-9)
    assert mean.intensity_flop_per_byte == mean.flops / mean.bytes_moved
    assert (mean.bound == "compute") == (mean.intensity_flop_per_byte > mean.balance_flop_per_byte)
    assert mean.context_tokens == prompt + (output - 1) / 2
    # The mean of the maxima is at least the maximum of the means.
    assert mean.time_s >= (max(mean.memory_time_s, mean.compute_time_s) + mean.fixed_time_s) * (1 - 1e-9)
    # The batch sweep times and places this batch's step as the reply's mean step does (one helper,
    # step_time.decode_times_s): the same intensity, bound and attained FLOP/s on the roofline chart.
    sweep = sweep_batch_sizes(model, precision, machine, [batch], prompt, prompt + output, 1e30, output)
    assert rel(float(sweep.attained_flops_per_s[0]), mean.attained_flops_per_s, 1e-9)
    assert rel(float(sweep.step_time_s[0]), mean.time_s, 1e-9)
    assert bool(sweep.compute_bound[0]) == (mean.bound == "compute")


@SETTINGS
@given(preset_scenarios)
def test_sweep_and_critical_batch_use_the_estimates_decode_step(scenario):
    # The batch sweep at the scenario's batch and the critical batch see the step the estimate reports.
    result, work, machine = estimate(scenario), scenario.workload, scenario.machine
    sweep = sweep_batch_sizes(
        scenario.model,
        scenario.precision,
        machine,
        np.array([work.batch_size]),
        work.prompt_tokens,
        work.sequence_tokens,
        scenario.gpu.memory_bytes * work.gpu_count,
        work.output_tokens,
    )
    assert rel(float(sweep.step_time_s[0]), result.tpot_s, 1e-9)
    assert rel(float(sweep.intensity_flop_per_byte[0]), result.decode.intensity_flop_per_byte, 1e-9)
    critical = critical_batch(scenario.model, scenario.precision, machine, work.prompt_tokens, work.output_tokens)
    if critical is not None and abs(work.batch_size - critical) > 1:
        assert (result.decode_bound == "compute") == (work.batch_size >= critical)
    if critical is None:
        assert result.decode_bound == "memory"


@pytest.mark.parametrize("prompt", [1, 100, 127, 128, 129, 200])
def test_decode_time_across_a_sliding_window_and_a_bound_change(prompt: int) -> None:
    # gpt-oss-20b's 128-token window on 12 of 24 layers, on a GPU whose balance sits midway
    # between the first and the last step's intensity: the reply starts compute-bound (weights
    # shared by 64 sequences) and ends memory-bound (KV grows): the closed form's hardest case.
    model, precision, batch, output = presets.model("gpt-oss-20b"), Precision(), 64, 300
    probe = machine_of(presets.gpu("h100-sxm"), 1, IDEAL, precision)
    first_intensity = decode_step(model, precision, probe, batch, prompt).intensity_flop_per_byte
    last_intensity = decode_step(model, precision, probe, batch, prompt + output - 1).intensity_flop_per_byte
    assert last_intensity < first_intensity
    balance = (first_intensity + last_intensity) / 2
    gpu = GPU("custom", "ridge", 2e12, 2e12 * balance, 2e12 * balance, 8e10, 4.5e11)
    machine = machine_of(gpu, 1, IDEAL, precision)
    first = decode_step(model, precision, machine, batch, prompt)
    last = decode_step(model, precision, machine, batch, prompt + output - 1)
    assert (first.bound, last.bound) == ("compute", "memory")
    closed = float(decode_time_s(model, precision, machine, prompt, output, batch))
    assert rel(closed, brute_force_decode_s(model, precision, machine, prompt, output, batch), 1e-9)


# ---------------------------------------------------------------- every estimate


@SETTINGS
@given(scenarios)
def test_every_estimate_is_finite_and_positive(scenario):
    result = estimate(scenario)
    positive = {
        "ttft_s": result.ttft_s,
        "tpot_s": result.tpot_s,
        "total_s": result.total_s,
        "output_tokens_per_s": result.output_tokens_per_s,
        "per_request_tokens_per_s": result.per_request_tokens_per_s,
        "decode.time_s": result.decode.time_s,
        "intensity": result.decode.intensity_flop_per_byte,
        "weight_bytes": result.memory.weight_bytes,
        "available_bytes": result.memory.available_bytes,
        "output_vs_prompt_token": result.output_token_vs_prompt_token,
    }
    non_negative = {
        "cost_per_reply_usd": result.cost_per_reply_usd,
        "monthly_cost_usd": result.monthly_cost_usd,
        "kv_cache_bytes": result.memory.kv_cache_bytes,
    }
    if result.self_hosting is not None:
        non_negative["usd_per_million_output_tokens"] = result.self_hosting.usd_per_million_output_tokens
        positive["capacity_replies_per_day"] = result.self_hosting.capacity_replies_per_day
    assert {k: v for k, v in positive.items() if not (math.isfinite(v) and v > 0)} == {}
    assert {k: v for k, v in non_negative.items() if not (math.isfinite(v) and v >= 0)} == {}
    assert result.total_s > result.ttft_s
    assert result.decode_bound in ("memory", "compute")
    assert result.memory.max_batch_that_fits is None or result.memory.max_batch_that_fits >= 0


@pytest.mark.parametrize("which", ["bandwidth", "params", "everything"])
def test_estimate_is_finite_at_the_smallest_valid_inputs(which: str) -> None:
    # The lower bounds (1 GB/s, 0.1 TFLOP/s, a million parameters, 1 bit, 1 % utilisation) exist so
    # that no valid input overflows or divides by zero; denormal values are rejected outright.
    toy = presets.gpu("toy-gpu")
    slow_gpu = replace(
        toy, id="custom", memory_bandwidth_bytes_per_s=1e9, peak_flops_16bit_per_s=1e11, peak_flops_8bit_per_s=1e11
    )
    tiny_model = Model(id="custom", name="m", total_params=1e6, active_params=1e6)
    scenario = {
        "bandwidth": Scenario(gpu=slow_gpu),
        "params": Scenario(model=tiny_model),
        "everything": Scenario(
            gpu=slow_gpu,
            model=tiny_model,
            precision=Precision(1, 1),
            efficiency=Efficiency(label="typical", mbu=0.01, mfu=0.01),
        ),
    }[which]
    result = estimate(scenario)
    assert all(math.isfinite(v) and v > 0 for v in (result.tpot_s, result.total_s, result.output_tokens_per_s))
    with pytest.raises(ValueError):
        replace(toy, id="custom", memory_bandwidth_bytes_per_s=1e-300)
    with pytest.raises(ValueError):
        Model(id="custom", name="m", total_params=1e-320, active_params=1e-320)


# ---------------------------------------------------------------- the flat form


@SETTINGS
@given(preset_scenarios)
def test_preset_scenarios_round_trip_through_the_flat_form(scenario):
    flat = scenario.to_flat()
    assert all(type(k) is str and type(v) is str for k, v in flat.items())
    assert Scenario.from_flat(flat) == scenario
    assert Scenario.from_flat(dict(flat)).to_flat() == flat


@SETTINGS
@given(scenarios)
def test_any_scenario_round_trips_through_the_flat_form(scenario):
    flat = scenario.to_flat()
    assert all(type(k) is str and type(v) is str for k, v in flat.items())
    assert not any("+" in v for k, v in flat.items() if k not in ("mname", "gname", "engine"))
    assert Scenario.from_flat(flat) == scenario
    assert (flat["model"] == "custom") == (scenario.model.id == "custom")


BANDWIDTH = dict(inputs(GPU))["memory_bandwidth_bytes_per_s"]  # shown in GB/s: SI = shown × 1e9
OVERHEAD = dict(inputs(Efficiency))["step_overhead_s"]  # shown in ms: SI = shown × 1e-3


@SETTINGS
@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([BANDWIDTH, OVERHEAD]))
def test_flat_text_round_trips_every_float_in_its_shown_unit(value, described_input):
    text = flat_text(described_input, value)
    assert si_from_text(described_input, text) == value
    assert "+" not in text  # a '+' in a URL query decodes to a space


@SETTINGS
@given(custom_efficiencies)
def test_custom_efficiency_round_trips(efficiency):
    scenario = Scenario(efficiency=efficiency)
    assert Scenario.from_flat(scenario.to_flat()) == scenario


# ---------------------------------------------------------------- batching


@SETTINGS
@given(
    models,
    gpus,
    precisions,
    efficiencies,
    st.integers(1, 16),
    st.lists(st.integers(1, 100_000), min_size=1, max_size=12),
    st.integers(0, 50_000),
    st.integers(1, 100_000),
)
def test_sweep_matches_decode_step_at_each_batch(
    model, gpu, precision, efficiency, gpu_count, batches, context, sequence
):
    machine = machine_of(gpu, gpu_count, efficiency, precision)
    memory_bytes = gpu.memory_bytes * gpu_count
    sweep = sweep_batch_sizes(model, precision, machine, np.array(batches), context, sequence, memory_bytes)
    assert sweep.balance_flop_per_byte == machine.balance_flop_per_byte
    for i, batch in enumerate(batches):
        step = decode_step(model, precision, machine, batch, context)
        plan = memory_plan(model, precision, gpu.memory_bytes, gpu_count, batch, sequence)
        assert sweep.batch_size[i] == batch
        assert rel(float(sweep.step_time_s[i]), step.time_s)
        assert rel(float(sweep.output_tokens_per_s[i]), batch / step.time_s)
        assert rel(float(sweep.intensity_flop_per_byte[i]), step.intensity_flop_per_byte)
        assert bool(sweep.compute_bound[i]) == (step.bound == "compute")
        assert rel(float(sweep.memory_required_bytes[i]), plan.required_bytes)
        assert bool(sweep.fits_in_memory[i]) == plan.fits


def _intensity(model, precision, machine, batch, context) -> float:
    return decode_step(model, precision, machine, batch, context).intensity_flop_per_byte


@FEW
@given(models, gpus, precisions, efficiencies, st.integers(1, 8), st.integers(0, 200_000))
def test_critical_batch_is_the_smallest_reaching_the_balance(model, gpu, precision, efficiency, gpu_count, context):
    machine = machine_of(gpu, gpu_count, efficiency, precision)

    def reached(batch: int) -> float:
        """Intensity ÷ the step's balance (the group's; a dequantising engine's step its own)."""
        step = decode_step(model, precision, machine, batch, context)
        return step.intensity_flop_per_byte / step.balance_flop_per_byte

    found = critical_batch(model, precision, machine, context)
    if found is None:
        assert reached(MAX_SEARCH_BATCH) < 1
        return
    assert 1 <= found <= MAX_SEARCH_BATCH
    # Reaches the balance (to the 1e-12 rounding slack the search allows) ...
    assert reached(found) >= 1 - 1e-9
    # ... and one fewer does not.
    if found > 1:
        assert reached(found - 1) < 1 + 1e-9


@SETTINGS
@given(models, precisions, st.integers(0, 100_000), st.lists(st.integers(1, 1 << 24), min_size=2, max_size=10))
def test_decode_intensity_never_falls_as_the_batch_grows(model, precision, context, batches):
    # The assumption critical_batch's bisection rests on (shared weights, per-sequence KV).
    machine = machine_of(presets.gpu("h100-sxm"), 1, IDEAL, precision)
    intensities = [_intensity(model, precision, machine, b, context) for b in sorted(batches)]
    assert all(b >= a * (1 - 1e-12) for a, b in itertools.pairwise(intensities))


def test_critical_batch_of_the_lesson() -> None:
    # Intensity = B FLOP/byte against a balance of 300e12 / 2e12 = 150 → 150.
    machine = machine_of(presets.gpu("toy-gpu"), 1, IDEAL, Precision())
    assert critical_batch(presets.model("toy-7b"), Precision(), machine, 0) == 150
