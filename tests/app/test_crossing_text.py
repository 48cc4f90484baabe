"""The cheapest option over traffic, in words (app/crossing_text.py)."""

from __future__ import annotations

from app.crossing_text import cheapest_words, traffic
from core.crossings import Cheapest

NAMES = {"api": "gpt-4.1-mini", "l4": "Llama 3.1 8B on one L4", "h100": "Llama 3.1 70B on two H100s"}


def test_boundaries_are_said_to_two_significant_figures() -> None:
    assert traffic(1_437_211) == "1,400,000"
    assert traffic(96_700) == "97,000"
    assert traffic(7.04) == "7"
    assert traffic(0) == "0"


def test_one_sentence_over_the_ranges() -> None:
    parts = [Cheapest("api", 100, 1_437_211), Cheapest("l4", 1_437_211, 8_150_000), Cheapest("h100", 8_150_000, 1e8)]
    assert cheapest_words(parts, NAMES, 100, 1e8) == (
        "gpt-4.1-mini is the cheapest up to 1,400,000 replies a day; from 1,400,000 to 8,200,000, "
        "Llama 3.1 8B on one L4; above 8,200,000, Llama 3.1 70B on two H100s."
    )
    assert cheapest_words([Cheapest("api", 100, 1e8)], NAMES, 100, 1e8) == (
        "gpt-4.1-mini is the cheapest at every traffic shown (100 to 100,000,000 replies a day)."
    )
    assert cheapest_words([], NAMES, 1, 10) == ""
