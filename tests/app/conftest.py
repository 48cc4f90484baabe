"""Shared set-up for the app's tests.

`streamlit run app/streamlit_app.py` puts app/ on sys.path, so app modules import each
other as top-level modules (`import formatting`); the pure-module tests need the same.
(pyproject's `pythonpath = ["."]` covers `core`, not app/.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app"
if str(APP) not in sys.path:
    sys.path.insert(0, str(APP))

ENTRY = "../../app/streamlit_app.py"  # AppTest resolves it relative to the test file


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    """st.cache_data is shared by every AppTest in the process: start from a cold cache."""
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def _open(page: str | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(ENTRY, default_timeout=30)
    at.query_params.update(query)
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def open_app() -> Callable[..., AppTest]:
    """open_app(page=None, **query) → an AppTest that has run once (on `page` if given)."""
    return _open
