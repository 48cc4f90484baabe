"""One engine iteration: it is `phases.prefill` and `phases.decode_step` at their ends, and the
roofline of both in between — on real models with a KV cache, tensor parallel and MoE."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from core import presets
from core.attention import prefill_attention_flops, prefill_chunk_attention_flops
from core.efficiency import CALIBRATED
from core.engine import TYPICAL, VLLM, EngineProfile
from core.iteration import iteration, prompt_chunks, request_steps
from core.memory import weight_bytes_read
from core.phases import decode_flops, decode_step, prefill
from core.replica import Replica
from core.specs import Precision
from core.step_time import tensor_parallel_time_s

FP8 = Precision(8, 8)
IDEAL = replace(
    TYPICAL,
    id="ideal",
    mbu=1.0,
    mfu=1.0,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=0.0,
    sequence_overhead_s=0.0,
    allreduce_latency_s=0.0,
    moe_layer_overhead_s=0.0,
    expert_overhead_s=0.0,
    dequant_bandwidth=1.0,
    dequant_compute=1.0,
    unpack_flop_per_weight=0.0,
)


def replica(model_id="llama-3.1-70b", gpu_id="b200", n=1, engine: EngineProfile = IDEAL, precision=FP8):
    return Replica(presets.model(model_id), precision, presets.gpu(gpu_id), n, engine)


def test_one_prefill_by_hand():
    # Llama 3.1 70B fp8 on one B200, ideal: 1,000 prompt tokens, nothing decoding.
    # Weights: 2 × 70.55e9 × 1000 = 141.10 TFLOP. Attention: 4 × 64 heads × 128 × 80 layers
    # = 2,621,440 FLOP per attended token, × Σ 1..1000 = 500,500 → 1.3120 TFLOP.
    # Total 142.412 TFLOP / 4,500 TFLOP/s = 31.647 ms; reading 70.55 GB + writing 1000 × 163,840 B
    # of KV at 7.7 TB/s = 9.18 ms: compute-bound.
    step = iteration(replica(), 0.0, 0.0, 1000.0)
    assert step.flops == pytest.approx(141.10e12 + 2_621_440 * 500_500, rel=1e-12)
    assert step.compute_time_s == pytest.approx(0.0316471, rel=1e-5)
    assert step.memory_time_s == pytest.approx((70.55e9 + 1000 * 163_840) / 7.7e12, rel=1e-12)
    assert step.time_s == step.compute_time_s


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b"])
@pytest.mark.parametrize(("gpu_id", "n"), [("h100-sxm", 1), ("h100-sxm", 2), ("b200", 8)])
def test_ends_of_an_iteration_are_prefill_and_decode(model_id, gpu_id, n):
    r = replica(model_id, gpu_id, n, VLLM)
    model, machine = r.model, r.machine
    whole = prefill(model, FP8, machine, 3000)
    step = iteration(r, 0.0, 0.0, 3000.0)
    assert step.time_s == pytest.approx(whole.time_s, rel=1e-12)
    assert step.bytes_moved == pytest.approx(whole.bytes_moved, rel=1e-12)
    decode = decode_step(model, FP8, machine, 48, 2500)
    step = iteration(r, 48.0, 2500.0)
    assert step.time_s == pytest.approx(decode.time_s, rel=1e-12)
    assert step.flops == pytest.approx(decode.flops, rel=1e-12)


def test_a_chunk_attends_over_its_prefix():
    # Positions 4,097..8,192 of a prompt: the chunk's attention is the prompt's minus the first half's.
    model = presets.model("llama-3.1-8b")
    step = iteration(replica("llama-3.1-8b"), 0.0, 0.0, 4096.0, 4096.0)
    attention = prefill_attention_flops(model, 4096, 8192)
    assert step.flops - 2 * model.active_params * 4096 == pytest.approx(attention, rel=1e-12)
    # ...and reads that prefix's KV cache once: 4,096 × 32 layers × 2 × 8 × 128 × 1 byte (fp8).
    bare = iteration(replica("llama-3.1-8b"), 0.0, 0.0, 4096.0, 0.0)
    assert step.bytes_moved - bare.bytes_moved == 4096 * 65_536


def test_mixture_of_experts_reads_the_experts_all_tokens_touch():
    # Mixtral: 8 decodes + a 2-token chunk touch the experts of 10 tokens, not 8 or 2.
    r = replica("mixtral-8x7b")
    step = iteration(r, 8.0, 100.0, 2.0)
    kv = step.bytes_moved - float(weight_bytes_read(r.model, FP8, 10))
    # KV: 32 layers × 2 × 8 KV heads × 128 × 1 byte = 65,536 B per token, read for 8 × 100, written for 2.
    assert kv == pytest.approx(8 * 100 * 65_536 + 2 * 65_536, rel=1e-12)


def test_decodes_ride_along_with_a_prefill_without_reading_the_weights_again():
    # 64 decodes beside a 4,096-token chunk of Llama 3.1 70B on 2 × H100: the chunk is
    # compute-bound, so the decodes add exactly their FLOPs, their per-sequence cost and their
    # share of the all-reduces — not the 70.55 GB weight read a decode-only iteration pays.
    r = replica("llama-3.1-70b", "h100-sxm", 2, VLLM)
    alone = iteration(r, 0.0, 0.0, 4096.0)
    mixed = iteration(r, 64.0, 1500.0, 4096.0)
    assert alone.compute_time_s > alone.memory_time_s and mixed.compute_time_s > mixed.memory_time_s
    m = r.machine
    extra = (
        float(decode_flops(r.model, 64, 1500)) / m.compute_flops_per_s
        + 64 * m.sequence_overhead_s
        + float(tensor_parallel_time_s(r.model, m, 4160) - tensor_parallel_time_s(r.model, m, 4096))
    )
    assert mixed.time_s - alone.time_s == pytest.approx(extra, rel=1e-9)
    assert mixed.time_s - alone.time_s < iteration(r, 64.0, 1500.0).time_s


def test_arrays_give_one_iteration_per_entry():
    r = replica("llama-3.1-8b", "h100-sxm")
    batch = np.array([1.0, 16.0, 256.0])
    times = iteration(r, batch, 2000.0).time_s
    assert times == pytest.approx([iteration(r, float(b), 2000.0).time_s for b in batch], rel=1e-12)


@pytest.mark.parametrize(
    ("engine", "prompt", "decoding", "chunks"),
    [(VLLM, 8192.0, 64.0, 2), (VLLM, 8000.0, 64.0, 1), (VLLM, 100_000.0, 0.0, 13), (TYPICAL, 2048.0, 0.0, 1)],
)
def test_chunked_prefill_splits_a_prompt_over_the_budget(engine, prompt, decoding, chunks):
    # vLLM's 8,192-token budget counts the decodes riding along: 8,192 + 64 > 8,192 → 2 chunks;
    # 100,000 / 8,192 = 12.2 → 13.
    assert float(prompt_chunks(replica(engine=engine), prompt, decoding)) == chunks


def test_an_engine_without_chunking_prefills_whole_prompts():
    r = replica(engine=replace(VLLM, chunked_prefill=False))
    assert float(prompt_chunks(r, 100_000.0, 64.0)) == 1


def test_a_request_between_others():
    # Its prefill with nobody else decoding is `phases.prefill`; another prompt stalls its reply
    # by exactly the mixed iteration minus the decode-only one.
    r = replica("llama-3.1-70b", "h100-sxm", 2, replace(VLLM, request_overhead_s=0.0))
    steps = request_steps(r, 1000.0, 1249.5, 1.0, 0.0)
    assert float(steps.prefill_s()) == pytest.approx(prefill(r.model, FP8, r.machine, 1000).time_s, rel=1e-12)
    assert float(steps.decode_s) == pytest.approx(decode_step(r.model, FP8, r.machine, 1, 1249.5).time_s, rel=1e-12)
    assert float(steps.stall_s()) == pytest.approx(float(steps.mixed_one_s - steps.decode_s), rel=1e-12)
    assert math.isclose(float(steps.chunks), 1.0)
    # A full budget (8,191 / 1,000 = 8.19 prompts) in one iteration shares its fixed costs and
    # weight read: less engine time per prompt. Yet each prompt now displaces only 1/8.19 of a
    # decode iteration (a lone prompt hides the whole decode's weight read under its maths),
    # so its stall of the reply is larger: the extra time split 8.19 ways.
    most = float(steps.most_prompts)
    assert most == pytest.approx((8192 - 1) / 1000)
    assert float(steps.mixed_most_s) / most < float(steps.mixed_one_s)
    assert float(steps.stall_s(most)) == pytest.approx(float(steps.mixed_most_s - steps.decode_s) / most, rel=1e-12)
    assert float(steps.stall_s(most)) > float(steps.stall_s())


def test_typical_engine_flattens_to_the_calibrated_efficiency_per_model():
    # The toy has no layers: CALIBRATED exactly. Llama 3.1 70B adds 80 × 30 µs = 2.4 ms a step.
    assert TYPICAL.efficiency(presets.model("toy-7b")) == CALIBRATED
    llama = TYPICAL.efficiency(presets.model("llama-3.1-70b"))
    assert llama.step_overhead_s == pytest.approx(80 * 30e-6, rel=1e-12)
    assert replace(llama, step_overhead_s=0.0) == CALIBRATED


def test_prompts_sharing_an_iteration_attend_only_over_themselves():
    # Eight 1,000-token prompts in one iteration: the attention of eight 1,000-token prompts,
    # 8 × 2,621,440 × Σ1..1000, not of one 8,000-token prompt (8× more).
    r = replica()
    shared = iteration(r, 0.0, 0.0, 8000.0, 0.0, 8.0)
    weights = 2 * 70.55e9 * 8000
    assert shared.flops - weights == pytest.approx(8 * 2_621_440 * 500_500, rel=1e-12)


@pytest.mark.parametrize(
    ("context", "chunk", "form", "flops"),
    [
        # A fresh 1,000-token prompt: expanded, 81,920 × 61 layers × (1 + … + 1,000 = 500,500) = 2.501 TFLOP.
        (0, 1000, "expanded", 81_920 * 61 * 500_500),
        # 1,000 more after 7,000: expanded 81,920 × 61 × 1,000 × 7,500.5 + 61 × 7,000 cached latents × 33.55 MFLOP
        # = 37.48 + 14.33 TFLOP = 51.81, under the absorbed 278,528 × 61 × 7,500,500 = 127.4 TFLOP.
        (7000, 1000, "expanded", 81_920 * 61 * 7_500_500 + 61 * 7000 * 33_554_432),
        # 10 after 30,000: expanding the prefix (61.4 TFLOP) costs more than attending absorbed:
        # 278,528 × 61 × 10 × 30,005.5 = 5.098 TFLOP.
        (30_000, 10, "absorbed", 278_528 * 61 * 300_055),
    ],
)
def test_a_prefill_chunk_costs_latent_attention_in_its_cheaper_form(context, chunk, form, flops) -> None:
    model = presets.model("deepseek-v3")
    assert prefill_chunk_attention_flops(model, context, chunk) == pytest.approx(flops, rel=1e-12)
    # The whole prompt's own rule (`estimate`'s), for the same positions: the iterations agree with it.
    assert prefill_attention_flops(model, context, context + chunk) == pytest.approx(flops, rel=1e-12)
    # Two prompts sharing the chunk, each half of it after its own context, each expanding its own prefix.
    if form == "expanded":
        half = prefill_chunk_attention_flops(model, context, chunk / 2)
        assert prefill_chunk_attention_flops(model, context, chunk, 2) == pytest.approx(2 * half, rel=1e-12)
