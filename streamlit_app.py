"""Entry point and router: `streamlit run streamlit_app.py` from the repo root.

Only the frame lives here: the pages (`app.site_pages`) and each one's tab title, the link read once
per session, the shared sidebar (the page's own inputs, and the one Scenario every page
reads, its warnings drawn over the page), then the page itself. Run from the repo root,
`core` and `app` import as packages with no path set-up and no install.
"""

import streamlit as st

from app import link, sidebar, site_pages

PAGES = site_pages.pages()

page = st.navigation(list(PAGES.values()))
st.set_page_config(page_title=f"{page.title} · LLM serving cost", page_icon=":material/speed:", layout="wide")
current = next(name for name, candidate in PAGES.items() if candidate is page)
link.read_once()
sidebar.render(current, "/" if current == "overview" else f"/{current}")
page.run()
