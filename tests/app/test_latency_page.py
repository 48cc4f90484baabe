"""The "Latency line" page through the entry file (AppTest, no browser)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from app import formatting as fmt
from app.measurements import parse_measurements
from core.estimate import estimate
from core.scenario import Scenario

LLAMA_70B_FP8 = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "engine": "typical"}


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


def text(at: AppTest) -> str:
    return "\n".join([m.value for m in at.main.markdown] + [c.value for c in at.main.caption])


@pytest.fixture(scope="module")
def default_page(open_app) -> AppTest:
    return open_app("latency")


def test_model_and_fitted_values_at_the_defaults(default_page):
    shown = metrics(default_page)
    assert shown["TPOT, model"] == "7.00 ms"  # 14 GB ÷ 2 TB/s
    assert shown["TTFT, model"] == "9.33 ms"  # 200 × 14 GFLOP ÷ 300 TFLOP/s
    # Seed 36 over the lesson's lengths 1…800 draws the lab's exact jitter, so the slope is
    # the lab's 6.999 ms; every point sits 23.33 - 9.33 = 14.00 ms lower than the lab's
    # (a 200-token prompt, not 500), so the intercept is 24.31 - 14.00 = 10.31 ms.
    assert shown["TPOT, fitted (slope)"] == "6.999 ms"
    assert shown["TTFT, fitted (intercept)"] == "10.31 ms"
    # The caption says how far each lands, not that least squares "recovers" them: 6.999 ÷ 7 is 0.0 % off,
    # 10.31 ÷ 9.33 is 10.4 % (every step's jitter lands in the intercept).
    assert "fits the slope (TPOT, 0.0% off the model's) and the intercept (TTFT, 10.4% off" in text(default_page)


def test_simulated_table_is_the_lab_shifted_by_the_prompt(default_page):
    table = default_page.main.dataframe[0].value
    assert table["output_tokens"].tolist() == [1, 25, 50, 100, 200, 400, 800]  # the lesson's lengths at M = 500
    # The lab's 30.2 ms and 5621.7 ms, each 14.00 ms lower.
    assert table["latency_ms"].iloc[0] == pytest.approx(30.213 - 14.0, abs=1e-3)
    assert table["latency_ms"].iloc[-1] == pytest.approx(5621.667 - 14.0, abs=1e-3)
    assert table["model_latency_ms"].iloc[-1] == pytest.approx(9.333 + 800 * 7, abs=1e-3)


def test_download_is_a_valid_upload(default_page):
    button = default_page.main.download_button[0]
    # Deferred: the CSV is written on a click, not on every rerun (tests/e2e downloads one for real).
    assert button.proto.deferred_file_id and not button.proto.url
    # The download is this table as CSV; read back through the upload parser it fits 6.999 ms again.
    data = parse_measurements(default_page.main.dataframe[0].value.to_csv(index=False))
    assert data.rows == 7 and data.latency_column == "latency_ms"


def test_asymmetry_at_the_defaults(default_page):
    shown = text(default_page)
    # N = 500: prefill 500 × 14 GFLOP ÷ 300 TFLOP/s = 23.33 ms; decode 500 × 7 ms = 3.50 s; 150x.
    assert "500 tokens as a prompt ride one prefill pass: 23.33 ms" in shown
    assert "As output, after that prompt, they need 500 decode passes: 3.50 s, **150.0x slower**" in shown


def test_the_asymmetry_counts_the_prefill_pass_not_the_servers_path(open_app):
    # Llama 3.1 8B on an H100 under vLLM, N = 500: the pass is 8.096 TFLOP ÷ (989 × 0.50 TFLOP/s) = 16.37 ms
    # + 0.859 ms of fixed costs = 17.22 ms; 500 decode passes 3.73 s → 216.8x. vLLM's 54 ms path before the
    # first token is said apart: counted in, the ratio would be 52x and would follow the server, not the tokens
    # (the Overview's "Prompt vs output token" counts the pass alone too).
    shown = text(open_app("latency", model="llama-3.1-8b", gpu="h100-sxm", engine="vllm"))
    assert "500 tokens as a prompt ride one prefill pass: 17.22 ms (the first token also waits 54 ms" in shown
    assert "500 decode passes: 3.73 s, **216.8x slower**" in shown


def test_the_line_is_said_to_bend_only_where_it_visibly_does(open_app):
    # Llama 3.1 70B fp8 on 2 × H100: the 500th step reads 500 more tokens of cache than the first, 18.61 →
    # 18.64 ms (0.2 %): no chart shows that bend. Llama 3.1 8B under vLLM to 4,000 tokens: 7.44 → 7.65 ms
    # (2.8 %, past the 2 % STRAIGHT allows): it bends. HF transformers on an H100: every step is the host's
    # 37.44 ms, so the line is straight, KV cache or not.
    shown = text(open_app("latency", **LLAMA_70B_FP8))
    assert "18.61 ms for the first, 18.64 ms for the 500th — so little that the line is nearly straight." in shown
    shown = text(open_app("latency", model="llama-3.1-8b", gpu="h100-sxm", engine="vllm", out="4000"))
    assert "7.44 ms for the first, 7.65 ms for the 4,000th — and the line bends upward." in shown
    shown = text(open_app("latency", model="llama-3.1-8b", gpu="h100-sxm", engine="hf-transformers"))
    assert "Total latency is a straight line in the **output** length" in shown
    assert "every step waits on the host launching its kernels" in shown and "bends" not in shown


def test_changing_the_seed_changes_the_simulation_not_the_model(open_app):
    at = open_app("latency")
    first = at.main.dataframe[0].value["latency_ms"].tolist()
    at.number_input(key="seed").set_value(7).run()
    assert not at.exception
    assert "Seed 7, Part 1's seven replies" in text(at)
    assert at.main.dataframe[0].value["latency_ms"].tolist() != first
    shown = metrics(at)
    assert shown["TPOT, model"] == "7.00 ms" and shown["TTFT, model"] == "9.33 ms"
    slope_ms = float(shown["TPOT, fitted (slope)"].split()[0])
    assert 6.9 < slope_ms < 7.1  # ±5 % per step averages out over 1,576 steps


def test_the_upload_limit_is_the_parsers_said_once(default_page):
    # The uploader can only print whole megabytes, so its "1MB per file" is hidden by a style;
    # the paragraph above it gives the parser's real limits.
    assert "at most 256 KB and 10,000 rows" in text(default_page)
    assert any("DropzoneInstructions" in h.proto.body for h in default_page.get("html"))


def test_pasted_measurements_give_fit_and_implied_mbu(open_app):
    at = open_app("latency")
    # A GPU twice as slow as the model: 14 ms per token on top of a 9.33 ms TTFT.
    at.text_area(key="latency_paste").set_value("output_tokens,latency_ms\n1,23.33\n101,1423.33\n51,723.33\n").run()
    assert not at.exception and not at.main.warning
    shown = metrics(at)
    assert shown["TPOT, your fit"] == "14.000 ms"  # (1423.33 - 23.33) / 100
    assert shown["TTFT, your fit"] == "9.33 ms"  # 23.33 - 14
    assert shown["R²"] == "1.0000"
    assert shown["Implied MBU"] == "50.0%"  # 14 GB ÷ 14 ms = 1 TB/s of a 2 TB/s GPU
    assert len(at.main.get("plotly_chart")) == 3


def test_uploaded_file_wins_and_latency_s_is_read(open_app):
    at = open_app("latency")
    at.file_uploader(key="latency_upload").set_value(
        ("m.csv", b"\xef\xbb\xbfoutput_tokens,latency_s\r\n1,0.016333\r\n1001,7.016333\r\n", "text/csv")
    ).run()
    assert not at.exception and not at.main.warning
    shown = metrics(at)
    assert shown["TPOT, your fit"] == "7.000 ms"  # (7.016333 - 0.016333) s / 1000
    assert shown["Implied MBU"] == "100.0%"  # 14 GB ÷ 7 ms = 2 TB/s, all of it


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (b"output_tokens,latency_ms\n1,30\n25,fast\n", "row 3, column latency_ms"),
        (b"output_tokens\n1\n2\n", "row 1"),
        (b"output_tokens,latency_ms\n1,=cmd|' /C calc'!A0\n2,40\n", "formula"),
        (b"output_tokens,latency_ms\n1,<script>alert(1)</script>\n2,4\n", "markup"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
        (b"output_tokens,latency_ms\n1,30\n", "at least 2 rows"),
    ],
)
def test_bad_uploads_warn_and_never_raise(raw, where, open_app):
    at = open_app("latency")
    at.file_uploader(key="latency_upload").set_value(("bad.csv", raw, "text/csv")).run()
    assert not at.exception
    assert len(at.main.warning) == 1 and where in at.main.warning[0].value
    assert "Your fit" not in " ".join(metrics(at))


def test_latency_falling_with_output_has_no_mbu(open_app):
    at = open_app("latency")
    at.text_area(key="latency_paste").set_value("output_tokens,latency_ms\n1,500\n100,400\n").run()
    assert not at.exception
    assert "does not grow" in at.main.warning[0].value
    assert "Implied MBU" not in metrics(at)


def test_real_model_matches_the_estimate(open_app):
    at = open_app("latency", **LLAMA_70B_FP8)
    expected = estimate(Scenario.from_flat(LLAMA_70B_FP8))
    shown = metrics(at)
    assert shown["TPOT, model"] == fmt.ms(expected.tpot_s) != "7.00 ms"
    assert shown["TTFT, model"] == fmt.ms(expected.ttft_s)
    assert float(shown["TPOT, fitted (slope)"].split()[0]) == pytest.approx(expected.tpot_s * 1e3, rel=0.01)


def test_long_replies_cap_the_simulation(open_app):
    at = open_app("latency", out="30000")
    # Lengths scale from the 20,000-token cap: 800 × 20,000 / 500 = 32,000 tokens at most.
    assert at.main.dataframe[0].value["output_tokens"].max() == 32_000
    assert "Simulated up to 32,000 tokens" in text(at)


def test_the_simulation_is_cached_so_unrelated_reruns_skip_it(monkeypatch, fresh_cache, open_app):
    from app import compute

    calls = []
    real = compute.simulate_measurements
    monkeypatch.setattr(compute, "simulate_measurements", lambda *args: calls.append(args) or real(*args))
    at = open_app("latency", **LLAMA_70B_FP8, prompt="1000000", out="200000", batch="4096")
    # The sidebar's largest inputs: 40 × the lesson's 1,576 steps = 63,040 jittered steps, once.
    assert len(calls) == 1 and sum(calls[0][2]) == 63_040
    at.number_input(key="pin").set_value(0.6).run()  # a price moves neither TTFT, TPOT nor the lengths
    assert not at.exception and len(calls) == 1
    at.number_input(key="seed").set_value(7).run()  # a new seed is a new simulation
    assert not at.exception and len(calls) == 2


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        # Part 1: 500-token prompt, replies 1…800 from seed 36; the reference run's fit:
        # TTFT 2 × 7e9 × 500 / 300e12 = 23.33 ms, fitted slope 6.999 ms, intercept 24.31 ms.
        (1, {"TTFT, model": "23.33 ms", "TPOT, fitted (slope)": "6.999 ms", "TTFT, fitted (intercept)": "24.31 ms"}),
        # Part 3: 200-token prompt, TTFT 9.33 ms; a fresh seed 36 draws the 50- then the 500-token reply.
        (3, {"TTFT, model": "9.33 ms", "TPOT, model": "7.00 ms"}),
    ],
)
def test_the_lesson_buttons_load_its_parts_and_show_the_reference_numbers(part, expected, open_app):
    at = open_app("latency", model="llama-3.1-8b", gpu="h100-sxm", out="1000", seed="7")  # far from the lesson
    at.button(key=f"load_part{part}").click().run()
    assert not at.exception
    shown = metrics(at)
    assert {label: shown[label] for label in expected} == expected
    table = at.main.dataframe[0].value
    if part == 3:
        # The reference run's Part 3: 361.5 ms for the 50-token reply, 3514.9 ms for the 500-token one.
        assert table["output_tokens"].tolist() == [50, 500]
        assert [f"{v:.1f}" for v in table["latency_ms"]] == ["361.5", "3514.9"]
    else:
        assert table["output_tokens"].tolist() == [1, 25, 50, 100, 200, 400, 800]
        assert f"{table['latency_ms'].iloc[-1]:.1f}" == "5621.7"  # the lab's 800-token measurement


def test_pasted_measurements_are_parsed_once_not_on_every_rerun(open_app, fresh_cache, monkeypatch):
    # Issue 11: a 10,000-row paste was re-parsed on every rerun (3.4x slower reruns). Count the parses.
    from app import compute

    calls = []
    real = compute.read_measurements
    monkeypatch.setattr(compute, "read_measurements", lambda *a: calls.append(a) or real(*a))
    at = open_app("latency")
    rows = "".join(f"{m},{9.333 + 7 * m}\n" for m in range(1, 2001))
    at.text_area(key="latency_paste").set_value("output_tokens,latency_ms\n" + rows).run()
    for seed in (11, 12, 13):  # three reruns that change something else
        at.number_input(key="seed").set_value(seed).run()
    assert len([c for c in calls if c[0] and "latency_ms" in c[0]]) == 1


def test_a_host_bound_engine_reads_no_mbu_and_names_your_hosts_pace(open_app):
    # Llama 3.1 8B on one H100 under HF transformers: every model step waits on 37.44 ms of host launches.
    # Pasted: 33.4 ms a token (fresh19's A100 PCIe host), a 40 ms first token. No MBU can be read from a
    # host's pace; the page says what the slope is instead: the user's own per-step overhead.
    at = open_app("latency", model="llama-3.1-8b", gpu="h100-sxm", engine="hf-transformers")
    at.text_area(key="latency_paste").set_value("output_tokens,latency_ms\n1,73.4\n101,3413.4\n").run()
    assert not at.exception and not at.main.warning
    assert metrics(at)["TPOT, your fit"] == "33.400 ms"  # (3413.4 - 73.4) / 100
    assert "Implied MBU" not in metrics(at)
    said = " ".join(i.value for i in at.main.info)
    assert "waits on the host's kernel launches (37.4 ms a step on this engine)" in said
    assert "33.400 ms as 'Overhead per step' under Efficiency numbers makes the model's steps yours" in said


def test_the_simulated_lengths_are_the_ones_drawn(open_app):
    # Part 1's lengths scale with the reply: at 400 output tokens 1, 20, 40, 80, 160, 320, 640 (0.8 × 1 to 800,
    # the first kept at 1), where the label said "1 to 800 tokens" whatever the reply.
    caption = text(open_app("latency", out="400"))
    assert "Part 1's seven replies, scaled to yours (1, 20, 40, 80, 160, 320 and 640 tokens)" in caption
    assert "1 to 800" not in caption
    assert "(1, 25, 50, 100, 200, 400 and 800 tokens)" in text(open_app("latency"))


def test_a_lesson_button_leaves_a_way_back_to_the_scenario_it_replaced(open_app):
    # An engineer's Llama 3.1 8B on an H100 with 1,000-token replies was gone for good after "The lesson's Part 1".
    at = open_app("latency", model="llama-3.1-8b", gpu="h100-sxm", out="1000")
    assert not [b for b in at.main.button if b.key == "lesson_back"]
    at.button(key="load_part1").click().run()
    assert at.selectbox(key="model").value == "toy-7b"
    at.button(key="load_part3").click().run()  # a second part keeps the first way back, not the lesson's
    at.button(key="lesson_back").click().run()
    assert not at.exception
    assert (at.selectbox(key="model").value, at.selectbox(key="gpu").value) == ("llama-3.1-8b", "h100-sxm")
    assert at.number_input(key="out").value == 1000
    assert not [b for b in at.main.button if b.key == "lesson_back"]


def test_the_simulation_select_shows_short_labels_and_links_by_key(open_app):
    # The caption's sentence ("Part 1's seven replies, scaled to yours") was cut at the sidebar's width;
    # the select shows a short label, and a link still names the simulation by its key.
    at = open_app("latency", sim="part3")
    select = at.sidebar.selectbox(key="sim")
    assert select.value == "part3"
    assert [select.format_func(o) for o in select.options] == ["Part 1: seven replies", "Part 3: short and long"]
    assert "Part 3's short and long reply" in text(at)
