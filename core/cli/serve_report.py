"""Text and JSON the CLI prints for `serve`: one replica of the scenario under a load."""

from __future__ import annotations

import math

from core.closed_loop import ClosedLoop
from core.load import Load
from core.open_loop import OpenLoop
from core.scenario import Scenario
from core.units import S_PER_MS

# The keys scripts depend on; add, never rename. Latencies are in ms, null when infinite.
JSON_KEYS = (
    "mode",
    "latencies_are",
    "ttft_ms",
    "ttft_p50_ms",
    "ttft_p90_ms",
    "ttft_p95_ms",
    "ttft_p99_ms",
    "tpot_ms",
    "e2e_ms",
    "queue_wait_ms",
    "tokens_per_s_per_user",
    "output_tokens_per_s_per_gpu",
    "total_tokens_per_s_per_gpu",
    "requests_per_s",
    "max_concurrency_that_fits",
    "concurrency",
    "request_rate_per_s",
    "capacity_requests_per_s",
    "utilisation",
    "mean_in_flight",
    "num_prompts",
)


def _ms(seconds: float) -> float | None:
    return seconds / S_PER_MS if math.isfinite(seconds) else None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def serve_json(scenario: Scenario, load: Load, result: ClosedLoop | OpenLoop) -> dict[str, object]:
    """One object. Closed loop: every TTFT key is the mean over requests (benchmarks report means);
    open loop: p50/p90/p95/p99 are percentiles, the wait in the queue included."""
    values = _closed_json(result, load) if isinstance(result, ClosedLoop) else _open_json(result)
    values.update(
        tpot_ms=_ms(float(result.tpot_s)),
        e2e_ms=_ms(float(result.e2e_s)),
        queue_wait_ms=_ms(float(result.queue_wait_s)),
        # Unbounded (past capacity, or nothing fits) a user's stream has no rate: null, as every unbounded latency.
        tokens_per_s_per_user=float(result.tokens_per_s_per_user) if math.isfinite(float(result.tpot_s)) else None,
        output_tokens_per_s_per_gpu=float(result.output_tokens_per_s_per_gpu),
        total_tokens_per_s_per_gpu=float(result.total_tokens_per_s_per_gpu),
        max_concurrency_that_fits=result.max_concurrency_that_fits,
        engine=scenario.engine.id,
        efficiency=scenario.efficiency.label,
        model=scenario.model.name,
        gpu=scenario.gpu.name,
        gpu_count=scenario.workload.gpu_count,
        scenario=scenario.to_flat(),
        load=load.to_flat(),
    )
    return values


def _closed_json(result: ClosedLoop, load: Load) -> dict[str, object]:
    ttft = _ms(float(result.ttft_s))
    return {
        "mode": "closed loop",
        "latencies_are": "means over requests",
        "ttft_ms": ttft,
        **{f"ttft_p{p}_ms": ttft for p in (50, 90, 95, 99)},
        "requests_per_s": float(result.requests_per_s),
        "concurrency": load.concurrency or 1,
        "request_rate_per_s": None,
        "capacity_requests_per_s": None,
        "utilisation": None,
        "mean_in_flight": float(result.concurrency),
        "num_prompts": load.num_prompts,
    }


def _open_json(result: OpenLoop) -> dict[str, object]:
    return {
        "mode": "open loop",
        "latencies_are": "TTFT percentiles over requests, the queue's wait included; means otherwise",
        "ttft_ms": _ms(float(result.ttft_s)),
        **{f"ttft_p{p}_ms": _ms(float(result.ttft_quantile_field(p / 100))) for p in (50, 90, 95, 99)},
        "requests_per_s": float(result.request_rate_per_s),
        "concurrency": None,
        "request_rate_per_s": float(result.request_rate_per_s),
        "capacity_requests_per_s": result.capacity_requests_per_s,
        "utilisation": _finite(float(result.utilisation)),
        "mean_in_flight": _finite(float(result.mean_in_flight)),
        "num_prompts": None,
    }


def _header(scenario: Scenario, load: Load) -> list[str]:
    s, w = scenario, scenario.workload
    f = load.length_low_fraction
    varied = "fixed lengths" if f == 1 else f"each drawn from {f * 100:g}-100 % of that"
    return [
        f"{s.model.name} on {w.gpu_count} x {s.gpu.name}, weights {s.precision.weights_words} "
        f"(maths {s.precision.math_bits}-bit), KV {s.precision.kv_bits:g}-bit, engine {s.engine.name}, "
        f"efficiency {s.efficiency.label}",
        f"{w.prompt_tokens:,}-token prompts, {w.output_tokens:,}-token replies ({varied}); no prefix-cache hits",
    ]


def serve_text(scenario: Scenario, load: Load, result: ClosedLoop | OpenLoop) -> str:
    lines = _header(scenario, load)
    if isinstance(result, ClosedLoop):
        lines += _closed_lines(result, load)
    else:
        lines += _open_lines(result)
    if result.max_concurrency_that_fits == 0:
        lines.append("the weights leave no room for a KV cache: nothing can run (more GPUs or fewer bits)")
    return "\n".join(lines) + "\n"


def _closed_lines(result: ClosedLoop, load: Load) -> list[str]:
    c, fits = int(result.concurrency), result.max_concurrency_that_fits
    if fits == 0:  # nothing runs: the line below says why; "inf ms" was printed for each latency
        return [f"closed loop: {c:,} request{'s' * (c != 1)} in flight, none of which fits the KV cache", ""]
    waiting = f"; {c - int(result.running):,} wait for a slot" if result.running < c else ""
    if load.num_prompts is None:
        run = "the steady state"
    elif load.num_prompts == c:
        run = "one wave: all sent at once, none replaced"
    else:
        run = f"a run of {load.num_prompts:,} requests, the first {c:,} at once"
    return [
        f"closed loop: {c:,} request{'s' * (c != 1)} in flight (at most {fits:,} fit in the KV cache{waiting}), {run}; "
        "means over requests",
        "",
        f"TTFT                  {float(result.ttft_s) / S_PER_MS:10,.1f} ms"
        + (f"   ({float(result.queue_wait_s) / S_PER_MS:,.1f} ms waiting for a slot)" if result.queue_wait_s else ""),
        f"TPOT                  {float(result.tpot_s) / S_PER_MS:10,.2f} ms   = "
        f"{float(result.tokens_per_s_per_user):,.1f} tokens/s per user",
        f"end to end            {float(result.e2e_s) / S_PER_MS:10,.0f} ms",
        f"throughput            {float(result.requests_per_s):10,.3f} requests/s: "
        f"{float(result.output_tokens_per_s_per_gpu):,.0f} output tokens/s per GPU "
        f"({float(result.total_tokens_per_s_per_gpu):,.0f} with the prompts)",
    ]


def _open_lines(result: OpenLoop) -> list[str]:
    rate, capacity = result.request_rate_per_s, result.capacity_requests_per_s
    head = (
        f"open loop: {rate:,.3f} requests/s arriving at random (Poisson); capacity {capacity:,.3f}/s, "
        f"so {result.utilisation:,.0%} busy; at most {result.max_concurrency_that_fits:,} fit in the KV cache"
        if result.max_concurrency_that_fits
        else f"open loop: {rate:,.3f} requests/s arriving at random (Poisson), none of which fits the KV cache"
    )
    if not result.max_concurrency_that_fits:
        return [head, ""]
    if not math.isfinite(result.ttft_s):
        served = f"{float(result.output_tokens_per_s_per_gpu):,.0f} output tokens/s per GPU"
        return [
            head,
            "",
            "at or past capacity the queue grows without end: every latency is unbounded",
            f"throughput            {served} (what the server emits at its capacity)",
        ]
    quantiles = " / ".join(f"{float(result.ttft_quantile_field(q)) / S_PER_MS:,.1f}" for q in (0.5, 0.9, 0.95, 0.99))
    return [
        head,
        "",
        f"TTFT p50/p90/p95/p99  {quantiles} ms   (mean {result.ttft_s / S_PER_MS:,.1f} ms, "
        f"of which {result.queue_wait_s / S_PER_MS:,.1f} ms waiting)",
        f"TPOT (mean)           {result.tpot_s / S_PER_MS:10,.2f} ms   = {result.tokens_per_s_per_user:,.1f} tokens/s per user",
        f"end to end (mean)     {result.e2e_s / S_PER_MS:10,.0f} ms   ({result.mean_in_flight:,.1f} requests in flight)",
        f"throughput            {result.output_tokens_per_s_per_gpu:10,.0f} output tokens/s per GPU "
        f"({result.total_tokens_per_s_per_gpu:,.0f} with the prompts)",
    ]
