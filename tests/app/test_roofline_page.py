"""The "Roofline & batching" page through the entry file (AppTest, no browser)."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

LLAMA_70B_FP8 = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": "2", "wbits": "8", "engine": "typical"}

# The lesson's Part 2 table: batch B does B FLOP/byte; the step is 14 GB ÷ 2 TB/s = 7 ms until
# B reaches the 150 FLOP/byte balance, then B × 14 GFLOP ÷ 300 TFLOP/s (300 → 14 ms);
# throughput B ÷ step: 1/7 ms = 143, 8/7 ms = 1,143, …, 150/7 ms = 300/14 ms = 21,429 tok/s.
LESSON_ROWS = [
    ["1", "1.0 FLOP/byte", "7.000 ms", "143 tok/s", "memory", "yes", "14.00 GB"],
    ["8", "8.0 FLOP/byte", "7.000 ms", "1,143 tok/s", "memory", "yes", "14.00 GB"],
    ["16", "16.0 FLOP/byte", "7.000 ms", "2,286 tok/s", "memory", "yes", "14.00 GB"],
    ["64", "64.0 FLOP/byte", "7.000 ms", "9,143 tok/s", "memory", "yes", "14.00 GB"],
    ["150", "150 FLOP/byte", "7.000 ms", "21,429 tok/s", "memory", "yes", "14.00 GB"],
    ["300", "300 FLOP/byte", "14.000 ms", "21,429 tok/s", "compute", "yes", "14.00 GB"],
]


# The rows below are written in the physics' order; the page puts fits and throughput first (a phone's view).
ROW_ORDER = ["batch", "intensity", "step time", "throughput", "bound by", "fits", "memory per GPU"]


def rows(at: AppTest) -> list[list[str]]:
    return at.main.dataframe[0].value[ROW_ORDER].astype(str).values.tolist()


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


@pytest.fixture(scope="module")
def default_page(open_app) -> AppTest:
    return open_app("roofline")


def test_the_table_is_the_lessons(default_page):
    assert rows(default_page) == LESSON_ROWS
    assert list(default_page.main.dataframe[0].value.columns) == [
        "batch",
        "fits",
        "throughput",
        "step time",
        "bound by",
        "intensity",
        "memory per GPU",
    ]


def test_headline_metrics_at_the_defaults(default_page):
    shown = metrics(default_page)
    assert shown["Machine balance (ridge)"] == "150 FLOP/byte"  # 300 TFLOP/s ÷ 2 TB/s
    assert shown["Critical batch"] == "150"
    assert shown["Largest batch that fits"] == "any"  # the toy model has no KV cache
    assert "the weights take 14.00 GB of 80.00 GB" in default_page.main.caption[0].value  # 7e9 × 2 bytes
    assert "**memory-bound**" in default_page.main.markdown[0].value


def test_charts_at_the_defaults(default_page):
    charts = default_page.main.get("plotly_chart")
    assert len(charts) == 2
    for chart in charts:
        assert len(chart.proto.spec) <= 100_000
    sweep = json.loads(charts[1].proto.spec)
    assert not [t for t in sweep["data"] if t["name"].startswith("past the memory ceiling")]  # no KV cache
    assert "critical batch 150" in [t.get("name") for t in sweep["data"]]
    roof = json.loads(charts[0].proto.spec)
    assert "prefill (compute-bound)" in [t.get("name") for t in roof["data"]]  # 200 FLOP/byte > 150


def test_the_scenarios_batch_joins_the_lessons_rows(open_app):
    at = open_app("roofline", batch="32")
    table = rows(at)
    assert [r[0] for r in table] == ["1", "8", "16", "32", "64", "150", "300"]
    # 32 FLOP/byte, still 7 ms, 32 ÷ 7 ms = 4,571 tok/s.
    assert table[3] == ["32", "32.0 FLOP/byte", "7.000 ms", "4,571 tok/s", "memory", "yes", "14.00 GB"]
    assert "a decode step at batch 32 (the mean over the reply" in at.main.markdown[0].value
    assert "does 32.0 FLOP/byte, so it is **memory-bound**" in at.main.markdown[0].value


def test_a_real_model_shows_its_memory_ceiling(open_app):
    at = open_app("roofline", **LLAMA_70B_FP8)
    shown = metrics(at)
    # KV per token 2 × 80 layers × 8 heads × 128 × 2 bytes = 327,680 B; × 700 tokens = 229.4 MB a
    # sequence; (2 × 80 GB - 70.55 GB of fp8 weights) ÷ 229.4 MB = 389.97 → 389 sequences.
    assert shown["Largest batch that fits"] == "389"
    # 70.55e9 × 1 byte split over 2 GPUs of 80 GB each.
    assert "Memory per GPU: the weights take 35.27 GB of 80.00 GB" in at.main.caption[0].value
    table = rows(at)
    batches = [int(r[0].replace(",", "")) for r in table]
    assert batches == sorted(batches)
    # The lesson's rows stay; the critical batch and the ceiling join them.
    assert {1, 8, 16, 64, 150, 300, 389, int(shown["Critical batch"])} == set(batches)
    ceiling = table[batches.index(389)]
    # Per GPU, as the caption counts it: (70.55 + 389 × 0.229376 GB) ÷ 2 GPUs = 79.89 GB of 80.
    assert ceiling[-2] == "yes" and ceiling[-1] == "79.89 GB"
    sweep = json.loads(at.main.get("plotly_chart")[1].proto.spec)
    assert sweep["data"][0]["name"] == "past the memory ceiling (389 fit)"
    assert any(a["text"] == "memory ceiling: 389 sequences fit" for a in sweep["layout"]["annotations"])


def test_the_sweeps_words_follow_its_numbers(default_page, open_app):
    captions = "\n".join(c.value for c in default_page.main.caption)
    # The lesson's toy (no KV cache, no per-sequence cost): 7.00 ms at batch 1 and at the critical 150.
    assert (
        "Up to the critical batch (150) the step time barely moves (7.00 ms → 7.00 ms) while throughput climbs"
        in captions
    )
    # Llama 3.1 70B fp8 on 2 × H100: 18.62 ms at batch 1; at 389 (the most that fits) 70.55 GB of weights and
    # 57.3 GB of caches at 5.896 TB/s (21.7 ms) + 35.3 ms of fixed costs, 26.5 ms of them 389 × 68 µs a
    # sequence = 56.96 ms: 3.1x, not "barely". Its critical batch, 739, is past what fits.
    at = open_app("roofline", **LLAMA_70B_FP8)
    captions = "\n".join(c.value for c in at.main.caption)
    assert (
        "Up to the largest batch that fits (389) the step time rises 3.1x (18.62 ms → 56.96 ms): each sequence adds "
        "its KV-cache read and the engine's per-sequence work to every step." in captions
    )
    assert "The critical batch (739) lies past what fits: memory ends the climb first." in captions
    assert "barely moves" not in captions


def test_a_sweep_where_nothing_fits_does_not_say_memory_ends_the_climb(open_app):
    # 16-bit Llama 3.1 70B (141 GB) on one 80 GB A100: not one sequence fits, so no climb ends anywhere.
    at = open_app("roofline", model="llama-3.1-70b", gpu="a100-80gb-sxm")
    captions = "\n".join(c.value for c in at.main.caption)
    assert "None of it runs here: not one sequence fits in memory, so these are the times as if it did." in captions
    assert "memory ends the climb" not in captions


def test_a_step_compute_bound_left_of_the_ridge_says_why(open_app):
    # Qwen3-30B-A3B 4.5-bit on an RTX 4090 under llama.cpp: its 200-token prompt does 78.9 FLOP/byte, left of
    # the 110 ridge, yet is compute-bound (each expert pays 100 tokens of tile padding); Llama 3.1 70B fp8's
    # batch 739 at 586 FLOP/byte is compute-bound left of 591 (its attention multiplies at half the rate).
    at = open_app("roofline", model="qwen3-30b-a3b", gpu="rtx-4090", engine="llama.cpp", wbits="4.5")
    captions = "\n".join(c.value for c in at.main.caption)
    assert "78.9 FLOP/byte, compute-bound although left of the ridge (110 FLOP/byte)." in captions
    at = open_app("roofline", **LLAMA_70B_FP8)
    captions = "\n".join(c.value for c in at.main.caption)
    assert "so a batch a little left of the ridge is already compute-bound (batch 739 at 586 FLOP/byte)" in captions


def test_weights_that_do_not_fit_warn(open_app):
    # Llama 3.1 70B in fp16 on one 80 GB GPU: 70.55e9 × 2 = 141.1 GB of weights alone.
    at = open_app("roofline", model="llama-3.1-70b", gpu="h100-sxm", gpus="1", wbits="16")
    assert metrics(at)["Largest batch that fits"] == "0"
    assert "do not fit" in at.main.warning[0].value
    assert all(r[-2] == "no" for r in rows(at))  # "fits", before the memory per GPU
    # Nothing is left for KV caches, and the caption does not say there is.
    assert "Memory per GPU: the weights take 141.10 GB of 80.00 GB; they alone overflow it: nothing is left." in [
        c.value for c in at.main.caption
    ]


def test_an_eager_engine_says_its_host_sets_the_pace(open_app):
    # Llama 3.1 8B on one H100 under HF transformers, batch 1, 200 → 500 tokens: its launches are the
    # host's, 32 layers × 1.17 ms = 37.440 ms a step, beside the GPU's mean decode step of 5.536 ms
    # (16.06 GB + 449.5 tokens × 131,072 B of KV on average, at 3.35e12 × 0.88 = 5.468 ms, + 68 µs per
    # sequence): every step waits on the host, so the caption says so instead of "fixed costs on top".
    at = open_app("roofline", model="llama-3.1-8b", gpu="h100-sxm", engine="hf-transformers")
    text = "\n".join(c.value for c in at.main.caption)
    # Fitted costs read to three significant figures (37.44 → "37.4 ms", 5.536 → "5.54 ms").
    assert "the host launches each step's kernels (37.4 ms a step) while the GPU works (5.54 ms for" in text
    assert "a step takes the longer of the two, here the host's at every step: the GPU waits." in text
    assert "come on top" not in text
    # The table names the host where it sets the step, and the sweep's caption says up to where: batch 322
    # (the reply's last step, at 699 tokens of context, outlasts the host from batch 323: core's test).
    table = rows(at)
    assert [r[4] for r in table if r[0] in ("1", "300")] == ["host (GPU: memory)"] * 2 and table[-1][4] == "memory"
    assert "no step is quicker than the host's 37.4 ms of launches: up to batch 322 the step waits on it" in text
    # On an A10G (528 GB/s at MBU 0.88), batch 4 after a 10,000-token prompt: the mean step reads 16.06 GB
    # + 4 × 10,249.5 × 131,072 B = 21.43 GB in 40.6 ms, longer than the host's 37.44 ms, which it hides.
    at = open_app("roofline", model="llama-3.1-8b", gpu="a10g", engine="hf-transformers", batch="4", prompt="10000")
    assert "here the GPU's at every step: it hides the host." in "\n".join(c.value for c in at.main.caption)
    # A10G, batch 4, 5,000 → 4,000 tokens: the first 1,800 steps wait on the host, the rest outlast it
    # (core's test_an_eager_reply_turns_from_host_bound_to_gpu_bound_as_its_caches_grow derives the 1,800).
    at = open_app(
        "roofline", model="llama-3.1-8b", gpu="a10g", engine="hf-transformers", batch="4", prompt="5000", out="4000"
    )
    text = "\n".join(c.value for c in at.main.caption)
    assert "here the host's for the first steps, then the GPU's as the caches grow." in text


def test_the_overview_says_a_host_bound_reply_is_a_straight_line(open_app):
    # Llama 3.1 8B on one H100 under HF transformers: every step's GPU work (5.5 ms) is under the host's
    # 37.44 ms, so each step is exactly the host's. 1,000 → 37 tokens summed to 7e-18 off it before the
    # floor's sum was made exact, and the caption fell back to "each a little slower than the last".
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", engine="hf-transformers")
    shown = "\n".join(c.value for c in at.main.caption)
    assert "500 decode steps, each as long as the host takes to launch it: a straight line" in shown
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", engine="hf-transformers", prompt="1000", out="37")
    assert "37 decode steps, each as long as the host takes to launch it" in "\n".join(c.value for c in at.main.caption)
    # Its wall is the host's, not memory's: fewer bits or more bandwidth would not move it.
    assert "**The host sets the pace.**" in at.main.info[0].value
    # Its range says the host's speed is the one the model assumes per layer: 37.44 ms ÷ 32 layers = 1.17 ms.
    captions = "\n".join(c.value for c in at.main.caption)
    assert "measured hosts launch a layer in about 0.45-1.2 ms; here 1.17 ms" in captions
    # ...and that its range is the eager regime's: on a fast host a token may take e^-0.65 = 0.52× the estimate.
    assert "sized on eager engines' measurements alone: on a fast host a token may take 0.52× the estimate" in captions
    # The engine is named by its pace, not by its GPU shares alone (88 %, the typical engine's).
    assert "served by HF transformers (eager) (the host's 1.17 ms a layer of launches; on the GPU MBU 88.0%" in captions
    assert "calibrated on HF transformers (eager) measurements where the host launches every kernel" in captions
    typical = open_app(model="llama-3.1-8b", gpu="h100-sxm", engine="typical")
    assert "each a little slower than the last as the KV cache grows" in "\n".join(
        c.value for c in typical.main.caption
    )


def test_switching_the_overlap_off_adds_the_launches_to_every_step(open_app):
    # The same HF scenario with ?overlap=false: 37.44 ms of launches now add to the GPU's 5.536 ms
    # mean decode step (16.06 GB + 449.5 × 131,072 B at 2.948e12 B/s = 5.468 ms, + 68 µs): 42.98 ms,
    # and the scenario is said to be the user's edit of the engine's numbers.
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", engine="hf-transformers", overlap="false")
    assert metrics(at)["Time per output token"] == "42.98 ms"
    assert "served by HF transformers (eager) (MBU 88.0%, MFU 88.0%, your edited numbers)" in "\n".join(
        c.value for c in at.main.caption
    ).replace("\\", "")


def test_where_fixed_costs_are_most_of_the_step_the_headline_says_so_as_the_overview_does(open_app):
    # DeepSeek-V3 on 8 × H200 under SGLang, batch 1: 61 layers × (30 µs launches + 80 µs MoE routing) and
    # 122 all-reduces × 26 µs are 10.2 of the 11.3 ms step (90.1 %); the headline's bold "memory-bound"
    # alone read as the reason, beside a caption that said the fixed costs set the pace.
    at = open_app("roofline", model="deepseek-v3", gpu="h200", gpus="8", engine="sglang")
    assert (
        "so it is **memory-bound** on the roof, though the engine's fixed costs (90.1% of the step) **set its pace**"
        in (at.markdown[0].value)
    )
    llama = open_app("roofline", model="llama-3.1-8b", gpu="h100-sxm", engine="vllm")  # fixed costs a minority
    assert "so it is **memory-bound**. Batching" in llama.markdown[0].value
