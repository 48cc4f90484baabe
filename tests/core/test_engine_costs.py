"""The engines' costs on real presets, by hand: per-layer and MoE step costs, expert GEMMs,
dequantising kernels, the server's path — each golden derived in its comment."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core import Scenario, estimate, presets
from core.efficiency import IDEAL, efficiency_base
from core.engine import (
    ENGINES,
    EXPERT_PADDING_TOKENS,
    LLAMA_CPP,
    LLAMA_CPP_MOE_LAYER_OVERHEAD_S,
    LLAMA_CPP_RADEON,
    METAL_MBU,
    MOE_LAYER_OVERHEAD_S,
    RADEON_DEQUANT_COMPUTE,
    RADEON_EXPERT_PADDING_TOKENS,
    TYPICAL,
    VLLM,
)
from core.engine_fit import (
    LATER_FITTED,
    LATER_FITTED_ON,
    fit_later,
    metal_decode_rows,
    own_moe_rows,
    padding_rows,
    radeon_dequant_rows,
)
from core.fields import flat_text, inputs
from core.iteration import iteration
from core.measurements import SETS, load
from core.memory import expected_distinct_experts
from core.parallel import unpacking_bytes_per_s
from core.phases import prefill
from core.roofline import attainable_flops_per_s, under_the_roof
from core.specs import Efficiency, Precision, Workload
from core.step_time import expert_padding_flops, expert_visits

FP16 = Precision()
INT4 = Precision(weight_bits=4.5, kv_bits=16)  # int4 with group scales, multiplied in 16-bit


def estimate_on(model_id, gpu_id, engine_id, precision=FP16, **workload):
    model = presets.model(model_id)
    efficiency = efficiency_base(engine_id, model)
    return estimate(Scenario(model, presets.gpu(gpu_id), precision, efficiency, Workload(**workload)))


@pytest.mark.parametrize(
    ("model_id", "step_s"),
    [
        # typical: 30 µs per layer, 80 µs more per layer of a mixture of experts.
        ("llama-3.2-1b", 16 * 30e-6),  # 0.48 ms: a small model pays little (it paid 2.5 ms before)
        ("llama-3.1-8b", 32 * 30e-6),  # 0.96 ms
        ("llama-3.1-70b", 80 * 30e-6),  # 2.4 ms
        ("mixtral-8x7b", 32 * (30e-6 + 80e-6)),  # 3.52 ms
        ("deepseek-v3", 61 * (30e-6 + 80e-6)),  # 6.71 ms (its 3 dense layers counted as MoE)
        ("toy-7b", 0.0),  # no layers to launch
    ],
)
def test_step_cost_scales_with_what_the_engine_launches(model_id, step_s):
    assert TYPICAL.step_overhead_s(presets.model(model_id)) == pytest.approx(step_s, rel=1e-12)
    assert efficiency_base("typical", presets.model(model_id)).step_overhead_s == pytest.approx(step_s, rel=1e-12)


def test_a_small_model_decodes_at_its_bytes_plus_a_small_fixed_cost():
    # Llama 3.2 1B fp16 on one H100, typical, batch 1, a 1-token prompt and reply:
    # 1.236e9 × 2 B = 2.472 GB (+ 1 token of KV, 32,768 B) / (3.35e12 × 0.88) = 0.8386 ms,
    # + 16 × 30 µs + 68 µs per sequence = 0.548 ms → TPOT 1.3866 ms.
    result = estimate_on("llama-3.2-1b", "h100-sxm", "typical", prompt_tokens=1, output_tokens=1)
    assert result.decode.bytes_moved == pytest.approx(2.472e9 + 32_768, rel=1e-12)
    assert result.decode.memory_time_s == pytest.approx((2.472e9 + 32_768) / (3.35e12 * 0.88), rel=1e-12)
    assert result.decode.fixed_time_s == pytest.approx(16 * 30e-6 + 68e-6, rel=1e-12)
    assert result.tpot_s == pytest.approx(1.3866e-3, rel=1e-4)


def test_an_eager_engine_waits_on_its_host_when_the_gpu_is_quicker():
    # Llama 3.1 8B fp16 on one H100 under HF transformers, batch 1, 64-token prompt and reply.
    # Its launches are the host's: 32 layers × 1.17 ms = 37.44 ms a step, overlapping the GPU's
    # work. The GPU reads 16.06 GB (+ at most 127 tokens × 131,072 B of KV) at 3.35e12 × 0.88
    # in 5.45 ms, + 68 µs per sequence: 5.52 ms, so every step waits on the host: TPOT 37.44 ms.
    # The 64-token prefill (1.03 TFLOP at 989 × 0.88 TFLOP/s = 1.2 ms; 5.45 ms of reading) too:
    # TTFT 37.44 ms (run in-process, no server path).
    result = estimate_on("llama-3.1-8b", "h100-sxm", "hf-transformers", prompt_tokens=64, output_tokens=64)
    assert result.decode.host_time_s == pytest.approx(32 * 1.17e-3, rel=1e-12)
    assert result.decode.fixed_time_s == pytest.approx(68e-6, rel=1e-12)  # the launches are not added
    assert result.decode.memory_time_s == pytest.approx(5.45e-3, rel=1e-3)
    assert result.tpot_s == pytest.approx(37.44e-3, rel=1e-12)
    assert result.ttft_s == pytest.approx(37.44e-3, rel=1e-12)


def test_an_eager_engine_hides_its_host_behind_a_slow_step():
    # The same on an A10G (600 GB/s × 0.88 = 528 GB/s), batch 4, a 10,000-token prompt, one token:
    # it reads 16.06e9 + 4 × 10,000 × 131,072 = 21.30288e9 B in 40.346 ms (its maths, 85 GFLOP at
    # 70 × 0.88 TFLOP/s, 1.4 ms), + 4 × 68 µs = 40.618 ms: longer than the host's 37.44 ms, which
    # it hides. The typical engine would add its 32 × 30 µs of launches: 41.578 ms.
    result = estimate_on("llama-3.1-8b", "a10g", "hf-transformers", batch_size=4, prompt_tokens=10_000, output_tokens=1)
    assert result.tpot_s == pytest.approx(21.30288e9 / 528e9 + 4 * 68e-6, rel=1e-9)
    typical = estimate_on("llama-3.1-8b", "a10g", "typical", batch_size=4, prompt_tokens=10_000, output_tokens=1)
    assert typical.tpot_s == pytest.approx(21.30288e9 / 528e9 + 4 * 68e-6 + 32 * 30e-6, rel=1e-9)


def test_an_eager_reply_turns_from_host_bound_to_gpu_bound_as_its_caches_grow():
    # A10G, batch 4, 5,000-token prompt, 4,000-token reply: step j reads the weights and four
    # caches of 5,000 + j tokens: a + b·j with a = (16.06e9 + 4 × 131,072 × 5,000) / 528e9 + 4 × 68 µs
    # = 35.653 ms and b = 4 × 131,072 / 528e9 = 0.993 µs. It waits on the host (37.44 ms) until
    # a + b·j passes it, at j = ceil((37.44 − 35.653) / 0.000993) = 1,800; then it is the GPU's.
    # Σ = 1,800 × 37.44 ms + 2,200 steps from 37.440 to 39.624 ms (mean 38.532): (67,392 + 84,771) ms
    # ÷ 4,000 steps = 38.04 ms.
    result = estimate_on(
        "llama-3.1-8b", "a10g", "hf-transformers", batch_size=4, prompt_tokens=5_000, output_tokens=4_000
    )
    a = (16.06e9 + 4 * 131_072 * 5_000) / 528e9 + 4 * 68e-6
    b = 4 * 131_072 / 528e9
    host = 32 * 1.17e-3
    first = math.ceil((host - a) / b)
    assert first == 1_800
    gpu = (4_000 - first) * a + b * (first + 3_999) * (4_000 - first) / 2
    assert result.tpot_s == pytest.approx((first * host + gpu) / 4_000, rel=1e-9)
    assert result.tpot_s == pytest.approx(38.04e-3, rel=1e-3)


def test_the_batch_sweep_says_where_an_eager_engine_stops_waiting_on_its_host():
    # Llama 3.1 8B on one H100 under HF transformers, 200 → 500 tokens. Every step of the reply waits
    # on the host (37.44 ms) while its last, longest one does: at context 699 the GPU reads
    # 16.06e9 + B × 131,072 × 699 B at 2.948e12 B/s, + B × 68 µs = 5.448 ms + B × 99.08 µs, which
    # passes 37.44 ms after B = 322.9: batches 1-322 are host-bound, 323 on are not.
    result = estimate_on("llama-3.1-8b", "h100-sxm", "hf-transformers")
    sweep = result.batch_sweep(np.arange(1, 400))
    assert sweep.batch_size[sweep.host_bound].max() == 322
    assert sweep.host_bound[:322].all() and not sweep.host_bound[322:].any()
    assert sweep.step_time_s[:322] == pytest.approx(37.44e-3, rel=1e-12)
    assert result.host_bound_batch == 322  # the bisection finds the same edge
    # Llama 3.1 70B fp16 on an A10G: 141.1 GB at 528 GB/s is 267 ms a step, past 80 × 1.17 = 93.6 ms of
    # launches even for one sequence; an engine whose launches add up has no such batch at all.
    assert estimate_on("llama-3.1-70b", "a10g", "hf-transformers").host_bound_batch == 0
    assert estimate_on("llama-3.1-8b", "h100-sxm", "typical").host_bound_batch is None
    # An engine whose launches add to the GPU's time is never host-bound.
    assert not estimate_on("llama-3.1-8b", "h100-sxm", "typical").batch_sweep(np.arange(1, 400)).host_bound.any()


def test_expert_visits_count_the_distinct_experts_each_moe_layer_runs():
    # Mixtral 8x7B (32 layers, top-2 of 8): one token runs 2 experts per layer → 64 GEMMs;
    # 8 tokens touch 8 × (1 - 0.75^8) = 7.199 experts per layer → 230.37.
    mixtral = presets.model("mixtral-8x7b")
    assert expert_visits(mixtral, 1) == pytest.approx(64)
    assert expected_distinct_experts(mixtral, 8) == pytest.approx(8 * (1 - 0.75**8))
    assert expert_visits(mixtral, 8) == pytest.approx(32 * 8 * (1 - 0.75**8))
    # DeepSeek-V3 (61 layers, top-8 of 256): 488 at batch 1. Dense models run none.
    assert expert_visits(presets.model("deepseek-v3"), 1) == pytest.approx(488)
    assert expert_visits(presets.model("llama-3.1-70b"), 64) == 0


def test_mixtral_decode_step_on_vllm_by_hand():
    # Mixtral 8x7B fp16 on 2 × H100 under vLLM, batch 1: fixed costs per step =
    #   32 layers × (25 µs launch + 80 µs MoE)       = 3.360 ms
    #   + 59 µs per sequence                          = 0.059 ms
    #   + 64 expert GEMMs × 0.5 µs                    = 0.032 ms
    #   + 2 × 32 all-reduces × (19 µs + 2 × ½ × 4,096 × 2 B / 450e9) = 1.2172 ms
    #   = 4.6682 ms, beside 25.76 GB of active weights / (2 × 3.35e12 × 0.73) = 5.27 ms of reading.
    result = estimate_on("mixtral-8x7b", "h100-sxm", "vllm", prompt_tokens=1, output_tokens=1, gpu_count=2)
    allreduces = 2 * 32 * (19e-6 + 2 * 0.5 * 4096 * 2 / 450e9)
    assert result.decode.fixed_time_s == pytest.approx(32 * 105e-6 + 59e-6 + 64 * 0.5e-6 + allreduces, rel=1e-12)
    assert result.decode.memory_time_s == pytest.approx(5.2668e-3, rel=1e-4)


def test_dequantising_kernels_read_weights_at_their_share_of_the_bandwidth():
    # Llama 3.1 8B in int4 (4.5 bits) on one H100 under vLLM, a 1-token prompt and reply:
    # weights 8.03e9 × 4.5 / 8 = 4.5169 GB at 3.35e12 × 0.73 × 0.94 (its dequantising share)
    # = 1.9650 ms; the 131,072 B of KV at the full 3.35e12 × 0.73 = 0.0536 µs. Its vector cores
    # (67 TFLOP/s FP32) unpack 67e12 / 13.5 = 4.96e12 weights/s = 2.79 TB/s of 4.5-bit weights,
    # more than the 2.30 TB/s the kernel reads: no cap on an H100.
    result = estimate_on("llama-3.1-8b", "h100-sxm", "vllm", INT4, prompt_tokens=1, output_tokens=1)
    weights = 8.03e9 * 4.5 / 8
    assert weights / (3.35e12 * 0.73 * 0.94) == pytest.approx(1.9650e-3, rel=1e-3)
    expected = weights / (3.35e12 * 0.73 * 0.94) + 131_072 / (3.35e12 * 0.73)
    assert result.decode.memory_time_s == pytest.approx(expected, rel=1e-12)
    # fp16 weights are not dequantised: the plain share.
    plain = estimate_on("llama-3.1-8b", "h100-sxm", "vllm", prompt_tokens=1, output_tokens=1)
    assert plain.decode.memory_time_s == pytest.approx((16.06e9 + 131_072) / (3.35e12 * 0.73), rel=1e-12)
    # ExLlama/MLC-class kernels (the typical engine) would read int4 at 0.99 of their MBU,
    # 3.35e12 × 0.88 × 0.99 = 2.918 TB/s: above the 2.79 TB/s the H100's vector cores unpack.
    typical = estimate_on("llama-3.1-8b", "h100-sxm", "typical", INT4, prompt_tokens=1, output_tokens=1)
    expected = weights / (67e12 / 13.5 * 4.5 / 8) + 131_072 / (3.35e12 * 0.88)
    assert typical.decode.memory_time_s == pytest.approx(expected, rel=1e-12)


def test_an_a100_streams_int4_weights_no_faster_than_its_vector_cores_unpack_them():
    # The same int4 Llama 3.1 8B under vLLM on one A100 80GB: its kernel would read the weights
    # at 2.039e12 × 0.88 (what A100s sustain) × 0.73 × 0.94 = 1.231 TB/s, but its vector cores
    # (19.5 TFLOP/s FP32) unpack 19.5e12 / 13.5 = 1.444e12 weights/s, 0.8125 TB/s of 4.5-bit
    # weights: 4.5169 GB / 0.8125e12 = 5.559 ms, 1.52× the read. The KV cache is not unpacked:
    # 131,072 B at 2.039e12 × 0.88 × 0.73.
    result = estimate_on("llama-3.1-8b", "a100-80gb-sxm", "vllm", INT4, prompt_tokens=1, output_tokens=1)
    unpacked_bytes_per_s = 19.5e12 / 13.5 * 4.5 / 8
    assert unpacked_bytes_per_s == pytest.approx(0.8125e12, rel=1e-12)
    assert result.machine.weight_bandwidth_bytes_per_s == pytest.approx(unpacked_bytes_per_s, rel=1e-12)
    s = result.scenario
    assert unpacking_bytes_per_s(s.gpu, 1, s.efficiency, s.precision) == pytest.approx(0.8125e12, rel=1e-12)
    assert unpacking_bytes_per_s(s.gpu, 1, IDEAL, s.precision) is None  # the ideal machine unpacks for free
    expected = 8.03e9 * 4.5 / 8 / unpacked_bytes_per_s + 131_072 / (2.039e12 * 0.88 * 0.73)
    assert result.decode.memory_time_s == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(5.559e-3, rel=1e-3)
    # The ideal machine unpacks for free, and a GPU without a published vector peak has no cap.
    unknown = replace(presets.gpu("a100-80gb-sxm"), vector_flops_per_s=None)
    uncapped = estimate(replace(result.scenario, gpu=unknown))
    assert uncapped.machine.weight_bandwidth_bytes_per_s == pytest.approx(2.039e12 * 0.88 * 0.73 * 0.94, rel=1e-12)


def test_a_capped_decode_step_sits_below_the_machines_roof_where_its_weights_stream():
    # The same int4 Llama 3.1 8B under vLLM on one A100, prompt 1, reply 1 (context 1): FLOPs
    # 2 × 8.03e9 + attention over 2 tokens (4 × 32 × 128 × 32 × 2 = 1.05 MFLOP) = 16.0611 GFLOP;
    # bytes 4.5169 GB of weights + 131,072 B of KV. Reading takes 5.559 ms (the weights at the
    # 0.8125 TB/s the vector cores unpack), so the step attains 16.0611e9 / 5.559e-3 = 2.889
    # TFLOP/s, where the machine's roof at its 3.556 FLOP/byte gives 1.310 TB/s × 3.556 = 4.658.
    result = estimate_on("llama-3.1-8b", "a100-80gb-sxm", "vllm", INT4, prompt_tokens=1, output_tokens=1)
    flops = 2 * 8.03e9 + 4 * 32 * 128 * 32 * 2
    memory_s = 8.03e9 * 4.5 / 8 / 0.8125e12 + 131_072 / (2.039e12 * 0.88 * 0.73)
    assert result.decode.attained_flops_per_s == pytest.approx(flops / memory_s, rel=1e-12)
    assert result.decode.attained_flops_per_s == pytest.approx(2.889e12, rel=1e-3)
    roof = result.machine.bandwidth_bytes_per_s * result.decode.intensity_flop_per_byte
    assert roof == pytest.approx(4.658e12, rel=1e-3)
    m = result.machine
    roof_of = (result.decode.intensity_flop_per_byte, m.compute_flops_per_s, m.bandwidth_bytes_per_s)
    assert attainable_flops_per_s(*roof_of) == pytest.approx(roof, rel=1e-12)
    assert under_the_roof(result.decode.attained_flops_per_s, *roof_of)  # 2.889 under 4.658
    # The batch sweep places each batch the same way: batch 1 is this step.
    sweep = result.batch_sweep([1, 64])
    assert sweep.attained_flops_per_s[0] == pytest.approx(result.decode.attained_flops_per_s, rel=1e-12)
    # fp16 weights move at the group's one rate: the step sits on the roof, min(compute, bandwidth × I).
    plain = estimate_on("llama-3.1-8b", "a100-80gb-sxm", "vllm", prompt_tokens=1, output_tokens=1)
    m, i = plain.machine, plain.decode.intensity_flop_per_byte
    assert plain.decode.attained_flops_per_s == pytest.approx(min(m.compute_flops_per_s, m.bandwidth_bytes_per_s * i))
    assert not under_the_roof(plain.decode.attained_flops_per_s, i, m.compute_flops_per_s, m.bandwidth_bytes_per_s)


def test_dequantising_prefill_pays_on_the_weight_matmuls_not_on_attention():
    # Llama 3.1 8B int4 on an RTX 4090, 2,048-token prompt, an engine whose dequantising
    # matmuls reach half its MFU: weight FLOPs 2 × 8.03e9 × 2048 = 32.891 TFLOP at
    # 165.2e12 × 0.5 × 0.5; attention 4 × 32 × 128 × 32 × Σ1..2048 (2,098,176) = 1.1001 TFLOP
    # at 165.2e12 × 0.5.
    model = presets.model("llama-3.1-8b")
    efficiency = Efficiency(label="custom", mfu=0.5, dequant_compute=0.5)
    scenario = Scenario(model, presets.gpu("rtx-4090"), INT4, efficiency, Workload(prompt_tokens=2048))
    step = prefill(model, INT4, scenario.machine, 2048)
    weight_flops, attention_flops = 2 * 8.03e9 * 2048, 4 * 32 * 128 * 32 * 2_098_176
    assert step.flops == pytest.approx(weight_flops + attention_flops, rel=1e-12)
    expected = weight_flops / (165.2e12 * 0.25) + attention_flops / (165.2e12 * 0.5)
    assert step.compute_time_s == pytest.approx(expected, rel=1e-12)
    # The same engine on fp16 weights multiplies at its full MFU.
    plain = prefill(model, FP16, replace(scenario, precision=FP16).machine, 2048)
    assert plain.compute_time_s == pytest.approx((weight_flops + attention_flops) / (165.2e12 * 0.5), rel=1e-12)


def test_a_server_adds_its_path_to_the_ttft_once():
    # vLLM's path per request, 54 ms, is in its TTFT; the decode steps do not pay it. One request
    # alone pays nothing per other stream in flight (there is none).
    served = estimate_on("llama-3.1-70b", "h100-sxm", "vllm", Precision(8, 8), prompt_tokens=1000, gpu_count=2)
    assert served.ttft_s == pytest.approx(served.prefill.time_s + 0.054, rel=1e-12)
    assert served.total_s == pytest.approx(served.ttft_s + served.latency.decode_s, rel=1e-12)
    # The typical engine (and the lesson's ideal machine) run in-process: nothing added.
    plain = estimate_on("llama-3.1-70b", "h100-sxm", "typical", Precision(8, 8), prompt_tokens=1000, gpu_count=2)
    assert plain.ttft_s == plain.prefill.time_s
    assert IDEAL.request_overhead_s == 0 and IDEAL.is_ideal


@pytest.mark.parametrize(("gpu_count", "path_ms"), [(1, 54.0), (2, 68.0), (4, 82.0), (8, 96.0)])
def test_sglang_path_grows_with_each_doubling_of_the_gpus(gpu_count, path_ms):
    # SGLang's path is vLLM's 54 ms + 14 ms per doubling of the tensor-parallel GPUs (its scheduler
    # hands each request to every worker): 1 GPU 54 ms, 2 → 54 + 14 = 68, 4 → 54 + 28 = 82,
    # 8 → 54 + 3 × 14 = 96 ms. Qwen3-30B-A3B fp8 on H200s (a KV cache), one 610-token prompt.
    served = estimate_on("qwen3-30b-a3b", "h200", "sglang", Precision(8, 8), prompt_tokens=610, gpu_count=gpu_count)
    assert served.ttft_s - served.prefill.time_s == pytest.approx(path_ms / 1e3, rel=1e-9)
    # Run in-process (a measurement's offline harness), the engine has no path at all.
    efficiency = served.scenario.efficiency.in_process()
    assert efficiency.request_path_s(gpu_count) == 0


def test_every_engine_is_an_efficiency_base_and_a_link():
    model = presets.model("llama-3.1-8b")
    for engine_id, profile in ENGINES.items():
        scenario = Scenario.from_flat({"model": "llama-3.1-8b", "gpu": "h100-sxm", "engine": engine_id})
        assert scenario.efficiency == profile.efficiency(model)
        assert Scenario.from_flat(scenario.to_flat()) == scenario
    assert LLAMA_CPP.efficiency(model).step_overhead_s == pytest.approx(32 * 104e-6, rel=1e-12)
    assert VLLM.efficiency(model).dequant_bandwidth == 0.94
    assert VLLM.efficiency(model).unpack_flop_per_weight == 13.5
    assert VLLM.efficiency(model).stream_overhead_s == 82e-5


def test_a_gpu_that_sustains_less_derates_every_engine_but_not_the_ideal_machine():
    # Llama 3.1 70B fp8 (8-bit cache) on 8 × MI300X under vLLM, a 1,000-token prompt, one token:
    # MI300X's kernels sustain 0.85 of the bandwidth and 0.64 of the compute an H100's do, so vLLM
    # reads at 8 × 5,300e9 × 0.73 × 0.85 = 26.308e12 B/s and multiplies at 8 × 2,614.9e12 × 0.50 ×
    # 0.64 = 6,694.1e12 FLOP/s (attention too: FP8 beside the fp8 cache).
    fp8 = Precision(8, 8)
    served = estimate_on("llama-3.1-70b", "mi300x", "vllm", fp8, prompt_tokens=1000, output_tokens=1, gpu_count=8)
    machine = served.scenario.machine
    assert machine.bandwidth_bytes_per_s == pytest.approx(8 * 5300e9 * 0.73 * 0.85, rel=1e-12)
    assert machine.compute_flops_per_s == pytest.approx(8 * 2614.9e12 * 0.50 * 0.64, rel=1e-12)
    assert machine.attention_flops_per_s == machine.compute_flops_per_s
    assert served.prefill.compute_time_s == pytest.approx(served.prefill.flops / 6694.144e12, rel=1e-9)
    # The lesson's ideal machine reads the datasheet itself, on any GPU.
    ideal = estimate_on("llama-3.1-70b", "mi300x", "ideal", fp8, prompt_tokens=1000, output_tokens=1, gpu_count=8)
    assert ideal.scenario.machine.bandwidth_bytes_per_s == 8 * 5300e9
    assert ideal.scenario.machine.compute_flops_per_s == 8 * 2614.9e12


def test_a_published_row_takes_the_shares_of_the_gpu_it_names():
    # A measurement names its GPU in free text and gives its datasheet numbers; what the GPU's
    # kernels sustain comes from the preset of that name (an MI300X here), the datasheet from the row.
    from core.measurements import load

    mi300x = next(m for m in load("fit") if m.scenario.gpu.name == "MI300X")
    assert (mi300x.scenario.gpu.sustained_bandwidth_share, mi300x.scenario.gpu.sustained_compute_share) == (0.85, 0.64)
    assert mi300x.scenario.gpu.memory_bandwidth_bytes_per_s == 5300e9
    unknown = next(m for m in load("validation") if m.scenario.gpu.name.startswith("RTX-3090"))
    assert (unknown.scenario.gpu.sustained_bandwidth_share, unknown.scenario.gpu.sustained_compute_share) == (1, 1)


# llama.cpp's expert padding off Apple and off Radeon (100 tokens per touched expert per micro-batch
# of 512). Qwen3-30B-A3B: (30.53 - 3.35) B / (128 - 8) experts = 0.2265 B params per expert over its
# 48 layers, so one padded expert costs 2 × 0.2265e9 × 100 = 45.30 GFLOP.
PER_PADDED_EXPERT_FLOPS = 2 * (30.53e9 - 3.35e9) / 120 * 100


@pytest.mark.parametrize(
    ("prompt_tokens", "padding_flops"),
    [
        # 2,048 tokens → 4 micro-batches of 512, each touching all 128 experts
        # (128 × (1 - (120/128)^512) = 128 - 6e-13): 45.30e9 × 128 × 4 = 23.19 TFLOP.
        (2048, PER_PADDED_EXPERT_FLOPS * 128 * 4),
        # 600 tokens → 2 micro-batches (512 + 88), each counted as a full one touches (all 128; 88
        # tokens alone would touch 127.6): 11.60 TFLOP.
        (600, PER_PADDED_EXPERT_FLOPS * 128 * 2),
        # 4 tokens touch 128 × (1 - 0.9375^4) = 29.12 experts: 45.30e9 × 29.12 = 1.319 TFLOP.
        (4, PER_PADDED_EXPERT_FLOPS * 128 * (1 - 0.9375**4)),
    ],
)
def test_expert_padding_counts_every_touched_expert_in_every_micro_batch(prompt_tokens, padding_flops):
    model = presets.model("qwen3-30b-a3b")
    scenario = Scenario(model, presets.gpu("h100-sxm"), FP16, efficiency_base("llama.cpp", model), Workload())
    assert float(expert_padding_flops(model, scenario.machine, prompt_tokens)) == pytest.approx(padding_flops, rel=1e-9)
    assert padding_flops == pytest.approx({2048: 23.19e12, 600: 11.60e12, 4: 1.319e12}[prompt_tokens], rel=1e-3)


def test_llama_cpp_off_apple_prefills_a_mixture_of_experts_slower_by_its_padding_alone():
    # Qwen3-30B-A3B in 16-bit on one H100, a 2,048-token prompt: compute-bound (13.7 TFLOP of
    # weights against 61 GB read), so the CUDA backend's TTFT is the same engine's without padding
    # plus the padding at the weights' rate: 23.19e12 / (989.5e12 × 0.64) = 36.6 ms. Decode pays nothing.
    model = presets.model("qwen3-30b-a3b")
    cuda = estimate_on("qwen3-30b-a3b", "h100-sxm", "llama.cpp", prompt_tokens=2048, output_tokens=64)
    unpadded = replace(LLAMA_CPP, expert_padding_tokens=0.0).efficiency(model)
    plain = estimate(replace(cuda.scenario, efficiency=unpadded))
    assert cuda.prefill.compute_time_s > cuda.prefill.memory_time_s
    assert cuda.ttft_s - plain.ttft_s == pytest.approx(PER_PADDED_EXPERT_FLOPS * 512 / (989.5e12 * 0.64), rel=1e-9)
    assert cuda.ttft_s - plain.ttft_s == pytest.approx(36.62e-3, rel=1e-3)
    assert cuda.prefill.flops == plain.prefill.flops  # padding is time, not the model's maths
    assert cuda.tpot_s == plain.tpot_s


def test_a_dense_model_pays_no_expert_padding():
    # Llama 3.1 8B: no experts, so the two llama.cpp backends agree to the bit at the same MBU
    # (Metal's own, 0.80, is the one other cost they do not share for a dense model).
    model = presets.model("llama-3.1-8b")
    cuda = estimate_on("llama-3.1-8b", "h100-sxm", "llama.cpp", prompt_tokens=2048, output_tokens=64)
    metal_costs = replace(ENGINES["llama.cpp-metal"], mbu=LLAMA_CPP.mbu).efficiency(model)
    metal = estimate(replace(cuda.scenario, efficiency=metal_costs))
    assert (cuda.ttft_s, cuda.tpot_s) == (metal.ttft_s, metal.tpot_s)


def test_the_load_model_charges_the_padding_on_prompt_tokens_only():
    # One iteration of 8 decodes beside a 512-token chunk: the padding of one micro-batch of 512
    # (45.30e9 × 128 = 5.798 TFLOP) on top of the same iteration on Metal; 8 decodes alone: none.
    model = presets.model("qwen3-30b-a3b")

    def replica(engine_id):
        return Scenario(model, presets.gpu("h100-sxm"), FP16, efficiency_base(engine_id, model), Workload()).replica()

    cuda, metal = replica("llama.cpp"), replica("llama.cpp-metal")
    rate = cuda.machine.weight_compute_flops_per_s
    with_chunk = iteration(cuda, 8, 1000, 512, 0).compute_time_s - iteration(metal, 8, 1000, 512, 0).compute_time_s
    assert with_chunk == pytest.approx(PER_PADDED_EXPERT_FLOPS * 128 / rate, rel=1e-9)
    assert iteration(cuda, 8, 1000).compute_time_s == iteration(metal, 8, 1000).compute_time_s


def test_llama_cpp_rows_run_on_their_backends_profile():
    rows = [m for name in SETS for m in load(name) if m.engine in ("llama.cpp", "ollama")]
    gpus = {
        profile: {m.scenario.gpu.name for m in rows if m.profile == profile} for profile in {m.profile for m in rows}
    }
    assert set(gpus) == {"llama.cpp", "llama.cpp-metal", "llama.cpp-radeon"}
    assert all(name.startswith("M") and name[1].isdigit() for name in gpus["llama.cpp-metal"])  # M1-M4 Macs
    assert all(name.startswith(("RX", "Radeon")) for name in gpus["llama.cpp-radeon"])
    assert (
        "MI300X" in gpus["llama.cpp"] and "Radeon-8060S-StrixHalo" in gpus["llama.cpp-radeon"]
    )  # Instinct is not Radeon
    # Metal shares every fitted cost but the padding, the cost per MoE layer and its MBU; Radeon
    # every one but its own (core.engine_fit.LATER_FITTED), the cost per MoE layer llama.cpp's.
    metal, radeon = ENGINES["llama.cpp-metal"], ENGINES["llama.cpp-radeon"]
    own = ("id", "name", "expert_padding_tokens", "moe_layer_overhead_s", "mbu")
    assert (metal.mbu, LLAMA_CPP.mbu) == (METAL_MBU, 0.95) == (0.80, 0.95)
    assert replace(metal, **{k: getattr(LLAMA_CPP, k) for k in own}) == LLAMA_CPP
    assert (
        replace(radeon, **{k: getattr(LLAMA_CPP, k) for k in ("id", "name", *LATER_FITTED["llama.cpp-radeon"])})
        == LLAMA_CPP
    )
    assert (LLAMA_CPP.expert_padding_tokens, metal.expert_padding_tokens, radeon.expert_padding_tokens) == (100, 0, 40)
    assert (LLAMA_CPP.moe_layer_overhead_s, radeon.moe_layer_overhead_s, metal.moe_layer_overhead_s) == (0, 0, 80e-6)
    assert metal.moe_layer_overhead_s == MOE_LAYER_OVERHEAD_S


def test_llama_cpp_on_radeon_multiplies_quantised_weights_at_its_own_share():
    # Llama 3.1 8B in int4 (4.5 bits) on a Radeon 8060S, a 2,048-token prompt: the weights' 32.891 TFLOP
    # run at 59.4e12 × 0.73 (what the chip sustains) × 0.64 (llama.cpp's MFU) × 0.48 (its dequantising
    # share on Radeon) = 13.321e12 FLOP/s, 2.469 s, where llama.cpp's other backends (share 1.0) take
    # 1.185 s; attention's 4 × 32 × 128 × 32 × Σ1..2048 = 1.1001 TFLOP at the full 27.75e12: 39.6 ms.
    model = presets.model("llama-3.1-8b")
    radeon = Scenario(model, presets.gpu("radeon-8060s"), INT4, LLAMA_CPP_RADEON.efficiency(model), Workload())
    step = prefill(model, INT4, radeon.machine, 2048)
    weight_flops, attention_flops = 2 * 8.03e9 * 2048, 4 * 32 * 128 * 32 * 2_098_176
    assert 59.4e12 * 0.73 * 0.64 * 0.48 == pytest.approx(13.3208e12, rel=1e-5)
    expected = weight_flops / (59.4e12 * 0.73 * 0.64 * 0.48) + attention_flops / (59.4e12 * 0.73 * 0.64)
    assert step.compute_time_s == pytest.approx(expected, rel=1e-12)
    assert step.compute_time_s == pytest.approx(2.469 + 0.0396, rel=1e-3)
    other = prefill(model, INT4, replace(radeon, efficiency=LLAMA_CPP.efficiency(model)).machine, 2048)
    assert other.compute_time_s == pytest.approx(1.185 + 0.0396, rel=1e-3)
    # Decode reads the same bytes at the same rate on both: Radeon's share is the maths'.
    on_radeon = estimate(replace(radeon, workload=Workload(prompt_tokens=1, output_tokens=1)))
    elsewhere = estimate(replace(on_radeon.scenario, efficiency=LLAMA_CPP.efficiency(model)))
    assert on_radeon.decode.memory_time_s == elsewhere.decode.memory_time_s


def test_the_costs_fitted_on_the_later_sets_are_what_their_fits_give():
    # llama.cpp's own costs (core.engine_fit.LATER_FITTED) on every set up to fresh14, each with the
    # shipped others in place: the cost per MoE layer on 74 MoE decode rows (29 sources) of both
    # backends off Apple, Radeon's dequantising share on its 24 dense prefill rows (9 sources), each
    # backend's padding, a median of its sources' medians, on its MoE prefill rows (23 rows from 13
    # sources, 26 from 9 on Radeon). tools/fit_llama_cpp_moe.py and tools/fit_expert_padding.py print
    # the sources and the left-one-source-out errors.
    rows = [m for name in LATER_FITTED_ON for m in load(name)]
    assert (len(own_moe_rows(rows)), len(radeon_dequant_rows(rows))) == (74, 24)
    assert (len(metal_decode_rows(rows)), len({m.source_id for m in metal_decode_rows(rows)})) == (85, 21)
    assert (len(padding_rows(rows)), len(padding_rows(rows, "llama.cpp-radeon"))) == (23, 26)
    assert fit_later(rows) == {
        "llama.cpp": {
            "moe_layer_overhead_s": LLAMA_CPP_MOE_LAYER_OVERHEAD_S,
            "expert_padding_tokens": EXPERT_PADDING_TOKENS,
        },
        "llama.cpp-metal": {"mbu": METAL_MBU},
        "llama.cpp-radeon": {
            "moe_layer_overhead_s": LLAMA_CPP_MOE_LAYER_OVERHEAD_S,
            "expert_padding_tokens": RADEON_EXPERT_PADDING_TOKENS,
            "dequant_compute": RADEON_DEQUANT_COMPUTE,
        },
    }
    assert (LLAMA_CPP_MOE_LAYER_OVERHEAD_S, EXPERT_PADDING_TOKENS) == (0.0, 100.0)
    assert (RADEON_EXPERT_PADDING_TOKENS, RADEON_DEQUANT_COMPUTE) == (40.0, 0.48)


def test_every_engines_step_cost_shows_as_the_number_it_sums_to():
    # Llama.cpp on Qwen3-30B-A3B: 48 × (104 + 0) µs = 4.992 ms; Metal's 48 × (104 + 80) µs =
    # 8.832 ms; costs of 92 and 75 µs sum to 8.016 ms, shown so (not 8.015999999999998, the binary
    # sum); the same for every preset on every engine.
    step = dict(inputs(Efficiency))["step_overhead_s"]
    qwen = presets.model("qwen3-30b-a3b")
    assert 48 * 92e-6 + 48 * 75e-6 != 8.016e-3
    odd = replace(LLAMA_CPP, launch_overhead_per_layer_s=92e-6, moe_layer_overhead_s=75e-6)
    assert flat_text(step, odd.step_overhead_s(qwen)) == "8.016"
    assert flat_text(step, LLAMA_CPP.step_overhead_s(qwen)) == "4.992"
    assert flat_text(step, ENGINES["llama.cpp-metal"].step_overhead_s(qwen)) == "8.832"
    for model_id in presets.model_presets():
        for profile in ENGINES.values():
            shown = flat_text(step, profile.step_overhead_s(presets.model(model_id)))
            assert len(shown.partition(".")[2]) <= 4, (profile.id, model_id, shown)
