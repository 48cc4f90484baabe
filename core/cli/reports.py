"""Text and JSON the CLI prints for `estimate`, `presets` and `calibrate`."""

from __future__ import annotations

from core.api_prices import snapshot
from core.billing import catalogue_entry
from core.checks import context_window_tokens, engine_memory_problems, scenario_problems
from core.estimate import Estimate
from core.presets import ModelPreset
from core.ranges import likely_range
from core.specs import Pricing
from core.units import BYTES_PER_GB, FLOP_PER_TFLOP, PARAMS_PER_BILLION, S_PER_MS

# The keys scripts depend on; add, never rename.
JSON_KEYS = (
    "ttft_ms",
    "tpot_ms",
    "total_ms",
    "decode_bound",
    "decode_intensity_flop_per_byte",
    "machine_balance_flop_per_byte",
    "output_tokens_per_s",
    "weights_gb",
    "kv_cache_gb",
    "memory_required_gb",
    "fits_in_memory",
    "max_batch_that_fits",
    "cost_per_reply_usd",
    "monthly_cost_usd",
    "mbu",
    "mfu",
    "decode_mean_context_tokens",
    "self_hosting_problem",
    "self_hosting_usd_per_million_output_tokens",
    "self_hosting_capacity_replies_per_day",
    "self_hosting_break_even_replies_per_day",
    "memory_required_gb_per_gpu",
    "kv_cache_gb_per_gpu",
    "kv_replication",
    "prefill_tokens",
    "context_window_tokens",
    "warnings",
    "ttft_ms_low",
    "ttft_ms_high",
    "tpot_ms_low",
    "tpot_ms_high",
    "total_ms_low",
    "total_ms_high",
    "output_tokens_per_s_low",
    "output_tokens_per_s_high",
    "confidence",
    "host_ms_per_step",
    "decode_host_bound",
)


def price_source(pricing: Pricing) -> str:
    """'openai/gpt-4o list prices (genai-prices 0.2.3, as of 2026-11-10)', or typed, or typed over an API's."""
    if pricing.api_model is None:
        return "typed by hand (no API chosen)"
    source = snapshot()
    if catalogue_entry(pricing) is None:
        return f"typed by hand over {pricing.api_model}'s list prices"
    return f"{pricing.api_model} list prices ({source.package} {source.version}, as of {source.as_of})"


def _decode_pace(result: Estimate) -> str:
    """'memory-bound', or 'host-bound (the GPU memory-bound)' when every step waits on an eager engine's launches."""
    if result.decode.host_bound:
        return f"host-bound (every step waits on the host's launches; the GPU alone {result.decode_bound}-bound)"
    return f"{result.decode_bound}-bound"


def estimate_json(result: Estimate) -> dict[str, object]:
    memory, hosting = result.memory, result.self_hosting
    efficiency = result.scenario.efficiency
    likely = likely_range(result)
    values: dict[str, object] = {
        "ttft_ms": result.ttft_s / S_PER_MS,
        "tpot_ms": result.tpot_s / S_PER_MS,
        "total_ms": result.total_s / S_PER_MS,
        "decode_bound": result.decode_bound,
        "decode_intensity_flop_per_byte": result.decode.intensity_flop_per_byte,
        "machine_balance_flop_per_byte": result.machine.balance_flop_per_byte,
        "output_tokens_per_s": result.output_tokens_per_s,
        "weights_gb": memory.weight_bytes / BYTES_PER_GB,
        "kv_cache_gb": memory.kv_cache_bytes / BYTES_PER_GB,
        "memory_required_gb": memory.required_bytes / BYTES_PER_GB,
        "fits_in_memory": memory.fits,
        "max_batch_that_fits": memory.max_batch_that_fits,
        "cost_per_reply_usd": result.cost_per_reply_usd,
        "monthly_cost_usd": result.monthly_cost_usd,
        "mbu": efficiency.mbu,
        "mfu": efficiency.mfu,
        # The decode step everything above describes is the mean over the reply's steps.
        "decode_mean_context_tokens": result.decode.context_tokens,
        # Per GPU of the tensor-parallel group; replication = copies of each KV element it stores.
        "memory_required_gb_per_gpu": memory.required_bytes_per_gpu / BYTES_PER_GB,
        "kv_cache_gb_per_gpu": memory.kv_cache_bytes_per_gpu / BYTES_PER_GB,
        "kv_replication": memory.kv_replication,
        # The static batch prefills together: one pass over batch × uncached prompt tokens.
        "prefill_tokens": result.scenario.workload.prefill_tokens,
        "context_window_tokens": context_window_tokens(result.scenario),
        "warnings": list(problems(result)),
        # Where ~80 % of real measurements of this kind of scenario fall (core.ranges).
        "ttft_ms_low": likely.ttft_low_s / S_PER_MS,
        "ttft_ms_high": likely.ttft_high_s / S_PER_MS,
        "tpot_ms_low": likely.tpot_low_s / S_PER_MS,
        "tpot_ms_high": likely.tpot_high_s / S_PER_MS,
        "total_ms_low": likely.total_low_s / S_PER_MS,
        "total_ms_high": likely.total_high_s / S_PER_MS,
        "output_tokens_per_s_low": likely.output_tokens_per_s_low,
        "output_tokens_per_s_high": likely.output_tokens_per_s_high,
        "confidence": likely.confidence,
        # An eager engine's launches are the host's, overlapping the GPU's work: each step takes at least
        # this long (0 for an engine whose launches add to the GPU's time); host-bound when every decode
        # step waits on them (decode_bound is then the GPU's own bound, which does not set the pace).
        "host_ms_per_step": result.machine.host_time_s / S_PER_MS,
        "decode_host_bound": result.decode.host_bound,
        # null with a reason when the GPU has no price or the setup cannot run; the break-even
        # is null when one fleet cannot reach it (renting never pays at this batch).
        "self_hosting_problem": result.self_hosting_problem,
        # Where the prices come from: an API's list prices (billed its way, tiers included),
        # or typed by hand (over an API's, when api_prices_overridden).
        "api_model": result.scenario.pricing.api_model,
        "api_prices_overridden": result.scenario.pricing.api_model is not None
        and catalogue_entry(result.scenario.pricing) is None,
        "api_tier_above_prompt_tokens": result.reply_cost.tier_above_prompt_tokens,
        "self_hosting_usd_per_million_output_tokens": None
        if hosting is None
        else hosting.usd_per_million_output_tokens,
        "self_hosting_capacity_replies_per_day": None if hosting is None else hosting.capacity_replies_per_day,
        "self_hosting_break_even_replies_per_day": None
        if hosting is None
        else hosting.reachable_break_even_replies_per_day,
    }
    values.update(
        efficiency=efficiency.label,
        model=result.scenario.model.name,
        gpu=result.scenario.gpu.name,
        gpu_count=result.scenario.workload.gpu_count,
        scenario=result.scenario.to_flat(),
    )
    return values


def problems(result: Estimate) -> tuple[str, ...]:
    """The scenario's warnings, and one when the engine's own share of memory cannot hold a request."""
    return (*scenario_problems(result.scenario), *engine_memory_problems(result.scenario, result.memory))


def estimate_text(result: Estimate) -> str:
    s = result.scenario
    w, memory = s.workload, result.memory
    max_batch = "no limit (no KV cache)" if memory.max_batch_that_fits is None else f"{memory.max_batch_that_fits:,}"
    lines = [
        f"{s.model.name} on {w.gpu_count} x {s.gpu.name}, weights {s.precision.weights_words} "
        f"(maths {s.precision.math_bits}-bit), KV {s.precision.kv_bits:g}-bit, efficiency {s.efficiency.label} "
        f"(MBU {s.efficiency.mbu:.2f}, MFU {s.efficiency.mfu:.2f})",
        f"{w.prompt_tokens:,}-token prompt ({w.cached_prompt_tokens:,} cached), {w.output_tokens:,}-token reply, batch {w.batch_size:,}",
        *(f"warning: {problem}" for problem in problems(result)),
        "",
        f"TTFT (prefill)            {result.ttft_s / S_PER_MS:10.2f} ms   {result.prefill.bound}-bound "
        f"(one pass over {w.prefill_tokens:,} tokens: batch {w.batch_size:,} x {w.new_prompt_tokens:,} uncached)"
        + _server_path(result),
        f"TPOT (mean decode step)   {result.tpot_s / S_PER_MS:10.2f} ms   {_decode_pace(result)} "
        f"(mean over the {w.output_tokens:,} steps, mean context {result.decode.context_tokens:,.1f} tokens)",
        f"total latency             {result.total_s / S_PER_MS:10.2f} ms   = TTFT + decode steps",
        f"throughput                {result.output_tokens_per_s:10,.0f} output tok/s (whole batch)",
        _range_line(result),
        f"decode intensity          {result.decode.intensity_flop_per_byte:10.1f} FLOP/byte "
        f"against a balance of {result.machine.balance_flop_per_byte:.0f}",
        f"one output token costs the time of {result.output_token_vs_prompt_token:,.0f} prompt tokens",
        "",
        f"memory: weights {memory.weight_bytes / BYTES_PER_GB:.2f} GB + KV cache {memory.kv_cache_bytes / BYTES_PER_GB:.2f} GB"
        f" = {memory.required_bytes / BYTES_PER_GB:.2f} GB of {memory.available_bytes / BYTES_PER_GB:.0f} GB"
        f" -> {'fits' if memory.fits else 'DOES NOT FIT'}; largest batch that fits: {max_batch}",
        *_per_gpu_lines(result),
        "",
        f"prices          {price_source(s.pricing)}",
        f"cost per reply  ${result.cost_per_reply_usd:.6f}  (input ${result.reply_cost.input_usd:.6f}, "
        f"cached ${result.reply_cost.cached_input_usd:.6f}, cache writes ${result.reply_cost.cache_write_usd:.6f}, "
        f"output ${result.reply_cost.output_usd:.6f}"
        + (f", per request ${result.reply_cost.request_usd:.6f}" if result.reply_cost.request_usd else "")
        + ")"
        + (
            f"; the prompt is above {result.reply_cost.tier_above_prompt_tokens:,} tokens: the long-prompt tier's rates"
            if result.reply_cost.tier_above_prompt_tokens is not None
            else ""
        ),
        f"monthly bill    ${result.monthly_cost_usd:,.0f}  at {s.pricing.replies_per_day:,.0f} replies/day x {s.pricing.days_per_month} days",
    ]
    lines.append(_self_hosting_line(result))
    return "\n".join(lines) + "\n"


def _server_path(result: Estimate) -> str:
    request_s = result.latency.request_overhead_s
    return "" if request_s == 0 else f", {request_s / S_PER_MS:.0f} ms of it the server's path per request"


def _range_line(result: Estimate) -> str:
    likely = likely_range(result)
    return (
        f"likely range ({likely.confidence}; ~80% of measured servers, {likely.regime}): "
        f"TTFT {likely.ttft_low_s / S_PER_MS:,.1f}-{likely.ttft_high_s / S_PER_MS:,.1f} ms, "
        f"TPOT {likely.tpot_low_s / S_PER_MS:,.2f}-{likely.tpot_high_s / S_PER_MS:,.2f} ms, "
        f"total {likely.total_low_s / S_PER_MS:,.0f}-{likely.total_high_s / S_PER_MS:,.0f} ms"
    )


def _per_gpu_lines(result: Estimate) -> list[str]:
    memory = result.memory
    if memory.gpu_count == 1:
        return []
    line = (
        f"per GPU: weights {memory.weight_bytes_per_gpu / BYTES_PER_GB:.2f} GB + KV cache "
        f"{memory.kv_cache_bytes_per_gpu / BYTES_PER_GB:.2f} GB = {memory.required_bytes_per_gpu / BYTES_PER_GB:.2f} GB "
        f"of {memory.available_bytes_per_gpu / BYTES_PER_GB:.0f} GB"
    )
    if memory.kv_replication > 1:
        kv_heads = result.scenario.model.kv_heads or 1
        why = "more GPUs than KV heads to split" if memory.gpu_count > kv_heads else "the KV heads do not split evenly"
        line += f" (KV heads replicated {memory.kv_replication:g}x: {why})"
    return [line]


def _self_hosting_line(result: Estimate) -> str:
    hosting, batch = result.self_hosting, result.scenario.workload.batch_size
    if hosting is None:
        return f"self-hosting    {result.self_hosting_problem}"
    price = (
        f"self-hosting    ${hosting.usd_per_million_output_tokens:,.2f} per million output tokens at batch {batch:,}; "
    )
    capacity = f"one fleet serves {hosting.capacity_replies_per_day:,.0f} replies/day"
    if hosting.reachable_break_even_replies_per_day is None:
        return (
            price + f"never breaks even with the API: at full load ({capacity}) a reply costs "
            f"${hosting.cost_per_reply_usd:.6f} against the API's ${hosting.api_cost_per_reply_usd:.6f}"
        )
    return (
        price
        + f"breaks even with the API at {hosting.reachable_break_even_replies_per_day:,.0f} replies/day ({capacity})"
    )


def presets_text() -> str:
    from core.memory import kv_bytes_per_token
    from core.presets import gpu_presets, model_presets
    from core.specs import Precision

    SIXTEEN_BIT = Precision(weight_bits=16, kv_bits=16)

    lines = ["GPUs (dense peaks; * = compute estimated, not published)", ""]
    lines.append(f"  {'id':<16}{'name':<34}{'GB/s':>8}{'TF16':>9}{'TF8':>9}{'TF4':>9}{'GB':>7}{'$/h':>8}")
    for preset in gpu_presets().values():
        g = preset.gpu
        price = "" if g.price_usd_per_hour is None else f"{g.price_usd_per_hour:.2f}"
        mark = "*" if preset.provenance.estimated else ""
        four = "-" if g.peak_flops_4bit_per_s is None else f"{g.peak_flops_4bit_per_s / FLOP_PER_TFLOP:,.1f}"
        lines.append(
            f"  {g.id:<16}{g.name[:33]:<34}{g.memory_bandwidth_bytes_per_s / BYTES_PER_GB:>8,.0f}"
            f"{g.peak_flops_16bit_per_s / FLOP_PER_TFLOP:>8,.1f}{mark:1}{g.peak_flops_8bit_per_s / FLOP_PER_TFLOP:>8,.1f}{mark:1}"
            f"{four:>9}{g.memory_bytes / BYTES_PER_GB:>7,.0f}{price:>8}"
        )
    lines += ["", "Models (KV = KV-cache bytes per token at 16-bit; bits = bits per weight as the model ships, "
              "then its experts' where they differ)", ""]  # fmt: skip
    lines.append(
        f"  {'id':<18}{'name':<26}{'params B':>9}{'active B':>9}{'layers':>7}{'KV heads x dim':>16}{'KV KB/tok':>10}"
        f"{'bits':>9}"
    )
    for mp in model_presets().values():
        m = mp.model
        shape = f"{m.kv_heads} x {m.head_dim}" if m.has_attention_shape else "-"
        if m.kv_latent_dim:
            shape = f"latent {m.kv_latent_dim}"
        kv_kb = kv_bytes_per_token(m, SIXTEEN_BIT) / 1e3
        lines.append(
            f"  {m.id:<18}{m.name[:25]:<26}{m.total_params / PARAMS_PER_BILLION:>9.2f}"
            f"{m.active_params / PARAMS_PER_BILLION:>9.2f}{m.layers or '-':>7}{shape:>16}{kv_kb:>10.1f}"
            f"{_shipped_bits(mp):>9}"
        )
    return "\n".join(lines) + "\n"


def _shipped_bits(preset: ModelPreset) -> str:
    """'8', or '16/4.25' for gpt-oss: its attention, router and embeddings, then its MXFP4 experts."""
    experts = preset.release_expert_weight_bits
    return f"{preset.release_weight_bits:g}" + ("" if experts is None else f"/{experts:g}")
