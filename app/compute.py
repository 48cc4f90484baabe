"""The app's cached calls into `core`: keyed on the frozen Scenario (or plain values), never on widgets.

Streamlit hashes the arguments; a Scenario is a frozen dataclass, so equal scenarios
share one cache entry across reruns and sessions. A result that is frozen (a Scenario, an
Estimate, a number) sits in a resource cache: every hit returns the one shared object,
where a data cache would pickle it on the way in and unpickle it on every hit (140 µs
for an Estimate that takes 33 µs to compute). Results that hold arrays stay in data
caches, so no session can change another's. Pages call these for anything a rerun would
otherwise recompute; cheap reads of a result (a property, a formula on two numbers) go to
core directly. Every cache is bounded: a workshop of a hundred people must not grow memory.

A cache miss shows a spinner only where the wait can be seen (the deployment search's two
stages, Compare's options): Streamlit's spinner starts a timer thread and sends two messages on
every miss, whether or not it ever appears, and most misses here take milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app import bill_charts, compare_charts, plan_charts
from app.measurements import Measurements, read_measurements
from core.batching import BatchSweep
from core.compare import Compared, bill, compare
from core.crossings import Cheapest, cheapest_ranges
from core.estimate import Estimate, estimate
from core.lengths import RequestLengths
from core.lesson import Drills, LabRun, drills, lab_run, simulate_measurements
from core.phases import decode_step, decode_time_s
from core.plan import CapacityPlan, plan
from core.plan_capability import FLEET_FIELDS, TARGET_FIELDS, Capabilities, capabilities, without
from core.plan_search import Search, search, traffic_free
from core.plan_spec import Plan
from core.scenario import Scenario


def _hash_scenario(scenario: Scenario) -> str:
    return repr(scenario)


def _hash_plan(result: CapacityPlan) -> str:
    return f"{result.scenario!r}|{result.spec!r}|{result.lengths!r}"


_PLAIN = (int, float, str, bool, type(None), np.generic)


def _hash_tuple(values: tuple[Any, ...]) -> Any:
    """A tuple of plain numbers or strings as its repr (exact); any other as a list, walked as before.

    Streamlit's hasher takes each item in turn, about 8 µs apiece: the latency line's 300
    output lengths cost 2.5 ms a call, paid twice a rerun, where their repr takes 20 µs. The
    list is walked item by item, each item through these functions again (a nested tuple too).
    """
    if all(isinstance(v, _PLAIN) for v in values):
        return repr(values)
    return list(values)


# An Estimate is a function of its scenario: hash that, not the arrays it holds.
_HASH: dict[str | type[Any], Callable[[Any], Any]] = {
    tuple: _hash_tuple,
    Scenario: _hash_scenario,
    Estimate: lambda est: _hash_scenario(est.scenario),
    CapacityPlan: lambda result: _hash_plan(result),
    # A compared option is a function of the comparison's inputs; its plan (if any) hashed as above.
    Compared: lambda c: f"{c.option}|{c.label}|{c.monthly_usd}|{c.note}|{c.plan and _hash_plan(c.plan)}",
    FunctionType: lambda build: f"{build.__module__}.{build.__qualname__}",  # shared_figure's builder
}


@st.cache_resource(max_entries=256, hash_funcs=_HASH, show_spinner=False)
def shared_figure(build: Callable[..., go.Figure], *args: Any, **kwargs: Any) -> go.Figure:
    """A figure built once per distinct input and shared by every session.

    Building one validates every property (~10 ms for the batch sweep); st.plotly_chart
    only reads the figure (`to_dict`), so one object serves everyone. A resource cache, not
    a data one: a data cache would pickle the figure and rebuild it on every hit.
    """
    return build(*args, **kwargs)


# The sidebar's flat form (pairs of strings), hashed as one string: Streamlit's own hasher walks
# it item by item (about 0.2 ms for the sidebar's sixteen pairs; its repr, 4 µs).
@st.cache_resource(max_entries=512, hash_funcs={tuple: repr}, show_spinner=False)
def cached_scenario(flat: tuple[tuple[str, str], ...]) -> Scenario:
    """The sidebar's values (as the flat form) → a Scenario; raises ValueError naming the key."""
    return Scenario.from_flat(dict(flat))


@st.cache_resource(max_entries=512, hash_funcs=_HASH, show_spinner=False)
def cached_estimate(scenario: Scenario) -> Estimate:
    return estimate(scenario)


@st.cache_data(max_entries=256, hash_funcs=_HASH, show_spinner=False)
def cached_batch_sweep(scenario: Scenario, batch_sizes: tuple[int, ...]) -> BatchSweep:
    """This reply's decode step (the mean over its steps) at each batch size, against the group's memory."""
    return cached_estimate(scenario).batch_sweep(np.asarray(batch_sizes, dtype=float))


@st.cache_resource(max_entries=256, hash_funcs=_HASH, show_spinner=False)
def cached_critical_batch(scenario: Scenario) -> int | None:
    return cached_estimate(scenario).critical_batch


@st.cache_resource(max_entries=256, hash_funcs=_HASH, show_spinner=False)
def cached_host_bound_batch(scenario: Scenario) -> int | None:
    return cached_estimate(scenario).host_bound_batch


@st.cache_data(max_entries=256, hash_funcs=_HASH, show_spinner=False)
def cached_latency_line(scenario: Scenario, output_tokens: tuple[int, ...]) -> np.ndarray:
    """Total latency (s) at each output length: TTFT + Σ decode steps, vectorised over lengths."""
    est = cached_estimate(scenario)
    workload = scenario.workload
    decode = decode_time_s(
        scenario.model,
        scenario.precision,
        est.machine,
        workload.prompt_tokens,
        np.asarray(output_tokens, dtype=float),
        workload.batch_size,
    )
    return est.ttft_s + np.asarray(decode, dtype=float)


@st.cache_data(max_entries=32, show_spinner=False)
def cached_measurements(source: bytes | str | None, uploaded: bool) -> tuple[Measurements | None, str | None]:
    """A user's CSV parsed once, not on every rerun (10,000 rows take a while); the last 32 kept."""
    return read_measurements(source, uploaded)


@st.cache_resource(max_entries=256, hash_funcs=_HASH, show_spinner=False)
def cached_step_times(scenario: Scenario) -> tuple[float, float]:
    """The first and the last decode step of the reply (s): how far the steps slow as the KV cache grows."""
    w = scenario.workload
    first, last = (
        decode_step(scenario.model, scenario.precision, scenario.machine, w.batch_size, context).time_s
        for context in (w.prompt_tokens, w.prompt_tokens + w.output_tokens - 1)
    )
    return first, last


@st.cache_data(max_entries=256, hash_funcs=_HASH, show_spinner=False)
def cached_simulation(ttft_s: float, tpot_s: float, output_tokens: tuple[int, ...], seed: int) -> tuple[float, ...]:
    """The lesson's jittered measurements (s) at each output length: one Python step per decode step.

    At the sidebar's largest inputs that is 63,040 steps (about 11 ms on the 2-core test
    machine, a quarter of the page's rerun budget), so a rerun that leaves TTFT, TPOT, the
    lengths and the seed alone does not pay for it again.
    """
    return tuple(simulate_measurements(ttft_s, tpot_s, output_tokens, seed))


@st.cache_resource(max_entries=8, hash_funcs=_HASH, show_spinner="Working out what each GPU can do…")
def cached_capabilities(scenario: Scenario, spec: Plan, lengths: RequestLengths) -> Capabilities:
    """The search's first stage (what each candidate can do), for inputs without targets or traffic.

    Keyed on the inputs with what it does not read at its defaults (`plan_capability.without`),
    so every target, number of replies a day, peak ratio, floor and discount shares one entry.
    A resource cache: it keeps each candidate's open loop once a search has built it (~1.4 MB
    for every priced GPU together), which a data cache would pickle and lose.
    """
    return capabilities(scenario, spec, lengths, frontiers=False)  # the page draws a few: plan_charts computes those


@st.cache_resource(max_entries=16, hash_funcs=_HASH, show_spinner="Sizing every candidate against the targets…")
def cached_search(scenario: Scenario, spec: Plan, lengths: RequestLengths) -> Search:
    """The search's second stage (each candidate's goodput at the targets), for inputs without traffic."""
    capable = cached_capabilities(*without(scenario, spec, FLEET_FIELDS + TARGET_FIELDS), lengths)
    return search(scenario, spec, lengths, capable=capable)


@st.cache_resource(max_entries=32, hash_funcs=_HASH, show_spinner=False)
def cached_plan(scenario: Scenario, spec: Plan, lengths: RequestLengths) -> CapacityPlan:
    """The plan for this traffic: the cached search, sized and billed (one stacked open-loop pass for the candidates).

    A resource cache: the result is frozen, so one copy serves everyone.
    """
    return plan(scenario, spec, lengths, searched=cached_search(*traffic_free(scenario, spec), lengths))


@st.cache_resource(max_entries=32, hash_funcs=_HASH, show_spinner=False)
def cached_frontier_figures(result: CapacityPlan) -> tuple[go.Figure, go.Figure]:
    """The plan's two frontier charts (tokens, dollars), their few candidates' closed loops computed once."""
    shown = plan_charts.shown_options(result)
    return plan_charts.frontier(result, shown=shown), plan_charts.frontier(result, dollars=True, shown=shown)


@st.cache_resource(max_entries=32, hash_funcs=_HASH, show_spinner="Pricing the options…")
def cached_compare(
    options: tuple[str, ...], scenario: Scenario, spec: Plan, pinned: Scenario | None, engine_id: str
) -> list[Compared]:
    """Each option's bill and speed (a self-hosted one runs a plan on its GPU, on `engine_id`): frozen results, shared."""
    return compare(options, scenario, spec, pinned, engine_id)


@st.cache_data(max_entries=64, hash_funcs=_HASH, show_spinner=False)
def cached_cheapest(est: Estimate, result: CapacityPlan) -> list[Cheapest]:
    """Where the API or the plan's fleet is cheaper, over the bill chart's traffic (the fleet priced ~300 times)."""
    return bill_charts.cheapest(est, result)


@st.cache_data(max_entries=64, hash_funcs=_HASH, show_spinner=False)
def cached_changes(results: list[Compared], replies_per_day: float, days_per_month: float) -> list[Cheapest]:
    """Where the cheapest of the compared options changes, over the Compare chart's traffic."""
    axis = compare_charts.traffic_axis(replies_per_day)
    bills = {c.option: bill(c, days_per_month) for c in results}
    return cheapest_ranges(bills, float(axis[0]), float(axis[-1]))


@st.cache_data(max_entries=256, hash_funcs=_HASH, show_spinner=False)
def cached_lab_run(guesses: tuple[float, ...]) -> LabRun:
    return lab_run(guesses)


@st.cache_data(max_entries=1, show_spinner=False)
def cached_drills() -> Drills:
    return drills()
