"""Every page on a phone (390 px wide): no headline clipped, nothing wider than the screen, charts drawn.

Issue 10 found, at 390 × 844: a batch sweep whose x axis ran to ten million, roofline labels
cut off at the right, plotly's toolbar over the legends, and the bill's comparison truncated to
"$0.000850 vs $0.00…". A clipped metric (its text wider than its box) fails here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.test_pages import LOAD_TIMEOUT_MS, expect_charts_drawn, expect_no_exception, open_page

PHONE = {"width": 390, "height": 2400}  # a phone's width; tall, since stMain scrolls by itself
PAGES = [  # (path, plotly charts on the page, screenshot name)
    ("/", 0, "phone-overview.png"),
    ("/?model=llama-3.1-8b&gpu=h100-sxm&engine=vllm", 0, "phone-overview-vllm.png"),  # likely ranges under numbers
    ("/latency?model=llama-3.1-8b&gpu=l4", 2, "phone-latency.png"),
    ("/roofline?model=llama-3.1-8b&gpu=h100-sxm", 2, "phone-roofline.png"),
    ("/bill?api=openai/gpt-4.1-mini", 2, "phone-bill.png"),
    ("/plan?model=llama-3.1-8b&replies=1000000", 2, "phone-plan.png"),
    ("/compare?replies=1000000&prompt=1000&out=300", 2, "phone-compare.png"),
    ("/lesson?reveal=true", 0, "phone-lesson.png"),
]
CLIPPED = """() => [...document.querySelectorAll('[data-testid=stMetricValue]')]
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"""


@pytest.fixture
def phone(browser: Browser, base_url: str) -> Callable[[], Page]:
    contexts = []

    def open_phone() -> Page:
        context = browser.new_context(viewport=PHONE, base_url=base_url, is_mobile=True, has_touch=True)
        contexts.append(context)
        return context.new_page()

    yield open_phone
    for context in contexts:
        context.close()


@pytest.mark.parametrize(("path", "charts", "shot"), PAGES, ids=[p[2].removesuffix(".png") for p in PAGES])
def test_a_page_fits_a_phone(phone: Callable[[], Page], path: str, charts: int, shot: str, tmp_path: Path) -> None:
    page = phone()
    open_page(page, path)
    expect_charts_drawn(page, charts)
    expect_no_exception(page)
    # Streamlit draws lazily loaded elements (a code block, a table) as grey skeletons first.
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(300)  # the last paint of plotly and the grid
    assert page.evaluate(CLIPPED) == [], "a headline metric is clipped on a phone"
    # Nothing wider than the screen: the page itself never scrolls sideways.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # Plotly's toolbar is off (on a phone it sits over the legend).
    expect(page.locator(".modebar-container .modebar-group")).to_have_count(0, timeout=LOAD_TIMEOUT_MS)
    folder = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / shot))


def test_a_setup_that_cannot_run_is_warned_where_a_phone_shows_it(phone: Callable[[], Page]) -> None:
    # A phone collapses the sidebar: a shared link to Llama 3.1 405B on 3 H100s used to show its
    # latency figures with both warnings out of sight. 811.7 GB of weights over 240 GB; 128 query
    # heads over 3 GPUs (core's tests derive both).
    page = phone()
    open_page(page, "/latency?model=llama-3.1-405b&gpu=h100-sxm&gpus=3")
    expect(page.get_by_test_id("stSidebar")).to_have_attribute("data-collapsed", "true")
    warnings = page.get_by_test_id("stMain").get_by_test_id("stAlertContentWarning")
    expect(warnings).to_have_count(2)
    expect(warnings.nth(0)).to_contain_text("the weights alone do not fit")
    expect(warnings.nth(1)).to_contain_text("do not split evenly over 3 GPUs")
    for i in range(2):
        expect(warnings.nth(i)).to_be_in_viewport()
