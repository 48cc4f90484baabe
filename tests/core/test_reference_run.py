"""The lesson's reference run and drills, number by number.

Machine (the lesson's toy): 7B parameters in fp16 → 14e9 bytes of weights; 2e12 B/s of
memory bandwidth; 300e12 FLOP/s of compute; ideal efficiency. Every expected value is
derived by hand beside it; tolerances are tight because this is arithmetic.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from core import Scenario, estimate
from core.cli.lab_text import render_lab
from core.lesson import drills, lab_run

REFERENCE_RUN = Path(__file__).parent.parent / "data" / "reference_run.txt"


@pytest.fixture(scope="module")
def run():
    return lab_run()


def ms(seconds: float) -> float:
    return seconds * 1e3


# ---- Part 1 -------------------------------------------------------------------------------


def test_part1_ttft_is_one_compute_bound_pass(run):
    # 2 × 7e9 × 500 = 7e12 FLOP / 300e12 FLOP/s = 23.333 ms  (memory: 14e9 / 2e12 = 7 ms)
    assert ms(run.part1.prefill.time_s) == pytest.approx(7e12 / 300e12 * 1e3, rel=1e-12)
    assert f"{ms(run.part1.prefill.time_s):.2f}" == "23.33"
    assert run.part1.prefill.bound == "compute"


def test_part1_tpot_is_one_weight_read(run):
    # 14e9 B / 2e12 B/s = 7.000 ms
    assert ms(run.part1.decode.time_s) == pytest.approx(7.0, rel=1e-12)


@pytest.mark.parametrize(
    ("index", "output_tokens", "printed"),
    [
        # TTFT 23.33 ms + Σ 7 ms × (1 + U(-0.05, 0.05)) over M steps, random.Random(36) consumed in order.
        (0, 1, "30.2"),
        (1, 25, "200.3"),
        (2, 50, "371.8"),
        (3, 100, "724.3"),
        (4, 200, "1424.8"),
        (5, 400, "2827.8"),
        (6, 800, "5621.7"),
    ],
)
def test_part1_simulated_measurements(run, index, output_tokens, printed):
    assert run.part1.output_tokens[index] == output_tokens
    # Without jitter the total would be 23.33 + 7 M; the jitter averages out to within ±5 %.
    noiseless = 23.3333333 + 7 * output_tokens
    measured = ms(run.part1.measured_latency_s[index])
    assert abs(measured - noiseless) <= 0.05 * 7 * output_tokens
    assert f"{measured:.1f}" == printed


def test_part1_fit_recovers_the_line(run):
    # The least-squares slope lands next to the true 7 ms, the intercept near the 23.33 ms TTFT.
    assert f"{ms(run.part1.fit.tpot_s):.3f}" == "6.999"
    assert f"{ms(run.part1.fit.ttft_s):.2f}" == "24.31"
    assert run.part1.fit.r_squared > 0.9999


def test_part1_asymmetry(run):
    # 500 tokens as input: 23.33 ms; as output: 500 × 7 ms = 3,500.00 ms; ratio 3500 / 23.333 = 150
    assert f"{ms(run.part1.prompt_as_input_s):.2f}" == "23.33"
    assert f"{ms(run.part1.prompt_as_output_s):.2f}" == "3500.00"
    assert run.part1.output_vs_input == pytest.approx(150.0, rel=1e-12)


# ---- Part 2 -------------------------------------------------------------------------------


def test_part2_memory_wall(run):
    step = run.part2.step
    assert step.bytes_moved == 14e9  # 7e9 params × 2 bytes
    assert step.flops == 14e9  # 2 FLOP per param per token
    assert f"{ms(step.memory_time_s):.3f}" == "7.000"  # 14e9 / 2e12
    assert f"{ms(step.compute_time_s):.3f}" == "0.047"  # 14e9 / 300e12 = 0.0467 ms
    assert step.memory_time_s / step.compute_time_s == pytest.approx(150.0)  # "memory loses by 150x"
    assert step.intensity_flop_per_byte == pytest.approx(1.0)  # 14e9 / 14e9
    assert step.balance_flop_per_byte == pytest.approx(150.0)  # 300e12 / 2e12
    assert step.bound == "memory"
    assert f"{run.part2.idle_fraction * 100:.1f}" == "99.3"  # 1 - 1/150 = 0.99333


@pytest.mark.parametrize(
    ("row", "batch", "step_ms", "tokens_per_s", "compute_bound"),
    [
        # step = max(14e9 / 2e12, 2 × 7e9 × B / 300e12); throughput = B / step
        (0, 1, "7.000", "143", False),  # 1 / 7 ms = 142.9
        (1, 8, "7.000", "1,143", False),  # 8 / 7 ms
        (2, 16, "7.000", "2,286", False),
        (3, 64, "7.000", "9,143", False),
        (4, 150, "7.000", "21,429", False),  # on the ridge: 2.1e12 / 300e12 = 7 ms both ways → "memory"
        (5, 300, "14.000", "21,429", True),  # 4.2e12 / 300e12 = 14 ms: compute-bound, plateau
    ],
)
def test_part2_batch_table(run, row, batch, step_ms, tokens_per_s, compute_bound):
    sweep = run.part2.sweep
    assert sweep.batch_size[row] == batch
    assert f"{ms(sweep.step_time_s[row]):.3f}" == step_ms
    assert f"{sweep.output_tokens_per_s[row]:,.0f}" == tokens_per_s
    assert sweep.intensity_flop_per_byte[row] == pytest.approx(batch)  # B FLOP per byte
    assert bool(sweep.compute_bound[row]) is compute_bound


def test_part2_critical_batch_is_the_machine_balance(run):
    assert run.part2.critical_batch == 150


# ---- Part 3 -------------------------------------------------------------------------------


def test_part3_bill(run):
    p3 = run.part3
    assert f"{ms(p3.ttft_s):.1f}" == "9.3"  # 2 × 7e9 × 200 / 300e12 = 9.33 ms
    assert f"{ms(p3.tpot_s):.1f}" == "7.0"
    # Fresh random.Random(36): 9.33 + Σ 7 × (1 + U) over 50, then 500 steps.
    assert f"{ms(p3.short.latency_s):.1f}" == "361.5"
    assert f"{ms(p3.long.latency_s):.1f}" == "3514.9"
    assert f"${p3.short.cost_usd:.6f}" == "$0.000175"  # 200 × 0.5e-6 + 50 × 1.5e-6
    assert f"${p3.long.cost_usd:.6f}" == "$0.000850"  # 200 × 0.5e-6 + 500 × 1.5e-6
    assert f"{p3.latency_ratio:.1f}" == "9.7"  # 3514.9 / 361.5 = 9.72
    assert f"{p3.cost_ratio:.1f}" == "4.9"  # 850 / 175 = 4.857
    assert p3.short.monthly_usd == pytest.approx(525.0)  # 0.000175 × 100,000 × 30
    assert p3.long.monthly_usd == pytest.approx(2550.0)  # 0.000850 × 100,000 × 30


def test_scoreboard_with_the_reference_predictions(run):
    rows = [(p.guess, round(p.actual, 2), p.verdict) for p in run.scoreboard]
    assert rows == [
        (7.0, 7.00, "close enough"),  # P1 TPOT ms
        (150.0, 150.00, "close enough"),  # P2 7 / (23.33 / 500)
        (1.0, 1.00, "close enough"),  # P3 FLOP/byte
        (10.0, 9.72, "close enough"),  # P4 3514.9 / 361.5; 10 / 9.72 = 1.03 is inside 0.7–1.4
    ]


def test_scoreboard_verdict_rule():
    # The usual gut guess for P2 is 2 or 3: 150 / 3 = 50x too low. 1.4x high is still close enough.
    board = lab_run((3.0, 3.0, 1.4, 20.0)).scoreboard
    assert board[0].verdict == "2.3x too LOW"  # 7 / 3 = 2.33
    assert board[1].verdict == "50.0x too LOW"  # 150 / 3
    assert board[2].verdict == "close enough"  # 1.4 / 1.0 sits on the boundary
    assert board[3].verdict == "2.1x too HIGH"  # 20 / 9.72 = 2.06


def test_transcript_matches_the_seed_line_for_line(run):
    """`python -m core lab` prints the seed's reference run: same lines once spaces are collapsed."""

    def normalise(text: str) -> list[str]:
        return [re.sub(r"\s+", " ", line).strip() for line in text.splitlines() if line.strip()]

    assert normalise(render_lab(run)) == normalise(REFERENCE_RUN.read_text(encoding="utf-8"))


def test_default_estimate_is_the_part3_long_reply():
    result = estimate(Scenario.lesson())
    assert ms(result.ttft_s) == pytest.approx(9.333333, rel=1e-6)  # 2.8e12 / 300e12
    assert ms(result.tpot_s) == pytest.approx(7.0, rel=1e-12)
    assert ms(result.total_s) == pytest.approx(3509.333333, rel=1e-9)  # 9.33 + 500 × 7
    assert result.cost_per_reply_usd == pytest.approx(0.000850, rel=1e-12)
    assert result.monthly_cost_usd == pytest.approx(2550.0, rel=1e-12)
    assert result.output_token_vs_prompt_token == pytest.approx(150.0)  # 7 / (9.33 / 200)


# ---- Drills -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def d():
    return drills()


def test_d1_prefill_1000_tokens(d):
    # compute 1000 × 14e9 / 300e12 = 46.7 ms beats memory 14e9 / 2e12 = 7 ms: compute-bound
    assert ms(d.d1_prefill.compute_time_s) == pytest.approx(46.6667, rel=1e-4)
    assert ms(d.d1_prefill.memory_time_s) == pytest.approx(7.0)
    assert d.d1_prefill.bound == "compute"
    assert ms(d.d1_prefill.time_s) == pytest.approx(46.6667, rel=1e-4)


def test_d2_total_latency_300_tokens(d):
    assert ms(d.d2_total_s) == pytest.approx(2146.667, rel=1e-6)  # 46.7 + 300 × 7
    assert d.d2_decode_share == pytest.approx(0.978, abs=5e-4)  # 2100 / 2146.7


def test_d3_memory_wall(d):
    assert d.d3_step.intensity_flop_per_byte == pytest.approx(1.0)
    assert d.d3_step.balance_flop_per_byte == pytest.approx(150.0)
    assert d.d3_idle_fraction == pytest.approx(0.99333, abs=1e-5)  # 1 - 1/150


def test_d4_batching(d):
    assert d.d4_critical_batch == 150
    assert d.d4_tokens_per_s[0] == pytest.approx(142.857, rel=1e-5)  # 1 / 7 ms
    assert d.d4_tokens_per_s[1] == pytest.approx(9142.857, rel=1e-6)  # 64 / 7 ms


def test_d5_token_bill(d):
    assert ms(d.d5_latency_s[0]) == pytest.approx(746.667, rel=1e-6)  # 46.7 + 100 × 7
    assert ms(d.d5_latency_s[1]) == pytest.approx(7046.667, rel=1e-6)  # 46.7 + 1000 × 7
    assert f"{d.d5_latency_ratio:.1f}" == "9.4"  # 7046.7 / 746.7 = 9.44
    assert d.d5_cost_units == pytest.approx((1300.0, 4000.0))  # 1000 + 3 × 100; 1000 + 3 × 1000
    assert f"{d.d5_cost_ratio:.1f}" == "3.1"  # 4000 / 1300 = 3.08


@pytest.mark.parametrize(
    ("guesses", "message"),
    [
        ((5e-324, 150.0, 1.0, 10.0), "P1 must be >= 1e-06 and <= 1,000,000,000, got 5e-324"),  # divided by zero
        ((7.0, 150.0, math.nan, 10.0), "P3 must be a finite number"),  # "nanx too HIGH"
        ((7.0, 150.0, 1.0, 1e10), "P4 must be >= 1e-06 and <= 1,000,000,000, got 10000000000.0"),
        ((7.0, "150", 1.0, 10.0), "P2 must be a number"),  # a TypeError
        ((7.0, 150.0, 1.0), "the lab scores four predictions, P1-P4, got 3"),
    ],
)
def test_the_lab_refuses_a_guess_it_cannot_score(guesses, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        lab_run(guesses)
    assert [p.verdict for p in lab_run((0.0, 0.0, 0.0, 0.0)).scoreboard] == ["no guess"] * 4  # 0: none given
