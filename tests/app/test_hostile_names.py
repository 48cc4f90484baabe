"""Names and link values never render as markup, on any page (issue 11: a model name in a shared link
rendered a clickable external link in the Overview caption)."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

PAGES = ["overview", "latency", "roofline", "bill", "plan", "compare", "lesson"]
# Markdown would turn these into a link, an autolink, a heading, a list, emphasis or a colour.
HOSTILE_NAME = "www.evil-example.com/login [x](http://evil.example) # 1. *a* :red[b]"


def rendered_text(at: AppTest) -> list[str]:
    """Every markdown-rendering element's source text on the page and in the sidebar."""
    kinds = ("markdown", "caption", "warning", "info", "success", "error", "title", "header", "subheader")
    texts = [e.value for kind in kinds for e in getattr(at, kind)]
    texts += [m.label for m in at.metric] + [str(m.value) for m in at.metric]
    return texts


@pytest.mark.parametrize("page", PAGES)
def test_a_hostile_name_in_a_link_never_renders_as_markup(open_app, page: str) -> None:
    at = open_app(page, model="llama-3.1-8b", mname=HOSTILE_NAME, gpu="h100-sxm", gname=HOSTILE_NAME)
    # The name keeps only plain characters: no brackets, no '*', no ':' survive the cleaning...
    name = at.session_state["app_scenario"].model.name
    assert set(name) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .-+/()#,")
    for text in rendered_text(at):
        # ...and wherever the name is shown its dots and slashes are escaped, so no autolink forms.
        assert "www.evil-example.com" not in text, text
        assert not re.search(r"\]\(http", text), text
        assert not re.search(r"(^|\n)#+ ", text.replace("\\#", "")), text


def test_a_free_api_shows_no_infinity_anywhere(open_app) -> None:
    for page in PAGES:
        at = open_app(page, pin="0", pcache="0", pout="0", gpu="h100-sxm", model="llama-3.1-8b")
        assert not at.exception
        assert not [t for t in rendered_text(at) if "inf" in t.lower().split()], page
        assert not [t for t in rendered_text(at) if re.search(r"\binf\b|\bnan\b", t)], page


def test_a_hostile_name_in_a_compared_or_pinned_scenario_never_renders_as_markup(open_app) -> None:
    from urllib.parse import urlencode

    pinned = urlencode({"model": "custom", "mname": HOSTILE_NAME})
    at = open_app(
        "compare", model="llama-3.1-8b", mname=HOSTILE_NAME, cmp="this scenario,pinned scenario", pinned=pinned
    )
    assert list(at.main.dataframe[0].value.index) == ["this scenario", "pinned scenario"]
    for text in rendered_text(at):
        assert "www.evil-example.com" not in text and not re.search(r"\]\(http", text), text


@pytest.mark.parametrize(
    ("typed", "source"),
    [
        # GFM's literal autolinks survive backslash escapes (the browser test sees the links): each trigger
        # gets a zero-width space (U+200B), after which no www., scheme:// or address@domain remains.
        ("www.evil-example.com/login", "www\u200b\\.evil\\-example\\.com\\/login"),
        ("http://evil.example", "http\\:\u200b\\/\\/evil\\.example"),
        ("mail@evil.example", "mail\\@\u200bevil\\.example"),
        # Nothing else changes: a ratio's colon and a number's dot stay as they were, escaped.
        ("ratio 1.5:1 at 10:30", "ratio 1\\.5\\:1 at 10\\:30"),
    ],
)
def test_plain_breaks_every_autolink_trigger_and_nothing_else(typed: str, source: str) -> None:
    from app.safe import plain

    assert plain(typed) == source
