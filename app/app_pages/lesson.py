"""The lesson (Day 36) in the browser: predict first, reveal, then the reference run and the drills."""

import pandas as pd
import streamlit as st

from app import compute, page_inputs, site_pages
from app.lesson_text import drill_texts
from app.page_inputs import PAGE_INPUTS
from core.cli.lab_text import render_lab
from core.lesson import REFERENCE_PREDICTIONS

PREDICTIONS = PAGE_INPUTS["lesson"][:4]
REVEAL = PAGE_INPUTS["lesson"][4]

st.title("The lesson (Day 36)")
st.info(
    "This page always uses the lesson's toy machine, not the sidebar's scenario: a 7B model in fp16 (14 GB of "
    "weights, 14 GFLOPs per token) on a GPU with 2 TB/s of memory bandwidth and 300 TFLOP/s of compute, ideal."
)

# A page link's label does not wrap: short enough for one line on a phone, the rest in words.
site_pages.link("latency", "Parts 1 and 3: the Latency line")
st.caption("Its buttons load the lesson's two scenarios, and its line shows the lesson's numbers.")

st.subheader("Predict first")
st.markdown(
    "Write a number for each prediction **before** you look, in the sidebar under **Your predictions** "
    "(on a phone, open it with » at the top left; they travel in the page's link). P2 is the one to feel in "
    "your gut: most people guess 2 or 3."
)
st.markdown("\n".join(f"- **{p.label}** {p.help}" for p in PREDICTIONS))
# The boxes are in the sidebar, under "Your predictions" (so they travel in the link).
guesses = [page_inputs.value(p.key) or 0.0 for p in PREDICTIONS]
revealed = bool(page_inputs.value(REVEAL.key))

if not revealed:
    st.caption("The scoreboard and the reference run appear when you switch on 'Reveal the answers' in the sidebar.")
else:
    run = compute.cached_lab_run(tuple(guesses))
    st.subheader("Scoreboard")
    board = run.scoreboard
    # One decimal as typed ("7.0"); a guess under 0.05 in two significant digits (0.000001 read "0.0").
    you = [("—" if p.guess <= 0 else f"{p.guess:,.1f}" if p.guess >= 0.05 else f"{p.guess:.2g}") for p in board]
    actual = [f"{p.actual:,.2f} {p.unit}" for p in board]
    scores = {  # the verdict second: a phone shows two columns of four
        "prediction": [p.label for p in board],
        "verdict": [p.verdict for p in board],
        "you": you,
        "actual": actual,
    }
    st.dataframe(pd.DataFrame(scores), hide_index=True)
    st.caption("Within 0.7–1.4× of the actual value is close enough; otherwise the verdict says how far off you were.")
    st.subheader("The reference run")
    st.markdown(
        "The lab's output, exactly as `python -m core lab` prints it. Its scoreboard's \"you\" column is the "
        "lesson's own example guesses, not yours: yours are scored in the table above."
    )
    st.code(render_lab(compute.cached_lab_run(REFERENCE_PREDICTIONS)), language=None)

st.subheader("Drills")
st.markdown("Paper first, with the toy machine's numbers; then open the answer.")
for title, question, answer in drill_texts(compute.cached_drills()):
    st.markdown(f"**{title}.** {question}")
    with st.expander(f"Answer to {title.split('.')[0]}"):
        st.markdown(answer)
