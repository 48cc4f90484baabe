"""Where the app keeps its per-session state, and the naming rules for session keys.

Session-state keys (every user has their own; nothing is kept at module level):

- the flat keys (`model`, `prompt`, `seed`, `p1`, …): the inputs, each a widget bound to
  the URL parameter of the same name (`app.inputs`);
- `sb_*`: sidebar widgets that are not part of the link (the price source, the upload);
- `app_*`: the app's own bookkeeping (the current scenario, whether the link was read).

Pages never read sidebar widgets: they call `current_scenario()`.
"""

from __future__ import annotations

import streamlit as st

from core.scenario import Scenario

SCENARIO_KEY = "app_scenario"


def current_scenario() -> Scenario:
    """The scenario the sidebar built on this run (the lesson's until it has run)."""
    scenario = st.session_state.get(SCENARIO_KEY)
    return scenario if isinstance(scenario, Scenario) else Scenario.lesson()


def store_scenario(scenario: Scenario) -> None:
    st.session_state[SCENARIO_KEY] = scenario
