"""The shared sidebar, money first: the page's own inputs, traffic and prices, then self-hosting.

A product manager finds what they know at the top (replies a day, reply and prompt length,
an API or its prices); the hardware lives below, in a section labelled for engineers. Every
widget is drawn from its field's description (`app.inputs`); the state behind them (the
callbacks, building the Scenario) is `app.scenario_widgets`. On a bad combination the
sidebar warns and keeps the last valid scenario; what a valid scenario cannot do (fit, split,
its context window) is said over the page's numbers.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import streamlit as st

from app import compare_inputs, inputs, link, state
from app import scenario_widgets as widgets
from app import sidebar_text as words
from app.compute import cached_estimate
from app.page_inputs import HEADINGS, PAGE_INPUTS
from app.safe import plain
from core import presets
from core.api_prices import ids, snapshot
from core.checks import (
    attention_problems,
    backend_problems,
    context_problems,
    engine_memory_problems,
    hardware_problems,
    memory_shortfall,
    tensor_parallel_problems,
)
from core.fields import Input
from core.flat import EFFICIENCY_BASES
from core.scenario import Scenario
from core.specs import CUSTOM_ID

PRICING, WORKLOAD, PRECISION = widgets.PRICING, widgets.WORKLOAD, widgets.PRECISION
SCENARIO_FREE_PAGES = ("lesson",)  # pages that never read the sidebar's scenario
# Pages that size fleets of their own (every priced GPU, each option's): the sidebar's GPUs,
# their count and batch are not what they run, so what those cannot do is not said over them.
OWN_FLEET_PAGES = ("plan", "compare")


def _page_inputs(page: str) -> None:
    """The current page's own inputs under its heading; every other page's that holds a value, out of sight."""
    own = PAGE_INPUTS.get(page, ())
    if own:
        st.subheader(HEADINGS[page])
        if page == "compare":
            compare_inputs.draw()  # shaped by the options chosen
        else:
            for described_input in own:
                inputs.draw(described_input)
    others = widgets.holding((i, i.default) for name, group in PAGE_INPUTS.items() if name != page for i in group)
    if others:  # nothing held: no hidden box at all (two fewer elements on most reruns)
        inputs.offscreen(others)


def _lazy(label: str, icon: str, key: str, defaults: list[tuple[Input, Any]]) -> Any:
    """An expander whose inputs are drawn only while it is open or one of them holds a value; None if not.

    Each widget costs every rerun (Streamlit checks it against the whole session state), and
    these are rarely edited: closed and at their defaults, they are not drawn at all."""
    box = st.expander(label, icon=icon, key=key, on_change="rerun")
    return box if box.open or widgets.held(defaults) else None


@cache
def _api_options() -> tuple[str, ...]:
    return (widgets.NO_API, *ids())


def _api_select() -> None:
    """Every API model with token prices, searchable; the options are ids (a bound select puts them in the link)."""
    source = snapshot()
    st.selectbox(
        "API model (its list prices)",
        _api_options(),
        key="api",
        on_change=widgets.on_api,
        bind="query-params",
        help=f"Every provider/model with token prices in the bundled catalogue ({source.package} "
        f"{source.version}, prices as of {source.as_of}): type to search. Its prices fill the boxes below and "
        "bill the provider's way (long-prompt tiers); a price you type overrides it.",
    )


def _money() -> None:
    st.subheader("Traffic and prices")
    replies = inputs.number(PRICING["replies_per_day"])
    days = inputs.number(PRICING["days_per_month"])
    note = words.traffic_note(replies, days)
    if note:
        st.caption(note)
    inputs.number(WORKLOAD["output_tokens"])
    inputs.number(WORKLOAD["prompt_tokens"])
    _api_select()
    start = widgets.pricing_start()
    for name, described_input in widgets.PRICES.items():
        inputs.number(described_input, getattr(start, name))
    caching = [(WORKLOAD[name], 0) for name in ("cached_prompt_tokens", "cache_write_tokens")]
    box = _lazy("Prompt caching", ":material/cached:", "sb_caching_open", caching)
    if box is not None:
        with box:
            for described_input, _ in caching:
                inputs.number(described_input)


def _select(kind: str) -> str:
    """A preset by its id (a bound select puts the option's text in the link); the full name in a caption."""
    known = presets.model_presets() if kind == "model" else presets.gpu_presets()
    # Before the widget's first run its value is only in the link (bind seeds it below).
    given = st.session_state.get(kind) or st.query_params.get(kind)
    chosen = given if isinstance(given, str) and (given in known or given == CUSTOM_ID) else next(iter(known))
    value = str(
        st.selectbox(
            "Model" if kind == "model" else "GPU",
            [*known, CUSTOM_ID],
            key=kind,
            help=f"{'Whose weights are read on every step' if kind == 'model' else 'The accelerator'}.\n\n"
            + words.provenance(kind, chosen),
            on_change=widgets.on_model if kind == "model" else widgets.on_gpu,
            bind="query-params",
        )
    )
    st.caption(plain(words.preset_label(kind, value)))
    return value


def _numbers(fields: dict, base: object) -> None:
    """A base's editable numbers: each widget's default is the base's value, so only edits reach the link."""
    for name, described_input in fields.items():
        if described_input.kind is str:
            inputs.text(described_input, getattr(base, name))
        elif described_input.kind is bool:
            inputs.toggle(described_input, value=bool(getattr(base, name)))
        else:
            inputs.number(described_input, getattr(base, name))


def _self_hosting() -> None:
    st.subheader("Self-hosting (for engineers)")
    st.caption(
        "The model and the GPUs it would run on: latency and throughput here; what renting a fleet costs on the "
        "Capacity plan and the Monthly bill."
    )
    model_id, gpu_id = _select("model"), _select("gpu")
    inputs.number(WORKLOAD["gpu_count"])
    inputs.number(WORKLOAD["batch_size"])
    st.radio(
        "Engine",
        EFFICIENCY_BASES,
        key="engine",
        captions=[words.engine_caption(base) for base in EFFICIENCY_BASES],
        help="Ideal reaches the datasheet peaks exactly (the lesson). An engine's costs are fitted on "
        "published measurements of real servers.",
        on_change=widgets.on_engine,
        bind="query-params",
    )
    release = presets.release_precision(model_id)  # DeepSeek-V3 starts at its FP8, gpt-oss's experts at MXFP4
    released = release.weight_bits
    bits = inputs.number(PRECISION["weight_bits"], released)
    if bits is not None:
        shipped = bits == released
        experts_apart = shipped and release.expert_weight_bits is not None
        st.caption(words.bits_note(bits, presets.release_format(model_id) if shipped else None, experts_apart))
    model, gpu = presets.model_base(model_id), presets.gpu_base(gpu_id)
    experts = (PRECISION["expert_weight_bits"], release.expert_weight_bits)
    if model.is_moe or widgets.held([experts]):  # a dense model has none to set
        inputs.number(*experts)
    inputs.number(PRECISION["kv_bits"])
    inputs.choice(PRECISION["compute_bits"], auto="auto: 8 for 8-bit weights, else 16")
    numbers = widgets.of(widgets.MODEL_INPUTS, model) + widgets.of(widgets.GPU_INPUTS, gpu)
    box = _lazy("Edit the model's and GPU's numbers", ":material/tune:", "sb_numbers_open", numbers)
    if box is not None:
        box.caption("Edited numbers travel in the link beside the preset. Empty shape fields: no KV cache.")
        with box:
            st.markdown("**Model**")
            _numbers(widgets.MODEL_INPUTS, model)
            st.markdown("**GPU**")
            _numbers(widgets.GPU_INPUTS, gpu)
    engine = widgets.efficiency_start()
    box = _lazy(
        "Efficiency numbers", ":material/speed:", "sb_efficiency_open", widgets.of(widgets.EFFICIENCY_INPUTS, engine)
    )
    if box is not None:
        with box:
            _numbers(widgets.EFFICIENCY_INPUTS, engine)


def _shows_scenario(page: str) -> bool:
    """Whether to draw the scenario's inputs: always, but on a page that does not read them (the lesson).

    There they are drawn only once asked for or holding a value of their own (a shared link,
    a loaded file): a workshop's room doing the lesson sees its predictions alone, and each
    rerun skips some twenty widgets it would not use.
    """
    if page not in SCENARIO_FREE_PAGES:
        return True
    if widgets.scenario_held():  # a link's scenario: shown, and said not to change this page
        st.caption(words.SCENARIO_NOT_HERE)
        return True
    shown = st.toggle(
        "Show the scenario the other pages use",
        key="sb_show_scenario",
        help="Traffic, prices, model and GPU. This page always runs the lesson's toy machine.",
    )
    if not shown:
        st.caption(words.SCENARIO_HIDDEN)
    return shown


def _on_upload() -> None:
    uploaded = st.session_state.get("sb_upload")
    if uploaded is None:
        return
    _, scenario, warnings = link.parse_json(uploaded.getvalue())
    if scenario is None:
        link.note(state.current_scenario(), warnings)
        return
    widgets.seed(scenario)
    link.note(scenario, warnings)
    st.toast("Scenario loaded from the file.", icon=":material/upload_file:")


def _share(scenario: Scenario, page_path: str) -> None:
    share = st.sidebar.expander(
        "Share or save this scenario", icon=":material/share:", key="sb_share_open", on_change="rerun"
    )
    if not share.open:  # lazy: nothing in it is bound, so it need not run while closed
        return
    with share:
        link.share_box(scenario, page_path)
        st.file_uploader(
            "Load a scenario (JSON)",
            type=["json"],
            key="sb_upload",
            on_change=_on_upload,
            help="A file saved with 'Download scenario (JSON)'. Unknown or bad values are ignored.",
        )


def render(page: str, page_path: str) -> Scenario:
    """Draw the sidebar, store and return this run's Scenario (the last valid one on bad input).

    Above the page it warns of what the link did not set and what the scenario cannot do.

    `page` ("latency") picks the page inputs shown; `page_path` ("/latency") is for the share box's link.
    """
    with st.sidebar:
        _page_inputs(page)
        alerts = st.container()
        shown = _shows_scenario(page)
        if shown:
            _money()
            _self_hosting()
    built, problem = widgets.build()
    if built is None:
        alerts.warning(f"{plain(problem, 300)}. Showing the last valid scenario.", icon=":material/warning:")
        scenario = state.current_scenario()
    else:
        scenario = built
    for text in widgets.typed_name_problems():
        alerts.warning(text)
    state.store_scenario(scenario)
    link.show_warnings(scenario)  # over the page: what the link or file said that was not taken
    # Over the numbers they qualify, not in the sidebar: a phone collapses the sidebar, and a
    # shared link opened there would show figures for a setup that cannot run without a word.
    # What a page does not run stays beside the inputs it is about (the lesson runs none of them).
    if page in SCENARIO_FREE_PAGES:
        if shown:
            _machine_warnings(alerts, scenario)
            _window_warnings(alerts, scenario)
    elif page in OWN_FLEET_PAGES:
        _machine_warnings(alerts, scenario)
        _window_warnings(st, scenario)  # its lengths are theirs too
    else:
        _machine_warnings(st, scenario)
        _window_warnings(st, scenario)
    _share(scenario, page_path)
    return scenario


def _machine_warnings(where: Any, scenario: Scenario) -> None:
    """What the sidebar's GPUs cannot do with this model: it does not fit, does not split, runs another backend."""
    plan = cached_estimate(scenario).memory
    memory = words.memory_warning(scenario, plan)
    if memory:
        where.warning(memory, icon=":material/memory:")
        bits = words.narrower_bits_that_fit(scenario) if memory_shortfall(plan) == "weights" else None
        if bits is not None:  # the fix the warning names, one click away (DeepSeek-V3 on 8 × H200: 8 bits)
            where.button(f"Use {bits:g}-bit weights", key="use_fitting_bits", on_click=_use_weight_bits, args=(bits,),
                         icon=":material/compress:")  # fmt: skip
    for problem_text in engine_memory_problems(scenario, plan):
        where.warning(words.sentence(problem_text), icon=":material/memory:")
    for problem_text in (*attention_problems(scenario), *tensor_parallel_problems(scenario)):
        where.warning(words.sentence(problem_text), icon=":material/view_column:")
    for problem_text in hardware_problems(scenario):
        where.warning(words.sentence(problem_text), icon=":material/memory_alt:")
    for problem_text in backend_problems(scenario):
        where.info(words.sentence(problem_text), icon=":material/memory_alt:")


def _use_weight_bits(bits: float) -> None:
    """The memory warning's button: the sidebar's weight bits set to the width that fits (the link follows)."""
    st.session_state[PRECISION["weight_bits"].key] = bits


def _window_warnings(where: Any, scenario: Scenario) -> None:
    """A prompt and reply longer than the model's documented context window."""
    for problem_text in context_problems(scenario):
        where.warning(words.sentence(problem_text), icon=":material/straighten:")
