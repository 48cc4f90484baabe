"""The pages' own inputs, described once each: the same `Input` the scenario's fields use.

They travel in the link beside the scenario (`?seed=7`, `?p1=7&reveal=true`). The frame
draws them, in the sidebar under the page's own heading, and the other pages' ones out of
sight, so every bound input is on every run and belongs to the entry script (see
`app.inputs`); pages read their values with `value(key)`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.compare import MAX_OPTIONS, option_ids
from core.field_lists import list_text
from core.fields import Input, flat_text, inputs, si_value
from core.lesson import JITTER, PREDICTION_HIGH, PREDICTION_LOW, SEED
from core.load import Load
from core.plan_spec import Plan

# The Latency line page's simulations: which of the lab's reply lengths it draws.
SIMULATIONS = {"part1": "Part 1's seven replies, scaled to yours", "part3": "Part 3's short and long reply"}
# Shown in the select: the sentences above were cut at the sidebar's width ("…scaled to y").
SIMULATION_LABELS = ("Part 1: seven replies", "Part 3: short and long")

# The lesson's four predictions: (key, label, unit, help); each a positive number, empty until guessed.
PREDICTIONS = (
    ("p1", "P1. TPOT, one decode step (ms)", "ms", "A step reads all 14 GB of weights at 2 TB/s."),
    ("p2", "P2. One output token vs one prompt token (x)", "x", "How many times the wall time of a prompt token?"),
    ("p3", "P3. Arithmetic intensity of a batch-1 decode step (FLOP/byte)", "FLOP/byte", "FLOPs done per byte read."),
    ("p4", "P4. A 500-token reply vs a 50-token reply (x)", "x", "Same 200-token prompt: how many times longer?"),
)


def _prediction(key: str, label: str, unit: str, help_text: str) -> Input:
    return Input(key=key, kind=float, label=label, unit=unit, low=PREDICTION_LOW, high=PREDICTION_HIGH, optional=True,
                 help=help_text)  # fmt: skip


PAGE_INPUTS: dict[str, tuple[Input, ...]] = {
    "latency": (
        Input(
            key="seed",
            kind=int,
            label="Random seed",
            low=0,
            high=2**32 - 1,
            default=SEED,
            help=f"The lesson's lab uses {SEED}. Each decode step is jittered by up to ±{JITTER:.0%}.",
        ),
        Input(
            key="sim",
            kind=str,
            label="Simulated replies",
            choices=tuple(SIMULATIONS),
            choice_labels=SIMULATION_LABELS,
            default="part1",
            help="Part 1's: the lab's Part 1 lengths (1 to 800 tokens for a 500-token reply, scaled to yours). "
            "Part 3's: its two replies (50 and 500 tokens for a 500-token reply, scaled), from a fresh seed. "
            "In a link: sim=part1 or sim=part3.",
        ),
    ),
    "bill": (
        Input(
            key="short",
            kind=int,
            label="Short reply (output tokens)",
            unit="tokens",
            low=1,
            high=1_000_000,
            step=10,
            default=50,
            help="Against the sidebar's reply: same prompt and prices, the model's latency (no jitter).",
        ),
    ),  # fmt: skip
    "lesson": (
        *(_prediction(*row) for row in PREDICTIONS),
        Input(
            key="reveal",
            kind=bool,
            label="Reveal the answers",
            default=False,
            help="Shows the scoreboard and the lab's reference run.",
        ),
    ),  # fmt: skip
}
# The Capacity plan's inputs are core's own descriptions (the CLI's `plan` options), not copies.
PAGE_INPUTS["plan"] = (*(i for _, i in inputs(Plan)), dict(inputs(Load))["length_low_fraction"])
PINNED_KEY = "pinned"
MAX_PINNED_CHARS = 2000  # a scenario's minimal link with every number edited is ~600 characters
# The Compare page: up to four options (core.compare's ids), a pinned scenario (a link's query:
# `app.link` reads it as a link), and a measured latency an API option may be given.
COMPARE_DEFAULT = ("openai/gpt-4.1-mini", "anthropic/claude-haiku-4-5", "llama-3.1-8b on l4")
PAGE_INPUTS["compare"] = (
    Input(key="cmp", kind=tuple, item=str, choices_from=option_ids, label="Options to compare", optional=True,
          default=COMPARE_DEFAULT,
          help="Up to four: an API model (type to search its provider/model id), a model on a GPU (self-hosted: "
          "the capacity plan's cheapest fleet on that GPU), this scenario, or the pinned one."),
    Input(key=PINNED_KEY, kind=str, label="Pinned scenario (a link)", default="", max_chars=MAX_PINNED_CHARS,
          help="A scenario to hold still while you edit the sidebar: 'Pin this scenario' fills it, or paste "
          "another scenario's link. Compare it as 'pinned scenario'."),
    *(Input(key=f"lat{i}", kind=float, label=f"Measured latency, option {i} (ms)", unit="ms", low=0, high=3.6e6,
            optional=True, help="An API's end-to-end latency you measured, for the table: the tool does not "
            "estimate an API's speed.") for i in range(1, MAX_OPTIONS + 1)),
)  # fmt: skip
BY_KEY: dict[str, Input] = {i.key: i for page in PAGE_INPUTS.values() for i in page}
HEADINGS = {
    "latency": "Simulation",
    "bill": "Comparison",
    "lesson": "Your predictions",
    "plan": "Targets and candidates",
    "compare": "Options",
}


def value(key: str) -> Any:
    """A page input's value on this run (its default before the frame has drawn it)."""
    return st.session_state.get(key, BY_KEY[key].default)


def text_of(described: Input, value: Any) -> str:
    """A page input's value (SI, a list as a tuple) as its flat text: `1000` for a 1 s TTFT target, `1,2,4`."""
    if described.is_list:
        return list_text(tuple(value))
    if described.choice_labels:  # the option the bound select shows is what it reads from the link
        return described.label_of(value)
    return value if described.kind is str else flat_text(described, value)


def si_of(described: Input, held: Any) -> Any:
    """A widget's value as the field's own: SI (a 500 ms target → 0.5 s), a choice's text as its kind, a list as a tuple."""
    if held is None:
        return None
    if described.is_list:
        item = described.item or str
        return tuple(item(text) for text in held)
    if described.choices and isinstance(held, str):
        return described.kind(held)
    if described.kind in (int, float):
        return si_value(described, held)
    return held


def flat_of(page: str) -> dict[str, str]:
    """A page's inputs as they stand, in the flat form core reads (`Plan.read_flat`); unset ones left out."""
    return {
        i.key: text_of(i, si_of(i, st.session_state[i.key]))
        for i in PAGE_INPUTS[page]
        if st.session_state.get(i.key) is not None
    }
