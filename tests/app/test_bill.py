"""The Monthly bill page (AppTest): the lesson's Part 3 bill, short vs long, and self-hosting."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

PAGE = "app/app_pages/bill.py"
LLAMA_70B_FP8 = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "engine": "typical"}


def metrics(at: AppTest) -> dict[str, tuple[str, str]]:
    return {m.label: (m.value, m.delta) for m in at.main.metric}


def test_the_defaults_are_the_lessons_part_3(open_app) -> None:
    at = open_app(PAGE)
    shown = metrics(at)
    # 200 × $0.50/M = $0.000100; 500 × $1.50/M = $0.000750; $0.000850 × 100,000 × 30 = $2,550; × 12.
    assert shown["Input per reply"][0] == "$0.000100"
    assert shown["Cached input per reply"][0] == "$0"
    assert shown["Output per reply"][0] == "$0.000750"
    assert shown["Cost per reply"][0] == "$0.000850"
    assert shown["Monthly bill"][0] == "$2,550"
    assert shown["Yearly bill"][0] == "$30,600"
    # Short (50) vs long (500): 9.33 + 50 × 7 = 359.33 ms vs 3,509.33 ms → 9.77x;
    # $0.000100 + 50 × $1.5e-6 = $0.000175 vs $0.000850 → 4.86x.
    # One unit for both (issue 10: not "3.51 s vs 359.33 ms"); the ratio is the headline.
    assert shown["Latency, 500 vs 50 tokens"] == ("9.8x", "3.51 s vs 0.36 s")
    assert shown["Cost per reply, 500 vs 50 tokens"] == ("4.9x", "$0.000850 vs $0.000175")
    # The lab's ±5 % jitter draws 9.72x for the same pair (tests/data/reference_run.txt): said beside the 9.8x.
    assert any("without jitter" in c.value and "measures 9.7x the latency" in c.value for c in at.main.caption)
    assert "estimate the output tokens first" in at.main.info[0].value
    assert len(at.get("plotly_chart")) == 2


def test_the_tables_hold_the_numbers_and_download_as_csv(open_app) -> None:
    at = open_app(PAGE)
    split, pair = (frame.value for frame in at.main.dataframe)
    assert split.loc["output", "USD per month"] == pytest.approx(2250)  # 500 × 1.5e-6 × 3e6
    assert split.loc["input (uncached prompt)", "share of the bill"] == pytest.approx(0.1 / 0.85)
    assert list(pair.index) == ["short reply", "long reply"]
    assert pair["latency (ms)"].tolist() == pytest.approx([359.3333, 3509.3333], rel=1e-6)
    assert pair["USD per reply"].tolist() == pytest.approx([0.000175, 0.000850])
    labels = [str(b.proto.label) for b in at.main.get("download_button")]
    assert labels == ["Download the split (CSV)", "Download the comparison (CSV)"]


def test_the_short_reply_is_adjustable_and_kept_across_pages(open_app) -> None:
    at = open_app(PAGE)
    at.number_input(key="short").set_value(250).run()
    # 9.33 + 250 × 7 = 1,759.33 ms; 3,509.33 / 1,759.33 = 1.99x; $0.000475 vs $0.000850 = 1.79x.
    assert metrics(at)["Latency, 500 vs 250 tokens"] == ("2.0x", "3.51 s vs 1.76 s")
    assert metrics(at)["Cost per reply, 500 vs 250 tokens"] == ("1.8x", "$0.000850 vs $0.000475")
    at.switch_page("app/app_pages/overview.py").run()
    at.switch_page(PAGE).run()
    assert at.number_input(key="short").value == 250


def test_cached_prompt_tokens_are_billed_at_the_cached_price(open_app) -> None:
    at = open_app(PAGE, prompt="1000", cached="800", pcache="0.05")
    shown = metrics(at)
    # 200 uncached × $0.50/M = $0.000100; 800 cached × $0.05/M = $0.000040; + $0.000750 output.
    assert shown["Input per reply"][0] == "$0.000100"
    assert shown["Cached input per reply"][0] == "$0.0000400"  # three significant digits
    assert shown["Cost per reply"][0] == "$0.000890"


def test_no_gpu_price_means_no_self_hosting_section(open_app) -> None:
    at = open_app(PAGE)
    assert "Break-even traffic (replies a day)" not in metrics(at)
    assert any("no rental price" in c.value for c in at.main.caption)


def test_self_hosting_on_rented_gpus(open_app) -> None:
    at = open_app(PAGE, **LLAMA_70B_FP8)
    shown = metrics(at)
    # Two H100s at $3.78/h = $7.56/h = $181.44 a day; ÷ $0.000850 per reply = 213,459 replies a day
    # to break even — far more than one fleet at batch 1 can serve, so no break-even is shown (issue 8).
    assert shown["Break-even traffic (replies a day)"][0] == "never"
    from core.estimate import estimate
    from core.scenario import Scenario

    hosting = estimate(Scenario.from_flat(LLAMA_70B_FP8)).self_hosting
    # $7.56 / (tokens/s × 3600) × 1e6 at batch 1: dear, since one request uses the whole fleet.
    assert shown["Self-hosted per M output tokens"][0] == f"${hosting.usd_per_million_output_tokens:,.2f}"
    assert hosting.usd_per_million_output_tokens == pytest.approx(7.56 / (hosting.output_tokens_per_s * 3600) * 1e6)
    assert not hosting.breaks_even
    assert any("cannot serve the 213,459 replies a day it would need" in c.value for c in at.main.caption)


def test_a_setup_that_does_not_fit_cannot_be_self_hosted(open_app) -> None:
    # Llama 3.1 70B in 16 bits on one A100 80GB: 70.55e9 × 2 bytes = 141.1 GB of weights alone.
    at = open_app(PAGE, model="llama-3.1-70b", gpu="a100-80gb-sxm")
    assert "Self-hosted per M output tokens" not in metrics(at)
    (error,) = at.main.error
    assert "not possible" in error.value and "141\\.1 GB" in error.value


def test_a_bigger_batch_makes_renting_break_even(open_app) -> None:
    at = open_app(PAGE, **LLAMA_70B_FP8, batch="256")
    assert any("renting is cheaper" in c.value for c in at.main.caption)
