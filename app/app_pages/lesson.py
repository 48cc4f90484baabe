"""The lesson (Day 36) in the browser: predict first, reveal, then the reference run and the drills."""

import compute
import formatting as fmt
import pandas as pd
import streamlit as st
from state import sticky

from core.cli.lab_text import render_lab
from core.lesson import REFERENCE_PREDICTIONS

REVEALED = "lesson_revealed"
QUESTIONS = (  # (key, label, hint)
    ("lesson_p1", "P1. TPOT, one decode step (ms)", "A step reads all 14 GB of weights at 2 TB/s."),
    ("lesson_p2", "P2. One output token vs one prompt token (x)", "How many times the wall time of a prompt token?"),
    ("lesson_p3", "P3. Arithmetic intensity of a batch-1 decode step (FLOP/byte)", "FLOPs done per byte read."),
    ("lesson_p4", "P4. A 500-token reply vs a 50-token reply (x)", "Same 200-token prompt: how many times longer?"),
)

st.title("The lesson (Day 36)")
st.info(
    "This page always uses the lesson's toy machine, not the sidebar's scenario: a 7B model in fp16 (14 GB of "
    "weights, 14 GFLOPs per token) on a GPU with 2 TB/s of memory bandwidth and 300 TFLOP/s of compute, ideal."
)

st.subheader("Predict first")
st.markdown(
    "Write a number for each prediction **before** you look. P2 is the one to feel in your gut: "
    "most people guess 2 or 3."
)
bounds = {"default": None, "min_value": 0.0, "max_value": 1e6}
guesses = []
for row in (QUESTIONS[:2], QUESTIONS[2:]):  # row by row, so the tab order is P1, P2, P3, P4
    for column, (key, label, hint) in zip(st.columns(2), row, strict=True):
        guesses.append(sticky(column.number_input, label, key=key, help=hint, **bounds) or 0.0)
left, right = st.columns([1, 4])
if left.button("Reveal", key="lesson_reveal", type="primary"):
    st.session_state[REVEALED] = True
if st.session_state.get(REVEALED) and right.button("Hide the answers", key="lesson_hide"):
    st.session_state[REVEALED] = False

if not st.session_state.get(REVEALED):
    st.caption("The scoreboard and the reference run appear when you press Reveal.")
else:
    run = compute.cached_lab_run(tuple(guesses))
    st.subheader("Scoreboard")
    board = run.scoreboard
    you = [f"{p.guess:,.1f}" if p.guess > 0 else "—" for p in board]
    actual = [f"{p.actual:,.2f} {p.unit}" for p in board]
    scores = {
        "prediction": [p.label for p in board],
        "you": you,
        "actual": actual,
        "verdict": [p.verdict for p in board],
    }
    st.dataframe(pd.DataFrame(scores), hide_index=True)
    st.caption("Within 0.7–1.4× of the actual value is close enough; otherwise the verdict says how far off you were.")
    st.subheader("The reference run")
    st.markdown(
        "The lab's output, exactly as `python -m core lab` prints it (with the lesson's own predictions "
        "on its scoreboard)."
    )
    st.code(render_lab(compute.cached_lab_run(REFERENCE_PREDICTIONS)), language=None)

st.subheader("Drills")
st.markdown("Paper first, with the toy machine's numbers; then open the answer.")
d = compute.cached_drills()
d1 = d.d1_prefill
DRILLS = (
    (
        "D1. Prefill and TTFT",
        "Prefilling a 1,000-token prompt is one pass: 1,000 tokens' worth of FLOPs, the 14 GB of "
        "weights read once. Compute time, memory time, which wins, and the TTFT?",
        f"Compute: 1,000 × 14 GFLOPs ÷ 300 TFLOP/s = **{fmt.ms(d1.compute_time_s, 1)}**. Memory: 14 GB ÷ 2 TB/s = "
        f"{fmt.ms(d1.memory_time_s, 1)}. Compute wins, so prefill is **{d1.bound}-bound** and the TTFT is "
        f"**{fmt.ms(d1.time_s, 1)}**: the maths grows with the prompt, the weight read does not.",
    ),
    (
        "D2. Decode and total latency",
        "With TPOT 7 ms and the TTFT from D1, the total latency of a 300-token reply, and the share that is decode?",
        f"{fmt.ms(d1.time_s, 1)} + 300 × {fmt.ms(d.d3_step.time_s, 0)} = **{fmt.ms(d.d2_total_s, 1)}**, of which decode "
        f"is **{fmt.percent(d.d2_decode_share)}**.",
    ),
    (
        "D3. The memory wall",
        "A batch-1 decode step reads 14 GB and does 14 GFLOPs. Its intensity, the machine's "
        "balance, which bound, and how idle are the compute units?",
        f"**{fmt.flop_per_byte(d.d3_step.intensity_flop_per_byte)}** against a balance of "
        f"**{fmt.flop_per_byte(d.d3_step.balance_flop_per_byte)}**: {d.d3_step.bound}-bound. The compute units sit idle "
        f"**{fmt.percent(d.d3_idle_fraction)}** of each step ({fmt.ms(d.d3_step.memory_time_s, 3)} of reading against "
        f"{fmt.ms(d.d3_step.compute_time_s, 3)} of maths).",
    ),
    (
        "D4. Batching",
        "Roughly what batch makes decode compute-bound, and the throughput at batch 1 versus 64? Why "
        "doesn't batching speed up one lonely request?",
        f"About **{fmt.count(d.d4_critical_batch or 0)}** (intensity = batch FLOP/byte reaches the balance). Batch 1: "
        f"**{fmt.tokens_per_s(d.d4_tokens_per_s[0])}**; batch 64: **{fmt.tokens_per_s(d.d4_tokens_per_s[1])}**, the same "
        "7 ms read now feeding 64 tokens. One request still gets its tokens one step at a time, each a full TPOT: "
        "batching shares the read across requests, it does not shorten any one stream.",
    ),
    (
        "D5. The token bill",
        "Same 1,000-token prompt, replies of 100 and 1,000 tokens, TPOT 7 ms, TTFT from D1, output "
        "priced 3× input: the latency ratio and the cost ratio?",
        f"{fmt.ms(d.d5_latency_s[0], 1)} vs {fmt.ms(d.d5_latency_s[1], 1)}: **{fmt.ratio(d.d5_latency_ratio)}** the "
        f"latency. {fmt.count(d.d5_cost_units[0])} vs {fmt.count(d.d5_cost_units[1])} units: "
        f"**{fmt.ratio(d.d5_cost_ratio)}** the cost. Trim the output first: it is both the slow part and the pricey part.",
    ),
)
for title, question, answer in DRILLS:
    st.markdown(f"**{title}.** {question}")
    with st.expander(f"Answer to {title.split('.')[0]}"):
        st.markdown(answer)
