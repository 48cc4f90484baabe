"""Engine profiles and the replica they run: costs flattened to an Efficiency, the KV-cache
budget and the concurrency that fits, by hand on real models."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from core import presets
from core.engine import ENGINES, TRTLLM, TYPICAL, VLLM, backend_for, engine
from core.gpu import gpu_family
from core.lengths import RequestLengths
from core.memory import weight_bytes
from core.replica import Replica
from core.specs import Precision

FP8 = Precision(8, 8)
GIB = 2**30


def test_step_overhead_counts_the_layers_launched():
    llama70b, llama8b = presets.model("llama-3.1-70b"), presets.model("llama-3.1-8b")
    profile = replace(VLLM, scheduler_overhead_s=1e-3, launch_overhead_per_layer_s=20e-6)
    # 1 ms + 20 µs × 80 layers = 2.6 ms; × 32 layers = 1.64 ms: small models pay less per step.
    assert profile.step_overhead_s(llama70b) == pytest.approx(2.6e-3)
    assert profile.step_overhead_s(llama8b) == pytest.approx(1.64e-3)
    efficiency = profile.efficiency(llama70b)
    assert (efficiency.mbu, efficiency.mfu, efficiency.step_overhead_s) == (VLLM.mbu, VLLM.mfu, 2.6e-3)
    assert efficiency.label == "vllm"


def test_bad_profiles_name_the_field():
    with pytest.raises(ValueError, match="mbu"):
        replace(VLLM, mbu=1.5)
    with pytest.raises(ValueError, match="max_sequences"):
        replace(VLLM, max_sequences=10_000)  # more sequences than the token budget can decode
    with pytest.raises(
        ValueError,
        match="engine must be one of typical, vllm, trtllm, sglang, llama.cpp, llama.cpp-metal, llama.cpp-radeon, mlx",
    ):
        engine("deepspeed")
    assert engine("trtllm") is TRTLLM


@pytest.mark.parametrize(
    ("name", "too_high", "allowed"),
    [
        # Efficiency's described ranges (core/efficiency_spec.py), the one place they are written.
        ("mbu", 1.01, ">= 0.01 and <= 1"),
        ("sequence_overhead_s", 0.011, ">= 0 and <= 0.01"),
        ("allreduce_latency_s", 0.11, ">= 0 and <= 0.1"),
        ("request_overhead_s", 11.0, ">= 0 and <= 10"),
        ("stream_overhead_s", 0.011, ">= 0 and <= 0.01"),
        ("expert_overhead_s", 0.0011, ">= 0 and <= 0.001"),
        ("dequant_compute", 1.1, ">= 0.01 and <= 1"),
    ],
)
def test_a_profiles_costs_are_bounded_as_the_efficiency_they_become(name, too_high, allowed):
    with pytest.raises(ValueError, match=f"^{name} must be {allowed}, got {too_high}$"):
        replace(VLLM, **{name: too_high})
    assert set(ENGINES) == {
        "typical",
        "vllm",
        "trtllm",
        "sglang",
        "llama.cpp",
        "llama.cpp-metal",
        "llama.cpp-radeon",
        "mlx",
        "hf-transformers",
    }


def test_kv_budget_by_hand():
    # vLLM on 2 × H100 80 GB with Llama 3.1 70B fp8 (70.55 GB of weights):
    # (80e9 × 0.9 − 3 GiB) × 2 − 70.55e9 = 67.0 GB.
    r = Replica(presets.model("llama-3.1-70b"), FP8, presets.gpu("h100-sxm"), 2, VLLM)
    assert r.kv_budget_bytes == pytest.approx((72e9 - 3 * GIB) * 2 - 70.55e9)
    # TensorRT-LLM: all the memory, minus the same reserve and the weights, and then 90 % of that.
    r = Replica(presets.model("llama-3.1-70b"), FP8, presets.gpu("h100-sxm"), 2, TRTLLM)
    assert r.kv_budget_bytes == pytest.approx(((80e9 - 3 * GIB) * 2 - 70.55e9) * 0.9)


def test_paged_engines_hold_sequences_at_their_length_others_reserve_the_reply():
    # 1,000 → 1,000 tokens, fp8 KV of Llama 3.1 70B: 80 × 2 × 8 × 128 × 1 B = 163,840 B per token.
    # vLLM holds 1000 + 999/2 + 0.5 = 1,500 tokens on average: ⌊67.0e9 / (1500 × 163,840)⌋ = 272;
    # TensorRT-LLM reserves 2,000 up front: ⌊74.70e9 / (2000 × 163,840)⌋ = 227.
    lengths = RequestLengths(1000, 1000)
    model, gpu = presets.model("llama-3.1-70b"), presets.gpu("h100-sxm")
    paged = Replica(model, FP8, gpu, 2, VLLM)
    reserved = Replica(model, FP8, gpu, 2, TRTLLM)
    assert paged.max_concurrency_that_fits(lengths) == math.floor(paged.kv_budget_bytes / (1500 * 163_840)) == 272
    assert reserved.max_concurrency_that_fits(lengths) == math.floor(reserved.kv_budget_bytes / (2000 * 163_840))
    assert reserved.max_concurrency_that_fits(lengths) == 227


def test_the_engine_caps_what_memory_allows():
    # Llama 3.1 8B on a B200: memory holds thousands of 200 → 200 sequences; vLLM runs 1,024.
    r = Replica(presets.model("llama-3.1-8b"), FP8, presets.gpu("b200"), 1, VLLM)
    assert r.max_concurrency_that_fits(RequestLengths(200, 200)) == VLLM.max_sequences
    # The toy model has no KV cache: only the engine's cap applies.
    toy = Replica(presets.model("toy-7b"), Precision(), presets.gpu("toy-gpu"), 1, TYPICAL)
    assert toy.max_concurrency_that_fits(RequestLengths(200, 500)) == TYPICAL.max_sequences


def test_nothing_fits_when_the_weights_do_not():
    r = Replica(presets.model("llama-3.1-405b"), Precision(16, 16), presets.gpu("h100-sxm"), 1, VLLM)
    assert r.kv_budget_bytes < 0 and r.max_concurrency_that_fits(RequestLengths(10, 10)) == 0
    assert weight_bytes(r.model, r.precision) > r.gpu.memory_bytes


def test_four_bit_maths_runs_on_the_four_bit_peak():
    # NVFP4 on 2 × B200 asks for 4-bit maths: 9,000 TFLOP/s per GPU × the 0.96 a B200's GEMMs
    # sustain (against an H100's) × MFU. Weight-only 4.5-bit weights without it dequantise to
    # the 16-bit peak (2,250). Attention runs FP8 beside the fp8 cache either way: 4,500.
    model, gpu = presets.model("llama-3.1-70b"), presets.gpu("b200")
    r = Replica(model, Precision(4.5, 8, compute_bits=4), gpu, 2, VLLM)
    assert gpu.sustained_compute_share == 0.96
    assert r.machine.compute_flops_per_s == pytest.approx(2 * 9000e12 * 0.96 * VLLM.mfu)
    assert r.machine.attention_flops_per_s == pytest.approx(2 * 4500e12 * 0.96 * VLLM.mfu)
    default = Replica(model, Precision(4.5, 8), gpu, 2, VLLM)
    assert default.machine.compute_flops_per_s == pytest.approx(2 * 2250e12 * 0.96 * VLLM.mfu)
    assert r.machine.bandwidth_bytes_per_s == default.machine.bandwidth_bytes_per_s
    # An H100 has no 4-bit tensor cores: asking for 4-bit maths there is an error naming it.
    with pytest.raises(ValueError, match="no 4-bit tensor cores"):
        Replica(model, Precision(4.5, 8, compute_bits=4), presets.gpu("h100-sxm"), 2, VLLM)


@pytest.mark.parametrize(
    ("low", "prompt_mean", "context"),
    [(1.0, 1000.0, 1000 + 999 / 2), (0.8, 900.0, 900 + (900 * (1 + 0.04 / 9.72) - 1) / 2)],
)
def test_request_lengths(low, prompt_mean, context):
    lengths = RequestLengths(1000, 1000, low)
    assert lengths.mean_prompt_tokens == pytest.approx(prompt_mean)
    assert lengths.mean_decode_context_tokens == pytest.approx(context)
    assert lengths.prompt_tokens_quantile(0.0) == pytest.approx(1000 * low)
    assert lengths.prompt_tokens_quantile(1.0) == 1000
    with pytest.raises(ValueError, match="low_fraction"):
        RequestLengths(1000, 1000, 0.0)


@pytest.mark.parametrize(
    ("gpu_name", "family", "llama_cpp_runs_as"),
    [
        # The presets' names (vendor word first) and the published rows' (no vendor word).
        ("Apple M2 Ultra (76-core GPU, 192GB)", "Apple", "llama.cpp-metal"),
        ("M1-8c", "Apple", "llama.cpp-metal"),
        ("AMD Radeon 8060S (Ryzen AI Max+ 395, Strix Halo, 96GB)", "Radeon", "llama.cpp-radeon"),
        ("RX-9070-XT", "Radeon", "llama.cpp-radeon"),
        ("Radeon-PRO-W7900", "Radeon", "llama.cpp-radeon"),
        # AMD's Instinct cards (CDNA) are not Radeon; "MI" is not an M-series Mac.
        ("AMD Instinct MI300X 192GB", "", "llama.cpp"),
        ("MI300X", "", "llama.cpp"),
        ("NVIDIA H100 SXM 80GB", "", "llama.cpp"),
        ("Arc-A770-16GB", "", "llama.cpp"),
        ("", "", "llama.cpp"),
    ],
)
def test_llama_cpp_runs_as_the_backend_of_the_gpus_family(gpu_name, family, llama_cpp_runs_as):
    assert gpu_family(gpu_name) == family
    assert backend_for("llama.cpp", gpu_name) == llama_cpp_runs_as
    # Any of its backends lands on the same one; every other engine is itself on any GPU.
    assert backend_for("llama.cpp-metal", gpu_name) == backend_for("llama.cpp-radeon", gpu_name) == llama_cpp_runs_as
    assert backend_for("vllm", gpu_name) == "vllm" and backend_for("ideal", gpu_name) == "ideal"
