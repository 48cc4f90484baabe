"""Latency line: total = TTFT + M × TPOT, simulated with the lesson's jitter, and fitted to your own data."""

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app import compute, latency_charts, lesson_scenarios, likely, page_inputs
from app import formatting as fmt
from app.measurements import EXAMPLE, MAX_BYTES, MAX_ROWS
from app.page_inputs import SIMULATIONS
from app.state import current_scenario
from app.sweeps import SIMULATED_OUTPUT_CAP, output_grid, simulated_lengths
from app.theme import PLOTLY_CONFIG
from core.fit import fit_latency_line, implied_mbu
from core.lesson import JITTER

NOTE: dict[str, Any] = {"delta_color": "off", "delta_arrow": "off"}  # a metric's delta as a plain note
# The uploader can print only whole megabytes ("1MB per file"): hide that, the parser's limit is said above it.
HIDE_UPLOAD_LIMIT = "<style>.st-key-latency_upload [data-testid$='DropzoneInstructions']{display:none}</style>"

STRAIGHT = 1.02  # the last step this much slower than the first, or less: the line looks straight

scenario = current_scenario()
est = compute.cached_estimate(scenario)
out, prompt = scenario.workload.output_tokens, scenario.workload.prompt_tokens
line_tokens = output_grid(2 * out)
line_s = compute.cached_latency_line(scenario, line_tokens)

# A KV cache: every step reads the cache so far, so the line bends, unless the host sets every step's pace.
grows = scenario.model.has_attention_shape and not est.decode.host_bound
chord = (out, est.tpot_s) if grows else None
st.title("Latency line")
if grows:
    first, last = compute.cached_step_times(scenario)
    # Under 2 % from the first step to the last no chart shows the bend: say how little it is instead.
    bend = "and the line bends upward" if last > first * STRAIGHT else "so little that the line is nearly straight"
    st.markdown(
        f"Total latency grows with the **output** length: a one-off TTFT of {fmt.duration(est.ttft_s)} (prefilling "
        f"{fmt.tokens(scenario.workload.prefill_tokens)}), then one decode step per output token. With a KV cache "
        f"each step reads the cache so far, so the steps slow as the reply grows — {fmt.ms(first)} for the first, "
        f"{fmt.ms(last)} for the {fmt.count(out)}th — {bend}. TTFT + M × TPOT with the mean "
        f"step ({fmt.ms(est.tpot_s)}) is its chord: exact at M = {fmt.count(out)}, too high before."
    )
elif est.decode.host_bound:
    st.markdown(
        f"Total latency is a straight line in the **output** length: a one-off TTFT of {fmt.duration(est.ttft_s)} "
        f"(prefilling {fmt.tokens(scenario.workload.prefill_tokens)}), then {fmt.ms(est.tpot_s)} (TPOT) for "
        "every output token, because every step waits on the host launching its kernels, whose time does not "
        "grow with the KV cache."
    )
else:
    st.markdown(
        f"Total latency is a straight line in the **output** length: a one-off TTFT of {fmt.duration(est.ttft_s)} "
        f"(prefilling {fmt.tokens(scenario.workload.prefill_tokens)}), then {fmt.ms(est.tpot_s)} (TPOT) for "
        "every output token, because the model runs once per token and (with no KV cache) every step is the same."
    )
rng = likely.shown_range(est)  # None on ideal physics: the lesson's calculation has no range
st.caption(likely.latency_summary(scenario, est, rng))

st.caption("Doing the Day 36 lesson? Load its scenario and the lab's simulation:")
lesson_scenarios.buttons()

st.subheader("Simulated measurements and the fitted line")
seed = int(page_inputs.value("seed"))  # set in the sidebar, under "Simulation"
simulation = str(page_inputs.value("sim"))
sim_tokens = simulated_lengths(out, simulation)
sim_s = compute.cached_simulation(est.ttft_s, est.tpot_s, sim_tokens, seed)
sim_fit = fit_latency_line(sim_tokens, sim_s)
tpot_note, ttft_note = ({}, {}) if rng is None else (
    {"delta": f"likely {fmt.duration_range(rng.tpot_low_s, rng.tpot_high_s)}", "help": likely.metric_help(scenario, rng), **NOTE},
    {"delta": f"likely {fmt.duration_range(rng.ttft_low_s, rng.ttft_high_s)}", "help": likely.metric_help(scenario, rng), **NOTE},
)  # fmt: skip
cols = st.columns(4)
cols[0].metric("TPOT, model", fmt.ms(est.tpot_s), **tpot_note)
cols[1].metric("TPOT, fitted (slope)", fmt.ms(sim_fit.tpot_s, 3))
cols[2].metric("TTFT, model", fmt.ms(est.ttft_s), **ttft_note)
cols[3].metric("TTFT, fitted (intercept)", fmt.ms(sim_fit.ttft_s))
band = likely.latency_band(est, line_s)
simulated = (sim_tokens, sim_s)
line_figure = compute.shared_figure(
    latency_charts.latency_line, line_tokens, line_s, est.ttft_s, simulated, sim_fit, chord=chord, band=band
)
st.plotly_chart(config=PLOTLY_CONFIG, figure_or_data=line_figure)
capped = f" Simulated up to {fmt.count(max(sim_tokens))} tokens to keep the page fast."
st.caption(
    # The lengths as drawn: "1 to 800 tokens" was the label's, true only for a 500-token reply (640 at 400).
    f"Seed {seed}, {SIMULATIONS[simulation]} ({fmt.listed([fmt.count(t) for t in sim_tokens])} tokens): each of the "
    f"{fmt.count(sum(sim_tokens))} simulated decode steps takes "
    f"TPOT × (1 ± up to {JITTER:.0%}). Least squares fits the slope (TPOT, "
    f"{fmt.percent(abs(sim_fit.tpot_s / est.tpot_s - 1))} off the model's) and the intercept (TTFT, "
    f"{fmt.percent(abs(sim_fit.ttft_s / est.ttft_s - 1))} off: it carries the jitter of every step"
    f"{' and the line’s bend' if grows else ''}); R² = {sim_fit.r_squared:.6f}."
    f"{capped if out > SIMULATED_OUTPUT_CAP else ''}"
)
model_ms = compute.cached_latency_line(scenario, sim_tokens) * 1e3
table = pd.DataFrame({"output_tokens": sim_tokens, "latency_ms": np.asarray(sim_s) * 1e3, "model_latency_ms": model_ms})
number = st.column_config.NumberColumn
labels = {"latency_ms": "simulated latency (ms)", "model_latency_ms": "model latency (ms)"}
config = {"output_tokens": number("output tokens"), **{k: number(v, format="%.1f") for k, v in labels.items()}}
st.dataframe(table, hide_index=True, column_config=config)
reupload = "This file is also a valid upload for “Your own measurements” below."
csv_name = f"latency_simulated_seed{seed}.csv"
st.download_button(
    "Download as CSV", lambda: table.to_csv(index=False), csv_name, "text/csv", key="latency_download", help=reupload
)

st.subheader("The asymmetry: the same tokens as prompt and as output")
# The decode runs after the N-token prompt (each pass reads its KV cache): beside the Overview's total after a
# 200-token prompt, 2,000 decode passes here (39.46 s) read longer than that whole reply (39.29 s), unexplained.
both = replace(scenario.workload, prompt_tokens=out, output_tokens=out, cached_prompt_tokens=0)
same = compute.cached_estimate(replace(scenario, workload=both))
st.plotly_chart(
    config=PLOTLY_CONFIG,
    figure_or_data=compute.shared_figure(
        latency_charts.asymmetry_bars, out, same.prefill.time_s, same.latency.decode_s
    ),
)
# The prefill pass alone, as the Overview's "Prompt vs output token" counts it: a server's path before the
# first token (vLLM's 54 ms) is no prompt token's cost, and would make the ratio depend on the server.
path_s = same.latency.request_overhead_s
before = (
    f" (the first token also waits {fmt.rounded_duration(path_s)} on the server's path, whatever the prompt)"
    if path_s > 0
    else ""
)
st.markdown(
    f"{fmt.count(out)} tokens as a prompt ride one prefill pass: {fmt.duration(same.prefill.time_s)}{before}. As "
    f"output, after that prompt, they need {fmt.count(out)} decode passes: {fmt.duration(same.latency.decode_s)}, "
    f"**{fmt.ratio(same.latency.decode_s / same.prefill.time_s)} slower** for the same number of tokens."
)

st.subheader("Your own measurements")
st.markdown(
    "Upload or paste a CSV with a header `output_tokens,latency_ms` (or `latency_s`), one request per row, at least "
    f"two different output lengths: at most {MAX_BYTES // 1024} KB and {MAX_ROWS:,} rows."
)
st.html(HIDE_UPLOAD_LIMIT)
upload = st.file_uploader("CSV file", type=["csv"], key="latency_upload", max_upload_size=1)
# Not in the link (up to 256 KB); kept for the session while other pages are visited.
pasted = st.text_area(
    "…or paste it here",
    key="latency_paste",
    persist_state="session",
    max_chars=MAX_BYTES,
    height=150,
    placeholder=f"For example:\n{EXAMPLE}",
)
if upload is not None and (pasted or "").strip():
    st.info("Reading the uploaded file; the text pasted in the box is not used while a file is uploaded.")
data, problem = compute.cached_measurements(upload.getvalue() if upload is not None else pasted, upload is not None)
if problem:
    st.warning(f"Could not read your measurements: {problem}")
if data is not None:
    fit = fit_latency_line(data.output_tokens, data.latency_s)
    cols = st.columns(4)
    cols[0].metric("TPOT, your fit", fmt.ms(fit.tpot_s, 3), f"model {fmt.ms(est.tpot_s)}", **NOTE)
    cols[1].metric("TTFT, your fit", fmt.ms(fit.ttft_s), f"model {fmt.ms(est.ttft_s)}", **NOTE)
    if fit.ttft_s < 0:
        st.info(
            f"The fitted line crosses zero below M = 0 (intercept {fmt.ms(fit.ttft_s)}): no time can be negative, "
            "so your measurements' TTFT is too small to see beside their spread. Measure TTFT directly (the time "
            "to the first streamed token), or add short replies (1–10 tokens) to pin the intercept down."
        )
    cols[2].metric("R²", f"{fit.r_squared:.4f}", f"{fit.points} rows", **NOTE)
    step = est.decode
    peak_bandwidth = scenario.gpu.memory_bandwidth_bytes_per_s * scenario.workload.gpu_count
    mbu = implied_mbu(est, fit.tpot_s) if fit.tpot_s > 0 else None
    if mbu is not None:
        cols[3].metric("Implied MBU", fmt.percent(mbu), f"model assumes {fmt.percent(scenario.efficiency.mbu)}", **NOTE)
        st.caption(
            f"MBU = bytes the mean decode step reads ({fmt.gigabytes(step.bytes_moved)}: weights and KV caches) ÷ "
            f"(your TPOT − the model's fixed costs per step, {fmt.rounded_duration(step.fixed_time_s)}, and any wait on maths"
            f"{' or on the host' if step.host_time_s else ''}) "
            f"÷ peak bandwidth ({fmt.gigabytes(peak_bandwidth)}/s). Your TPOT equal to the model's gives the model's "
            "own MBU; above 100% means your hardware or model is not the scenario's."
        )
    elif fit.tpot_s > 0 and step.host_bound:
        st.info(
            f"The model's every decode step waits on the host's kernel launches ({fmt.rounded_duration(step.host_time_s)} "
            "a step on this engine): a time per token the host sets says nothing about memory bandwidth, so "
            f"there is no MBU to read. Your TPOT ({fmt.ms(fit.tpot_s, 3)}) says how fast your host launches: "
            f"if your GPU waits on it too, {fmt.ms(fit.tpot_s, 3)} as 'Overhead per step' under Efficiency "
            "numbers makes the model's steps yours."
        )
    elif fit.tpot_s > 0:
        st.warning(
            f"Your TPOT ({fmt.ms(fit.tpot_s, 3)}) is no longer than the model's fixed costs per step "
            f"({fmt.ms(step.fixed_time_s, 3)}): it leaves no time for reading memory, so there is no MBU to read."
        )
    else:
        st.warning("Latency does not grow with output tokens in your data, so there is no TPOT to read an MBU from.")
    user_tokens = output_grid(max(2 * out, int(data.output_tokens.max())))
    user_line = compute.cached_latency_line(scenario, user_tokens)
    measured = (data.output_tokens, data.latency_s)
    user_band = likely.latency_band(est, user_line)
    user_figure = latency_charts.latency_line(
        user_tokens, user_line, est.ttft_s, measured, fit, "your measurements", chord=chord, band=user_band
    )
    st.plotly_chart(config=PLOTLY_CONFIG, figure_or_data=user_figure)
