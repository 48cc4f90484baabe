"""Monthly bill: what one reply costs, what a month costs, and why the reply's length drives both."""

from dataclasses import replace

import pandas as pd
import streamlit as st

from app import bill_charts, overview_text, page_inputs, site_pages
from app import formatting as fmt
from app.capacity import current_plan
from app.compute import cached_cheapest, cached_estimate, cached_lab_run, shared_figure
from app.crossing_text import cheapest_words
from app.safe import plain
from app.state import current_scenario
from app.theme import PLOTLY_CONFIG
from core.billing import ratio
from core.cli.plan_report import recommendation
from core.lesson import JITTER, REFERENCE_PREDICTIONS
from core.scenario import Scenario

NUMBER = st.column_config.NumberColumn
COLUMNS = {  # every money and time column of both tables, shown the same way (prices keep their digits: $0.075)
    "USD per million tokens": NUMBER(format="$%.4g"), "USD per reply": NUMBER(format="$%.3g"),
    "USD per month": NUMBER(format="$%,.2f"), "share of the bill": NUMBER(format="percent"),
    "TTFT (ms)": NUMBER(format="%.2f"), "latency (ms)": NUMBER(format="%,.2f"),
}  # fmt: skip


def table(frame: pd.DataFrame, label: str, file_name: str) -> None:
    st.dataframe(frame, column_config={k: v for k, v in COLUMNS.items() if k in frame.columns})
    st.download_button(label, frame.to_csv, file_name, "text/csv", icon=":material/download:", on_click="ignore")


scenario = current_scenario()
est = cached_estimate(scenario)
pricing, work, cost = scenario.pricing, scenario.workload, est.reply_cost

st.title("Monthly bill")
st.markdown(overview_text.price_source_line(scenario))
st.info(
    "**The habit:** estimate the output tokens first — they move both the clock and the invoice.",
    icon=":material/lightbulb:",
)

for column, (label, usd, meaning) in zip(st.columns(4, border=True), (
    ("Input per reply", cost.input_usd, "Uncached prompt tokens × the input price."),
    ("Cached input per reply", cost.cached_input_usd, "Cached prompt tokens × the cached price."),
    ("Output per reply", cost.output_usd, "Reply tokens × the output price."),
    ("Cost per reply", est.cost_per_reply_usd, "All three."),
), strict=True):  # fmt: skip
    column.metric(label, fmt.usd(usd), help=meaning)
month, year = st.columns(2, border=True)
month.metric("Monthly bill", fmt.usd(est.monthly_cost_usd),
             help=f"Cost per reply × {pricing.replies_per_day:,.0f} replies a day × {pricing.days_per_month} days.")  # fmt: skip
year.metric("Yearly bill", fmt.usd(12 * est.monthly_cost_usd), help="Twelve of those months.")
table(bill_charts.cost_split_table(scenario, est), "Download the split (CSV)", "bill_split.csv")

st.subheader("A short reply against a long one")
short_tokens = int(page_inputs.value("short"))
st.caption("The short reply's length is set in the sidebar, under 'Comparison'.")
short = cached_estimate(replace(scenario, workload=replace(work, output_tokens=int(short_tokens))))
lengths = f"{work.output_tokens:,} vs {short_tokens:,} tokens"
long_s, short_s = fmt.durations(est.total_s, short.total_s)  # one unit for both
# The headline is the ratio (short enough for a phone); the two values sit under it.
cost_ratio = fmt.ratio(ratio(est.cost_per_reply_usd, short.cost_per_reply_usd)) if short.cost_per_reply_usd else "free"
latency_col, cost_col = st.columns(2, border=True)
latency_col.metric(f"Latency, {lengths}", fmt.ratio(ratio(est.total_s, short.total_s)),
                   f"{long_s} vs {short_s}", delta_color="off", delta_arrow="off")  # fmt: skip
cost_col.metric(f"Cost per reply, {lengths}", cost_ratio,
                f"{fmt.usd(est.cost_per_reply_usd)} vs {fmt.usd(short.cost_per_reply_usd)}",
                delta_color="off", delta_arrow="off")  # fmt: skip
api = f", not {plain(pricing.api_model)}'s (the tool does not estimate an API's speed)" if pricing.api_model else ""
st.caption(
    f"The latencies are {plain(scenario.model.name)} on {work.gpu_count:,} × {plain(scenario.gpu.name)}, as set under "
    f"'Self-hosting' in the sidebar{api}."
    # The Overview and the Latency line say this of a setup that cannot run; the bill showed its times bare.
    + (
        ""
        if est.memory.fits
        else " It does not fit in memory (said above): they are as if it did, not what a server would run."
    )
)
lesson = Scenario.lesson()
lab = cached_lab_run(REFERENCE_PREDICTIONS).part3
# The lab's remark, on the lab's machine and its two lengths only: beside "500 vs 100 tokens 4.9x" its
# "500- vs 50-token replies … 9.7x" read as a contradiction.
if (scenario.model, scenario.gpu, work.prompt_tokens, work.output_tokens, short_tokens) == (
    lesson.model, lesson.gpu, lesson.workload.prompt_tokens, lab.long.output_tokens, lab.short.output_tokens
):  # fmt: skip
    st.caption(
        f"Latencies here are the model's, without jitter. The lesson's lab jitters each decode step by "
        f"±{JITTER:.0%}, so for its {lab.long.output_tokens:,}- vs {lab.short.output_tokens:,}-token replies it "
        f"measures {fmt.ratio(lab.latency_ratio)} the latency."
    )
table(bill_charts.short_long_table(short, est), "Download the comparison (CSV)", "short_vs_long.csv")

# The fleet comes from the capacity plan, a search over every priced GPU (~0.2 s of server CPU a
# new scenario): only while its section is open, so the bill itself stays quick for a room of people.
FLEET_OPEN = "bill_fleet_open"
result = None
if st.session_state.get(FLEET_OPEN):
    # The plan's own warnings show on its page; its search's caches show a spinner on a miss.
    result, engine_note, _ = current_plan(scenario)
parts = cached_cheapest(est, result) if result is not None else None  # the chart shades them, the words say them
left, right = st.columns(2)
left.subheader("The bill against reply length")
left.plotly_chart(
    config=PLOTLY_CONFIG,
    figure_or_data=shared_figure(bill_charts.bill_vs_reply_length, scenario),
    key="bill_length_chart",
)
right.subheader("The bill against traffic")
right.plotly_chart(
    config=PLOTLY_CONFIG,
    figure_or_data=shared_figure(bill_charts.bill_vs_replies_per_day, est, result, parts),
    key="bill_traffic_chart",
)

fleet = st.expander(
    "Renting the GPUs instead: the capacity plan's cheapest fleet", icon=":material/dns:", key=FLEET_OPEN,
    on_change="rerun",
)  # fmt: skip
if result is None:
    fleet.caption("Open to size the cheapest fleet that meets the Capacity plan's targets, and draw it on the chart.")
else:
    with fleet:
        site_pages.link("plan", "Targets and candidates: the Capacity plan page")
        if result.best is None:
            st.info(f"{plain(recommendation(result), 600)} Loosen the targets on the Capacity plan page.",
                    icon=":material/block:")  # fmt: skip
        else:
            best = result.best
            for column, (label, value, meaning) in zip(st.columns(3, border=True), (
                ("Cheapest fleet, a month", fmt.usd(best.monthly_cost_usd or 0.0),
                 f"{fmt.plural(best.total_gpus_at_peak or 0, 'GPU')} at the peak, autoscaled over the day; meets the "
                 "plan's targets (its page sets them)."),
                ("The API, a month", fmt.usd(est.monthly_cost_usd), "The same replies at the prices above."),
                ("Self-hosted per M output tokens", fmt.usd(best.usd_per_million_output_tokens or 0.0),
                 "At the peak, where the fleet is busiest: rent per GPU-hour ÷ output tokens per GPU-hour."),
            ), strict=True):  # fmt: skip
                column.metric(label, value, help=meaning)
            st.caption(plain(recommendation(result), 600))
        axis = bill_charts.replies_axis(pricing.replies_per_day)
        words = cheapest_words(parts or [], {"API": "The API", "fleet": "renting the plan's fleet"}, axis[0], axis[-1])
        if words:
            st.markdown(plain(words[0].upper() + words[1:], 600))
        st.caption(
            f"The fleet is searched on {engine_note}, at the Capacity plan's targets and candidates"
            f"{fmt.gpu_discount(result.spec.gpu_discount)}."
        )
