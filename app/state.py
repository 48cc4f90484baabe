"""Where the app keeps its per-session state, and the naming rules for session keys.

Session-state keys (every user has their own; nothing is kept at module level):

- `sb_*`   the sidebar's scenario widgets, rendered by the entry file on every page;
- `app_*`  the app's own bookkeeping (the current scenario, the URL seeding flag, …);
- `<page>_*` a page's own widgets: `overview_`, `latency_`, `roofline_`, `bill_`, `lesson_`.
  Streamlit forgets a widget's value as soon as its page is not shown; draw them with
  `sticky()` to keep it for the session.

Pages never read sidebar widgets: they call `current_scenario()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from core.scenario import Scenario

SCENARIO_KEY = "app_scenario"
SIDEBAR_PREFIX = "sb_"
PAGE_PREFIXES = ("overview_", "latency_", "roofline_", "bill_", "lesson_")
_SHADOW = "app_keep_"  # a page widget's last value, under a key no widget owns


def current_scenario() -> Scenario:
    """The scenario the sidebar built on this run (the lesson's until it has run)."""
    scenario = st.session_state.get(SCENARIO_KEY)
    return scenario if isinstance(scenario, Scenario) else Scenario.lesson()


def store_scenario(scenario: Scenario) -> None:
    st.session_state[SCENARIO_KEY] = scenario


def sticky(widget: Callable[..., Any], label: str, *, key: str, default: Any, **kwargs: Any) -> Any:
    """Draw a page widget whose value survives a visit to another page; return its value.

    Streamlit drops the state of a widget that was not drawn on a run, so the value is
    also kept under a shadow key and put back when the page is drawn again. Example:
    `short = sticky(st.number_input, "Short reply", key="bill_short_tokens", default=50,
    min_value=1)`.
    """
    if not key.startswith(PAGE_PREFIXES):
        raise ValueError(f"page widget keys start with one of {PAGE_PREFIXES}, got {key!r}")
    if key not in st.session_state:
        st.session_state[key] = st.session_state.get(_SHADOW + key, default)
    value = widget(label, key=key, **kwargs)
    st.session_state[_SHADOW + key] = value
    return value
