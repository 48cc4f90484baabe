"""The model against published measurements: the split, the fit, and the medians pinned per set and slice."""

from __future__ import annotations

import pytest

from core.calibration import median_absolute_error_pct, percentage_error, predict, slice_errors
from core.engine import ENGINES
from core.engine_fit import fit_profiles, ideal_profiles
from core.measurements import SETS, load
from core.range_calibration import coverage, log_residual


@pytest.fixture(scope="module")
def sets():
    return {name: list(load(name)) for name in SETS}


def test_the_sets_and_their_sources(sets):
    assert {name: len(rows) for name, rows in sets.items()} == {
        "fit": 246,
        "validation": 149,
        "test": 97,
        "fresh": 72,
        "fresh2": 114,
        "fresh3": 82,
        "fresh4": 73,
        "fresh5": 69,
        "fresh6": 21,
        "fresh7": 59,
        "fresh8": 30,
        "fresh9": 48,
        "fresh10": 13,
        "fresh11": 25,
        "fresh12": 32,
        "fresh13": 25,
        "fresh14": 31,
        "fresh15": 25,
        "fresh16": 12,
        "fresh17": 24,
        "fresh18": 23,
        "fresh19": 38,
        "fresh20": 47,
        "fresh21": 10,
        "fresh22": 26,
        "fresh23": 11,
        "fresh24": 4,
        "fresh25": 18,
        "fresh26": 14,
        "fresh27": 6,
        "fresh28": 15,
        "fresh29": 10,
    }
    sources = {name: {m.source_id for m in rows} for name, rows in sets.items()}
    assert {name: len(ids) for name, ids in sources.items()} == {
        "fit": 30,
        "validation": 16,
        "test": 8,
        "fresh": 10,
        "fresh2": 13,
        "fresh3": 10,
        "fresh4": 8,
        "fresh5": 9,
        "fresh6": 2,
        "fresh7": 8,
        "fresh8": 5,
        "fresh9": 2,
        "fresh10": 3,
        "fresh11": 4,
        "fresh12": 5,
        "fresh13": 11,
        "fresh14": 11,
        "fresh15": 8,
        "fresh16": 4,
        "fresh17": 6,
        "fresh18": 2,
        "fresh19": 4,
        "fresh20": 6,
        "fresh21": 1,
        "fresh22": 8,
        "fresh23": 3,
        "fresh24": 1,
        "fresh25": 5,
        "fresh26": 4,
        "fresh27": 2,
        "fresh28": 3,
        "fresh29": 3,
    }
    # Split by source: no source has rows in two sets.
    for i, one in enumerate(SETS):
        for other in SETS[i + 1 :]:
            assert not sources[one] & sources[other], (one, other)
    for rows in sets.values():
        for m in rows:
            assert len(m.source) > 20 and m.value > 0 and m.published


# Pinned at what `python -m core calibrate` printed when the costs were frozen, + 0.2 points
# of slack for floating-point noise only: a change that makes any slice worse fails here.
# llama.cpp's expert padding off Apple (core.engine.EXPERT_PADDING_TOKENS) was fitted on the MoE
# prefill rows of fresh4-fresh12, which are in-sample for it since. A comment keeps a slice's value
# before the last change that moved it (the earlier ones: `git log -p` of this file).
PINNED = {
    ("fit", "all", "all"): 14.6,  # 16.2 before the vector cores' unpacking cap
    ("fit", "batch", "batch 1"): 13.4,  # 14.7 before the vector cores' unpacking cap
    ("fit", "batch", "batch > 1"): 19.1,  # 19.2 before the vector cores' unpacking cap
    ("fit", "moe", "MoE"): 14.5,  # 15.7 before the vector cores' unpacking cap
    ("fit", "bits", "weights < 8 bits"): 13.4,  # 28 before the vector cores' unpacking cap
    ("fit", "engine", "llama.cpp"): 15.5,  # 19.8 before the vector cores' unpacking cap
    ("fit", "engine", "sglang"): 24.1,  # 23.2 before the vector cores' unpacking cap
    ("fit", "engine", "trtllm"): 17.4,
    ("fit", "engine", "typical"): 4,  # 4.3 before the vector cores' unpacking cap
    ("fit", "engine", "vllm"): 14.6,  # 16.5 before the vector cores' unpacking cap
    ("validation", "all", "all"): 17.9,  # 18.5 before the vector cores' unpacking cap
    ("validation", "batch", "batch 1"): 16.7,  # 17.1 before the vector cores' unpacking cap
    ("validation", "batch", "batch > 1"): 58.8,  # 59.7 before llama.cpp's own cost per MoE layer
    ("validation", "moe", "MoE"): 41.7,  # 42.4 before the vector cores' unpacking cap
    ("validation", "bits", "weights < 8 bits"): 14.6,  # 13.8 before llama.cpp's own cost per MoE layer
    ("validation", "engine", "llama.cpp"): 19.1,  # 20.1 before the vector cores' unpacking cap
    ("validation", "engine", "mlx"): 8.9,  # 11.5 before the vector cores' unpacking cap
    ("validation", "engine", "sglang"): 19.8,  # 19.2 before the vector cores' unpacking cap
    ("validation", "engine", "typical"): 21.4,  # 24 before the vector cores' unpacking cap
    ("validation", "engine", "vllm"): 53.8,
    ("test", "all", "all"): 22.1,  # 24.9 before SGLang's path grew with its GPUs
    ("test", "batch", "batch 1"): 20.6,  # 25.4 before SGLang's path grew with its GPUs
    ("test", "batch", "batch > 1"): 24,  # 27 before the vector cores' unpacking cap
    ("test", "moe", "MoE"): 20.3,  # 28.7 before SGLang's path grew with its GPUs
    ("test", "bits", "weights < 8 bits"): 23.8,  # 24.7 before the vector cores' unpacking cap
    ("test", "engine", "llama.cpp-metal"): 12.5,  # 9.1 before the vector cores' unpacking cap
    ("test", "engine", "mlx"): 11.6,
    ("test", "engine", "sglang"): 18.5,  # 31 before SGLang's path grew with its GPUs
    ("test", "engine", "typical"): 24,  # 27 before the vector cores' unpacking cap
    ("test", "engine", "vllm"): 47.4,  # 50.6 before llama.cpp's own cost per MoE layer
    ("fresh", "all", "all"): 19.5,  # 18.6 before HF transformers' launches overlapped its GPU work
    ("fresh", "batch", "batch 1"): 20.2,  # 18.3 before HF transformers' launches overlapped its GPU work
    ("fresh", "batch", "batch > 1"): 19.1,  # 17.9 before the vector cores' unpacking cap
    ("fresh", "moe", "MoE"): 22.8,  # 22.7 before the vector cores' unpacking cap
    ("fresh", "bits", "weights < 8 bits"): 17.4,  # 21.6 before the vector cores' unpacking cap
    ("fresh", "metric", "tpot_ms"): 10.8,  # 10.2 before the vector cores' unpacking cap
    ("fresh", "metric", "ttft_ms"): 26.5,  # 26.4 before the vector cores' unpacking cap
    ("fresh2", "all", "all"): 21.6,  # 22.5 before SGLang's path grew with its GPUs
    ("fresh2", "batch", "batch 1"): 15.0,  # 17.1 before SGLang's path grew with its GPUs
    ("fresh2", "batch", "batch > 1"): 43.4,  # 57.8 before HF transformers' launches overlapped its GPU work
    ("fresh2", "moe", "MoE"): 50.1,  # 44.5 before the vector cores' unpacking cap
    ("fresh2", "bits", "weights < 8 bits"): 19,  # 23 before HF transformers' launches overlapped its GPU work
    ("fresh2", "metric", "tpot_ms"): 18.8,  # 17.1 before HF transformers' launches overlapped its GPU work
    ("fresh2", "metric", "ttft_ms"): 34.6,  # 35.1 before SGLang's path grew with its GPUs
    ("fresh3", "all", "all"): 23.6,  # 22.8 before HF transformers' launches overlapped its GPU work
    ("fresh3", "batch", "batch 1"): 19.1,  # 17.9 before HF transformers' launches overlapped its GPU work
    ("fresh3", "batch", "batch > 1"): 39.0,
    ("fresh3", "moe", "MoE"): 23.4,  # 25.9 before the vector cores' unpacking cap
    ("fresh3", "bits", "weights < 8 bits"): 33.9,  # 36.6 before the vector cores' unpacking cap
    ("fresh3", "metric", "tpot_ms"): 17.9,  # 12.7 before HF transformers' launches overlapped its GPU work
    ("fresh3", "metric", "ttft_ms"): 32.3,  # 32.2 before the vector cores' unpacking cap
    ("fresh4", "all", "all"): 26.9,  # 28.4 before HF transformers' launches overlapped its GPU work
    ("fresh4", "batch", "batch 1"): 23.7,  # 26.9 before HF transformers' launches overlapped its GPU work
    ("fresh4", "batch", "batch > 1"): 29.2,  # 29.4 before HF transformers' launches overlapped its GPU work
    ("fresh4", "moe", "MoE"): 15.9,  # 23.2 before the vector cores' unpacking cap
    ("fresh4", "bits", "weights < 8 bits"): 23.5,  # 26.9 before the vector cores' unpacking cap
    ("fresh4", "metric", "tpot_ms"): 12.5,  # 13.7 before HF transformers' launches overlapped its GPU work
    ("fresh4", "metric", "ttft_ms"): 37.6,  # 46.4 before llama.cpp's Radeon backend
    ("fresh5", "all", "all"): 35.9,  # 44.4 before HF transformers' launches overlapped its GPU work
    ("fresh5", "batch", "batch 1"): 27.5,  # 29.8 before HF transformers' launches overlapped its GPU work
    ("fresh5", "batch", "batch > 1"): 125.7,  # 122.6 before the vector cores' unpacking cap
    ("fresh5", "moe", "MoE"): 83.7,  # 83.8 before the vector cores' unpacking cap
    ("fresh5", "bits", "weights < 8 bits"): 28.5,  # 29.8 before HF transformers' launches overlapped its GPU work
    ("fresh5", "metric", "tpot_ms"): 18.6,  # 25.9 before the vector cores' unpacking cap
    ("fresh5", "metric", "ttft_ms"): 44.4,  # 31.9 before llama.cpp's Radeon backend
    ("fresh6", "all", "all"): 18.7,  # 18.6 before the vector cores' unpacking cap
    ("fresh6", "batch", "batch 1"): 21.1,  # 18.5 before the vector cores' unpacking cap
    ("fresh6", "batch", "batch > 1"): 18.7,
    ("fresh6", "moe", "MoE"): 17.3,  # 15.7 before the vector cores' unpacking cap
    ("fresh6", "bits", "weights < 8 bits"): 14.4,  # 11.7 before the vector cores' unpacking cap
    ("fresh6", "metric", "ttft_ms"): 21.2,
    ("fresh7", "all", "all"): 22.5,  # 22.1 before the vector cores' unpacking cap
    ("fresh7", "batch", "batch 1"): 19.6,  # 19.5 before the vector cores' unpacking cap
    ("fresh7", "batch", "batch > 1"): 30.5,  # 30.1 before llama.cpp's own cost per MoE layer
    ("fresh7", "moe", "MoE"): 34,  # 32.2 before llama.cpp's Radeon backend
    ("fresh7", "bits", "weights < 8 bits"): 22.5,  # 20.5 before the vector cores' unpacking cap
    ("fresh7", "metric", "tpot_ms"): 16.3,  # 14.9 before the vector cores' unpacking cap
    ("fresh7", "metric", "ttft_ms"): 48,  # 47.9 before the vector cores' unpacking cap
    ("fresh7", "vendor", "AMD"): 10,  # 14.5 before the vector cores' unpacking cap
    ("fresh8", "all", "all"): 7.9,  # 8.6 before the vector cores' unpacking cap
    ("fresh8", "moe", "MoE"): 10.1,  # 9.6 before the vector cores' unpacking cap
    ("fresh8", "bits", "weights < 8 bits"): 7.9,  # 8.6 before the vector cores' unpacking cap
    ("fresh8", "metric", "tpot_ms"): 6.8,  # 8.2 before the vector cores' unpacking cap
    ("fresh8", "metric", "ttft_ms"): 11.6,  # 39 before llama.cpp's Radeon backend
    ("fresh8", "vendor", "AMD"): 7.8,  # 8.1 before the vector cores' unpacking cap
    ("fresh8", "vendor", "Apple"): 6,  # 7.1 before the vector cores' unpacking cap
    ("fresh9", "all", "all"): 10.4,  # 9.9 before the vector cores' unpacking cap
    ("fresh9", "batch", "batch 1"): 12.5,  # 11.4 before the vector cores' unpacking cap
    ("fresh9", "batch", "batch > 1"): 8.3,
    ("fresh9", "moe", "MoE"): 15.6,  # 14.1 before the vector cores' unpacking cap
    ("fresh9", "engine", "vllm"): 6.0,
    ("fresh9", "engine", "trtllm"): 12.7,
    ("fresh9", "metric", "ttft_ms"): 44.8,  # 62.1 before llama.cpp's Radeon backend
    ("fresh10", "all", "all"): 11.6,  # 10.8 before the vector cores' unpacking cap
    ("fresh10", "moe", "MoE"): 18.4,  # 25.3 before llama.cpp's Radeon backend
    ("fresh10", "vendor", "NVIDIA"): 10.6,  # 9.9 before the vector cores' unpacking cap
    ("fresh10", "metric", "ttft_ms"): 30.3,  # 29.8 before llama.cpp's Radeon backend
    ("fresh11", "all", "all"): 27.4,  # 34.9 before HF transformers' launches overlapped its GPU work
    ("fresh11", "batch", "batch > 1"): 26.5,  # 26.9 before llama.cpp's own cost per MoE layer
    ("fresh11", "moe", "MoE"): 36.9,  # 37.9 before the vector cores' unpacking cap
    ("fresh11", "engine", "trtllm"): 5.9,
    ("fresh12", "all", "all"): 27.4,  # 28.7 before the vector cores' unpacking cap
    ("fresh12", "batch", "batch 1"): 26.4,  # 24.2 before the vector cores' unpacking cap
    ("fresh12", "moe", "MoE"): 30,  # 19.5 before llama.cpp's Radeon backend
    ("fresh12", "metric", "tpot_ms"): 19.2,  # 18.4 before the vector cores' unpacking cap
    ("fresh13", "all", "all"): 27.9,  # 30.3 before the vector cores' unpacking cap
    ("fresh13", "moe", "MoE"): 36.6,  # 34 before the vector cores' unpacking cap
    ("fresh13", "engine", "llama.cpp"): 27.9,  # 34 before the vector cores' unpacking cap
    ("fresh13", "engine", "llama.cpp-metal"): 30.2,
    ("fresh13", "metric", "ttft_ms"): 33.3,  # 38 before llama.cpp's Radeon backend
    ("fresh13", "metric", "tpot_ms"): 27.9,  # 30.3 before the vector cores' unpacking cap
    ("fresh14", "all", "all"): 16.3,  # 14.3 before the vector cores' unpacking cap
    ("fresh14", "moe", "MoE"): 19.2,  # 18.7 before the vector cores' unpacking cap
    ("fresh14", "bits", "weights < 8 bits"): 17.9,  # 16.3 before the vector cores' unpacking cap
    ("fresh14", "engine", "llama.cpp"): 17.9,  # 14 before the vector cores' unpacking cap
    ("fresh14", "engine", "llama.cpp-metal"): 16.9,  # 17.9 before the vector cores' unpacking cap
    ("fresh14", "metric", "ttft_ms"): 21.5,  # 51.9 as judged
    ("fresh14", "metric", "tpot_ms"): 12.7,  # 10 before the vector cores' unpacking cap
    ("fresh15", "all", "all"): 16,  # 16.3 before the vector cores' unpacking cap
    ("fresh15", "engine", "llama.cpp-radeon"): 15.5,  # 16.1 before the vector cores' unpacking cap
    ("fresh15", "metric", "ttft_ms"): 17.8,
    ("fresh15", "metric", "tpot_ms"): 10.9,  # 16.3 before the vector cores' unpacking cap
    ("fresh16", "all", "all"): 45.9,  # 64.9 before the vector cores' unpacking cap
    ("fresh16", "batch", "batch 1"): 48.9,  # 65.8 before the vector cores' unpacking cap
    ("fresh16", "batch", "batch > 1"): 21.5,
    ("fresh16", "engine", "trtllm"): 21.5,
    ("fresh16", "engine", "typical"): 60,  # 68.5 before the vector cores' unpacking cap
    ("fresh17", "all", "all"): 47.9,
    ("fresh17", "batch", "batch 1"): 30.6,
    ("fresh17", "batch", "batch > 1"): 82.4,
    ("fresh17", "moe", "MoE"): 89.3,
    ("fresh17", "engine", "typical"): 23.7,
    ("fresh17", "engine", "vllm"): 92.8,
    ("fresh18", "all", "all"): 20.4,
    ("fresh18", "batch", "batch 1"): 24.2,
    ("fresh18", "batch", "batch > 1"): 15.0,
    ("fresh18", "engine", "llama.cpp"): 25.3,
    ("fresh18", "engine", "sglang"): 20.4,
    ("fresh19", "all", "all"): 28.4,
    ("fresh19", "batch", "batch 1"): 24.8,
    ("fresh19", "batch", "batch > 1"): 28.4,
    ("fresh19", "bits", "weights < 8 bits"): 24.1,
    ("fresh19", "metric", "ttft_ms"): 42.4,
    ("fresh20", "all", "all"): 15.7,
    ("fresh20", "moe", "MoE"): 20.8,
    ("fresh20", "bits", "weights < 8 bits"): 16.0,
    ("fresh20", "metric", "ttft_ms"): 18.5,
    ("fresh20", "metric", "decode_tokens_per_s"): 10.1,
    ("fresh21", "all", "all"): 9.2,
    ("fresh21", "batch", "batch 1"): 16.6,
    ("fresh21", "batch", "batch > 1"): 8.5,
    ("fresh22", "all", "all"): 15.9,  # 33.4 before SGLang's path grew with its GPUs
    ("fresh22", "batch", "batch 1"): 15.9,  # 33.4 before SGLang's path grew with its GPUs
    ("fresh22", "moe", "MoE"): 14.0,  # 35.7 before SGLang's path grew with its GPUs
    ("fresh23", "all", "all"): 14.4,
    ("fresh23", "batch", "batch 1"): 14.4,
    ("fresh23", "moe", "MoE"): 17.2,
    # fresh24, judged once (2026-12-02, after SGLang's path grew with its GPUs): every row estimated
    # about 2× too slow, SGLang decoding gpt-oss-120b at TP 4 and 8 in 2.4-3.4 ms a token.
    ("fresh24", "all", "all"): 49.5,
    ("fresh24", "moe", "MoE"): 49.5,
    # fresh25, judged once (2026-12-03, nothing changed since fresh24): Ollama on an M3 Ultra within
    # 0-19 %, the misses vLLM's: a 54 ms server path against a 13 ms first token on a local RTX 4090,
    # 2024's AWQ kernel on an A100 (3.3 s to prefill what fp16 does in 1.1 s), one of Llama 4 Scout's
    # two NVFP4 MoE backends on a B200 (12.8 ms a token against the other's 7.6).
    ("fresh25", "all", "all"): 13.2,
    ("fresh25", "batch", "batch 1"): 13.2,
    ("fresh25", "moe", "MoE"): 13.1,
    # fresh26, held aside for the lone-path change and judged once when it was not shipped
    # (2026-12-03, nothing changed since fresh25): TGI on an A10G within 6-26 %, the misses vLLM's and
    # TensorRT-LLM's first tokens (2.2-3.5× too slow: a 54/46 ms path and MFU 0.50 on 16-bit maths).
    ("fresh26", "all", "all"): 24.4,
    ("fresh26", "batch", "batch 1"): 24.4,
    ("fresh26", "moe", "MoE"): 52.2,
    # fresh27, judged once (2026-12-03, nothing changed since fresh26): TensorRT-LLM's ChatGLM3-6B on an
    # RTX 3090 within 8-9 %, llama.cpp's HIP build on an RX 7900 XTX within 2-26 % (its decode faster
    # than measured).
    ("fresh27", "all", "all"): 10.6,
    ("fresh27", "batch", "batch 1"): 10.6,
    ("fresh27", "moe", "MoE"): 13.5,
    # fresh28, judged once (2026-12-03, nothing changed since fresh27): AccelMark's in-process vLLM 0.6.6 and
    # SGLang 0.5.6 on A100s decode within 1-7 %; their first tokens at 280 prompt tokens take 10-48 ms
    # longer than the estimate (an engine's own path to the first token, which in-process runs are charged
    # none of), the 33k-token one 34 % shorter.
    ("fresh28", "all", "all"): 6.7,
    ("fresh28", "batch", "batch 1"): 6.8,
    ("fresh28", "metric", "ttft_ms"): 39.0,
    # fresh29, judged once (2026-12-03, nothing changed since fresh28): vLLM's Qwen3-30B-A3B on a Strix
    # Halo decodes within 0-34 % (its untuned MoE kernels 34 % slower than the estimate, the tuned ones
    # within 1 %), its whole replies 30-37 % slower; llama.cpp's Q4_0 prompts on an A10 take 1.8-3.1x
    # the estimate (its 4-bit prefill), its decode within 7-10 %.
    ("fresh29", "all", "all"): 20.0,
    ("fresh29", "moe", "MoE"): 20.0,
    ("fresh29", "metric", "tpot_ms"): 8.7,
}
# The likely ranges' coverage (share of rows inside their range), pinned from below. The ranges
# are sized on every one of these sets (core.ranges.SIZED_ON), so these say the sizing holds set by
# set; how it holds on a set it has not seen is test_ranges' leave-one-set-out figure (80.8 %).
PINNED_COVERAGE = {
    ("validation", "all"): 0.83,  # 0.85 before eager engines got a range of their own
    ("test", "all"): 0.83,  # 0.84 before SGLang's path grew with its GPUs (0.83 before eager engines' range)
    ("test", "batch 1"): 0.8,  # 0.84 before the vector cores' unpacking cap
    ("test", "batch > 1"): 1,  # 0.99 before the vector cores' unpacking cap
    ("test", "MoE"): 0.80,  # 0.82 before SGLang's path grew with its GPUs; 0.85 before the unpacking cap
    ("fresh", "all"): 0.8,  # 0.81 before the likely ranges were resized (HF transformers' launches)
    ("fresh2", "all"): 0.86,  # 0.76 before eager engines got a range of their own; 0.88 before the physics floor
    ("fresh3", "all"): 0.9,  # 0.93 before eager engines got a range of their own
    ("fresh4", "all"): 0.78,  # 0.82 before eager engines got a range of their own; 0.83 before the physics floor
    ("fresh5", "all"): 0.66,  # 0.72 before eager engines got a range of their own
    ("fresh6", "all"): 0.71,  # 0.85 before eager engines got a range of their own
    ("fresh7", "all"): 0.81,  # 0.83 before eager engines got a range of their own
    ("fresh8", "all"): 0.93,  # 0.86 before the vector cores' unpacking cap
    ("fresh9", "all"): 0.97,  # 0.93 before the vector cores' unpacking cap
    ("fresh10", "all"): 0.92,  # 1 before llama.cpp's Radeon backend
    ("fresh11", "all"): 0.8,  # 0.84 before eager engines got a range of their own
    ("fresh12", "all"): 0.75,  # 0.81 before eager engines got a range of their own
    ("fresh13", "all"): 0.76,  # 0.8 before eager engines got a range of their own
    ("fresh14", "all"): 0.9,  # 28 of 31 as judged
    ("fresh15", "all"): 0.92,  # 0.96 before eager engines got a range of their own
    ("fresh16", "all"): 0.83,  # 0.66 before eager engines got a range of their own
    ("fresh17", "all"): 0.91,  # 0.95 before SGLang's path grew with its GPUs; 1 before HF's launches
    ("fresh18", "all"): 1.0,  # 23 of 23 as judged
    ("fresh19", "all"): 0.92,  # 0.5 before eager engines got a range of their own
    ("fresh20", "all"): 0.91,  # 43 of 47 as judged
    ("fresh21", "all"): 1.0,  # 10 of 10 as judged
    ("fresh22", "all"): 0.8,  # 21 of 26 as judged
    ("fresh23", "all"): 1.0,  # 11 of 11 as judged
    ("fresh25", "all"): 0.94,  # 17 of 18 as judged (the RTX 4090's 13 ms first token is outside)
    ("fresh26", "all"): 0.57,  # 9 of 14 as judged (vLLM's and TensorRT-LLM's first tokens outside); 8 under the floor
    ("fresh27", "all"): 1.0,  # 6 of 6 as judged
    ("fresh28", "all"): 1.0,  # 15 of 15 as judged
    ("fresh29", "all"): 0.9,  # 9 of 10 as judged (the A10's 30B-A3B prompt is outside)
}


@pytest.fixture(scope="module")
def medians(sets):
    out = {}
    for name, rows in sets.items():
        errors = [percentage_error(predict(m), m.value) for m in rows]
        out.update({(name, e.slice, e.value): e.median_abs_pct for e in slice_errors(rows, errors)})
    return out


@pytest.mark.parametrize(("key", "pinned_pct"), sorted(PINNED.items()), ids=lambda v: str(v))
def test_median_error_is_pinned(medians, key, pinned_pct):
    assert medians[key] <= pinned_pct + 0.2


def test_the_two_sets_judged_last_together(sets):
    # fresh9 and fresh10, each judged once with the same frozen model: 61 rows, 5 sources, issue 8's
    # slices (batch 1, batch > 1, MoE) as judged: 10.7 % overall, 12.3 %, 8.3 % and 15.7 % (MoE 16.2 %
    # since llama.cpp's Radeon backend: their Strix Halo rows are in-sample for it; 10.9 % overall and
    # MoE 17.5 % since the unpacking cap's refit raised llama.cpp's MBU, 0.83 → 0.95).
    rows = sets["fresh9"] + sets["fresh10"]
    errors = [percentage_error(predict(m), m.value) for m in rows]
    by_slice = {(e.slice, e.value): (e.rows, e.sources, e.median_abs_pct) for e in slice_errors(rows, errors)}
    assert by_slice[("all", "all")][:2] == (61, 5)
    for key, pinned in {
        ("all", "all"): 10.9,
        ("batch", "batch 1"): 12.3,
        ("batch", "batch > 1"): 8.3,
        ("moe", "MoE"): 17.5,
    }.items():
        assert by_slice[key][2] <= pinned + 0.2, key


@pytest.mark.parametrize(("key", "share"), sorted(PINNED_COVERAGE.items()), ids=lambda v: str(v))
def test_range_coverage_is_pinned(sets, key, share):
    name, group = key
    found = {c.group: c.share for c in coverage(sets[name])}
    assert found[group] >= share


def test_one_row_by_hand(sets):
    # LMDeploy, Llama 2 7B fp16 on an A100 80GB, batch 1, 128 steps after a 1-token prompt, on
    # the typical engine: (13.48e9 B of weights + 64.5 tokens × 524,288 B of KV on average)
    # / (2,039e9 × 0.88 × 0.88, an A100's sustained share) = 8.5585 ms, + 32 layers × 30 µs +
    # 68 µs = 1.028 ms → 9.5865 ms.
    row = sets["fit"][0]
    assert (row.source_id, row.metric, row.value) == ("lmdeploy-a100-fp16", "tpot_ms", 9.998)
    expected = (13.48e9 + 64.5 * 524_288) / (2039e9 * 0.88 * 0.88) * 1e3 + 32 * 0.030 + 0.068
    assert expected == pytest.approx(9.5865, rel=1e-4)
    assert predict(row) == pytest.approx(expected, rel=1e-9)


def test_a_pure_roofline_is_never_slower_than_a_real_server(sets):
    # The ideal machine is an upper bound on speed: every measured time is at least its estimate.
    ideal = ideal_profiles()
    for name in ("fit", "validation"):
        for m in sets[name]:
            assert log_residual(m, predict(m, ideal)) >= -1e-9, m.label


def test_the_engines_beat_a_pure_roofline_by_far(sets):
    for name in ("fit", "validation"):
        assert median_absolute_error_pct(sets[name], ideal_profiles()) > 2.5 * median_absolute_error_pct(sets[name])


def test_refitting_on_the_fit_set_gives_the_shipped_engines(sets):
    # From the neutral start in core.calibration: the shipped costs are exactly the procedure's.
    assert fit_profiles(sets["fit"]) == ENGINES


def test_a_measurements_file_problem_is_said_in_the_files_own_columns_and_units() -> None:
    from core.measurements import in_file_units

    # A range in SI: its bounds in the column's unit (1e8 bytes = 0.1 GB), the cell as the file wrote it.
    assert in_file_units("memory_bytes must be >= 100,000,000 and <= 1e+14, got 1000000", {"memory_gb": "0.001"}) == (
        "memory_gb must be >= 0.1 and <= 100,000, got '0.001'"
    )
    # A mixture's rule says its figures in billions already: only the fields are renamed (they had been
    # divided by 1e9 again, "below total_params (1.09e-07 billion)").
    assert (
        in_file_units(
            "active_params must be below total_params (109.00 billion) for a mixture of experts, got 109.00 billion"
        )
        == "active_params_b must be below params_b (109.00 billion) for a mixture of experts, got 109.00 billion"
    )
    # A cross-field rule leads with the link's key: the file's column instead.
    assert in_file_units("cbits: A100-80GB-SXM has no 4-bit tensor cores") == (
        "compute_bits: A100-80GB-SXM has no 4-bit tensor cores"
    )
    assert in_file_units("unknown metric 'speed'") == "unknown metric 'speed'"
