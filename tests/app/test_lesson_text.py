"""The lesson page's words (app/lesson_text.py), without Streamlit."""

from __future__ import annotations

from app.lesson_text import drill_texts
from app.page_inputs import PAGE_INPUTS
from core.lesson import drills


def test_four_predictions_and_the_reveal_are_the_lesson_pages_inputs():
    lesson = PAGE_INPUTS["lesson"]
    assert [i.key for i in lesson] == ["p1", "p2", "p3", "p4", "reveal"]
    assert [i.label[:3] for i in lesson[:4]] == ["P1.", "P2.", "P3.", "P4."]
    assert all(i.optional and i.default is None for i in lesson[:4])  # an empty box is "no guess"
    assert lesson[4].kind is bool and lesson[4].default is False


def test_five_drills_answered_from_cores_numbers():
    texts = drill_texts(drills())
    assert [title.split(".")[0] for title, _, _ in texts] == ["D1", "D2", "D3", "D4", "D5"]
    # D1: 1,000 × 14 GFLOP ÷ 300 TFLOP/s = 46.7 ms, against 14 GB ÷ 2 TB/s = 7.0 ms of reading.
    assert "**46.7 ms**" in texts[0][2] and "7.0 ms" in texts[0][2] and "**compute-bound**" in texts[0][2]
