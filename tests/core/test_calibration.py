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
# prefill rows of fresh4-fresh12, which are in-sample for it since: where a slice moved with it,
# its value before is in the comment.
PINNED = {
    ("fit", "all", "all"): 14.6,  # 16.2 before the vector cores' unpacking cap
    (
        "fit",
        "batch",
        "batch 1",
    ): 13.4,  # 14.7 before the vector cores' unpacking cap; 14.5 before llama.cpp's own cost per MoE layer
    ("fit", "batch", "batch > 1"): 19.1,  # 19.2 before the vector cores' unpacking cap
    (
        "fit",
        "moe",
        "MoE",
    ): 14.5,  # 15.7 before the vector cores' unpacking cap; 15.2 before llama.cpp's own cost per MoE layer
    (
        "fit",
        "bits",
        "weights < 8 bits",
    ): 13.4,  # 28 before the vector cores' unpacking cap; 29.6 before llama.cpp's own cost per MoE layer
    (
        "fit",
        "engine",
        "llama.cpp",
    ): 15.5,  # 19.8 before the vector cores' unpacking cap; 20.9 before llama.cpp's own cost per MoE layer; 18.4 before the expert padding
    (
        "fit",
        "engine",
        "sglang",
    ): 24.1,  # 23.2 before the vector cores' unpacking cap; 25.6 before llama.cpp's own cost per MoE layer
    ("fit", "engine", "trtllm"): 17.4,
    ("fit", "engine", "typical"): 4,  # 4.3 before the vector cores' unpacking cap
    ("fit", "engine", "vllm"): 14.6,  # 16.5 before the vector cores' unpacking cap
    (
        "validation",
        "all",
        "all",
    ): 17.9,  # 18.5 before the vector cores' unpacking cap; 17.8 before llama.cpp's own cost per MoE layer
    (
        "validation",
        "batch",
        "batch 1",
    ): 16.7,  # 17.1 before the vector cores' unpacking cap; 16.7 before llama.cpp's own cost per MoE layer
    ("validation", "batch", "batch > 1"): 58.8,  # 59.7 before llama.cpp's own cost per MoE layer
    ("validation", "moe", "MoE"): 41.7,  # 42.4 before the vector cores' unpacking cap
    ("validation", "bits", "weights < 8 bits"): 14.6,  # 13.8 before llama.cpp's own cost per MoE layer
    (
        "validation",
        "engine",
        "llama.cpp",
    ): 19.1,  # 20.1 before the vector cores' unpacking cap; 16 before llama.cpp's own cost per MoE layer; 14.7 before the expert padding
    ("validation", "engine", "mlx"): 8.9,  # 11.5 before the vector cores' unpacking cap
    ("validation", "engine", "sglang"): 19.8,  # 19.2 before the vector cores' unpacking cap
    ("validation", "engine", "typical"): 21.4,  # 24 before the vector cores' unpacking cap
    ("validation", "engine", "vllm"): 53.8,
    # The test set, looked at once after the structure and the costs were frozen, then seen (its
    # misses are in core/data/README.md): the structure has changed since, so it is no test now.
    (
        "test",
        "all",
        "all",
    ): 27.2,  # 27.7 before the vector cores' unpacking cap; 28.4 before llama.cpp's own cost per MoE layer
    (
        "test",
        "batch",
        "batch 1",
    ): 28.7,  # 28.8 before the vector cores' unpacking cap; 29.2 before llama.cpp's own cost per MoE layer
    ("test", "batch", "batch > 1"): 24,  # 27 before the vector cores' unpacking cap
    (
        "test",
        "moe",
        "MoE",
    ): 28.7,  # 28.8 before the vector cores' unpacking cap; 29.2 before llama.cpp's own cost per MoE layer
    (
        "test",
        "bits",
        "weights < 8 bits",
    ): 23.8,  # 24.7 before the vector cores' unpacking cap; 27.3 before llama.cpp's own cost per MoE layer
    (
        "test",
        "engine",
        "llama.cpp-metal",
    ): 12.5,  # 9.1 before the vector cores' unpacking cap; 12.6 before llama.cpp's own cost per MoE layer; every llama.cpp row of the test set is on Apple silicon
    ("test", "engine", "mlx"): 11.6,
    (
        "test",
        "engine",
        "sglang",
    ): 31,  # 30.9 before the vector cores' unpacking cap; 31.1 before llama.cpp's own cost per MoE layer
    ("test", "engine", "typical"): 24,  # 27 before the vector cores' unpacking cap
    ("test", "engine", "vllm"): 47.4,  # 50.6 before llama.cpp's own cost per MoE layer
    # The fresh set, judged once on 2026-12-01 (19.0 %), then seen while the structure changed.
    ("fresh", "all", "all"): 18.6,  # 18.2 before the vector cores' unpacking cap
    ("fresh", "batch", "batch 1"): 18.3,  # 19.3 before the vector cores' unpacking cap
    ("fresh", "batch", "batch > 1"): 19.1,  # 17.9 before the vector cores' unpacking cap
    ("fresh", "moe", "MoE"): 22.8,  # 22.7 before the vector cores' unpacking cap
    ("fresh", "bits", "weights < 8 bits"): 17.4,  # 21.6 before the vector cores' unpacking cap
    (
        "fresh",
        "metric",
        "tpot_ms",
    ): 10.8,  # 10.2 before the vector cores' unpacking cap; 7.8 before llama.cpp's own cost per MoE layer
    ("fresh", "metric", "ttft_ms"): 26.5,  # 26.4 before the vector cores' unpacking cap
    # The fresh2 set: thirteen sources gathered after the fresh set was seen, judged once with the
    # model frozen (25.7 %: far above the 12 %; the model before this round scored 29.9 %).
    (
        "fresh2",
        "all",
        "all",
    ): 24.3,  # 25.2 before the vector cores' unpacking cap; 25.7 before llama.cpp's own cost per MoE layer
    (
        "fresh2",
        "batch",
        "batch 1",
    ): 17.1,  # 19.1 before the vector cores' unpacking cap; 20.9 before llama.cpp's own cost per MoE layer
    (
        "fresh2",
        "batch",
        "batch > 1",
    ): 57.8,  # 54.4 before the vector cores' unpacking cap; 52.8 before llama.cpp's own cost per MoE layer
    (
        "fresh2",
        "moe",
        "MoE",
    ): 50.1,  # 44.5 before the vector cores' unpacking cap; 52.3 before llama.cpp's own cost per MoE layer
    (
        "fresh2",
        "bits",
        "weights < 8 bits",
    ): 23,  # 25.3 before the vector cores' unpacking cap; 30.8 before llama.cpp's own cost per MoE layer
    (
        "fresh2",
        "metric",
        "tpot_ms",
    ): 17.1,  # 18.7 before the vector cores' unpacking cap; 22.9 before llama.cpp's own cost per MoE layer
    ("fresh2", "metric", "ttft_ms"): 34.1,
    # The fresh3 set: ten more sources gathered beside fresh2, judged once with the model frozen
    # (21.5 %; the model before this round 26.5 %). Layer-split multi-GPU rows (unrepresentable:
    # n_gpus is tensor parallel) and AutoAWQ PRs (one source with the validation set's AutoAWQ
    # README, by the split's rule) were left out: core/data/README.md.
    ("fresh3", "all", "all"): 22.8,  # 21.5 before the vector cores' unpacking cap
    (
        "fresh3",
        "batch",
        "batch 1",
    ): 17.9,  # 17.6 before the vector cores' unpacking cap; 19.9 before llama.cpp's own cost per MoE layer
    ("fresh3", "batch", "batch > 1"): 39.0,
    (
        "fresh3",
        "moe",
        "MoE",
    ): 23.4,  # 25.9 before the vector cores' unpacking cap; 29.8 before llama.cpp's own cost per MoE layer
    (
        "fresh3",
        "bits",
        "weights < 8 bits",
    ): 33.9,  # 36.6 before the vector cores' unpacking cap; 38.1 before llama.cpp's own cost per MoE layer
    (
        "fresh3",
        "metric",
        "tpot_ms",
    ): 12.7,  # 12.5 before the vector cores' unpacking cap; 20 before llama.cpp's own cost per MoE layer
    ("fresh3", "metric", "ttft_ms"): 32.3,  # 32.2 before the vector cores' unpacking cap
    # The fresh4 set: eight sources gathered after every other set had been seen, judged once with
    # the model and the ranges frozen (30.4 %). Left out: TensorRT-LLM issue 5929, whose numbers had
    # been seen as load measurements first, and an AutoAWQ PR whose numbers are the validation set's
    # AutoAWQ README's (the rule fresh3 applied); with them, 32.4 % (core/data/README.md).
    (
        "fresh4",
        "all",
        "all",
    ): 28.4,  # 29.4 before the vector cores' unpacking cap; 30.1 before llama.cpp's own cost per MoE layer; 30.4 before the expert padding
    ("fresh4", "batch", "batch 1"): 26.9,  # 28 before the vector cores' unpacking cap; 30.6 before the expert padding
    ("fresh4", "batch", "batch > 1"): 29.4,  # 30.4 before the vector cores' unpacking cap
    (
        "fresh4",
        "moe",
        "MoE",
    ): 15.9,  # 23.2 before the vector cores' unpacking cap; 16.1 before llama.cpp's Radeon backend; 17.4 before llama.cpp's own cost per MoE layer; 21.6 before the expert padding
    (
        "fresh4",
        "bits",
        "weights < 8 bits",
    ): 23.5,  # 26.9 before the vector cores' unpacking cap; 26.6 before llama.cpp's own cost per MoE layer
    (
        "fresh4",
        "metric",
        "tpot_ms",
    ): 13.7,  # 13.3 before the vector cores' unpacking cap; 13.8 before llama.cpp's own cost per MoE layer
    ("fresh4", "metric", "ttft_ms"): 37.6,  # 46.4 before llama.cpp's Radeon backend; 52.5 before the expert padding
    # The fresh5 set: nine sources gathered beside fresh4, judged once with nothing changed (59.3 %;
    # fresh4 and fresh5 together 33.1 %). Left out: an SGLang PR that names no GPU.
    (
        "fresh5",
        "all",
        "all",
    ): 44.4,  # 45.3 before the vector cores' unpacking cap; 50.6 before llama.cpp's own cost per MoE layer; 59.3 before the expert padding
    (
        "fresh5",
        "batch",
        "batch 1",
    ): 29.8,  # 39.8 before the vector cores' unpacking cap; 36.3 before llama.cpp's Radeon backend; 30.9 before llama.cpp's own cost per MoE layer; 32.9 before the expert padding
    (
        "fresh5",
        "batch",
        "batch > 1",
    ): 125.7,  # 122.6 before the vector cores' unpacking cap; 140.4 before llama.cpp's own cost per MoE layer
    # 90.9 before the expert padding, which overcharges the RTX 3090's gpt-oss-20b prefill (2.1x too
    # slow): that card's dense llama.cpp prefill is already 1.6-1.8x slower estimated than measured.
    (
        "fresh5",
        "moe",
        "MoE",
    ): 83.7,  # 83.8 before the vector cores' unpacking cap; 106.5 before llama.cpp's Radeon backend; 108.1 before llama.cpp's own cost per MoE layer
    (
        "fresh5",
        "bits",
        "weights < 8 bits",
    ): 29.8,  # 40.4 before the vector cores' unpacking cap; 36.9 before llama.cpp's Radeon backend; 32.9 before llama.cpp's own cost per MoE layer; 51.1 before the expert padding
    (
        "fresh5",
        "metric",
        "tpot_ms",
    ): 18.6,  # 25.9 before the vector cores' unpacking cap; 28.7 before llama.cpp's own cost per MoE layer
    ("fresh5", "metric", "ttft_ms"): 44.4,  # 31.9 before llama.cpp's Radeon backend; 68.2 before the expert padding
    # The fresh6 set: two sources judged once with nothing changed (15.0 %). Left out first, by the
    # rule that one author's PRs are one source: 21 rows of two llama.cpp authors already in fresh4
    # and the fit set.
    (
        "fresh6",
        "all",
        "all",
    ): 18.7,  # 18.6 before the vector cores' unpacking cap; 15 before llama.cpp's own cost per MoE layer
    (
        "fresh6",
        "batch",
        "batch 1",
    ): 21.1,  # 18.5 before the vector cores' unpacking cap; 13.8 before llama.cpp's own cost per MoE layer
    ("fresh6", "batch", "batch > 1"): 18.7,
    (
        "fresh6",
        "moe",
        "MoE",
    ): 17.3,  # 15.7 before the vector cores' unpacking cap; 19.5 before llama.cpp's own cost per MoE layer
    (
        "fresh6",
        "bits",
        "weights < 8 bits",
    ): 14.4,  # 11.7 before the vector cores' unpacking cap; 7.8 before llama.cpp's own cost per MoE layer
    ("fresh6", "metric", "ttft_ms"): 21.2,
    # The fresh7 set: eight sources, mostly MoE, gathered after the ranges were sized on every other
    # held-out set; judged once with the model and the ranges frozen (31.0 %).
    (
        "fresh7",
        "all",
        "all",
    ): 22.5,  # 22.1 before the vector cores' unpacking cap; 24.4 before llama.cpp's Radeon backend; 30.4 before llama.cpp's own cost per MoE layer; 31 before the expert padding
    (
        "fresh7",
        "batch",
        "batch 1",
    ): 19.6,  # 19.5 before the vector cores' unpacking cap; 20.5 before llama.cpp's Radeon backend; 30.4 before llama.cpp's own cost per MoE layer; 31 before the expert padding
    ("fresh7", "batch", "batch > 1"): 30.5,  # 30.1 before llama.cpp's own cost per MoE layer
    (
        "fresh7",
        "moe",
        "MoE",
    ): 34,  # 32.2 before llama.cpp's Radeon backend; 33.5 before llama.cpp's own cost per MoE layer; 46.2 before the expert padding
    (
        "fresh7",
        "bits",
        "weights < 8 bits",
    ): 22.5,  # 20.5 before the vector cores' unpacking cap; 24.4 before llama.cpp's Radeon backend; 30.8 before llama.cpp's own cost per MoE layer; 42.0 as judged, 38.8 before the expert padding
    (
        "fresh7",
        "metric",
        "tpot_ms",
    ): 16.3,  # 14.9 before the vector cores' unpacking cap; 20.6 before llama.cpp's own cost per MoE layer
    (
        "fresh7",
        "metric",
        "ttft_ms",
    ): 48,  # 47.9 before the vector cores' unpacking cap; 56.2 before llama.cpp's Radeon backend; 79.7 as judged; 79.1 before the expert padding
    (
        "fresh7",
        "vendor",
        "AMD",
    ): 10,  # 14.5 before the vector cores' unpacking cap; 15.7 before llama.cpp's Radeon backend; 30.8 before llama.cpp's own cost per MoE layer; Radeon and RX cards (Strix Halo, RX 7900 XT) are AMD's
    # The fresh8 set: five sources of single requests (Strix Halo, an M4 Max, RTX 3080/4090, one H100),
    # gathered after fresh7 was seen; judged once with the model and the ranges frozen (14.1 %).
    (
        "fresh8",
        "all",
        "all",
    ): 7.9,  # 8.6 before the vector cores' unpacking cap; 9 before llama.cpp's Radeon backend; 12.1 before llama.cpp's own cost per MoE layer; 14.1 before the expert padding
    (
        "fresh8",
        "moe",
        "MoE",
    ): 10.1,  # 9.6 before the vector cores' unpacking cap; 10.2 before llama.cpp's Radeon backend; 12.1 before llama.cpp's own cost per MoE layer; 16 before the expert padding
    (
        "fresh8",
        "bits",
        "weights < 8 bits",
    ): 7.9,  # 8.6 before the vector cores' unpacking cap; 9 before llama.cpp's Radeon backend; 12.8 before llama.cpp's own cost per MoE layer; 15.5 before the expert padding
    (
        "fresh8",
        "metric",
        "tpot_ms",
    ): 6.8,  # 8.2 before the vector cores' unpacking cap; 10.8 before llama.cpp's own cost per MoE layer
    (
        "fresh8",
        "metric",
        "ttft_ms",
    ): 11.6,  # 39 before llama.cpp's Radeon backend; 73.1 as judged, 66.6 before the expert padding
    (
        "fresh8",
        "vendor",
        "AMD",
    ): 7.8,  # 8.1 before the vector cores' unpacking cap; 10.7 before llama.cpp's Radeon backend; 12.8 before llama.cpp's own cost per MoE layer; 55.7 as judged, 48.6 before the expert padding
    (
        "fresh8",
        "vendor",
        "Apple",
    ): 6,  # 7.1 before the vector cores' unpacking cap; 9.9 before llama.cpp's own cost per MoE layer
    # The fresh9 set: two sources (Argonne's static batches on H100/A100 under vLLM and TensorRT-LLM,
    # 36 rows; a Strix Halo llama-server, 12), gathered after fresh8 was seen; judged once with the
    # model and ranges frozen. Every slice of issue 8's target is inside it here, on two sources only.
    (
        "fresh9",
        "all",
        "all",
    ): 10.4,  # 9.9 before the vector cores' unpacking cap; 10.3 before llama.cpp's Radeon backend; 10 before llama.cpp's own cost per MoE layer
    (
        "fresh9",
        "batch",
        "batch 1",
    ): 12.5,  # 11.4 before the vector cores' unpacking cap; 12.5 before llama.cpp's Radeon backend
    ("fresh9", "batch", "batch > 1"): 8.3,
    (
        "fresh9",
        "moe",
        "MoE",
    ): 15.6,  # 14.1 before the vector cores' unpacking cap; 13.7 before llama.cpp's own cost per MoE layer; 15.1 before the expert padding
    ("fresh9", "engine", "vllm"): 6.0,
    ("fresh9", "engine", "trtllm"): 12.7,
    (
        "fresh9",
        "metric",
        "ttft_ms",
    ): 44.8,  # 62.1 before llama.cpp's Radeon backend; the Radeon 8060S's prefill at 1.6k-37k tokens, once more; 79 before the expert padding
    # The fresh10 set: three sources of single requests (Llama 2 7B on an RTX 6000 Ada through Triton,
    # vLLM and TensorRT-LLM; two llama.cpp PRs' RX 7900 XTX tables), gathered beside fresh9, judged once.
    ("fresh10", "all", "all"): 11.6,  # 10.8 before the vector cores' unpacking cap; 10.9 before the expert padding
    (
        "fresh10",
        "moe",
        "MoE",
    ): 18.4,  # 25.3 before llama.cpp's Radeon backend; 25.7 before llama.cpp's own cost per MoE layer; 57.1 as judged and before the padding
    ("fresh10", "vendor", "NVIDIA"): 10.6,  # 9.9 before the vector cores' unpacking cap
    ("fresh10", "metric", "ttft_ms"): 30.3,  # 29.8 before llama.cpp's Radeon backend; 51.9 before the expert padding
    # The fresh11 set: four sources on datacenter GPUs (HF transformers' quantized paths on an A100 and
    # an H100, DeepSeek-R1 request streams on 8 x H200, SGLang 0.4.1's DeepSeek-V3, TensorRT-LLM's GPT-J).
    (
        "fresh11",
        "all",
        "all",
    ): 34.9,  # 37.9 before the vector cores' unpacking cap; 39.3 before llama.cpp's own cost per MoE layer
    ("fresh11", "batch", "batch > 1"): 26.5,  # 26.9 before llama.cpp's own cost per MoE layer
    (
        "fresh11",
        "moe",
        "MoE",
    ): 36.9,  # 37.9 before the vector cores' unpacking cap; 39.3 before llama.cpp's own cost per MoE layer
    ("fresh11", "engine", "trtllm"): 5.9,
    # The fresh12 set: five sources on consumer GPUs and Apple silicon (two of them weak: an
    # unmoderated benchmark repository, assumed lengths), gathered after fresh10, judged once.
    (
        "fresh12",
        "all",
        "all",
    ): 27.4,  # 28.7 before the vector cores' unpacking cap; 26.3 before llama.cpp's Radeon backend; 30.6 before llama.cpp's own cost per MoE layer; 36.8 before the expert padding
    (
        "fresh12",
        "batch",
        "batch 1",
    ): 26.4,  # 24.2 before the vector cores' unpacking cap; 19.6 before llama.cpp's Radeon backend; 28 before llama.cpp's own cost per MoE layer; 36.2 before the expert padding
    (
        "fresh12",
        "moe",
        "MoE",
    ): 30,  # 19.5 before llama.cpp's Radeon backend; 32.6 before llama.cpp's own cost per MoE layer; 61.6 as judged (Ollama's MoE prefill) and before the padding
    (
        "fresh12",
        "metric",
        "tpot_ms",
    ): 19.2,  # 18.4 before the vector cores' unpacking cap; 25.3 before llama.cpp's own cost per MoE layer
    # The fresh13 set: eleven sources of llama.cpp on NVIDIA, AMD, Intel and Apple GPUs (mostly
    # MoE), gathered after the expert padding was fitted, judged once with the model frozen. Its
    # four rows that pay the padding: 47.1 % with it, 42.5 % without (three better, one worse).
    # In-sample since for llama.cpp's own cost per MoE layer (fitted on every set up to it).
    (
        "fresh13",
        "all",
        "all",
    ): 27.9,  # 30.3 before the vector cores' unpacking cap; 34 before llama.cpp's Radeon backend; 36.2 before llama.cpp's own cost per MoE layer
    (
        "fresh13",
        "moe",
        "MoE",
    ): 36.6,  # 34 before the vector cores' unpacking cap; 34.9 before llama.cpp's Radeon backend; 41.4 before llama.cpp's own cost per MoE layer
    (
        "fresh13",
        "engine",
        "llama.cpp",
    ): 27.9,  # 34 before the vector cores' unpacking cap; 36.2 before llama.cpp's own cost per MoE layer
    ("fresh13", "engine", "llama.cpp-metal"): 30.2,
    (
        "fresh13",
        "metric",
        "ttft_ms",
    ): 33.3,  # 38 before llama.cpp's Radeon backend; 38.8 before llama.cpp's own cost per MoE layer
    (
        "fresh13",
        "metric",
        "tpot_ms",
    ): 27.9,  # 30.3 before the vector cores' unpacking cap; 28 before llama.cpp's own cost per MoE layer
    # The fresh14 set: eleven sources of llama.cpp on NVIDIA, AMD and Apple GPUs (mostly MoE), gathered
    # after llama.cpp's own cost per MoE layer was fitted, judged once with the model frozen (the model
    # before it, 1052177: 28.2 %, MoE 24.5 %, TPOT 17.4 %). Its 10 MoE decode rows off Apple: 14.2 %
    # with the cost at 0 µs, 30.7 % at the shared 80 µs.
    (
        "fresh14",
        "all",
        "all",
    ): 16.3,  # 14.3 before the vector cores' unpacking cap; 27.3 as judged, before llama.cpp's Radeon backend was fitted on it
    ("fresh14", "moe", "MoE"): 19.2,  # 18.7 before the vector cores' unpacking cap; 21.3 as judged
    ("fresh14", "bits", "weights < 8 bits"): 17.9,  # 16.3 before the vector cores' unpacking cap; 23.2 as judged
    ("fresh14", "engine", "llama.cpp"): 17.9,  # 14 before the vector cores' unpacking cap; 27.3 as judged
    ("fresh14", "engine", "llama.cpp-metal"): 16.9,  # 17.9 before the vector cores' unpacking cap
    ("fresh14", "metric", "ttft_ms"): 21.5,  # 51.9 as judged
    ("fresh14", "metric", "tpot_ms"): 12.7,  # 10 before the vector cores' unpacking cap
    # The fresh15 set: eight sources of llama.cpp on AMD Radeon cards (dense; one NVIDIA control),
    # gathered after llama.cpp's Radeon backend was fitted, judged once with the model frozen (the
    # model before it, 8eb06d7: 48.0 %, TTFT 55.5 %, TPOT 16.3 %). Three rows of a Raspberry Pi 5
    # host were left out by rule before it was run (a host-limited GPU the scenario does not describe).
    ("fresh15", "all", "all"): 16,  # 16.3 before the vector cores' unpacking cap
    ("fresh15", "engine", "llama.cpp-radeon"): 15.5,  # 16.1 before the vector cores' unpacking cap
    ("fresh15", "metric", "ttft_ms"): 17.8,
    ("fresh15", "metric", "tpot_ms"): 10.9,  # 16.3 before the vector cores' unpacking cap
    # The fresh16 set: four sources (AutoAWQ on A100s, TensorRT-LLM's static batches of a 70B on 8 ×
    # A100), gathered last by a helper asked for a broad set who found little, judged once.
    ("fresh16", "all", "all"): 45.9,  # 64.9 before the vector cores' unpacking cap
    ("fresh16", "batch", "batch 1"): 48.9,  # 65.8 before the vector cores' unpacking cap
    ("fresh16", "batch", "batch > 1"): 21.5,
    ("fresh16", "engine", "trtllm"): 21.5,
    ("fresh16", "engine", "typical"): 60,  # 68.5 before the vector cores' unpacking cap
    # The fresh17 set: six sources (vLLM's MoE throughput on MI300X, SGLang's DeepSeek-V3 on 8 × B200,
    # AutoAWQ on an RTX 4090, LMDeploy's and transformers' Llama 2 7B on an A10), gathered by a helper
    # while the unpacking cap was being built, judged once after it: 47.9 %, against 45.8 % for the
    # model before it (none of its rows is capped; the refit's typical MBU, 0.85 → 0.88, moved
    # AutoAWQ's rows). Ten rows of two sources were left out by rule before it was run: a Poisson
    # stream and a concurrency sweep are not a single request or a static batch.
    ("fresh17", "all", "all"): 47.9,
    ("fresh17", "batch", "batch 1"): 30.6,
    ("fresh17", "batch", "batch > 1"): 82.4,
    ("fresh17", "moe", "MoE"): 89.3,
    ("fresh17", "engine", "typical"): 23.7,
    ("fresh17", "engine", "vllm"): 92.8,
}
# The likely ranges' coverage (share of rows inside their range), pinned from below. The ranges
# are sized on every one of these sets (core.ranges.SIZED_ON), so these say the sizing holds set by
# set; how it holds on a set it has not seen is test_ranges' leave-one-set-out figure (79.9 %).
PINNED_COVERAGE = {
    ("validation", "all"): 0.86,  # 0.84 before the vector cores' unpacking cap
    (
        "test",
        "all",
    ): 0.83,  # 0.86 before the vector cores' unpacking cap; 0.88 before llama.cpp's own cost per MoE layer
    ("test", "batch 1"): 0.8,  # 0.84 before the vector cores' unpacking cap
    ("test", "batch > 1"): 1,  # 0.99 before the vector cores' unpacking cap
    ("test", "MoE"): 0.82,  # 0.85 before the vector cores' unpacking cap; 0.9 before llama.cpp's own cost per MoE layer
    ("fresh", "all"): 0.81,
    (
        "fresh2",
        "all",
    ): 0.86,  # 0.85 before the vector cores' unpacking cap; 0.83 before llama.cpp's Radeon backend; 0.84 before the expert padding moved the MoE TTFT range
    ("fresh3", "all"): 0.9,  # 0.91 before the vector cores' unpacking cap
    (
        "fresh4",
        "all",
    ): 0.82,  # 0.8 before the vector cores' unpacking cap; 0.82 before the expert padding moved the MoE TTFT range
    ("fresh5", "all"): 0.66,  # 0.68 before the vector cores' unpacking cap; 0.71 before llama.cpp's Radeon backend
    ("fresh6", "all"): 0.66,
    # The sets these ranges were not sized on (leave-one-set-out expected 80 %); as judged, 0.69 and
    # 0.70, before the Radeon 8060S preset took the microbenchmarks' compute share for that chip.
    (
        "fresh7",
        "all",
    ): 0.83,  # 0.76 before the vector cores' unpacking cap; 0.74 before llama.cpp's Radeon backend; 0.71 before llama.cpp's own cost per MoE layer
    (
        "fresh8",
        "all",
    ): 0.93,  # 0.86 before the vector cores' unpacking cap; 0.8 before llama.cpp's own cost per MoE layer
    (
        "fresh9",
        "all",
    ): 0.97,  # 0.93 before the vector cores' unpacking cap; 0.89 before llama.cpp's own cost per MoE layer; 43 of 48 as judged
    ("fresh10", "all"): 0.92,  # 1 before llama.cpp's Radeon backend; 13 of 13 as judged
    ("fresh11", "all"): 0.88,  # 0.92 before the vector cores' unpacking cap; 23 of 25 as judged
    (
        "fresh12",
        "all",
    ): 0.75,  # 0.71 before the vector cores' unpacking cap; 0.75 before llama.cpp's own cost per MoE layer; 20 of 32 as judged, 24 with the expert padding
    (
        "fresh13",
        "all",
    ): 0.76,  # 0.8 before the vector cores' unpacking cap; 0.72 before llama.cpp's Radeon backend; 0.68 before llama.cpp's own cost per MoE layer; 17 of 25 as judged
    ("fresh14", "all"): 0.9,  # 28 of 31 as judged
    ("fresh15", "all"): 0.92,  # 0.84 before the vector cores' unpacking cap; 21 of 25 as judged
    ("fresh16", "all"): 0.83,  # 0.58 before the vector cores' unpacking cap; 7 of 12 as judged
    ("fresh17", "all"): 1.0,  # 24 of 24 as judged
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
