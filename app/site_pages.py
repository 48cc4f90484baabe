"""The app's pages (file, title, icon) and the links between them, built once per session.

`st.Page` resolves its file's real path when it is built (an lstat per folder of the path),
and `st.page_link` does the same for a page named by its path: py-spy under `make load` put
11 % of the server's busy samples there, and building them once saved the Overview about
2 ms of its ~30 ms a rerun (docs/benchmarks.md). A session's reruns run one at a time, so its pages are
built on its first run and kept in its state, and a link is given the page itself.
"""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.navigation.page import StreamlitPage

# name -> (file, relative to the entry script; title; icon). The first is the default page.
PAGES = {
    "overview": ("app/app_pages/overview.py", "Overview", ":material/dashboard:"),
    "latency": ("app/app_pages/latency.py", "Latency line", ":material/show_chart:"),
    "roofline": ("app/app_pages/roofline.py", "Roofline & batching", ":material/stacked_line_chart:"),
    "bill": ("app/app_pages/bill.py", "Monthly bill", ":material/payments:"),
    "plan": ("app/app_pages/plan.py", "Capacity plan", ":material/dns:"),
    "compare": ("app/app_pages/compare.py", "Compare", ":material/compare_arrows:"),
    "lesson": ("app/app_pages/lesson.py", "The lesson", ":material/school:"),
}
DEFAULT = next(iter(PAGES))
_KEY = "_site_pages"  # not a widget's key: never in the link


def pages() -> dict[str, StreamlitPage]:
    """This session's pages by name (built on its first run)."""
    built = st.session_state.get(_KEY)
    if built is None:
        built = {
            name: st.Page(path, title=title, icon=icon, default=name == DEFAULT)
            for name, (path, title, icon) in PAGES.items()
        }
        st.session_state[_KEY] = built
    return built


def link(name: str, label: str, where: Any = st) -> None:
    """A link to one of the pages, in `where` (a column, say), with the page's icon."""
    where.page_link(pages()[name], label=label)
