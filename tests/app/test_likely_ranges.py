"""The likely ranges and the engine on the pages (issue 8 §3): beside each latency headline, on the
Overview and the Latency line, and the engine's efficiency on the Roofline (AppTest, no browser).

The real case is Llama 3.1 8B on one H100 SXM under vLLM, batch 1, 200-token prompt, 500-token
reply (`python -m core estimate --model llama-3.1-8b --gpu h100-sxm --engine vllm --json`):
TTFT 61.437 ms, TPOT 7.4503 ms, total 3,786.56 ms (decode 3,725.13 ms), 132.05 tok/s. Its regime
is "batch 1", where vLLM has measurements, so the range is calibrated and `core.ranges.SPREADS`
gives TTFT (-0.34, 1.78) and TPOT (-0.19, 0.69): × e^-0.34 = 0.71177 to × e^1.78 = 5.92986 and
× e^-0.19 = 0.82696 to × e^0.69 = 1.99372 (no low bound here is near the datasheet's physics). Ranges are shown to two significant figures, the low
end rounded down and the high end up.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from app import formatting as fmt
from app import likely
from core.engine import RADEON_EXPERT_PADDING_TOKENS
from core.estimate import estimate
from core.ranges import likely_range
from core.scenario import Scenario

LLAMA_8B_VLLM = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": "vllm"}
EXPECTED_8B = {
    # 61.437 ms × 0.71177 (e^-0.34) = 43.73 → 43; × 5.92986 (e^1.78) = 364.31 → 370
    "Time to first token": "likely 43–370 ms",
    # 7.4503 ms × 0.82696 (e^-0.19) = 6.1611 → 6.1; × 1.99372 (e^0.69) = 14.854 → 15
    "Time per output token": "likely 6.1–15 ms",
    # 43.73 + 3,725.13 × 0.82696 = 3,124.3 ms → 3.1 s; 364.31 + 3,725.13 × 1.99372 = 7,791.2 ms → 7.8 s
    "Total latency": "likely 3.1–7.8 s",
    # one user's stream is 1 ÷ TPOT: 1 ÷ 14.854 ms = 67.3 → 67; 1 ÷ 6.1611 ms = 162.3 → 170
    "Each user's stream": "likely 67–170 tok/s",
    # 500 tokens ÷ 7.7912 s = 64.2 → 64; ÷ 3.1243 s = 160.04 → 170
    "Whole batch's output": "likely 64–170 tok/s",
}
CALIBRATED_8B = "calibrated on vLLM measurements at batch 1"


def deltas(at: AppTest) -> dict[str, str]:
    """Each metric's note under its value (Streamlit's delta, shown without arrow or colour)."""
    return {m.label: m.delta for m in at.main.metric if m.delta}


def helps(at: AppTest) -> dict[str, str]:
    return {m.label: m.help for m in at.main.metric}


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.main.caption)


def chart_names(at: AppTest, index: int = 0) -> list[str]:
    spec = json.loads(at.get("plotly_chart")[index].proto.spec)
    return [trace.get("name", "") for trace in spec["data"]]


@pytest.fixture(scope="module")
def llama_overview(open_app) -> AppTest:
    return open_app(**LLAMA_8B_VLLM)


@pytest.fixture(scope="module")
def llama_latency(open_app) -> AppTest:
    return open_app("latency", **LLAMA_8B_VLLM)


def test_the_overview_shows_cores_likely_range_beside_each_latency_headline(llama_overview) -> None:
    assert deltas(llama_overview) == EXPECTED_8B
    # The same strings from core's own range through the app's formatting: the page adds nothing of its own.
    rng = likely_range(estimate(Scenario.from_flat(LLAMA_8B_VLLM)))
    assert rng.confidence == "calibrated" and rng.regime == "batch 1"
    assert EXPECTED_8B["Time to first token"] == f"likely {fmt.duration_range(rng.ttft_low_s, rng.ttft_high_s)}"
    assert EXPECTED_8B["Time per output token"] == f"likely {fmt.duration_range(rng.tpot_low_s, rng.tpot_high_s)}"
    assert EXPECTED_8B["Total latency"] == f"likely {fmt.duration_range(rng.total_low_s, rng.total_high_s)}"
    throughput = fmt.tokens_per_s_range(rng.output_tokens_per_s_low, rng.output_tokens_per_s_high)
    assert EXPECTED_8B["Whole batch's output"] == f"likely {throughput}"


def test_the_overview_names_the_engine_and_the_confidence(llama_overview) -> None:
    for label in EXPECTED_8B:
        assert CALIBRATED_8B[1:] in helps(llama_overview)[label]  # "Calibrated on ..." in each tooltip
        assert "engine: vLLM (MBU 73.0%, MFU 50.0%)" in helps(llama_overview)[label]
    shown = captions(llama_overview)
    assert "served by vLLM (MBU 73.0%, MFU 50.0%)" in shown  # the engine's MBU and MFU for this model
    assert "about 80% of real measurements" in shown and CALIBRATED_8B in shown
    # The headline values themselves are the estimate's: 61.44 ms, 7.45 ms, 3.79 s.
    values = {m.label: m.value for m in llama_overview.main.metric}
    assert (values["Time to first token"], values["Time per output token"], values["Total latency"]) == (
        "61.44 ms",
        "7.45 ms",
        "3.79 s",
    )


def test_the_lessons_ideal_physics_shows_its_numbers_and_no_range(open_app) -> None:
    at = open_app()
    values = {m.label: m.value for m in at.main.metric}
    assert values["Time to first token"] == "9.33 ms"  # 200 × 14 GFLOP ÷ 300 TFLOP/s
    assert values["Time per output token"] == "7.00 ms"  # 14 GB ÷ 2 TB/s
    assert values["Total latency"] == "3.51 s"  # 9.33 ms + 500 × 7 ms
    assert deltas(at) == {}
    shown = captions(at)
    assert "ideal physics (MBU = MFU = 100%, nothing added)" in shown
    assert likely.NO_RANGE in shown  # why: a calculation reproduced to the digit, not a measured server
    assert "likely" not in " ".join(m.help or "" for m in at.main.metric).lower()


def test_an_engine_never_measured_in_the_regime_is_extrapolated_and_says_so(open_app) -> None:
    # MLX at batch 8: no MLX row at batch > 1 in any set, so the batch > 1 spreads × 1.5: TTFT
    # (-0.39, 0.54) → 102.81 ms × e^-0.39 = 69.61 ms → 69 ms; × e^0.54 = 176.42 ms → 180 ms.
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", engine="mlx", batch="8")
    assert deltas(at)["Time to first token"] == "likely 69–180 ms"
    words = "extrapolated: no measurements of MLX (mlx-lm) at batches above 1, so the range is 1.5× wider on each side"
    assert words in captions(at)
    assert "Extrapolated: no measurements" in helps(at)["Time to first token"]


def test_edited_efficiency_numbers_are_said_to_be_yours(open_app) -> None:
    at = open_app(**LLAMA_8B_VLLM, mbu="0.5")
    assert "served by vLLM (MBU 50.0%, MFU 50.0%, your edited numbers)" in captions(at)
    assert "not your edits" in captions(at)


def test_the_latency_page_shows_the_ranges_and_the_band(llama_latency) -> None:
    assert deltas(llama_latency) == {
        "TPOT, model": EXPECTED_8B["Time per output token"],
        "TTFT, model": EXPECTED_8B["Time to first token"],
    }
    shown = captions(llama_latency)
    # total and throughput at M = 500, as on the Overview
    assert "Engine: vLLM (MBU 73.0%, MFU 50.0%). At M = 500, total 3.79 s (likely 3.1–7.8 s)" in shown
    assert "output 132 tok/s (likely 64–170 tok/s): the shaded band on the chart" in shown
    assert CALIBRATED_8B in shown
    names = chart_names(llama_latency)
    assert names[:2] == ["likely low", "likely range (about 80% of real servers)"]  # drawn first, under the line
    assert len(llama_latency.get("plotly_chart")[0].proto.spec) <= 100_000  # the figure budget, band included


def test_the_latency_page_at_the_defaults_has_no_band(open_app) -> None:
    at = open_app("latency")
    assert deltas(at) == {}
    assert likely.NO_RANGE in captions(at)
    assert not [n for n in chart_names(at) if n.startswith("likely")]


def test_the_band_is_cores_total_range_at_every_length() -> None:
    est = estimate(Scenario.from_flat(LLAMA_8B_VLLM))
    rng = likely_range(est)
    # the model's line at M = 250 and M = 500 (the scenario's own reply)
    line_s = [est.ttft_s + est.latency.decode_s / 2, est.total_s]
    band = likely.latency_band(est, line_s)
    assert band is not None
    low, high = band
    assert (low[0], high[0]) == (pytest.approx(rng.ttft_low_s), pytest.approx(rng.ttft_high_s))  # M = 0: TTFT's
    assert (low[-1], high[-1]) == (pytest.approx(rng.total_low_s), pytest.approx(rng.total_high_s))
    # halfway: 43.73 + 1,862.56 × 0.82696 = 1,584.0 ms; 364.31 + 1,862.56 × 1.99372 = 4,077.4 ms
    assert low[1] == pytest.approx(1.5840, rel=1e-3) and high[1] == pytest.approx(4.0774, rel=1e-3)
    assert likely.latency_band(estimate(Scenario.lesson()), [3.50933]) is None


def test_the_roofline_names_the_engine_and_its_efficiency(open_app) -> None:
    at = open_app("roofline", **LLAMA_8B_VLLM, wbits="4.5")
    intro = at.main.markdown[0].value
    assert "The engine is **vLLM**: its kernels reach 73.0% of the datasheet's memory bandwidth (MBU)" in intro
    assert "and 50.0% of its compute (MFU)" in intro
    # int4 weights are dequantised: vLLM's AWQ/GPTQ kernels reach 0.94 of its bandwidth for them
    assert "These 4.5-bit weights are unpacked inside the matmul: their reads reach 94.0% of that bandwidth." in intro
    assert "per decode step on vLLM here" in captions(at)


def test_the_roofline_at_the_defaults_is_ideal_physics(open_app) -> None:
    intro = open_app("roofline").main.markdown[0].value
    assert "The engine is **ideal physics**: MBU = MFU = 100%, so the roof below is the datasheet's own." in intro


@pytest.mark.parametrize(
    ("low", "high", "shown"),
    [
        (0.0636497, 0.7524952, "63–760 ms"),  # ms below a second at the high end; down and up to 2 figures
        (3.2379944, 8.7979011, "3.2–8.8 s"),
        (0.0070, 0.0090, "7.0–9.0 ms"),  # exact values stay put (7.0 × 10 is not rounded up to 71)
        (0.0070, 0.0099999, "7.0–10 ms"),  # 9.99 up is 10, not 10.0
        (0.0995, 0.998, "99–1,000 ms"),
        (0.07736, 2.9175, "77 ms–3.0 s"),  # each end in its own unit: the low one reads beside a TTFT in ms
        (0.9951, 1.0, "990 ms–1.0 s"),
    ],
)
def test_duration_ranges_round_outward_to_two_figures(low: float, high: float, shown: str) -> None:
    assert fmt.duration_range(low, high) == shown


def test_throughput_ranges_round_outward() -> None:
    assert fmt.tokens_per_s_range(56.83, 154.42) == "56–160 tok/s"
    assert fmt.tokens_per_s_range(431.97, 1340.15) == "430–1,400 tok/s"


def test_a_gpu_that_sustains_less_than_an_h100_says_so(open_app) -> None:
    # Llama 3.1 70B fp8 on 8 × MI300X under vLLM: MI300X's kernels sustain 0.85 of an H100's
    # bandwidth share and 0.64 of its compute share (core/presets/gpus.toml), so vLLM's 73 % and
    # 50 % apply to that: 73 % × 0.85 = 62.05 % and 50 % × 0.64 = 32 % of the datasheet in all.
    link = {"model": "llama-3.1-70b", "gpu": "mi300x", "gpus": "8", "wbits": "8", "engine": "vllm"}
    intro = open_app("roofline", **link).main.markdown[0].value
    assert "its kernels reach 73.0% of the memory bandwidth (MBU) and 50.0% of the compute (MFU) that this GPU" in intro
    assert (
        "kernels sustain a smaller fraction of their datasheet than an H100's: 85.0% of an H100's fraction for "
        "bandwidth and 64.0% for compute; in all, 62.0% of the datasheet's" in intro
    )
    assert "62.0% of the datasheet's bandwidth and 32.0% of its compute." in intro
    shown = captions(open_app(**link))
    assert (
        "served by vLLM (MBU 73.0%, MFU 50.0%; in all 62.0% of this GPU's datasheet bandwidth and 32.0% of its" in shown
    )
    # The lesson's ideal machine reads the datasheet, on any GPU: nothing to say.
    ideal = open_app("roofline", **{**link, "engine": "ideal"}).main.markdown[0].value
    assert "kernels sustain" not in ideal and "this GPU sustains" not in ideal


def test_the_roofline_says_when_the_vector_cores_cap_the_weights_stream(open_app) -> None:
    # int4 Llama 3.1 8B under vLLM on an A100 80GB (core's test_an_a100_streams_int4_weights_...):
    # 2.039e12 × 0.88 × 0.73 × 0.94 = 1.231 TB/s read, capped at 19.5e12 / 13.5 × 4.5 / 8 = 0.8125 TB/s.
    at = open_app("roofline", model="llama-3.1-8b", gpu="a100-80gb-sxm", engine="vllm", wbits="4.5")
    intro = " ".join(m.value for m in at.main.markdown)
    assert (
        "Unpacking caps them: at 13.5 FLOP a weight on its vector cores (19.5 TFLOP/s FP32), they stream at "
        "812 GB/s, not 1.23 TB/s." in intro
    )
    # On an RTX 4090 (82.6 TFLOP/s for 1,008 GB/s) the cap is far above the read: no sentence.
    # The chart's caption says where the steps sit and why: decode between the roofs, the weights' own
    # (dashed) at the cap, bending at 312e12 × 0.5 (vLLM's MFU) ÷ 0.8125e12 = 156e12 ÷ 0.8125e12 = 192
    # FLOP/byte; the KV cache at 2.039e12 × 0.88 × 0.73 = 1.31 TB/s.
    assert (
        "Dequantised weights (the dashed roof, its ridge at 192 FLOP/byte) stream at 812 GB/s, where the KV cache "
        "reads at 1.31 TB/s: decode sits between the two roofs" in captions(at)
    )
    at = open_app("roofline", model="llama-3.1-8b", gpu="rtx-4090", engine="vllm", wbits="4.5")
    assert "Unpacking caps" not in " ".join(m.value for m in at.main.markdown)
    # fp16 weights move at the group's one rate: on the roof.
    at = open_app("roofline", model="llama-3.1-8b", gpu="a100-80gb-sxm", engine="vllm")
    assert "Points sit on the roof: it is a bound." in captions(at)


def test_the_roofline_says_why_a_long_fp8_prefill_sits_under_the_roof(open_app) -> None:
    # fp8 weights beside the default 16-bit KV cache: attention multiplies at 16-bit, half the fp8 rate
    # (989.5 against 1,979 TFLOP/s on an H100, × vLLM's MFU 0.5: 494.75, shown 494.8, against 989.5),
    # so a 32,000-token prompt, whose attention is a good share of its maths, sits under the roof;
    # decode stays on it.
    at = open_app("roofline", model="llama-3.1-8b", gpu="h100-sxm", engine="vllm", wbits="8", prompt="32000")
    shown = captions(at)
    assert "Decode sits on the roof: it is a bound." in shown
    assert "its attention multiplies at 16-bit, 494.8 TFLOP/s, not the weights' 989.5 TFLOP/s." in shown


def test_the_roofline_says_why_a_padded_moe_prefill_sits_under_the_roof(open_app) -> None:
    # Qwen3-30B-A3B in bf16 under llama.cpp on a Radeon 8060S: each expert a prompt micro-batch touches
    # pays for RADEON_EXPERT_PADDING_TOKENS (40) more tokens of maths (tests/core/test_engine_costs.py
    # derives the padding FLOPs by hand), so a 2,048-token prefill's useful FLOP/s fall under the roof;
    # the page prints core's attained rate. Decode stays on the roof.
    link = {"model": "qwen3-30b-a3b", "gpu": "radeon-8060s", "engine": "llama.cpp-radeon", "prompt": "2048"}
    shown = captions(open_app("roofline", **link))
    scenario = Scenario.from_flat({**Scenario.lesson().to_flat(), **link, "wbits": "16", "out": "500"})
    result = estimate(scenario)
    assert result.prefill.attained_flops_per_s < 0.8 * result.machine.compute_flops_per_s
    assert "Decode sits on the roof: it is a bound." in shown
    assert (
        f"It sits under the roof, at {fmt.tflops(result.prefill.attained_flops_per_s)} of the model's maths: each "
        f"expert its prompt's tokens reach pays for {RADEON_EXPERT_PADDING_TOKENS:g} more tokens of maths" in shown
    )
    # A 16-token prompt is memory-bound and sits on the roof, padding or not: nothing to explain.
    short = captions(open_app("roofline", **{**link, "prompt": "16"}))
    assert "under the roof" not in short and "Points sit on the roof" in short
    # A dense model pays no padding: on the roof.
    dense = captions(open_app("roofline", **{**link, "model": "qwen3-8b"}))
    assert "pays for" not in dense and "Points sit on the roof" in dense
