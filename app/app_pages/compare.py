"""Compare: up to four options for the same traffic — APIs, self-hosted fleets, a scenario pinned against its edit."""

import streamlit as st

from app import capacity, compare_charts, compare_inputs, compute, page_inputs
from app import formatting as fmt
from app.crossing_text import cheapest_words
from app.link import pinned_link
from app.safe import plain
from app.sidebar_text import sentence
from app.state import current_scenario
from app.theme import PLOTLY_CONFIG
from core.compare import PINNED, scenario_options, served_by
from core.plan_spec import Plan

scenario = current_scenario()
pricing, work = scenario.pricing, scenario.workload
warnings: list[str] = []
chosen = tuple(page_inputs.value("cmp") or ())
_, pinned = pinned_link(page_inputs.value(page_inputs.PINNED_KEY) or "", warnings)
if PINNED in chosen and pinned is None:
    warnings.append("'pinned scenario' is chosen but nothing is pinned: press 'Pin this scenario' first.")
    chosen = tuple(option for option in chosen if option != PINNED)
spec, plan_warnings = Plan.read_flat(page_inputs.flat_of("plan"))  # the Capacity plan's targets (or defaults)
# Fleets are sized on the engine the Capacity plan searches (the typical one for the lesson's automatic ideal).
fleet_scenario, fleet_words = capacity.searched(scenario)
fleet_engine = fleet_scenario.efficiency.label
if fleet_scenario is scenario:
    fleet_words = f"the sidebar's engine, {served_by(fleet_engine)}"
for text in warnings + plan_warnings:
    st.warning(plain(text, 300), icon=":material/warning:")

st.title("Compare")
st.markdown(
    f"For the sidebar's traffic: **{fmt.count(pricing.replies_per_day)} replies a day**, "
    f"{fmt.count(work.prompt_tokens)}-token prompts, {fmt.count(work.output_tokens)}-token replies. A self-hosted option is "
    f"the Capacity plan's cheapest fleet on that GPU, served by {fleet_words}, at "
    f"its targets (p{spec.ttft_percentile} TTFT ≤ "
    f"{fmt.duration(spec.ttft_target_s)}, {spec.tokens_per_s_per_user:g} tokens/s per user"
    + fmt.gpu_discount(spec.gpu_discount)
    + "); a scenario option is billed and timed as its own Overview."
)
missing = tuple(option for option in scenario_options(scenario) if option not in chosen)
if missing:  # a reader who picked an API (or a model on a GPU) in the sidebar expects it here
    st.info(plain(f"The sidebar's choice is not compared yet: {', '.join(missing)}.", 300), icon=":material/add:")
    st.button("Compare it" if len(missing) == 1 else "Compare them", on_click=compare_inputs.add, args=(missing,))
if not chosen:
    st.info("Pick up to four options in the sidebar, under 'Options'.", icon=":material/compare_arrows:")
    st.stop()

results = compute.cached_compare(chosen, scenario, spec, pinned, fleet_engine)  # its cache shows a spinner on a miss
days = pricing.days_per_month
axis = compare_charts.traffic_axis(pricing.replies_per_day)
changes = compute.cached_changes(results, pricing.replies_per_day, days)
priced = [c for c in results if c.monthly_usd is not None]
if len(priced) == 1:  # "the cheapest of these options" compared one option with nothing
    only = priced[0]
    st.info(
        plain(f"Only one option has a bill: {only.option}, {fmt.usd(only.monthly_usd or 0.0)} a month "
              f"({fmt.usd(only.cost_per_reply_usd or 0.0)} a reply) at {fmt.count(pricing.replies_per_day)} replies "
              "a day. Add an API or a model on a GPU under 'Options to compare' to set it beside another.", 400),
        icon=":material/savings:",
    )  # fmt: skip
elif priced:
    cheapest = min(priced, key=lambda c: c.monthly_usd or 0.0)
    # "Of these options": with DeepSeek-V3 in the sidebar, "the cheapest is llama-3.1-8b on l4" (a default
    # option) read as an answer about a model the reader never chose.
    st.success(
        plain(f"At {fmt.count(pricing.replies_per_day)} replies a day the cheapest of these options is {cheapest.option}: "
              f"{fmt.usd(cheapest.monthly_usd or 0.0)} a month ({fmt.usd(cheapest.cost_per_reply_usd or 0.0)} a reply).", 400),
        icon=":material/savings:",
    )  # fmt: skip
    # A product manager reads "cheapest" as "use it": the options need not be equally good.
    st.caption(
        "Cheapest is not the same as equivalent: different models answer differently well, and a fleet's "
        "weights may be narrower than the sidebar's (under the table: how each runs), which this tool does not measure."
    )
words = cheapest_words(changes, {c.option: c.option for c in results}, float(axis[0]), float(axis[-1]))
if words and len(priced) > 1:
    st.markdown("**By traffic:** " + plain(words, 800))

measured = [page_inputs.value(f"lat{i}") for i in range(1, len(results) + 1)]
frame = compare_charts.table(results, measured)
# An option without a bill (no fleet on that GPU meets the targets) is said in a sentence under the
# table, not left as cells st.dataframe prints "None" in; the download keeps every option.
billed = frame[frame["USD per month"].notna()]
if len(billed):
    st.dataframe(
        billed.drop(columns="notes"),  # a grid cuts long text: they are listed under it, whole
        column_config={
            "USD per reply": st.column_config.NumberColumn(format="$%.3g"),
            "USD per month": st.column_config.NumberColumn(format="$%,.0f"),
            "USD per year": st.column_config.NumberColumn(format="$%,.0f"),
        },
    )
    st.markdown(compare_charts.notes_list(results))
for compared in results:
    if compared.monthly_usd is None:
        st.warning(plain(f"{compared.option}: no fleet. ", 200) + sentence(compared.note), icon=":material/block:")
st.download_button(
    "Download the comparison (CSV)",
    frame.to_csv,  # called on a click, not on every rerun
    "comparison.csv",
    "text/csv",
    icon=":material/download:",
    on_click="ignore",
)
if any(c.kind == "api" for c in results):
    st.caption("An API's latency depends on its provider's load: type one you measured in the sidebar to show it.")

left, right = st.columns(2)
left.subheader("The monthly bills")
left.plotly_chart(compute.shared_figure(compare_charts.bars, results), config=PLOTLY_CONFIG, key="compare_bars")
right.subheader("The bills against traffic")
right.plotly_chart(
    compute.shared_figure(compare_charts.bills_against_traffic, results, pricing.replies_per_day, days, changes),
    config=PLOTLY_CONFIG,
    key="compare_lines",
)
st.caption(
    "An API's bill is a straight line (each reply costs the same); a fleet's is a staircase (whole replicas, "
    "autoscaled over the day)."
    + (" Dashed: where the cheapest option changes." if len(changes) > 1 else "")
    + " Dotted: your traffic."
)
