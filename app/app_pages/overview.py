"""Overview: the answer first — latency, throughput and money for the sidebar's scenario."""

import streamlit as st

from app import formatting as fmt
from app.compute import cached_critical_batch, cached_estimate
from app.safe import plain
from app.state import current_scenario
from core.roofline import compute_idle_fraction

scenario = current_scenario()
est = cached_estimate(scenario)
work, model, gpu = scenario.workload, scenario.model, scenario.gpu

st.title("Overview")
gpus = f"{work.gpu_count} × " if work.gpu_count > 1 else ""
batch_words = (
    "one request" if work.batch_size == 1 else f"a static batch of {work.batch_size:,} requests decoded together"
)
st.caption(
    f"{plain(model.name)} on {gpus}{plain(gpu.name)}, {scenario.precision.weight_bits:g}-bit weights, "
    f"{scenario.efficiency.label} efficiency: {fmt.tokens(work.prompt_tokens)} of prompt → a "
    f"{work.output_tokens:,}-token reply, {batch_words}."
)

row1, row2 = st.columns(3, border=True), st.columns(3, border=True)
ttft, tpot, total = (fmt.duration(t) for t in (est.ttft_s, est.tpot_s, est.total_s))
streams, replies = fmt.tokens_per_s(est.per_request_tokens_per_s), scenario.pricing.replies_per_day
metrics = (  # label, value, what it means
    ("Time to first token", ttft, f"The wait before the first word: one parallel pass over {fmt.tokens(work.prefill_tokens)}"
     + (f" ({work.batch_size:,} prompts, prefilled together)." if work.batch_size > 1 else " of prompt.")),
    ("Time per output token", tpot, "Each further token is a full pass over the model: the reply's clock ticks at this rate."),
    ("Total latency", total, f"First token + {work.output_tokens:,} decode steps"
     + (": a straight line in the reply's length." if not model.has_attention_shape
        else ", each a little slower than the last as the KV cache grows.")),
    ("Tokens per second", fmt.tokens_per_s(est.output_tokens_per_s),
     f"Output of the whole batch of {work.batch_size:,}; each user watches {streams} stream in."),
    ("Cost per reply", fmt.usd(est.cost_per_reply_usd),
     "What the API bills for one reply: prompt tokens at the input price, reply tokens at the output price."),
    ("Monthly bill", fmt.usd(est.monthly_cost_usd), f"{replies:,.0f} replies a day × {scenario.pricing.days_per_month} days."),
)  # fmt: skip
for column, (label, value, meaning) in zip([*row1, *row2], metrics, strict=True):
    column.metric(label, value)
    column.caption(meaning)

st.subheader("Output tokens are the expensive ones")
st.markdown(
    f"One output token costs as much time as **{fmt.tokens(est.output_token_vs_prompt_token)} of prompt**. "
    "Prompt tokens share one pass; every output token needs a pass of its own. "
    "Estimate the reply's length first: it moves both the clock and the invoice."
)

st.subheader("Which wall you are against")
step, machine = est.decode, est.machine
intensity, balance = step.intensity_flop_per_byte, machine.balance_flop_per_byte
facts = (
    f"A decode step (the mean over the reply) does {fmt.flop_per_byte(intensity)}; this machine needs "
    f"{fmt.flop_per_byte(balance)} to keep its compute busy."
)
if est.decode_bound == "memory":
    critical = cached_critical_batch(scenario)
    room = est.memory.max_batch_that_fits
    if room is not None and room <= work.batch_size:  # nothing more fits: batching is not the lever
        batching = "more memory per sequence (more GPUs, an 8-bit KV cache)"
    elif critical:
        batching = f"batch more requests (about {critical:,} make the step compute-bound)"
    else:
        batching = "batch more requests (the KV-cache reads grow as fast as the maths, so the step stays memory-bound)"
    st.info(
        f"**Memory-bound.** {facts} The maths waits on reading the weights, compute idles "
        f"{fmt.percent(compute_idle_fraction(intensity, balance))} of each step. What would move it: {batching}; "
        "fewer bits per weight (fewer bytes per step); a GPU with more memory bandwidth, or more GPUs.",
        icon=":material/memory:",
    )
else:
    st.success(
        f"**Compute-bound.** {facts} Batching has used up the idle maths: more requests per step now "
        "lengthen every step. What would move it: more TFLOP/s (a faster GPU, more GPUs), 8-bit maths, "
        "or a smaller batch for lower latency.",
        icon=":material/bolt:",
    )

st.subheader("Does it fit in memory?")
plan = est.memory
used = (
    f"Per GPU: weights {fmt.gigabytes(plan.weight_bytes_per_gpu)} + KV cache "
    f"{fmt.gigabytes(plan.kv_cache_bytes_per_gpu)} = **{fmt.gigabytes(plan.required_bytes_per_gpu)}** of "
    f"{fmt.gigabytes(plan.available_bytes_per_gpu)}."
)
if plan.kv_replication > 1:
    used += (
        f" With {work.gpu_count:,} GPUs and {model.kv_heads or 1} KV heads the KV cache is held "
        f"{plan.kv_replication:g}× over (a GPU cannot hold part of a head)."
    )
if plan.max_batch_that_fits is None:
    largest = "This model has no KV cache in the estimate, so memory never limits the batch."
else:
    largest = (
        f"The largest batch that fits at {work.sequence_tokens:,} tokens per "
        f"sequence: **{plan.max_batch_that_fits:,}**."
    )
(st.success if plan.fits else st.error)(
    f"{'Fits.' if plan.fits else 'Does not fit.'} {used} {largest}",
    icon=":material/check_circle:" if plan.fits else ":material/error:",
)
st.caption(
    "Activations and framework overhead (a few GB per GPU) are not counted: near the edge, 'fits' is optimistic."
)
