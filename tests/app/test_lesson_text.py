"""The lesson page's words (app/lesson_text.py), without Streamlit."""

from __future__ import annotations

from lesson_text import QUESTIONS, drill_texts

from core.lesson import drills


def test_four_predictions_with_page_keys():
    assert [key for key, _, _ in QUESTIONS] == ["lesson_p1", "lesson_p2", "lesson_p3", "lesson_p4"]
    assert [label[:3] for _, label, _ in QUESTIONS] == ["P1.", "P2.", "P3.", "P4."]


def test_five_drills_answered_from_cores_numbers():
    texts = drill_texts(drills())
    assert [title.split(".")[0] for title, _, _ in texts] == ["D1", "D2", "D3", "D4", "D5"]
    # D1: 1,000 × 14 GFLOP ÷ 300 TFLOP/s = 46.7 ms, against 14 GB ÷ 2 TB/s = 7.0 ms of reading.
    assert "**46.7 ms**" in texts[0][2] and "7.0 ms" in texts[0][2] and "**compute-bound**" in texts[0][2]
