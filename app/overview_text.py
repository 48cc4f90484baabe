"""The Overview's sentences, without Streamlit: the traffic, where prices come from, what drives the bill,
what the self-hosting numbers describe. Every user-typed name goes through `plain`."""

from __future__ import annotations

from app import formatting as fmt
from app.likely import engine_phrase, is_ideal
from app.safe import plain
from core.api_prices import snapshot
from core.billing import catalogue_entry
from core.engine import ENGINES, in_words
from core.estimate import Estimate
from core.lengths import RequestLengths
from core.memory import MemoryPlan
from core.ranges import LikelyRange
from core.scenario import Scenario

MONTH_HELP = "Cost per reply × replies a day × days a month."


def traffic_line(scenario: Scenario) -> str:
    """'100,000 replies a day, each a 200-token prompt and a 500-token reply, 30 days a month.'"""
    w, p = scenario.workload, scenario.pricing
    return (
        f"{fmt.plural(p.replies_per_day, 'reply', 'replies')} a day, each {fmt.tokens(w.prompt_tokens)} of prompt "
        f"and {fmt.tokens(w.output_tokens)} of reply, {fmt.plural(p.days_per_month, 'day')} a month."
    )


def price_source_line(scenario: Scenario) -> str:
    """Where the prices come from: an API's list prices, typed over them, or typed by hand."""
    p = scenario.pricing
    prices = f"{fmt.usd(p.input_usd_per_million_tokens)} in, {fmt.usd(p.output_usd_per_million_tokens)} out per million"
    if p.api_model is None:
        return (
            f"Prices typed by hand ({prices} tokens; the lesson's illustrative prices unless you changed them). "
            "Pick an API model in the sidebar for its real list prices."
        )
    name = plain(p.api_model)
    if catalogue_entry(p) is None:
        return f"Prices typed by hand over **{name}**'s list prices ({prices} tokens): the bill is at what you typed."
    source = snapshot()
    return (
        f"**{name}**'s list prices ({prices} tokens; {source.package} {source.version}, prices as of "
        f"{source.as_of}), billed the provider's way."
    )


def what_drives_it(est: Estimate) -> str:
    """The share of each reply's cost that is output, and what a longer reply does to the bill."""
    cost = est.reply_cost
    if cost.total_usd == 0:
        return "These prices are zero: the API costs nothing at any traffic."
    output = cost.output_usd / cost.total_usd
    prompt = (cost.input_usd + cost.cached_input_usd + cost.cache_write_usd) / cost.total_usd
    shares = f"output tokens are {fmt.percent(output)} of each reply's cost, the prompt {fmt.percent(prompt)}"
    if output >= prompt:
        advice = f"A reply twice as long costs {fmt.ratio(1 + output)} as much: estimate the reply's length first."
    else:  # a long prompt (a document, a chat history) is what the bill follows
        advice = (
            f"A prompt twice as long costs about {fmt.ratio(1 + prompt)} as much: estimate the prompt's length first."
        )
    tier = cost.tier_above_prompt_tokens
    if tier is not None:  # the list prices quoted above are the base tier's
        advice += (
            f" This prompt is over {fmt.count(tier)} tokens, so the whole request pays the provider's "
            "long-prompt rates, above the list prices quoted."
        )
    return f"**What drives it:** {shares}. {advice}"


def self_hosting_line(scenario: Scenario) -> str:
    """What the numbers below describe, and (with an API chosen) that they are not the API's latency."""
    w = scenario.workload
    gpus = f"{w.gpu_count} × " if w.gpu_count > 1 else "one "
    batch = "one request at a time" if w.batch_size == 1 else f"a static batch of {w.batch_size:,} requests together"
    served = engine_phrase(scenario) if is_ideal(scenario) else f"served by {engine_phrase(scenario)}"
    line = (
        f"If you served the replies yourself: {plain(scenario.model.name)} on {gpus}{plain(scenario.gpu.name)}, "
        f"{scenario.precision.weights_words} weights, {served}, {batch} "
        "(set under 'Self-hosting' in the sidebar). MBU and MFU: the shares of the GPU's memory bandwidth and "
        "compute its kernels reach."
    )  # the gloss: the Overview is read by product managers too, who met "MBU 73.0%" unexplained
    if scenario.pricing.api_model is not None:
        line += (
            f" The prices above are {plain(scenario.pricing.api_model)}'s; these latencies are the self-hosted "
            "model's, not that API's."
        )
        if not scenario.model.has_attention_shape:  # a product manager's API beside the lesson's toy
            line += " The model is still the lesson's toy: pick the open model you would run before comparing."
    return line


def likely_ranges(rng: LikelyRange | None) -> dict[str, str]:
    """Each headline metric's likely range ('63–760 ms'), by label; none without a range (ideal physics)."""
    if rng is None:
        return {}
    return {
        "Time to first token": fmt.duration_range(rng.ttft_low_s, rng.ttft_high_s),
        "Time per output token": fmt.duration_range(rng.tpot_low_s, rng.tpot_high_s),
        "Total latency": fmt.duration_range(rng.total_low_s, rng.total_high_s),
        # One user's stream is 1 ÷ TPOT, so its range is TPOT's, turned over.
        "Each user's stream": fmt.tokens_per_s_range(1 / rng.tpot_high_s, 1 / rng.tpot_low_s),
        "Whole batch's output": fmt.tokens_per_s_range(rng.output_tokens_per_s_low, rng.output_tokens_per_s_high),
    }


def ttft_meaning(scenario: Scenario) -> str:
    w = scenario.workload
    path_s = scenario.efficiency.request_path_s(w.gpu_count)
    # A server engine's path in and out (vLLM's 54 ms) is most of a short prompt's TTFT: say it is there.
    path = f", after the server's {fmt.rounded_duration(path_s)} path in and out" if path_s > 0 else ""
    if w.batch_size == 1:
        return f"The wait before the first word: one parallel pass over {fmt.tokens(w.prefill_tokens)} of prompt{path}."
    return (
        f"The wait before the first word: one parallel pass over {fmt.tokens(w.prefill_tokens)} "
        f"({w.batch_size:,} prompts, prefilled together){path}."
    )


def prompt_vs_output_meaning(scenario: Scenario) -> str:
    """The "Prompt vs output token" tile's words: the prefill pass alone, as the Latency line's asymmetry counts it."""
    alone = (
        " (the prefill pass only: the server's fixed path before it is left out)"
        if scenario.efficiency.request_path_s(scenario.workload.gpu_count) > 0
        else ""
    )
    # The Latency line's asymmetry compares its reply's length as prompt and as output: another length,
    # another ratio (a short pass is memory-bound), so the length this one holds for is said.
    prompt = fmt.count(scenario.workload.prompt_tokens)
    return (
        f"One output token takes as long as this many prompt tokens, at this {prompt}-token prompt: prompt tokens "
        f"share one pass{alone}."
    )


def batch_output_meaning(scenario: Scenario) -> str:
    batch = scenario.workload.batch_size
    if batch == 1:  # "of all 1 request together" reads wrong
        return "Output tokens per second of the one request, the wait for its first token included."
    return f"Output tokens per second of all {batch:,} requests together, prefill included."


def total_meaning(est: Estimate) -> str:
    scenario, decode = est.scenario, est.decode
    steps = f"First token + {scenario.workload.output_tokens:,} decode steps"
    if decode.host_bound:  # every step waits on the host's launches
        return steps + ", each as long as the host takes to launch it: a straight line in the reply's length."
    if scenario.model.has_attention_shape:
        return steps + ", each a little slower than the last as the KV cache grows."
    return steps + ": a straight line in the reply's length."


FIXED_LEADS = 0.5  # fixed costs above this share of the mean decode step set its pace, not the roofline


def fixed_costs_set_the_pace(est: Estimate) -> bool:
    """Whether the engine's fixed costs are at least half the mean decode step (its GPU's, not an eager host's)."""
    d = est.decode
    return not d.host_bound and d.time_s > 0 and d.fixed_time_s >= FIXED_LEADS * d.time_s


def fixed_costs_lead(est: Estimate) -> str | None:
    """The verdict when the engine's fixed costs are most of a decode step (None otherwise): more bandwidth or
    fewer bits, the memory-bound advice, would shorten only the rest of it.

    Example: DeepSeek-V3 on 8 × H200, typical engine, batch 1: 10.2 of the 11.3 ms step are 61 layers × (30 µs
    launches + 80 µs of MoE routing) and 122 all-reduces × 26 µs; its weights' read is about 1 ms. It was called
    memory-bound, with "a GPU with more memory bandwidth, or more GPUs" to move it.
    """
    if not fixed_costs_set_the_pace(est):
        return None
    d = est.decode
    step_s, roof = d.time_s, max(d.memory_time_s, d.compute_time_s)  # the mean step, and its reads or maths
    parts = ["kernel launches per layer"]
    if est.scenario.model.is_moe:
        parts.append("the experts' routing")
    if est.scenario.workload.gpu_count > 1:
        parts.append(f"all-reduces across the {est.scenario.workload.gpu_count} GPUs")
    fewer = " Fewer GPUs, where the model fits, mean fewer all-reduces." if est.scenario.workload.gpu_count > 1 else ""
    return (
        f"**Fixed costs set the pace.** Of each {fmt.ms(step_s)} decode step, "
        f"{fmt.ms(d.fixed_time_s)} ({fmt.percent(d.fixed_time_s / step_s)}) is the engine's cost per step "
        f"whatever it carries ({fmt.listed(parts)}); reading the weights and the KV cache takes {fmt.ms(roof)} "
        f"({est.decode_bound}-bound). What would move it: a larger batch, which shares those costs among more "
        f"requests; an engine with lower fixed costs.{fewer} Fewer bits per weight "
        f"or more bandwidth would shorten only the {fmt.ms(roof)}."
    )


def batching_advice(est: Estimate, critical: int | None) -> str:
    """What batching can still buy, bounded by what fits in memory."""
    room, batch = est.memory.max_batch_that_fits, est.scenario.workload.batch_size
    if room == 0:  # not one request fits: batching is not yet the question
        return "room in memory first (more GPUs, fewer bits per weight or per KV value): not one request fits yet"
    if room is not None and room < batch:
        return f"a batch of at most {room:,}, the most that fit, or more memory (more GPUs, an 8-bit KV cache)"
    if room is not None and room == batch:
        return "more memory per sequence (more GPUs, an 8-bit KV cache): no more requests fit beside these"
    if critical is None:
        return "batch more requests (the KV-cache reads grow as fast as the maths, so the step stays memory-bound)"
    if room is not None and critical > room:
        return (
            f"batch more requests, up to the {room:,} that fit (about {critical:,} would make the step "
            "compute-bound, more than memory holds)"
        )
    return f"batch more requests (about {critical:,} make the step compute-bound)"


def memory_bound_advice(est: Estimate, critical: int | None, server_short: bool = False) -> str:
    """What would move a memory-bound step: batching (or room, when nothing fits), then fewer bytes or more
    bandwidth. When not one request fits the first advice already names GPUs and bits: said once.
    `server_short`: the card holds a batch a server's share does not (it advised "up to the 41 that fit")."""
    if server_short:
        return (
            "room in memory first (more GPUs, fewer bits per weight): a server holds not one request here; then, "
            "for speed, fewer bytes per step or more bandwidth to read them with."
        )
    first = batching_advice(est, critical)
    if est.memory.max_batch_that_fits == 0:
        return first + "; then, for speed, fewer bytes per step or more bandwidth to read them with."
    return first + "; fewer bits per weight (fewer bytes per step); a GPU with more memory bandwidth, or more GPUs."


def server_share_line(scenario: Scenario, plan: MemoryPlan) -> str:
    """What a server holds, where it differs from the card's largest batch ("" on the lesson's physics, or when
    no request fits either way: the warnings say so).

    The static batch fills the datasheet's memory; a server first keeps some for itself (vLLM 10 % and about
    3 GB a GPU) and pages each cache at its current length, and the Capacity plan sizes on that. Example:
    gpt-oss-120b on one H100 under vLLM: 485 on the card, 168 in the 68.8 GB vLLM uses (the plan's figure);
    the two had stood on different pages, unexplained.
    """
    if scenario.efficiency.label not in ENGINES or not scenario.model.has_attention_shape or not plan.fits:
        return ""
    replica = scenario.replica()
    held = replica.max_concurrency_that_fits(RequestLengths.of(scenario.workload))
    if held <= 0 or held == plan.max_batch_that_fits:
        return ""
    per_gpu = replica.usable_bytes / scenario.workload.gpu_count
    return (
        f" A server keeps part of each card for itself: in the {fmt.gigabytes(per_gpu)} per GPU "
        f"{in_words(scenario.efficiency.label)} uses, with each cache paged at its current length, "
        f"{fmt.count(held)} run at once, as the Capacity plan counts what fits."
    )


def memory_line(scenario: Scenario, plan: MemoryPlan, server_short: bool = False) -> str:
    """The memory verdict; `server_short`: the datasheet's memory holds it, the engine's share does not
    (`core.checks.engine_memory_problems`), so the verdict is the card's and a server holds no batch at all."""
    model, w = scenario.model, scenario.workload
    used = (
        f"Per GPU: weights {fmt.gigabytes(plan.weight_bytes_per_gpu)} + KV cache "
        f"{fmt.gigabytes(plan.kv_cache_bytes_per_gpu)} = **{fmt.gigabytes(plan.required_bytes_per_gpu)}** of "
        f"{fmt.gigabytes(plan.available_bytes_per_gpu)}."
    )
    if plan.kv_replication > 1 and model.kv_latent_dim is not None:  # core.memory.kv_replication's two causes
        used += (
            f" Latent attention caches one latent per token that every head reads, so each of the "
            f"{w.gpu_count:,} GPUs holds the whole KV cache ({plan.kv_replication:g}× over)."
        )
    elif plan.kv_replication > 1:
        used += (
            f" With {w.gpu_count:,} GPUs and {model.kv_heads or 1} KV heads the KV cache is held "
            f"{plan.kv_replication:g}× over (a GPU cannot hold part of a head)."
        )
    holds, server = ("the card holds", "; a server, none") if server_short else ("that fits", "")
    if plan.max_batch_that_fits is None:
        largest = "This model has no KV cache in the estimate, so memory never limits the batch."
    else:
        largest = (
            f"The largest batch {holds} at {w.sequence_tokens:,} tokens per sequence: "
            f"**{plan.max_batch_that_fits:,}**{server}."
        )
    verdict = (
        "Fits the card, not a server (the warning above says why)."
        if server_short
        else ("Fits." if plan.fits else "Does not fit.")
    )
    return f"{verdict} {used} {largest}{'' if server_short else server_share_line(scenario, plan)}"
