"""What the load test does on each page, and what it expects to read back: one row per page.

Each row names a number input (by its label: the load test finds it in the page's
`new_element` messages), the URL key that input sets, a metric (by its label) whose text
is checked after every run, and how to compute that text from a Scenario with `core` and
the app's own formatting (`app/formatting.py`, pure). When a page is redesigned, update its
row here: if a label is no longer on the page, the load test stops before it starts and
says which label it could not find and which ones it saw.
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from urllib.parse import parse_qsl

from st_protocol import Run

from core import Scenario, estimate

ROOT = Path(__file__).resolve().parents[1]


def _load_formatting() -> ModuleType:
    """app/formatting.py by path: the app's text for numbers, without importing the app (or Streamlit)."""
    spec = importlib.util.spec_from_file_location("_load_app_formatting", ROOT / "app" / "formatting.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fmt = _load_formatting()

# A model with a KV cache, so that the reply length moves every headline below (the lesson's
# toy model has none: its batch ceiling and per-token time do not depend on the reply).
LLAMA_70B = "model=llama-3.1-70b&gpu=h100-sxm&gpus=2&wbits=8"
PLAN_LINK = f"{LLAMA_70B}&replies=2000000&prompt=1000"  # the Capacity plan tests' scenario (500 out: the default)


@dataclass(frozen=True)
class PagePlan:
    title: str  # as in the navigation, for messages
    url_path: str  # st.Page's url path; "" is the default page
    query: str  # the link every session opens (a scenario)
    input_label: str  # a number input changed on every rerun
    input_key: str  # the URL key that input sets (a Scenario.to_flat key, or a page input's: scenario_input)
    values: tuple[int, int]  # new values are drawn from this range (inclusive)
    headline_label: str  # a metric checked after every run
    headline: Callable[[Scenario], str]  # that metric's text for a scenario
    scenario_input: bool = True  # the input is a scenario field (False: a page input the headline ignores)


def _largest_batch(scenario: Scenario) -> str:
    ceiling = estimate(scenario).memory.max_batch_that_fits
    return "any" if ceiling is None else fmt.count(ceiling)


PAGES: dict[str, PagePlan] = {
    "overview": PagePlan(
        "Overview", "", "", "Output tokens", "out", (50, 2000),
        "Total latency", lambda s: fmt.duration(estimate(s).total_s),
    ),
    "latency": PagePlan(
        "Latency line", "latency", LLAMA_70B, "Output tokens", "out", (50, 4000),
        "TPOT, model", lambda s: fmt.ms(estimate(s).tpot_s),
    ),
    "roofline": PagePlan(
        "Roofline & batching", "roofline", LLAMA_70B, "Output tokens", "out", (50, 4000),
        "Largest batch that fits", _largest_batch,
    ),
    "bill": PagePlan(
        "Monthly bill", "bill", LLAMA_70B, "Output tokens", "out", (50, 4000),
        "Monthly bill", lambda s: fmt.usd(estimate(s).monthly_cost_usd),
    ),
    # The Capacity plan, three ways: a new number of replies a day re-prices the cached search, a new
    # tokens/s target searches the rates again, a new reply length runs every stage anew. Its "The API"
    # metric is estimate's bill (fixed lengths, the same replies): checkable without running a plan.
    "plan": PagePlan(
        "Capacity plan", "plan", PLAN_LINK, "Replies per day", "replies", (100_000, 5_000_000),
        "The API", lambda s: fmt.usd(estimate(s).monthly_cost_usd),
    ),
    "plan-target": PagePlan(
        "Capacity plan", "plan", PLAN_LINK, "Tokens/s per user", "tps", (10, 60),
        "The API", lambda s: fmt.usd(estimate(s).monthly_cost_usd), scenario_input=False,
    ),
    "plan-scenario": PagePlan(
        "Capacity plan", "plan", PLAN_LINK, "Output tokens", "out", (50, 4000),
        "The API", lambda s: fmt.usd(estimate(s).monthly_cost_usd),
    ),
}  # fmt: skip


def floor_pages() -> dict[str, str]:
    """The floor app's pages (benchmarks/floor_app.py): url path → the first row drawing it with a scenario input.

    Several rows may load one page (the Capacity plan, three ways); the floor draws each page once.
    """
    pages: dict[str, str] = {}
    for name, plan in PAGES.items():
        if plan.scenario_input:
            pages.setdefault(plan.url_path or name, name)
    return pages


def scenario_of(query: str) -> Scenario:
    """The scenario a link opens, read by core (missing keys take the lesson's defaults)."""
    return Scenario.from_flat(dict(parse_qsl(query, keep_blank_values=True)))


def with_value(scenario: Scenario, key: str, value: float) -> Scenario:
    """The scenario after one URL key changed: through the URL form, which round-trips exactly."""
    flat = scenario.to_flat()
    if key not in flat:
        raise KeyError(f"{key!r} is not a URL key of this scenario (keys: {', '.join(flat)})")
    text = str(int(value)) if float(value).is_integer() else repr(float(value))
    return Scenario.from_flat({**flat, key: text})


def expected_headline(plan: PagePlan, scenario: Scenario, value: float | None = None) -> str:
    """The headline's text for the page's scenario, after the input took `value` (None: unchanged)."""
    if value is not None and plan.scenario_input:
        scenario = with_value(scenario, plan.input_key, value)
    return plan.headline(scenario)


def headline_problem(plan: PagePlan, run: Run, expected: str) -> str | None:
    """Why a run's headline is not the expected text; None when it is."""
    if run.status != "FINISHED_SUCCESSFULLY":
        return f"the script run ended {run.status}"
    if run.exceptions():
        return f"exception on {plan.title}: {run.exceptions()[0][:200]}"
    values = run.metric_values(plan.headline_label)
    if len(values) != 1:
        seen = sorted({m.label for m in run.of_kind("metric")})
        return f"{len(values)} metrics labelled {plan.headline_label!r} on {plan.title} (metrics on the page: {seen})"
    if values[0] != expected:
        return f"{plan.headline_label} shows {values[0]!r}, core says {expected!r}"
    return None


def new_value(rng: random.Random, plan: PagePlan, current: float | None) -> int:
    """A value from the plan's range, never the current one (a change must change something)."""
    low, high = plan.values
    value = rng.randint(low, high)
    return value if value != current else (value + 1 if value < high else low)
