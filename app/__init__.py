"""The dashboard: Streamlit pages and their pure helpers (figures, formatting, link parsing).

Imported as a package from the repo root, where `streamlit run streamlit_app.py` starts it.
"""
