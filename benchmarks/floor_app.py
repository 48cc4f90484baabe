"""The floor a page's rerun is measured against: one number input, the headline, the page's own figures prebuilt.

`benchmarks/load.py --floor` starts this as a second server (same command, settings and
environment as the app, only the script differs) and runs the same sessions against it.
The figures are the very plotly specs the app sent for the page in the load test's
preflight (`FLOOR_FIGURES`: a JSON file), rebuilt into figures once per process; each
rerun then only does what any Streamlit page drawing them must: read the widget, compute
the headline with core (as the load test's checker does), serialise the figures. So
"app ÷ floor" is what the app's own code (sidebar, page logic, figure building, caches)
adds per rerun.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st

# benchmarks/ is on sys.path: Streamlit adds the script's folder.
from load_pages import PAGES, expected_headline, floor_pages

from core import Scenario

SPECS: dict[str, list[dict[str, Any]]] = json.loads(Path(os.environ["FLOOR_FIGURES"]).read_text())


@st.cache_resource
def prebuilt(page: str) -> list[tuple[go.Figure, dict[str, Any]]]:
    return [(go.Figure(json.loads(f["spec"])), json.loads(f["config"] or "{}")) for f in SPECS.get(page, [])]


def bare(page: str) -> None:
    plan = PAGES[page]
    base = Scenario.from_flat(st.query_params.to_dict())
    start = int(float(base.to_flat()[plan.input_key]))
    value = st.number_input(plan.input_label, min_value=1, value=start, step=1)
    st.metric(plan.headline_label, expected_headline(plan, base, value))
    for i, (figure, config) in enumerate(prebuilt(page)):
        st.plotly_chart(figure, config=config, key=f"figure-{i}")


pages = [
    st.Page(lambda name=name: bare(name), title=PAGES[name].title, url_path=path, default=not PAGES[name].url_path)
    for path, name in floor_pages().items()
]
st.navigation(pages).run()
