"""Entry point and router: `streamlit run streamlit_app.py` from the repo root.

Only the frame lives here: the page list and each page's tab title, the link read once
per session, the shared sidebar (the page's own inputs, and the one Scenario every page
reads, its warnings drawn over the page), then the page itself. Run from the repo root,
`core` and `app` import as packages with no path set-up and no install.
"""

import streamlit as st

from app import link, sidebar

PAGES = {
    "overview": st.Page("app/app_pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
    "latency": st.Page("app/app_pages/latency.py", title="Latency line", icon=":material/show_chart:"),
    "roofline": st.Page("app/app_pages/roofline.py", title="Roofline & batching", icon=":material/stacked_line_chart:"),
    "bill": st.Page("app/app_pages/bill.py", title="Monthly bill", icon=":material/payments:"),
    "plan": st.Page("app/app_pages/plan.py", title="Capacity plan", icon=":material/dns:"),
    "compare": st.Page("app/app_pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    "lesson": st.Page("app/app_pages/lesson.py", title="The lesson", icon=":material/school:"),
}

page = st.navigation(list(PAGES.values()))
st.set_page_config(page_title=f"{page.title} · LLM serving cost", page_icon=":material/speed:", layout="wide")
current = next(name for name, candidate in PAGES.items() if candidate is page)
link.read_once()
sidebar.render(current, "/" if current == "overview" else f"/{current}")
page.run()
