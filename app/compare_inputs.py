"""The Compare page's own inputs in the sidebar: the options, a measured latency beside each API, the pin.

Drawn by the frame like every page input (`app.page_inputs`), but shaped by the options
chosen: a measured-latency box appears for an API option only (the tool does not estimate
an API's speed), and stays while it holds a value so its URL parameter survives.
"""

from __future__ import annotations

import streamlit as st

from app import inputs
from app.link import pin_query
from app.page_inputs import BY_KEY, PINNED_KEY
from app.safe import plain
from app.scenario_widgets import held
from app.state import current_scenario
from core.compare import MAX_OPTIONS, PINNED, THIS, self_hosted


def is_api(option: str) -> bool:
    return option not in (THIS, PINNED) and self_hosted(option) is None


def _pin() -> None:
    """'Pin this scenario': the current scenario's short link becomes the pinned one, and is compared."""
    scenario = current_scenario()
    st.session_state[PINNED_KEY] = pin_query(scenario.to_flat(minimal=True), scenario)
    chosen = list(st.session_state.get("cmp") or [])
    for option in (PINNED, THIS):
        if option not in chosen and len(chosen) < MAX_OPTIONS:
            chosen.append(option)
    st.session_state["cmp"] = chosen


def add(options: tuple[str, ...]) -> None:
    """The sidebar's own API and model (`core.compare.scenario_options`) first, then the options already chosen."""
    chosen = [*options, *(o for o in st.session_state.get("cmp") or [] if o not in options)]
    st.session_state["cmp"] = chosen[:MAX_OPTIONS]  # the defaults, chosen last, give way first


def draw() -> None:
    chosen = inputs.multi(BY_KEY["cmp"], max_selections=MAX_OPTIONS)
    for i in range(1, MAX_OPTIONS + 1):
        described = BY_KEY[f"lat{i}"]
        option = chosen[i - 1] if i <= len(chosen) else None
        if option is not None and is_api(option):
            inputs.number(described, label=f"Measured latency of {plain(option)} (ms)")  # labels render markdown
        elif held([(described, None)]):
            inputs.number(described)
    inputs.text(BY_KEY[PINNED_KEY], "")
    st.button("Pin this scenario", on_click=_pin, icon=":material/push_pin:", help="Holds the sidebar's scenario "
              "as it is now, to compare with what you change next.")  # fmt: skip
