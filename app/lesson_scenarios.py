"""The lesson's scenarios, one click away: Part 1 (a 500-token prompt) and Part 3 (a 200-token prompt).

Each button sets every sidebar input to the lesson's toy machine (7B fp16 on the 2 TB/s,
300 TFLOP/s GPU, ideal) and the Latency line page's simulation to the lab's (seed 36,
the part's reply lengths), so the page shows the reference run's numbers to the digit:
Part 1 TTFT 23.33 ms, fitted TPOT 6.999 ms, intercept 24.31 ms; Part 3 361.5 ms and 3,514.9 ms.
"""

from __future__ import annotations

import streamlit as st

from app import scenario_widgets
from app.state import current_scenario
from core.lesson import PART1_PROMPT_TOKENS, PART3_PROMPT_TOKENS, SEED
from core.scenario import Scenario
from core.specs import Workload

PARTS = {  # part → (prompt tokens, the Latency page's simulation, the button's words)
    1: (PART1_PROMPT_TOKENS, "part1", "The lesson's Part 1 (a 500-token prompt)"),
    3: (PART3_PROMPT_TOKENS, "part3", "The lesson's Part 3 (a 200-token prompt)"),
}


BEFORE_KEY = "app_before_lesson"  # the scenario a lesson button replaced, for its way back


def load(part: int) -> None:
    """A button's callback (it runs before the script, so it may set bound widgets)."""
    prompt, simulation, _ = PARTS[part]
    lesson = Scenario(workload=Workload(prompt_tokens=prompt, output_tokens=500))
    mine = current_scenario()
    if mine != lesson and BEFORE_KEY not in st.session_state:  # an engineer's Llama on 2 × H100 was gone for good
        st.session_state[BEFORE_KEY] = mine
    scenario_widgets.seed(lesson)
    st.session_state.update(seed=SEED, sim=simulation)


def restore() -> None:
    """Back to the scenario the lesson replaced."""
    scenario_widgets.seed(st.session_state.pop(BEFORE_KEY))


def buttons() -> None:
    """The two buttons side by side, and the way back to the scenario one of them replaced."""
    for column, (part, (_, _, words)) in zip(st.columns(len(PARTS)), PARTS.items(), strict=True):
        column.button(words, key=f"load_part{part}", on_click=load, args=(part,), icon=":material/school:",
                      help="Sets the sidebar to the lesson's toy machine; a button then takes you back.")  # fmt: skip
    if isinstance(st.session_state.get(BEFORE_KEY), Scenario):
        st.button("Back to your scenario", key="lesson_back", on_click=restore, icon=":material/undo:")
