"""Overview: the answer first — the bill for your traffic, what drives it, then what self-hosting would take."""

import streamlit as st

from app import formatting as fmt
from app import likely, site_pages
from app import overview_text as words
from app.compute import cached_critical_batch, cached_estimate
from app.state import current_scenario
from core.checks import engine_memory_problems
from core.roofline import compute_idle_fraction

scenario = current_scenario()
est = cached_estimate(scenario)
work, pricing, cost = scenario.workload, scenario.pricing, est.reply_cost

st.title("Overview")
st.caption(words.traffic_line(scenario))

# --- the bill: what a product manager came for --------------------------------------------
# Headed as the API's: unheaded, the first dollars on the page read as what the GPUs below cost.
st.header("Paying an API for your traffic", divider="gray")
month, reply, year = st.columns(3, border=True)
month.metric("Monthly bill", fmt.usd(est.monthly_cost_usd), help=words.MONTH_HELP)
reply.metric("Cost per reply", fmt.usd(est.cost_per_reply_usd), help="Prompt tokens at the input price, reply "
             "tokens at the output price (cache reads and writes at theirs).")  # fmt: skip
year.metric("Yearly bill", fmt.usd(12 * est.monthly_cost_usd), help="Twelve of those months.")
st.markdown(words.price_source_line(scenario))
st.markdown(words.what_drives_it(est))
# Short enough for one line on a 390-px phone (a page link does not wrap: it is cut).
site_pages.link("bill", "The bill in detail: reply length, traffic")

# --- self-hosting: latency and hardware, for engineers ------------------------------------
st.header("Self-hosting: latency and hardware", divider="gray")
st.caption(words.self_hosting_line(scenario))
if not est.memory.fits:  # before the numbers, not under them: they describe a setup no server runs
    st.caption(f"**{likely.range_note(scenario, None, fits=False)}**")
row1, row2 = st.columns(3, border=True), st.columns(3, border=True)
ttft, tpot, total = (fmt.duration(t) for t in (est.ttft_s, est.tpot_s, est.total_s))
rng = likely.shown_range(est)  # None on ideal physics: the lesson's calculation has no range
ranges = words.likely_ranges(rng)
metrics = (  # label, value, what it means
    ("Time to first token", ttft, words.ttft_meaning(scenario)),
    ("Time per output token", tpot, "Each further token is a full pass over the model: the reply's clock ticks at this rate."),
    ("Total latency", total, words.total_meaning(est)),
    ("Each user's stream", fmt.tokens_per_s(est.per_request_tokens_per_s),
     "Tokens per second one user watches arrive: 1 ÷ the time per output token."),
    ("Whole batch's output", fmt.tokens_per_s(est.output_tokens_per_s),
     words.batch_output_meaning(scenario)),
    ("Prompt vs output token", f"{fmt.ratio(est.output_token_vs_prompt_token)}", words.prompt_vs_output_meaning(scenario)),
)  # fmt: skip
range_help = likely.metric_help(scenario, rng) if rng else None
for column, (label, value, meaning) in zip([*row1, *row2], metrics, strict=True):
    shown = ranges.get(label)  # the likely range as a plain note under the number: no arrow, no colour
    delta = f"likely {shown}" if shown else None
    column.metric(label, value, delta, delta_color="off", delta_arrow="off", help=range_help if shown else None)
    column.caption(meaning)
if est.memory.fits:
    st.caption(likely.range_note(scenario, rng))
st.caption(
    f"These are one static batch of {fmt.plural(work.batch_size, 'request')} on one machine, prefilled together. "
    "For traffic (requests arriving all day, continuous batching, latency targets) size a fleet on the Capacity "
    "plan, or put options side by side on Compare."
)
left, right = st.columns(2)
site_pages.link("plan", "Capacity plan: a fleet for your traffic", left)
site_pages.link("compare", "Compare: APIs and fleets", right)

# The card holds it, a server's share does not (the warning over the page): said in the wall's advice and the memory box.
server_short = est.memory.fits and bool(engine_memory_problems(scenario, est.memory))
st.subheader("Which wall you are against")
step, machine = est.decode, est.machine
intensity, balance = step.intensity_flop_per_byte, machine.balance_flop_per_byte
facts = (
    f"A decode step (the mean over the reply) does {fmt.flop_per_byte(intensity)}; this machine needs "
    f"{fmt.flop_per_byte(balance)} to keep its compute busy."
)
if step.host_bound:
    st.info(
        f"**The host sets the pace.** Every decode step waits on {likely.engine_name(scenario)} launching its "
        f"kernels, {fmt.ms(step.host_time_s, 3)} a step on the host, while the GPU's own work is "
        f"{est.decode_bound}-bound and shorter. What would move it: an engine that captures its steps in CUDA "
        "graphs (vLLM, SGLang, TensorRT-LLM); a faster host CPU; a larger batch, which the launches do not "
        "lengthen. Fewer bits per weight or more bandwidth would not: the GPU already waits.",
        icon=":material/memory:",
    )
elif (lead := words.fixed_costs_lead(est)) is not None:
    st.info(f"{lead} {facts}", icon=":material/timer:")
elif est.decode_bound == "memory":
    st.info(
        f"**Memory-bound.** {facts} The maths waits on reading the weights, compute idles "
        f"{fmt.percent(compute_idle_fraction(intensity, balance))} of each step. What would move it: "
        f"{words.memory_bound_advice(est, cached_critical_batch(scenario), server_short)}",
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
if server_short:
    st.warning(words.memory_line(scenario, plan, server_short=True), icon=":material/memory:")
else:
    (st.success if plan.fits else st.error)(
        words.memory_line(scenario, plan),
        icon=":material/check_circle:" if plan.fits else ":material/error:",
    )
st.caption(
    "Activations and framework overhead (a few GB per GPU) are not counted: near the edge, 'fits' is optimistic."
)
