"""The pages' own inputs, described once each: the same `Input` the scenario's fields use.

They travel in the link beside the scenario (`?seed=7`, `?p1=7&reveal=true`). The frame
draws them, in the sidebar under the page's own heading, and the other pages' ones out of
sight, so every bound input is on every run and belongs to the entry script (see
`app.inputs`); pages read their values with `value(key)`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.fields import Input
from core.lesson import JITTER, SEED

# The Latency line page's simulations: which of the lab's reply lengths it draws.
SIMULATIONS = {"part1": "Part 1's seven replies (1 to 800 tokens)", "part3": "Part 3's short and long reply"}

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
            default="part1",
            help="part1: the lab's Part 1 lengths (1 to 800 tokens for a 500-token reply, scaled to yours). "
            "part3: Part 3's two replies (50 and 500 tokens for a 500-token reply, scaled), from a fresh seed.",
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
        Input(
            key="p1",
            kind=float,
            label="P1. TPOT, one decode step (ms)",
            unit="ms",
            low=0,
            high=1e6,
            optional=True,
            help="A step reads all 14 GB of weights at 2 TB/s.",
        ),
        Input(
            key="p2",
            kind=float,
            label="P2. One output token vs one prompt token (x)",
            unit="x",
            low=0,
            high=1e6,
            optional=True,
            help="How many times the wall time of a prompt token?",
        ),
        Input(
            key="p3",
            kind=float,
            label="P3. Arithmetic intensity of a batch-1 decode step (FLOP/byte)",
            unit="FLOP/byte",
            low=0,
            high=1e6,
            optional=True,
            help="FLOPs done per byte read.",
        ),
        Input(
            key="p4",
            kind=float,
            label="P4. A 500-token reply vs a 50-token reply (x)",
            unit="x",
            low=0,
            high=1e6,
            optional=True,
            help="Same 200-token prompt: how many times longer?",
        ),
        Input(
            key="reveal",
            kind=bool,
            label="Reveal the answers",
            default=False,
            help="Shows the scoreboard and the lab's reference run.",
        ),
    ),  # fmt: skip
}
BY_KEY: dict[str, Input] = {i.key: i for page in PAGE_INPUTS.values() for i in page}
HEADINGS = {"latency": "Simulation", "bill": "Comparison", "lesson": "Your predictions"}


def value(key: str) -> Any:
    """A page input's value on this run (its default before the frame has drawn it)."""
    return st.session_state.get(key, BY_KEY[key].default)
