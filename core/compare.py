"""Options side by side for the same traffic: an API's list prices, a self-hosted fleet, a whole scenario.

An option is named by an id a person can read and a link can carry:

- `openai/gpt-4.1-mini` — an API model from the price catalogue, billed the provider's way
  (`core.billing.reply_cost`, tiers per request) at the scenario's replies, prompt and reply;
  its latency is not something this tool can estimate (a measured figure may be given);
- `llama-3.1-8b on l4` — that model preset self-hosted on that GPU preset: the capacity
  plan's cheapest fleet (`core.plan`, GPUs per replica and precision chosen by the search,
  the plan's targets) for the scenario's traffic, autoscaled; its latency is the plan's at
  the peak (TTFT at the target percentile, the mean end to end);
- `this scenario` / `pinned scenario` — a whole scenario as the Overview reads it: its own
  prices and traffic for the bill, its own self-hosted model for the latency, with the
  estimate's likely range (`core.ranges`).

Every option also has its bill as a function of traffic, for the chart and for
`core.crossings` (where the cheapest option changes). Pure: stdlib + numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from core import presets
from core.api_prices import catalogue, lookup
from core.billing import monthly_cost_usd, pricing_of, reply_cost
from core.efficiency import IDEAL, efficiency_base
from core.engine import TYPICAL, in_words
from core.estimate import estimate
from core.lengths import RequestLengths
from core.plan import CapacityPlan, monthly_usd_at, plan
from core.plan_spec import Plan
from core.ranges import likely_range
from core.scenario import Scenario

THIS = "this scenario"
PINNED = "pinned scenario"
ON = " on "  # "llama-3.1-8b on l4"
MAX_OPTIONS = 4
MONTHS_PER_YEAR = 12
Bill = Callable[[np.ndarray], np.ndarray]  # replies a day → USD a month


@dataclass(frozen=True, slots=True)
class Compared:
    """One option's money and speed for the traffic compared; None where the tool has no figure."""

    option: str  # its id, as the link carries it
    kind: str  # "api", "self-hosted" or "scenario"
    label: str  # in words: "Llama 3.1 8B on NVIDIA L4, self-hosted"
    cost_per_reply_usd: float | None
    monthly_usd: float | None
    latency_s: float | None  # one reply, end to end (an API: None, not estimated)
    ttft_s: float | None
    latency_low_s: float | None = None  # the likely range of latency_s, where core.ranges has one
    latency_high_s: float | None = None
    confidence: str | None = None
    note: str = ""  # what the figures are: the fleet in words, the prices' source, why there is no cost
    plan: CapacityPlan | None = None  # a self-hosted option's search

    @property
    def yearly_usd(self) -> float | None:
        return None if self.monthly_usd is None else self.monthly_usd * MONTHS_PER_YEAR


def option_ids(model_ids: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Every option a comparison may name: the scenarios, every API model, every model on every priced GPU."""
    models = model_ids if model_ids is not None else tuple(presets.model_presets())
    gpus = tuple(g for g, p in presets.gpu_presets().items() if p.gpu.price_usd_per_hour is not None)
    return (THIS, PINNED, *(m.id for m in catalogue()), *(f"{m}{ON}{g}" for m in models for g in gpus))


def scenario_options(scenario: Scenario) -> tuple[str, ...]:
    """The options the scenario itself names: its API model, and its preset model on its priced preset GPU.

    What a reader who chose an API and a model expects to find compared ('openai/gpt-4o',
    'llama-3.1-70b on h100-sxm'); a model or GPU whose numbers were edited, the lesson's toy (no
    KV cache: no real fleet) or a GPU without a rental price is no such option.
    """
    found = [scenario.pricing.api_model] if scenario.pricing.api_model else []
    model, gpu = scenario.model, scenario.gpu
    preset_model = model.id in presets.model_presets() and presets.model(model.id) == model
    preset_gpu = gpu.id in presets.gpu_presets() and presets.gpu(gpu.id) == gpu
    if preset_model and preset_gpu and model.has_attention_shape and gpu.price_usd_per_hour is not None:
        found.append(f"{model.id}{ON}{gpu.id}")
    return tuple(found)


def self_hosted(option: str) -> tuple[str, str] | None:
    """'llama-3.1-8b on l4' → ('llama-3.1-8b', 'l4'); None for any other id."""
    model, on, gpu = option.partition(ON)
    return (model, gpu) if on and model in presets.model_presets() and gpu in presets.gpu_presets() else None


def _api(option: str, scenario: Scenario) -> Compared:
    entry = lookup(option)
    pricing = pricing_of(entry, scenario.pricing)
    w = scenario.workload
    per_reply = reply_cost(pricing, w.prompt_tokens, w.output_tokens, w.cached_prompt_tokens, w.cache_write_tokens)
    usd = per_reply.total_usd
    return Compared(
        option, "api", f"{entry.id} (API)", usd,
        float(monthly_cost_usd(usd, pricing.replies_per_day, pricing.days_per_month)), None, None,
        note=f"{entry.provider_name}'s list prices",
    )  # fmt: skip


def fleet_engine_id(scenario: Scenario, engine_chosen: bool | None = None) -> str:
    """The engine a self-hosted option (and the Capacity plan's search) is sized on: the scenario's, ideal physics included.

    Ideal physics left on automatic (`engine_chosen` False: the lesson's toy GPU takes it by default,
    `default_efficiency`) sizes a fleet of real GPUs on the typical engine instead; ideal chosen is
    kept. None when the caller does not know whether it was chosen: on the toy GPU it was automatic,
    on a real GPU it can only have been chosen. The app passes what its engine input says, the CLI's
    `plan` what its flags say, so every page and command sizes the same fleet. Its costs move a
    fleet's bill several-fold (Llama 3.1 8B on an L4: $683 a month on the typical engine, $5,011 on
    llama.cpp's four slots), so the option's label names it (`served_by`)."""
    label = scenario.efficiency.label
    if label != IDEAL.label:
        return label
    if engine_chosen is None:
        engine_chosen = scenario.gpu.id != presets.TOY_GPU_ID
    return IDEAL.label if engine_chosen else TYPICAL.id


def served_by(engine_id: str) -> str:
    """The self-hosted options' engine in words: "the typical engine", "vLLM", "ideal physics (the lesson's)"."""
    return "ideal physics (the lesson's)" if engine_id == IDEAL.label else in_words(engine_id)


def _fleet(option: str, scenario: Scenario, spec: Plan, engine_id: str) -> Compared:
    model_id, gpu_id = self_hosted(option) or ("", "")
    model, gpu = presets.model(model_id), presets.gpu(gpu_id)
    engine_words = served_by(engine_id)
    # The plan gives each setup its own precision (`core.candidates`) and keeps only the cache's bits: the
    # scenario's maths (4 bits on a B200) need not run on this GPU, and asking it to raised.
    precision = replace(scenario.precision, compute_bits=None)
    hosted = replace(scenario, model=model, gpu=gpu, precision=precision, efficiency=efficiency_base(engine_id, model))
    w = scenario.workload
    result = plan(hosted, replace(spec, gpu_ids=(gpu_id,)), RequestLengths.of(w), frontiers=False)
    label = f"{model.name} on {gpu.name}, self-hosted on {engine_words}"
    best = result.best
    if best is None or best.point is None:
        reasons = {o.reason for o in result.failures}
        if len(reasons) == 1:
            (why,) = reasons
        else:  # the setup that came nearest (the most GPUs per replica, the narrowest weights) says what is in the way
            nearest = max(result.failures, key=lambda o: (o.setup.gpus_per_replica, -o.setup.weight_bits))
            why = (
                f"none of {len(result.failures)} setups meets the targets; the largest, {nearest.setup.label}: "
                f"{nearest.reason}"
            )
        return Compared(option, "self-hosted", label, None, None, None, None, note=why, plan=result)
    monthly = best.monthly_cost_usd or 0.0
    replies = scenario.pricing.replies_per_day * scenario.pricing.days_per_month
    point = best.point
    ttft = float(point.ttft_quantile_field(spec.ttft_quantile))
    note = (
        f"{best.total_gpus_at_peak:,} × {gpu.name} at the peak, {best.setup.gpus_per_replica} per replica, "
        f"weights in {best.setup.precision_name}, {engine_words}; autoscaled"
    )
    return Compared(
        option, "self-hosted", label, monthly / replies if replies else None, monthly,
        float(point.e2e_s), ttft, note=note, plan=result,
    )  # fmt: skip


def _scenario(option: str, scenario: Scenario) -> Compared:
    est = estimate(scenario)
    likely = likely_range(est) if scenario.efficiency.label != "ideal" else None  # the lesson's maths: exact
    prices = scenario.pricing.api_model or "typed prices"
    w = scenario.workload
    label = f"{option}: {prices}; latency of {scenario.model.name} on {w.gpu_count} × {scenario.gpu.name}"
    return Compared(
        option, "scenario", label, est.cost_per_reply_usd, est.monthly_cost_usd, est.total_s, est.ttft_s,
        None if likely is None else likely.total_low_s, None if likely is None else likely.total_high_s,
        None if likely is None else likely.confidence,
        note=f"{w.prompt_tokens:,} → {w.output_tokens:,} tokens, {scenario.pricing.replies_per_day:,.0f} replies a day",
    )  # fmt: skip


def compare(
    options: tuple[str, ...],
    scenario: Scenario,
    spec: Plan,
    pinned: Scenario | None = None,
    engine_id: str | None = None,
) -> list[Compared]:
    """Each option for `scenario`'s traffic and reply shape (a scenario option: its own); ValueError for an unknown id.

    Self-hosted options are sized on `engine_id` (an engine's id or "ideal"; default
    `fleet_engine_id(scenario)`): the app passes the engine its Capacity plan searched, so that
    both pages size the same fleet."""
    fleet_engine = fleet_engine_id(scenario) if engine_id is None else engine_id
    if len(options) > MAX_OPTIONS:
        raise ValueError(f"options must be at most {MAX_OPTIONS}, got {len(options)}")
    compared = []
    for option in options:
        if option == THIS:
            compared.append(_scenario(THIS, scenario))
        elif option == PINNED:
            if pinned is None:
                raise ValueError("options names the pinned scenario, but none is pinned")
            compared.append(_scenario(PINNED, pinned))
        elif self_hosted(option) is not None:
            compared.append(_fleet(option, scenario, spec, fleet_engine))
        else:
            compared.append(_api(option, scenario))  # lookup raises ValueError naming the closest ids
    return compared


def bill(compared: Compared, days_per_month: float) -> Bill:
    """The option's monthly bill at any traffic: a line through zero at its cost per reply, or its fleet's."""
    if compared.plan is not None:
        result = compared.plan
        return lambda replies: monthly_usd_at(result, replies)
    per_reply = compared.cost_per_reply_usd
    if per_reply is None:
        return lambda replies: np.full(np.shape(replies), np.nan)
    return lambda replies: np.asarray(replies, dtype=float) * per_reply * days_per_month
