"""Roofline & batching: why decode waits on memory, and how batching buys the compute back."""

import numpy as np
import pandas as pd
import streamlit as st

from app import compute, likely, roofline_charts, roofline_text
from app import formatting as fmt
from app.overview_text import fixed_costs_set_the_pace, server_share_line
from app.state import current_scenario
from app.sweeps import sweep_batches, table_batches
from app.theme import PLOTLY_CONFIG

# BatchSweep's own field names: SI, the unit in every name.
CSV_COLUMNS = (
    "batch_size",
    "intensity_flop_per_byte",
    "attained_flops_per_s",
    "step_time_s",
    "output_tokens_per_s",
    "compute_bound",
    "host_bound",
    "memory_required_bytes",
    "fits_in_memory",
)

scenario = current_scenario()
est = compute.cached_estimate(scenario)
batch = scenario.workload.batch_size
critical = compute.cached_critical_batch(scenario)
ceiling = est.memory.max_batch_that_fits  # None: no KV cache, so memory never limits the batch
balance = est.machine.balance_flop_per_byte

st.title("Roofline & batching")
st.markdown(
    f"A step takes the longer of reading its bytes and doing its maths. {likely.roofline_engine_line(scenario, est.machine)} "
    "This machine needs "
    f"**{fmt.flop_per_byte(balance)}** to keep its compute busy (the ridge); a decode step at batch "
    f"{fmt.count(batch)} (the mean over the reply, at {fmt.count(est.decode.context_tokens)} tokens of context) does "
    f"{fmt.flop_per_byte(est.decode.intensity_flop_per_byte)}, so it is **{est.decode.bound}-bound**"
    # As the Overview says it: on the roof memory-bound, yet the engine's fixed costs may be most of the step.
    + (
        f" on the roof, though the engine's fixed costs ({fmt.percent(est.decode.fixed_time_s / est.decode.time_s)} "
        "of the step) **set its pace**. "
        if fixed_costs_set_the_pace(est)
        else ". "
    )
    + "Batching reuses one weight read for many sequences."
)
cols = st.columns([1.6, 1, 1])
cols[0].metric("Machine balance (ridge)", fmt.flop_per_byte(balance))
critical_help = "The smallest batch whose decode step reaches the ridge and turns compute-bound."
cols[1].metric("Critical batch", "never" if critical is None else fmt.count(critical), help=critical_help)
fits_help = "Weights plus every sequence's KV cache (prompt + output tokens) against GPU memory × GPUs."
cols[2].metric("Largest batch that fits", "any" if ceiling is None else fmt.count(ceiling), help=fits_help)
weights_fit = est.memory.weight_bytes_per_gpu <= est.memory.available_bytes_per_gpu
st.caption(
    f"Memory per GPU: the weights take {fmt.gigabytes(est.memory.weight_bytes_per_gpu)} of "
    f"{fmt.gigabytes(est.memory.available_bytes_per_gpu)}; "
    + ("what is left holds the sequences' KV caches." if weights_fit else "they alone overflow it: nothing is left.")
    + server_share_line(scenario, est.memory)
)
if critical is None:
    st.info("At this context each sequence's KV-cache read outgrows its maths: decode never turns compute-bound.")
if ceiling is None:
    st.caption(
        "This model has no attention shape (like the lesson's toy), so no KV cache: memory never limits the batch."
    )
elif ceiling == 0:
    st.warning("The weights and one sequence's KV cache do not fit in memory: add GPUs or lower the precision.")

batches = table_batches(batch, critical, ceiling)
table = compute.cached_batch_sweep(scenario, batches)

st.subheader("The roofline")
gpus = scenario.workload.gpu_count
peaks = (
    scenario.gpu.peak_flops_per_s(scenario.precision.math_bits) * gpus,
    scenario.gpu.memory_bandwidth_bytes_per_s * gpus,
)
effective = est.machine
machine = (balance, effective.compute_flops_per_s, effective.bandwidth_bytes_per_s)
weights_roof = (effective.weight_compute_flops_per_s, effective.weight_bandwidth_bytes_per_s)
prefill = est.prefill.intensity_flop_per_byte
st.plotly_chart(
    config=PLOTLY_CONFIG,
    figure_or_data=compute.shared_figure(
        roofline_charts.roofline,
        *machine,
        batches,
        table.intensity_flop_per_byte,
        prefill,
        peaks,
        # Where each step runs: on the roof, or under it where part of it moves slower (roofline_text says why).
        decode_flops_per_s=table.attained_flops_per_s,
        decode_compute_bound=table.compute_bound,
        prefill_flops_per_s=est.prefill.attained_flops_per_s,
        prefill_compute_bound=est.prefill.bound == "compute",
        weights_roof=weights_roof,
        max_batch_that_fits=ceiling,
    ),
)
st.caption(roofline_text.chart_caption(est, table, likely.engine_name(scenario)))

st.subheader("The batch sweep")
sweep = compute.cached_batch_sweep(scenario, sweep_batches(batch, critical, ceiling, batches))
lines = (sweep.batch_size, sweep.step_time_s, sweep.output_tokens_per_s, sweep.compute_bound)
st.plotly_chart(
    config=PLOTLY_CONFIG,
    figure_or_data=compute.shared_figure(roofline_charts.batch_sweep, *lines, critical, ceiling, batch),
)
st.caption(
    roofline_text.sweep_caption(est, table, critical, ceiling)
    + roofline_text.host_floor(est, compute.cached_host_bound_batch(scenario), likely.engine_name(scenario))
    + (" The grey band is past the memory ceiling: weights plus KV cache no longer fit." if ceiling else "")
)

# What a phone's three columns should answer: which batch, does it fit, how fast; the physics after.
shown = {
    "batch": [fmt.count(b) for b in table.batch_size],
    "fits": np.where(table.fits_in_memory, "yes", "no"),
    "throughput": [fmt.tokens_per_s(r) for r in table.output_tokens_per_s],
    "step time": [fmt.ms(t, 3) for t in table.step_time_s],
    # The chart's colours are the GPU's own bound; a step that waits on an eager engine's host says both.
    "bound by": np.where(
        table.host_bound,
        np.where(table.compute_bound, "host (GPU: compute)", "host (GPU: memory)"),
        np.where(table.compute_bound, "compute", "memory"),
    ),
    "intensity": [fmt.flop_per_byte(i) for i in table.intensity_flop_per_byte],
    # Per GPU, as the caption above counts it (the weights and caches split over the GPUs).
    "memory per GPU": [fmt.gigabytes(b / gpus) for b in table.memory_required_bytes],
}
st.dataframe(pd.DataFrame(shown), hide_index=True)
csv = pd.DataFrame({name: getattr(table, name) for name in CSV_COLUMNS}).astype({"batch_size": int})
st.download_button(
    "Download the table as CSV", lambda: csv.to_csv(index=False), "batch_sweep.csv", "text/csv", key="roofline_download"
)
