"""Capacity plan: from replies a day and latency targets to a fleet, its monthly bill and the API's beside it."""

import streamlit as st

from app import capacity, compute, plan_charts
from app import formatting as fmt
from app.overview_text import price_source_line
from app.safe import plain
from app.state import current_scenario
from app.theme import PLOTLY_CONFIG
from core.cli.plan_report import recommendation

scenario = current_scenario()
result, engine_note, warnings = capacity.current_plan(scenario)  # the search's caches show a spinner on a miss
spec = result.spec
for text in warnings:  # the inputs' own bounds catch most; a rule across them lands here
    st.warning(plain(text, 300), icon=":material/warning:")

st.title("Capacity plan")
work, pricing = scenario.workload, scenario.pricing
st.markdown(
    f"**{plain(scenario.model.name)}**, {fmt.tokens(work.prompt_tokens)} in and {fmt.tokens(work.output_tokens)} "
    f"out, {fmt.count(pricing.replies_per_day)} replies a day = "
    f"{result.mean_requests_per_s:,.2f} requests/s on average and {result.peak_requests_per_s:,.2f} at the "
    f"{spec.peak_to_average:g}× peak. Targets at the peak: p{spec.ttft_percentile} TTFT ≤ "
    f"{fmt.duration(spec.ttft_target_s)}"
    + (f", at least {spec.tokens_per_s_per_user:g} tokens/s per user." if spec.tokens_per_s_per_user else ".")
)
best = result.best
if best is None:
    st.warning(plain(recommendation(result), 600), icon=":material/block:")
elif not scenario.model.has_attention_shape:  # the lesson's toy: its verdict is qualified, so not said in green
    st.info(plain(recommendation(result), 700), icon=":material/info:")
else:
    st.success(plain(recommendation(result), 600), icon=":material/dns:")
for note in (capacity.own_gpu_note(scenario, result), capacity.precision_note(scenario, result)):
    if note:
        st.caption(plain(note, 400))
cols = st.columns(4)
if best is not None:
    cols[0].metric("Self-hosted, autoscaled", fmt.usd(best.monthly_cost_usd or 0.0),
                   help="The autoscaler resizes every 15 minutes to that quarter-hour's busiest moment, "
                   "never below the floor (the sidebar's 'Fewest replicas').")  # fmt: skip
    cols[1].metric(
        "Sized for the peak", fmt.usd(best.monthly_cost_peak_usd or 0.0), help="The peak's fleet, all month."
    )
    cols[3].metric("GPUs at the peak", fmt.count(best.total_gpus_at_peak or 0))
cols[2].metric(
    "The API",
    fmt.usd(result.api_monthly_usd),
    help=f"The same replies at the sidebar's prices: {fmt.usd(result.api_cost_per_reply_usd)} a reply × replies a "
    "day × days.",
)
# The API named: "the API is $14,816 a month cheaper" at the lesson's illustrative prices read as a finding.
st.caption(
    f"Searched on {engine_note}, {len(result.options)} candidates: every GPU × GPUs per replica × weight "
    "precision in the sidebar's lists. The load model: continuous batching with chunked prefill, Poisson "
    "arrivals, no prefix-cache hits, no speculative decoding. "
    + (
        f"GPU prices are on-demand $/GPU-hour less the {fmt.percent(result.spec.gpu_discount)} discount asked."
        if result.spec.gpu_discount
        else "GPU prices are on-demand $/GPU-hour."
    )
    + f" The API: {price_source_line(scenario)}"
)

st.subheader(f"Meeting every target ({fmt.count(len(result.ranked))})")
if result.ranked:
    st.dataframe(
        plan_charts.ranked_table(result),
        column_config={
            plan_charts.SETUP: st.column_config.TextColumn(pinned=True),
            plan_charts.PER_M_AT_PEAK: st.column_config.NumberColumn(format="$%.3g"),
            "$ a month, autoscaled": st.column_config.NumberColumn(format="$%,.0f"),
            "$ a month, sized for the peak": st.column_config.NumberColumn(format="$%,.0f"),
            "requests in flight per replica": st.column_config.NumberColumn(format="%.0f"),
            "tok/s per GPU": st.column_config.NumberColumn(format="%,.0f"),
            "tok/s per user": st.column_config.NumberColumn(format="%.1f"),
            "TTFT at the percentile (ms)": st.column_config.NumberColumn(format="%,.0f"),
        },
    )
    st.caption(plan_charts.formats_note(result.ranked))
st.download_button(
    "Download every candidate (CSV)",
    lambda: plan_charts.csv_table(result).to_csv(index=False),  # built on a click, not on every rerun
    "capacity_plan.csv",
    "text/csv",
    icon=":material/download:",
    on_click="ignore",
)
if result.failures:
    # Lazy: the table is built and sent only while the expander is open.
    failures = st.expander(
        f"Not ranked ({fmt.count(len(result.failures))}), and why", key="plan_failures_open", on_change="rerun"
    )
    if failures.open:
        failures.dataframe(
            plan_charts.failures_table(result),
            hide_index=True,
            column_config={plan_charts.SETUP: st.column_config.TextColumn(pinned=True)},
        )

st.subheader("The frontier: throughput per GPU against speed per user")
tokens_chart, dollars_chart = compute.cached_frontier_figures(result)
st.plotly_chart(tokens_chart, config=PLOTLY_CONFIG, key="plan_frontier")
st.caption(
    "Each line is one GPU's best candidate at 1, 2, 3 … requests in flight (closed loop, as benchmarks run "
    "a server): left, many requests share each step and each reply streams slowly; right, few do. The "
    "diamond is where the plan runs it at the peak."
)
st.subheader("The same frontier in dollars")
st.plotly_chart(dollars_chart, config=PLOTLY_CONFIG, key="plan_dollars")
st.caption(
    "What the GPUs cost per million output tokens while busy at each load, at their hourly price: a month's bill, "
    "with the idle hours of a fleet sized for its peak, is in the table above. The dotted line is the API's "
    "price for the same replies, per million output tokens with their prompts included."
)
