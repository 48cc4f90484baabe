"""Text and JSON the CLI prints for `plan`: the recommendation in words, the ranked table, the rest."""

from __future__ import annotations

import math

from core.plan import CapacityPlan
from core.plan_options import Option
from core.scenario import Scenario
from core.units import S_PER_MS

# Per-candidate keys scripts depend on; add, never rename. null where a candidate has no value.
CANDIDATE_KEYS = (
    "gpu",
    "gpu_name",
    "gpus_per_replica",
    "weight_bits",
    "precision",
    "problem",
    "reason",
    "max_concurrency_that_fits",
    "max_running_per_replica",
    "concurrency_per_replica",
    "requests_per_s_per_replica",
    "requests_per_s_per_replica_at_peak",
    "in_flight_per_replica_at_peak",
    "replicas_at_peak",
    "total_gpus_at_peak",
    "mean_replicas",
    "output_tokens_per_s_per_gpu",
    "tokens_per_s_per_user",
    "ttft_p50_ms",
    "ttft_p95_ms",
    "ttft_p99_ms",
    "ttft_at_target_percentile_ms",
    "tpot_ms",
    "usd_per_million_output_tokens",
    "monthly_cost_peak_usd",
    "monthly_cost_autoscaled_usd",
)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None or not math.isfinite(seconds) else seconds / S_PER_MS


def option_json(option: Option, percentile: float, frontier: bool = False) -> dict[str, object]:
    setup, point = option.setup, option.point
    values: dict[str, object] = {
        "gpu": setup.gpu.id,
        "gpu_name": setup.gpu.name,
        "gpus_per_replica": setup.gpus_per_replica,
        "weight_bits": setup.weight_bits,
        "precision": setup.precision_name,
        "problem": None if option.problem is None else option.problem.value,
        "reason": option.reason or None,
        "max_concurrency_that_fits": option.max_concurrency_that_fits,
        "max_running_per_replica": option.max_running_per_replica,
        "concurrency_per_replica": option.concurrency_per_replica,
        # The two above are the most a replica may take within the targets (its goodput); the latencies below
        # are at the peak's share, these two: 83.8 requests/s of goodput beside a 69.4 peak read as a contradiction.
        "requests_per_s_per_replica": option.requests_per_s_per_replica,
        "requests_per_s_per_replica_at_peak": None if point is None else float(point.request_rate_per_s),
        "in_flight_per_replica_at_peak": None if point is None else float(point.mean_in_flight),
        "replicas_at_peak": option.replicas_at_peak,
        "total_gpus_at_peak": option.total_gpus_at_peak,
        "mean_replicas": option.mean_replicas,
        "output_tokens_per_s_per_gpu": option.output_tokens_per_s_per_gpu,
        "tokens_per_s_per_user": option.tokens_per_s_per_user,
        "ttft_p50_ms": None if point is None else _ms(float(point.ttft_p50_s)),
        "ttft_p95_ms": _ms(option.ttft_p95_s),
        "ttft_p99_ms": None if point is None else _ms(float(point.ttft_p99_s)),
        "ttft_at_target_percentile_ms": None if point is None else _ms(float(point.ttft_quantile_field(percentile))),
        "tpot_ms": _ms(option.tpot_s),
        "usd_per_million_output_tokens": option.usd_per_million_output_tokens,
        "monthly_cost_peak_usd": option.monthly_cost_peak_usd,
        "monthly_cost_autoscaled_usd": option.monthly_cost_usd,
    }
    if frontier and option.frontier is not None:
        f = option.frontier
        values["frontier"] = {
            "concurrency": list(f.concurrency),
            "output_tokens_per_s_per_gpu": list(f.output_tokens_per_s_per_gpu),
            "tokens_per_s_per_user": list(f.tokens_per_s_per_user),
            "usd_per_million_output_tokens": None
            if f.usd_per_million_output_tokens is None
            else list(f.usd_per_million_output_tokens),
        }
    return values


def plan_json(result: CapacityPlan, frontier: bool = False) -> dict[str, object]:
    spec, pricing = result.spec, result.scenario.pricing
    return {
        "recommendation": recommendation(result),
        "replies_per_day": pricing.replies_per_day,
        "mean_requests_per_s": result.mean_requests_per_s,
        "peak_requests_per_s": result.peak_requests_per_s,
        "ttft_target_ms": spec.ttft_target_s / S_PER_MS,
        "ttft_percentile": spec.ttft_percentile,
        "tokens_per_s_per_user_target": spec.tokens_per_s_per_user,
        "api_cost_per_reply_usd": result.api_cost_per_reply_usd,
        "api_monthly_usd": result.api_monthly_usd,
        "candidates": [option_json(o, spec.ttft_quantile, frontier) for o in result.ranked],
        "failures": [option_json(o, spec.ttft_quantile, frontier) for o in result.failures],
        "engine": result.scenario.engine.id,
        "scenario": result.scenario.to_flat(),
        "plan": spec.to_flat(),
        "length_low_fraction": result.lengths.low_fraction,
    }


def recommendation(result: CapacityPlan) -> str:
    """'48 × NVIDIA H100 SXM 80GB in 12 replicas of 4 GPUs each (tensor parallel), weights in 8-bit, at up to
    108 requests each: …'."""
    best, api = result.best, result.api_monthly_usd
    if best is None:
        why = _problem_counts(result)
        return f"No candidate meets every target ({why}); the API would cost ${api:,.0f} a month."
    setup = best.setup
    replicas = best.replicas_at_peak or 0
    monthly = best.monthly_cost_usd or 0.0
    # The verdict in words: a reader should not have to subtract $2,574 from $2,550 to learn the API wins.
    gap = abs(api - monthly)
    verdict = (
        f": self-hosting saves ${gap:,.0f} a month"
        if monthly < api
        else f": the API is ${gap:,.0f} a month cheaper"
        if monthly > api
        else ": the same"
    )
    peak = best.monthly_cost_peak_usd or 0.0
    if monthly < api < peak:  # the saving needs the autoscaler: a fleet sized for the peak loses to the API
        verdict += (
            f" if it scales with the day; sized for the peak all month it costs ${peak - api:,.0f} more than the API"
        )
    # The lesson's toy: no KV cache, so no real fleet's size. Said first: after "self-hosting saves $6,925 a
    # month" a product manager had already read the saving.
    toy = (
        "For the lesson's toy model, which has no KV cache (memory never fills its replicas, so a real model's "
        "fleet is larger: pick the model you would run before comparing): "
        if not result.scenario.model.has_attention_shape
        else ""
    )
    # In words a product manager reads: "TP 4" is the engineers' name for four GPUs sharing each replica.
    tp = setup.gpus_per_replica
    if tp == 1:  # one GPU alone needs no word of replicas
        shape = "" if replicas == 1 else ", each a replica of its own"
    elif replicas == 1:
        shape = f" in one replica of {tp} GPUs (tensor parallel)"
    else:
        shape = f" in {replicas:,} replicas of {tp} GPUs each (tensor parallel)"
    return toy + (
        f"{best.total_gpus_at_peak:,} × {setup.gpu.name}{shape}, weights in {setup.precision_name}, "
        f"at up to {best.concurrency_per_replica or 0:,.0f} requests{' each' * (replicas != 1)}: ${monthly:,.0f} a month following the daily curve "
        f"(${best.monthly_cost_peak_usd or 0:,.0f} sized for the peak all month); the API would cost "
        f"${api:,.0f}{verdict}."
    )


def _problem_counts(result: CapacityPlan) -> str:
    """'33 does not fit, 9 too slow to stream, 1 misses TTFT'."""
    counts: dict[str, int] = {}
    for option in result.failures:
        label = option.problem.value if option.problem is not None else "?"
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{n} {label}" for label, n in counts.items())


def _engine_words(scenario: Scenario) -> str:
    """'Typical engine', or for --ideal 'ideal physics (on the Typical engine's scheduling)': what the numbers ran on."""
    if scenario.efficiency.is_ideal:
        return f"ideal physics (on the {scenario.engine.name}'s scheduling)"
    return str(scenario.engine.name)


def _header(result: CapacityPlan) -> list[str]:
    s, spec, w = result.scenario, result.spec, result.scenario.workload
    f = result.lengths.low_fraction
    varied = "" if f == 1 else f", each {f * 100:g}-100 % of that"
    return [
        f"{s.model.name}: {w.prompt_tokens:,}-token prompts, {w.output_tokens:,}-token replies{varied}; "
        f"engine: {_engine_words(s)}, KV cache {s.precision.kv_bits:g}-bit",
        f"traffic: {s.pricing.replies_per_day:,} replies/day = {result.mean_requests_per_s:,.2f} requests/s on average, "
        f"{result.peak_requests_per_s:,.2f} at the peak ({spec.peak_to_average:g}x)",
        f"targets at the peak: p{spec.ttft_percentile} TTFT <= {spec.ttft_target_s / S_PER_MS:,.0f} ms, "
        + (
            f">= {spec.tokens_per_s_per_user:g} tokens/s per user (TPOT <= {spec.tpot_target_s / S_PER_MS:,.1f} ms)"
            if spec.tokens_per_s_per_user
            else "no tokens/s target"
        ),
        f"the API: ${result.api_cost_per_reply_usd:.6f} a reply, ${result.api_monthly_usd:,.0f} a month",
        "GPU prices: on-demand $/GPU-hour"
        + (f" less {spec.gpu_discount * 100:g} % (--gpu-discount)" if spec.gpu_discount else ""),
    ]


def _row(rank: int, option: Option, percentile: float, width: int) -> str:
    s, point = option.setup, option.point
    ttft = float(point.ttft_quantile_field(percentile)) / S_PER_MS if point is not None else math.nan
    return (
        f"{rank:>4}  {s.gpu.id:<14}{s.gpus_per_replica:>3}  {s.precision_name:<{width}}"
        f"{option.concurrency_per_replica or 0:>5.0f}"
        f"{option.replicas_at_peak or 0:>6}{option.total_gpus_at_peak or 0:>6}{option.output_tokens_per_s_per_gpu or 0:>11,.0f}"
        f"{option.tokens_per_s_per_user or 0:>9.1f}{ttft:>9,.0f}{option.usd_per_million_output_tokens or 0:>9.2f}"
        f"{option.monthly_cost_usd or 0:>13,.0f}{option.monthly_cost_peak_usd or 0:>13,.0f}"
    )


def plan_text(result: CapacityPlan) -> str:
    spec = result.spec
    lines = [*_header(result), "", recommendation(result), ""]
    if result.ranked:
        # As wide as the longest name, a column apart: gpt-oss's '16-bit (experts 4.25-bit)' ran into 'conc'.
        width = max(12, *(len(o.setup.precision_name) + 1 for o in result.ranked))
        lines.append(
            f"{'rank':>4}  {'GPU':<14}{'TP':>3}  {'precision':<{width}}{'conc':>5}{'reps':>6}{'GPUs':>6}{'tok/s/GPU':>11}"
            f"{'tok/s/u':>9}{f'p{spec.ttft_percentile} ms':>9}{'$/M out':>9}{'$/mo auto':>13}{'$/mo peak':>13}"
        )
        lines += [_row(i, option, spec.ttft_quantile, width) for i, option in enumerate(result.ranked, 1)]
        lines.append(
            "(conc: requests in flight per replica at the most it may take within the targets; reps, GPUs: at the "
            "peak; tok/s and TTFT: per replica at the peak; $/mo auto: autoscaled over the day)"
        )
    if result.failures:
        lines += ["", f"not ranked ({_problem_counts(result)}):"]
        lines += [f"  {o.setup.label}: {o.problem.value if o.problem else ''} — {o.reason}" for o in result.failures]
    return "\n".join(lines) + "\n"
