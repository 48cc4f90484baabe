"""The "The lesson" page through the entry file (AppTest, no browser)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = "app/app_pages/lesson.py"
REFERENCE_RUN = Path(__file__).resolve().parents[1] / "data" / "reference_run.txt"
GUESSES = ("p1", "p2", "p3", "p4")


def guess_and_reveal(at: AppTest, guesses: tuple[float | None, ...]) -> AppTest:
    for key, value in zip(GUESSES, guesses, strict=True):
        at.number_input(key=key).set_value(value)
    at.run()
    at.toggle(key="reveal").set_value(True).run()
    assert not at.exception
    return at


def verdicts(at: AppTest) -> list[str]:
    return at.main.dataframe[0].value["verdict"].tolist()


def normalise(text: str) -> list[str]:
    return [re.sub(r"\s+", " ", line).strip() for line in text.splitlines() if line.strip()]


def test_answers_are_hidden_until_reveal(open_app):
    at = open_app("lesson")
    assert not at.main.dataframe and not at.main.code
    assert "appear when you switch on 'Reveal the answers'" in " ".join(c.value for c in at.main.caption)
    assert "toy machine, not the sidebar's scenario" in at.main.info[0].value


def test_the_usual_gut_guess_for_p2_is_50x_too_low(open_app):
    at = guess_and_reveal(open_app("lesson"), (7.0, 3.0, 1.0, 10.0))
    # P1 7 / 7.00 = 1.0; P2 150 / 3 = 50x low; P3 1 / 1.00; P4 10 / 9.72 = 1.03 → close enough.
    assert verdicts(at) == ["close enough", "50.0x too LOW", "close enough", "close enough"]
    board = at.main.dataframe[0].value
    assert board["actual"].tolist() == ["7.00 ms", "150.00 x", "1.00 FLOP/byte", "9.72 x"]
    assert board["you"].tolist() == ["7.0", "3.0", "1.0", "10.0"]


def test_a_workshop_link_with_reveal_1_reveals(open_app):
    # An organiser types reveal=1, not reveal=true: it was refused with a warning and the answers stayed hidden.
    at = open_app("lesson", p1="7", p2="3", p3="1", p4="10", reveal="1")
    assert verdicts(at) == ["close enough", "50.0x too LOW", "close enough", "close enough"]
    assert not [w for w in at.warning if "reveal" in w.value]
    # The reference run's own scoreboard scores the lesson's example guesses: the page says so.
    assert any("is the lesson's own example guesses, not yours" in m.value for m in at.main.markdown)


def test_too_high_too_low_and_no_guess(open_app):
    at = guess_and_reveal(open_app("lesson"), (70.0, 200.0, 0.1, None))
    # 70 / 7 = 10x high; 200 / 150 = 1.33 is inside 0.7–1.4; 1 / 0.1 = 10x low; empty is no guess.
    assert verdicts(at) == ["10.0x too HIGH", "close enough", "10.0x too LOW", "no guess"]


def test_reference_run_is_the_seeds_transcript(open_app):
    at = guess_and_reveal(open_app("lesson"), (7.0, 3.0, 1.0, 10.0))
    transcript = at.main.code[0].value
    assert normalise(transcript) == normalise(REFERENCE_RUN.read_text(encoding="utf-8"))
    for number in (
        "23.33 ms",
        "7.00 ms",
        "30.2 ms",
        "5621.7 ms",
        "6.999 ms",
        "24.31 ms",
        "3500.00 ms",
        "150x",
        "7.000 ms",
        "0.047 ms",
        "1.0 FLOP/byte",
        "150 FLOP/byte",
        "99.3%",
        "143 tok/s",
        "21,429 tok/s",
        "14.000 ms",
        "9.3 ms",
        "7.0 ms",
        "361.5 ms",
        "3514.9 ms",
        "$0.000175",
        "$0.000850",
        "9.7x",
        "4.9x",
        "$525",
        "$2,550",
    ):
        assert number in transcript, number


def test_the_lesson_ignores_the_sidebar_scenario(open_app):
    at = guess_and_reveal(
        open_app("lesson", model="llama-3.1-70b", gpu="h100-sxm", gpus="2", wbits="8"), (7, 150, 1, 10)
    )
    assert normalise(at.main.code[0].value) == normalise(REFERENCE_RUN.read_text(encoding="utf-8"))
    assert verdicts(at) == ["close enough"] * 4


def test_hide_puts_the_answers_away_again(open_app):
    at = guess_and_reveal(open_app("lesson"), (7.0, 150.0, 1.0, 10.0))
    at.toggle(key="reveal").set_value(False).run()
    assert not at.exception and not at.main.dataframe and not at.main.code


def test_predictions_and_the_reveal_travel_in_the_link(open_app):
    # A shared link opens with the guesses in their boxes and the scoreboard shown.
    at = open_app("lesson", p1="7", p2="3", p3="1", p4="10", reveal="true")
    assert [at.number_input(key=k).value for k in GUESSES] == [7.0, 3.0, 1.0, 10.0]
    assert verdicts(at) == ["close enough", "50.0x too LOW", "close enough", "close enough"]


def test_guesses_survive_a_visit_to_another_page(open_app):
    at = open_app("lesson")
    at.number_input(key="p2").set_value(3.0).run()
    at.switch_page("app/app_pages/latency.py").run()
    at.switch_page(PAGE).run()
    assert at.number_input(key="p2").value == 3.0


@pytest.mark.parametrize(
    "answer",
    [
        "**46.7 ms**",  # D1: 1,000 × 14 GFLOP ÷ 300 TFLOP/s
        "**2,146.7 ms**",
        "**97.8%**",  # D2: 46.7 + 300 × 7; 2,100 / 2,146.7
        "**1.0 FLOP/byte**",
        "**150 FLOP/byte**",
        "**99.3%**",  # D3: 14e9 / 14e9; 300e12 / 2e12; 1 - 1/150
        "About **150**",
        "**143 tok/s**",
        "**9,143 tok/s**",  # D4: 1 / 7 ms; 64 / 7 ms
        "746.7 ms vs 7,046.7 ms: **9.4x**",
        "1,300 vs 4,000 units: **3.1x**",  # D5: 46.7 + 100 × 7 …; 1000 + 3 × 100 …
    ],
)
def test_drill_answers(answer, open_app):
    at = open_app("lesson")
    answers = "\n".join(e.markdown[0].value for e in at.main.expander)  # the sidebar has expanders too
    assert answer in answers
    assert len(at.main.expander) == 5


def sidebar_keys(at: AppTest) -> set[str]:
    """The keys of the number inputs and selects drawn in the sidebar."""
    return {w.key for w in [*at.sidebar.number_input, *at.sidebar.selectbox] if w.key}


def test_the_lesson_hides_the_scenario_it_does_not_read(open_app):
    # Opened with no link (a workshop's room): the predictions alone, and a word on where the rest went.
    at = open_app("lesson")
    assert sidebar_keys(at) == set(GUESSES)
    assert any("are hidden here: this page always runs the lesson's toy machine" in c.value for c in at.sidebar.caption)
    # Asked for, the scenario's inputs are there, starting from the defaults.
    at.toggle(key="sb_show_scenario").set_value(True).run()
    assert {"replies", "out", "prompt", "model", "gpu"} <= sidebar_keys(at)
    assert at.number_input(key="out").value == 500 and at.selectbox(key="model").value == "toy-7b"


def test_a_scenario_of_its_own_is_shown_on_the_lesson(open_app):
    # A link holding a scenario: its inputs are drawn (and so stay in the link) without asking.
    at = open_app("lesson", model="llama-3.1-8b", out="800")
    assert {"replies", "out", "model"} <= sidebar_keys(at)
    assert at.selectbox(key="model").value == "llama-3.1-8b" and at.number_input(key="out").value == 800
    assert at.query_params["model"] == "llama-3.1-8b"
    assert "sb_show_scenario" not in {t.key for t in at.sidebar.toggle}  # nothing to ask for: it is all shown
    # ...and said not to change this page, which runs the lesson's toy machine whatever it holds.
    assert any("editing it changes nothing here" in c.value for c in at.sidebar.caption)
    # A value set on another page in this session is one of its own too.
    at = open_app()
    at.number_input(key="out").set_value(900).run()
    at.switch_page(PAGE).run()
    assert at.number_input(key="out").value == 900


@pytest.mark.parametrize("tiny", ["5e-324", "1e-300"])
def test_a_vanishing_guess_in_a_link_is_raised_to_the_smallest_with_a_warning(open_app, tiny):
    # 5e-324 divided the verdict by zero (an exception box on the page), 1e-300 printed a 300-digit
    # "x too LOW": the link is read into P1's range, 0.000001 to 1,000,000,000 (as the CLI's), and said.
    at = open_app("lesson", p1=tiny, reveal="true")
    assert not at.exception
    assert any("p1" in w.value for w in at.warning)
    # 0.000001 ms against the lab's 7 ms: 7,000,000x too low, a verdict that fits its cell.
    assert verdicts(at)[0] == "7000000.0x too LOW"
    assert at.main.dataframe[0].value["you"].iloc[0] == "1e-06"
