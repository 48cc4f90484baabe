"""The Overview page: the lesson's numbers at the defaults, and each input moving exactly its metrics.

The lesson's machine (Day 36): a 7B model in fp16 (14e9 bytes, 14e9 FLOP per token) on a
2e12 B/s, 300e12 FLOP/s GPU, ideal efficiency, no KV cache. Every expected value below is
derived by hand from that in its comment.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

LESSON = {
    # $0.000850 × 100,000 replies × 30 days
    "Monthly bill": "$2,550",
    # 200 × $0.50/M + 500 × $1.50/M = $0.000100 + $0.000750
    "Cost per reply": "$0.000850",
    # 12 × $2,550
    "Yearly bill": "$30,600",
    # prefill of 200 tokens: max(14e9 / 2e12 = 7 ms, 2 × 7e9 × 200 / 300e12 = 9.33 ms) = 9.33 ms
    "Time to first token": "9.33 ms",
    # decode: max(14e9 / 2e12 = 7 ms, 2 × 7e9 / 300e12 = 0.047 ms) = 7.00 ms
    "Time per output token": "7.00 ms",
    # 9.33 ms + 500 × 7 ms = 3,509.33 ms
    "Total latency": "3.51 s",
    # one user streams 1 / 7 ms = 142.9 tok/s
    "Each user's stream": "143 tok/s",
    # 1 × 500 tokens / 3.50933 s = 142.5 tok/s: the whole batch (of one), prefill included
    "Whole batch's output": "142 tok/s",
    # 7 ms ÷ (9.33 ms / 200 prompt tokens) = 150
    "Prompt vs output token": "150.0x",
}


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.main.metric}


def text(at: AppTest) -> str:
    return "\n".join(
        [m.value for m in at.main.markdown]
        + [c.value for c in at.main.caption]
        + [e.value for e in [*at.main.info, *at.main.success, *at.main.error]]
    )


def changed(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    return {label: value for label, value in after.items() if before[label] != value}


def test_the_defaults_read_exactly_the_lessons_numbers(open_app) -> None:
    at = open_app()
    assert metrics(at) == LESSON
    body = text(at)
    # Output is 500 × 1.5e-6 = $0.00075 of $0.00085: 88.2 %; twice the reply: 1 + 0.882 = 1.9x the cost.
    assert "output tokens are 88.2% of each reply's cost, the prompt 11.8%" in body
    assert "A reply twice as long costs 1.9x as much" in body
    assert "Prices typed by hand ($0.500 in, $1.50 out per million tokens" in body
    # intensity 1 FLOP/byte against a balance of 300e12 / 2e12 = 150; idle 1 - 1/150 = 99.3 %
    assert "**Memory-bound.**" in body and "1.0 FLOP/byte" in body and "150 FLOP/byte" in body
    assert "99.3%" in body
    assert "about 150 make the step compute-bound" in body  # the lesson's batch 150
    # 14 GB of weights, no KV cache, on one 80 GB GPU
    assert "Per GPU: weights 14.00 GB + KV cache 0.00 GB = **14.00 GB** of 80.00 GB." in body
    assert "memory never limits the batch" in body


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        # prefill 1,000 tokens: max(7 ms, 2 × 7e9 × 1000 / 300e12 = 46.67 ms); total 46.67 + 3,500 ms;
        # 500 / 3.54667 s = 141 tok/s; 1000 × 0.5e-6 + 500 × 1.5e-6 = $0.001250; × 3e6 = $3,750.
        (
            "prompt",
            1000,
            {
                "Time to first token": "46.67 ms",
                "Total latency": "3.55 s",
                "Whole batch's output": "141 tok/s",
                "Cost per reply": "$0.00125",
                "Monthly bill": "$3,750",
                "Yearly bill": "$45,000",
            },
        ),
        # 1,000 output tokens: 9.33 + 1000 × 7 = 7,009.33 ms; 1000 / 7.00933 s = 143 tok/s;
        # 200 × 0.5e-6 + 1000 × 1.5e-6 = $0.001600; × 3e6 = $4,800. TTFT and TPOT unchanged.
        (
            "out",
            1000,
            {
                "Total latency": "7.01 s",
                "Whole batch's output": "143 tok/s",
                "Cost per reply": "$0.00160",
                "Monthly bill": "$4,800",
                "Yearly bill": "$57,600",
            },
        ),
        # batch 64: prefill 64 × 200 tokens = 2 × 7e9 × 12,800 / 300e12 = 597.33 ms; decode still
        # max(7 ms, 2 × 7e9 × 64 / 300e12 = 2.99 ms) = 7 ms; 597.33 + 3,500 = 4,097.33 ms;
        # 64 × 500 / 4.09733 s = 7,810 tok/s. The per-reply bill does not depend on the batch.
        (
            "batch",
            64,
            # One output token vs one prompt token: 7 ms ÷ (597.33 ms / 200) = 2.3x (the prefill is compute-bound).
            {
                "Time to first token": "597.33 ms",
                "Total latency": "4.10 s",
                "Whole batch's output": "7,810 tok/s",
                "Prompt vs output token": "2.3x",
            },
        ),
        # input $1.00/M: 200 × 1e-6 + 500 × 1.5e-6 = $0.000950; × 3e6 = $2,850. Latency unchanged.
        ("pin", 1.0, {"Cost per reply": "$0.000950", "Monthly bill": "$2,850", "Yearly bill": "$34,200"}),
        # output $3.00/M: 200 × 0.5e-6 + 500 × 3e-6 = $0.001600; × 3e6 = $4,800.
        ("pout", 3.0, {"Cost per reply": "$0.00160", "Monthly bill": "$4,800", "Yearly bill": "$57,600"}),
        # 200,000 replies a day: $0.000850 × 200,000 × 30 = $5,100; only the month and year move.
        ("replies", 200_000, {"Monthly bill": "$5,100", "Yearly bill": "$61,200"}),
    ],
    ids=["prompt", "output", "batch", "input-price", "output-price", "replies"],
)
def test_each_input_changes_exactly_its_metrics(open_app, key: str, value: float, expected: dict) -> None:
    at = open_app()
    at.number_input(key=key).set_value(value).run()
    assert changed(LESSON, metrics(at)) == expected


def test_a_faster_gpu_moves_only_the_clock(open_app) -> None:
    at = open_app()
    at.selectbox(key="gpu").set_value("h100-sxm").run()  # a real GPU switches to calibrated...
    at.radio(key="engine").set_value("ideal").run()  # ...back to the lesson's physics, to compare
    # H100 SXM: 3.35e12 B/s, 989.5e12 FLOP/s. Decode 14e9 / 3.35e12 = 4.179 ms; prefill
    # max(4.179 ms, 2.8e12 / 989.5e12 = 2.83 ms) = 4.18 ms (now memory-bound too);
    # total 501 × 4.179 ms = 2,093.7 ms; 500 / 2.0937 s = 239 tok/s, and each user 1 / 4.179 ms = 239;
    # one output token = 4.179 ms ÷ (4.179 ms / 200) = 200 prompt tokens. The bill is the API's: unchanged.
    assert changed(LESSON, metrics(at)) == {
        "Time to first token": "4.18 ms",
        "Time per output token": "4.18 ms",
        "Total latency": "2.09 s",
        "Each user's stream": "239 tok/s",
        "Whole batch's output": "239 tok/s",
        "Prompt vs output token": "200.0x",
    }
    # Balance 989.5e12 / 3.35e12 = 295 FLOP/byte.
    assert "295 FLOP/byte" in text(at)


def test_a_server_engines_first_token_names_its_path_and_the_ratio_leaves_it_out(open_app) -> None:
    # Llama 3.1 8B on an H100 under vLLM: TTFT 61.44 ms is the 54 ms server path + a 7.44 ms pass over
    # 200 tokens; one output token (7.45 ms) is as long as 7.45 ÷ (7.44 ÷ 200) = 200 prompt tokens, not
    # 7.45 ÷ (61.44 ÷ 200) = 24: the path is no prompt token's cost, and the tile's words say so.
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", engine="vllm")
    assert metrics(at)["Prompt vs output token"] == "200.4x"
    shown = "\n".join(c.value for c in at.main.caption)
    assert "one parallel pass over 200 tokens of prompt, after the server's 54 ms path in and out." in shown
    assert (
        "prompt tokens share one pass (the prefill pass only: the server's fixed path before it is left out)." in shown
    )
    # The lesson's machine has no server path: its words stay as they were.
    lesson = "\n".join(c.value for c in open_app().main.caption)
    assert "one parallel pass over 200 tokens of prompt." in lesson and "the server's fixed path" not in lesson
    # The ratio holds for this prompt's length (the Latency line's asymmetry uses the reply's): it says which.
    assert "as long as this many prompt tokens, at this 200-token prompt:" in lesson


def test_a_big_batch_hits_the_compute_wall(open_app) -> None:
    # batch 4,096: intensity 4,096 FLOP/byte > 150, so decode is compute-bound.
    at = open_app(batch="4096")
    assert "**Compute-bound.**" in text(at)


def test_a_real_model_shows_its_kv_cache_and_the_largest_batch_that_fits(open_app) -> None:
    at = open_app(model="llama-3.1-70b", gpu="h100-sxm", gpus="2", wbits="8", engine="typical")
    body = text(at)
    # Weights 70.55e9 × 1 byte; KV 2 × 80 layers × 8 heads × 128 × 2 bytes = 327,680 B per token
    # × 700 tokens = 0.23 GB; (160 - 70.55) GB / 0.229376 GB = 389.97 → 389 sequences. Per GPU
    # (2-way tensor parallel, 8 KV heads split 4 + 4): 35.27 GB + 0.11 GB = 35.39 GB of 80 GB.
    assert "Per GPU: weights 35.27 GB + KV cache 0.11 GB = **35.39 GB** of 80.00 GB." in body
    assert "**389**" in body
    assert metrics(at)["Cost per reply"] == "$0.000850"  # the API bill does not depend on the hardware


def test_weights_that_do_not_fit_are_an_error_on_the_page(open_app) -> None:
    at = open_app(model="llama-3.1-405b", gpu="h100-sxm")
    assert [e.value for e in at.main.error][0].startswith("Does not fit.")


def test_the_overview_says_its_numbers_are_one_static_batch_and_links_the_plan(open_app) -> None:
    at = open_app(batch="4")
    assert any("one static batch of 4 requests" in c.value for c in at.main.caption)
    labels = [link.proto.label for link in at.main.get("page_link")]
    assert "Capacity plan: a fleet for your traffic" in labels and "Compare: APIs and fleets" in labels


@pytest.mark.parametrize(
    ("batch", "meaning"),
    [
        ("1", "Output tokens per second of the one request, the wait for its first token included."),
        ("8", "Output tokens per second of all 8 requests together, prefill included."),
    ],
)
def test_the_whole_batch_caption_counts_its_requests_in_words(open_app, batch: str, meaning: str) -> None:
    # Not "of all 1 request together": one request is said as one.
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", batch=batch)
    assert meaning in [c.value for c in at.main.caption]


@pytest.mark.parametrize(
    ("query", "why"),
    [
        # DeepSeek-V3's latent (512 + 64 wide) is read by all 128 heads, so each of 8 GPUs keeps it whole:
        # 8 copies, though 128 heads split evenly over 8 (core.memory.kv_replication).
        (
            {"model": "deepseek-v3", "gpu": "h200", "gpus": "8", "wbits": "8"},
            "so each of the 8 GPUs holds the whole KV cache (8× over).",
        ),
        # Qwen3-235B-A22B has 4 KV heads: on 8 GPUs each holds ceil(4 / 8) = 1, 8 × 1 / 4 = 2 copies.
        (
            {"model": "qwen3-235b-a22b", "gpu": "h200", "gpus": "8", "wbits": "8"},
            "With 8 GPUs and 4 KV heads the KV cache is held 2× over (a GPU cannot hold part of a head).",
        ),
    ],
)
def test_the_kv_caches_copies_are_said_with_their_cause(open_app, query: dict, why: str) -> None:
    body = text(open_app(**query))
    assert why in body
    assert body.count("× over") == 1


def test_a_long_prompt_is_said_to_drive_the_bill_at_its_providers_tier(open_app) -> None:
    # Claude Sonnet 4.5: $3 in, $15 out per million; a prompt over 200,000 tokens pays $6 and $22.50 for the
    # whole request. 250,000 × $6e-6 = $1.50 + 500 × $22.5e-6 = $0.01125 → $1.51125 a reply: the prompt is
    # 99.3 % of it, and twice the prompt 1 + 0.993 = 2.0x the cost. Twice the reply would be 1.007x: its
    # length is not what to estimate first.
    at = open_app(api="anthropic/claude-sonnet-4-5", prompt="250000")
    assert metrics(at)["Cost per reply"] == "$1.51"
    body = text(at)
    assert "output tokens are 0.7% of each reply's cost, the prompt 99.3%" in body
    assert "A prompt twice as long costs about 2.0x as much: estimate the prompt's length first." in body
    assert "This prompt is over 200,000 tokens, so the whole request pays the provider's long-prompt rates" in body
    assert "estimate the reply's length first" not in body


def test_a_setup_that_does_not_fit_says_its_times_are_no_servers_and_gives_no_range(open_app) -> None:
    # Llama 3.1 70B in 16 bits is 141.1 GB on one 40 GB A100: no server runs it, so the typical engine's
    # times carry no "likely" range, and the page says why before the numbers.
    at = open_app(model="llama-3.1-70b", gpu="a100-40gb", engine="typical")
    captions = [c.value for c in at.main.caption]
    assert "**It does not fit in memory (said above): these are the times the physics gives as if it did" in captions[2]
    assert not any(m.delta for m in at.main.metric)  # no "likely …" under any number
    fits = open_app(model="llama-3.1-70b", gpu="h100-sxm", gpus="2", wbits="8", engine="typical")
    assert any((m.delta or "").startswith("likely ") for m in fits.main.metric)


def test_the_walls_advice_asks_for_room_first_when_not_one_request_fits(open_app) -> None:
    # 141.1 GB of weights on a 40 GB A100: batching cannot be the fix (0 fit), memory is.
    body = text(open_app(model="llama-3.1-70b", gpu="a100-40gb", engine="typical"))
    assert (
        "What would move it: room in memory first (more GPUs, fewer bits per weight or per KV value): not one "
        "request fits yet; then, for speed, fewer bytes per step or more bandwidth to read them with." in body
    )
    assert "no more requests fit beside these" not in body
    assert body.count("fewer bits per weight") == body.count("fewer bits per weight or per KV value")  # said once


def test_a_step_that_is_mostly_fixed_costs_is_not_called_memory_bound(open_app) -> None:
    # DeepSeek-V3 (FP8, as it ships) on 8 × H200, typical engine, batch 1: each 11.32 ms decode step is 10.20 ms
    # of fixed costs (61 layers × (30 µs launches + 80 µs MoE routing) = 6.71 ms, 122 all-reduces × 26 µs =
    # 3.17 ms, 61 × 8 expert GEMMs × 0.5 µs = 0.24 ms, 68 µs for the sequence: 10.19) and 1.12 ms of reading
    # its weights and cache. It was "Memory-bound", with
    # "a GPU with more memory bandwidth, or more GPUs" to move it: neither would.
    at = open_app(model="deepseek-v3", gpu="h200", gpus="8")
    (wall,) = [i.value for i in at.main.info if "set the pace" in i.value or "bound" in i.value[:20]]
    assert wall.startswith(
        "**Fixed costs set the pace.** Of each 11.32 ms decode step, 10.20 ms (90.1%) is the engine's cost per step"
    )
    assert "reading the weights and the KV cache takes 1.12 ms (memory-bound)" in wall
    assert "Fewer bits per weight or more bandwidth would shorten only the 1.12 ms." in wall
    assert "**Memory-bound.**" not in wall
    # Llama 3.1 8B on one H100 (1.03 of 6.50 ms fixed) stays memory-bound, with the memory advice.
    (wall,) = [
        i.value for i in open_app(model="llama-3.1-8b", gpu="h100-sxm").main.info if "**Memory-bound.**" in i.value
    ]
    assert "a GPU with more memory bandwidth" in wall


def test_the_roofline_says_when_fixed_costs_set_the_pace(open_app) -> None:
    at = open_app("roofline", model="deepseek-v3", gpu="h200", gpus="8")
    text = "\n".join(c.value for c in at.main.caption) + "\n".join(m.value for m in at.main.markdown)
    assert "Here they are 90.1% of the mean decode step (11.32 ms): they, not the roof, set its pace" in text


def test_an_api_beside_the_lessons_toy_says_to_pick_a_model(open_app) -> None:
    # A product manager who picks GPT-4o read the toy 7B's 2.14 s as a latency beside its bill.
    at = open_app(api="openai/gpt-4o")
    (line,) = [c.value for c in at.main.caption if c.value.startswith("If you served the replies yourself")]
    assert line.endswith(
        "these latencies are the self-hosted model's, not that API's. The model is still the lesson's toy: pick the "
        "open model you would run before comparing."
    )
    real = open_app(api="openai/gpt-4o", model="llama-3.1-8b", gpu="h100-sxm")
    assert not [c for c in real.main.caption if "still the lesson's toy" in c.value]


def test_the_self_hosting_line_says_what_mbu_and_mfu_are(open_app) -> None:
    # A product manager reads the Overview too: "served by vLLM (MBU 73.0%, MFU 50.0%)" was unexplained.
    at = open_app(model="llama-3.1-8b", gpu="h100-sxm", engine="vllm")
    (line,) = [c.value for c in at.main.caption if c.value.startswith("If you served the replies yourself")]
    assert "served by vLLM (MBU 73.0%, MFU 50.0%)" in line
    assert "MBU and MFU: the shares of the GPU's memory bandwidth and compute its kernels reach." in line


def test_the_memory_box_says_what_a_server_holds_beside_the_cards_largest_batch(open_app) -> None:
    # gpt-oss-120b as shipped (65.19 GB) on one H100 under vLLM. The card: 80 GB - 65.19 GB leaves room for
    # 485 sequences of 700 tokens at 16-bit KV. vLLM keeps 80 × 0.9 - 3.22 = 68.78 GB, and holds 168 at
    # once, caches paged at their current lengths: the Capacity plan's figure, which had stood alone on
    # its page against the Overview's 485.
    from core.lengths import RequestLengths
    from core.scenario import Scenario

    at = open_app(model="gpt-oss-120b", gpu="h100-sxm", engine="vllm")
    (box,) = [s.value for s in at.success if s.value.startswith("Fits.")]
    assert "The largest batch that fits at 700 tokens per sequence: **485**." in box
    assert box.endswith("in the 68.78 GB per GPU vLLM uses, with each cache paged at its current length, 168 run "
                        "at once, as the Capacity plan counts what fits.")  # fmt: skip
    scenario = Scenario.from_flat({"model": "gpt-oss-120b", "gpu": "h100-sxm", "engine": "vllm"})
    assert scenario.replica().max_concurrency_that_fits(RequestLengths.of(scenario.workload)) == 168
    # The lesson's physics keeps nothing back: nothing to add.
    assert "A server keeps" not in " ".join(s.value for s in open_app().success)
