"""Entry point and router: `streamlit run app/streamlit_app.py` from the repo root.

Only the frame lives here: page config, the shared sidebar (which builds the one
Scenario every page reads), the URL kept in step with it, and the page list.
"""

import query
import sidebar
import streamlit as st

st.set_page_config(page_title="LLM serving cost", page_icon=":material/speed:", layout="wide")

PAGES = [
    st.Page("app_pages/overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page("app_pages/latency.py", title="Latency line", icon=":material/show_chart:"),
    st.Page("app_pages/roofline.py", title="Roofline & batching", icon=":material/stacked_line_chart:"),
    st.Page("app_pages/bill.py", title="Monthly bill", icon=":material/payments:"),
    st.Page("app_pages/lesson.py", title="The lesson", icon=":material/school:"),
]

page = st.navigation(PAGES)
scenario = sidebar.render()
query.publish(scenario)
query.show_load_warnings(scenario)
page.run()
