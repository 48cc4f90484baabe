"""Shared set-up for the app's tests: a fresh cache, and an AppTest opened on a page with a link."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app import figures

ENTRY = "../../streamlit_app.py"  # AppTest resolves it relative to the test file


@pytest.fixture(autouse=True)
def validated_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every figure a test builds, directly or through a page, is checked property by property (the server skips it)."""
    monkeypatch.setattr(figures, "VALIDATE", True)


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
        at.switch_page(page_path(page)).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def page_path(page: str) -> str:
    """'latency' → the page file as AppTest wants it, relative to the entry file."""
    return page if page.endswith(".py") else f"app/app_pages/{page}.py"


@pytest.fixture(scope="session")  # session: module-scoped page fixtures use it too
def open_app() -> Callable[..., AppTest]:
    """open_app(page=None, **query) → an AppTest that has run once (on `page` if given)."""
    return _open
