"""The closed loop (at most C requests in flight): a point worked by hand, agreement with
`estimate` at C = 1, Little's law, the memory cap, and the trends every server shows."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core import presets
from core.closed_loop import ClosedLoop, closed_loop, closed_loops
from core.engine import HF_TRANSFORMERS, TRTLLM, TYPICAL, VLLM, EngineProfile
from core.estimate import estimate
from core.iteration import request_steps
from core.lengths import RequestLengths
from core.replica import Replica
from core.scenario import Scenario
from core.specs import CUSTOM_ID, Model, Precision, Workload

FP16, FP8 = Precision(16, 16), Precision(8, 8)
# The lesson's toy 7B given Llama 2 7B's layout with grouped-query attention: 32 layers,
# 32 query heads and 8 KV heads of 128 → KV 2 × 32 × 8 × 128 × 2 B = 131,072 B per token,
# attention 4 × 32 × 128 × 32 = 524,288 FLOP per attended token.
TOY_WITH_KV = Model(
    id=CUSTOM_ID,
    name="Toy 7B with a KV cache",
    total_params=7e9,
    active_params=7e9,
    layers=32,
    hidden=4096,
    query_heads=32,
    kv_heads=8,
    head_dim=128,
)
IDEAL_ENGINE = EngineProfile(
    id="ideal",
    name="Ideal engine",
    mbu=1.0,
    mfu=1.0,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=0.0,
    sequence_overhead_s=0.0,
    allreduce_latency_s=0.0,
    request_overhead_s=0.0,
    max_batched_tokens=8192,
    chunked_prefill=True,
    max_sequences=1024,
    memory_utilization=1.0,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=0.0,
    reserves_full_sequence=False,
)


def replica(model_id="llama-3.1-70b", gpu_id="h100-sxm", n=2, engine=VLLM, precision=FP8) -> Replica:
    return Replica(presets.model(model_id), precision, presets.gpu(gpu_id), n, engine)


def test_a_closed_loop_point_by_hand():
    # The toy with a KV cache on the toy GPU (2 TB/s, 300 TFLOP/s, 80 GB), ideal engine,
    # C = 8 requests of 200 prompt → 500 reply tokens, fixed. Every other request decodes
    # beside one, so: replies decode in batches of 8, prefills run beside 7 decodes.
    # Context of an average decode step: L = 200 + 499/2 = 449.5 tokens.
    # Decode iteration, b = 8: 14e9 + 8 × 449.5 × 131,072 = 14.4713e9 B / 2e12 = 7.2357 ms
    #   (its 8 × (14e9 + 524,288 × 450.5) = 113.9e9 FLOP take 0.38 ms: memory-bound).
    # Own prefill beside 7 decodes: 2 × 7e9 × 200 + 524,288 × Σ1..200 + 7 decodes' FLOPs =
    #   2.9102e12 FLOP / 300e12 = 9.7006 ms (compute-bound).
    # The same iteration during a reply (8 decodes + a 200-token prompt): 9.7481 ms, so one
    #   other prompt stretches a reply's iteration by 9.7481 − 7.2357 = 2.5124 ms.
    # Prompts arrive at X × 7/8 (X ≈ 2.19/s): 0.0139 per decode iteration, so an iteration
    #   carrying prompts carries 0.0139 / (1 − e^−0.0139) = 1.0069 of them (the budget's worth
    #   is 8,184 / 200 = 40.92 prompts, 383.7 ms): interpolating, that iteration takes 9.8132 ms,
    #   so one prompt's stall of a reply is (9.8132 − 7.2357) / 1.0069 = 2.5597 ms, and the
    #   request's own prefill (beside 7 decodes) 9.7657 ms.
    # TPOT = 7.2357 / (1 − X × 7/8 × 2.5597 ms); TTFT = 7.2357 (an iteration already running)
    #   + 9.7657 (own prefill) + Kingman's wait behind other prompts, ρ = X × 7/8 × 9.8132 /
    #   1.0069 = 0.0187 → 0.0187 / 0.9813 × 9.8132 / 2 = 0.093 ms.
    # Little's law, X × (TTFT + 500 × TPOT) = 8, solved: X = 2.1901 requests/s, TPOT = 7.2713 ms,
    # TTFT = 17.095 ms, e2e = 3.6528 s, output 1,095.1 tokens/s, 1000 / 7.2713 = 137.53 per user.
    r = Replica(TOY_WITH_KV, FP16, presets.gpu("toy-gpu"), 1, IDEAL_ENGINE)
    point = closed_loop(r, RequestLengths(200, 500), 8)
    assert point.requests_per_s == pytest.approx(2.1901, rel=1e-4)
    assert point.tpot_s == pytest.approx(7.2713e-3, rel=1e-4)
    assert point.ttft_s == pytest.approx(17.095e-3, rel=1e-4)
    assert point.e2e_s == pytest.approx(3.6528, rel=1e-4)
    assert point.output_tokens_per_s_per_gpu == pytest.approx(1095.1, rel=1e-4)
    assert point.tokens_per_s_per_user == pytest.approx(137.53, rel=1e-4)
    assert point.total_tokens_per_s_per_gpu == pytest.approx(2.1901 * 700, rel=1e-4)
    assert point.queue_wait_s == 0 and point.running == 8


def test_the_servers_path_grows_with_the_streams_in_flight():
    # The point above with 1 ms of server path per other request streaming (`stream_overhead_s`):
    # a new request's first token waits 7 × 1 ms more, TTFT 17.095 + 7 = 24.095 ms. Little's law
    # then gives X = 8 / (0.024095 + 500 × 0.0072713) = 2.1859/s; the reply's steps barely move
    # (others' prompts arrive 0.2 % less often). Alone (C = 1) there is nobody else: no change.
    engine = replace(IDEAL_ENGINE, stream_overhead_s=1e-3)
    r = Replica(TOY_WITH_KV, FP16, presets.gpu("toy-gpu"), 1, engine)
    point = closed_loop(r, RequestLengths(200, 500), 8)
    assert point.ttft_s == pytest.approx(24.095e-3, rel=1e-4)
    assert point.requests_per_s == pytest.approx(2.1859, rel=1e-4)
    assert point.tpot_s == pytest.approx(7.2713e-3, rel=1e-4)
    alone = Replica(TOY_WITH_KV, FP16, presets.gpu("toy-gpu"), 1, IDEAL_ENGINE)
    assert closed_loop(r, RequestLengths(200, 500), 1).ttft_s == closed_loop(alone, RequestLengths(200, 500), 1).ttft_s


CASES = [
    ("llama-3.1-8b", "h100-sxm", 1, FP16, 1000, 500),
    ("llama-3.1-8b", "a100-80gb-sxm", 1, Precision(16, 8), 128, 2048),
    ("llama-3.1-70b", "h100-sxm", 2, FP8, 2000, 300),
    ("llama-3.1-70b", "b200", 4, FP8, 8000, 1000),
    ("mixtral-8x7b", "h200", 2, FP16, 500, 500),
    # More GPUs than KV heads: the heads are replicated (×2 for Qwen3-235B's 4 KV heads on 8 GPUs;
    # DeepSeek-V3's latent cache is whole on every rank, ×8). The load model reads every copy too.
    ("qwen3-235b-a22b", "h200", 8, FP8, 1000, 500),
    ("deepseek-v3", "h200", 8, FP8, 1000, 500),
    # A prompt long enough to be compute-bound: latent attention's prefill in the cheaper (expanded) form in
    # both, 81,920 FLOP per attended token per layer, not the decode's absorbed 278,528 (serve's TTFT was
    # 1.6× estimate's at 12,000 tokens).
    ("deepseek-v3", "h200", 8, FP8, 8000, 200),
]


@pytest.mark.parametrize(("model_id", "gpu_id", "n", "precision", "prompt", "output"), CASES)
def test_concurrency_one_is_estimate(model_id, gpu_id, n, precision, prompt, output):
    # "Agree" means: TPOT, TTFT (the engine's per-request path included in both) and the decode
    # time exactly (one sequence, closed-form mean context). Prompts here fit one chunk; see the
    # next test for longer ones. HF transformers' replies here all wait on its host (layers × 1.17 ms
    # against a few ms of GPU work at one sequence), so its loop agrees too (core.closed_loop).
    scenario = Scenario(
        model=presets.model(model_id),
        gpu=presets.gpu(gpu_id),
        precision=precision,
        efficiency=TYPICAL.efficiency(presets.model(model_id)),
        workload=Workload(prompt_tokens=prompt, output_tokens=output, gpu_count=n),
    )
    expected = estimate(scenario)
    point = closed_loop(replica(model_id, gpu_id, n, TYPICAL, precision), RequestLengths(prompt, output), 1)
    assert point.ttft_s == pytest.approx(expected.ttft_s, rel=1e-12)
    assert point.tpot_s == pytest.approx(expected.tpot_s, rel=1e-12)
    assert point.e2e_s == pytest.approx(expected.total_s, rel=1e-12)
    assert point.output_tokens_per_s_per_gpu == pytest.approx(expected.output_tokens_per_s / n, rel=1e-12)
    for engine in (VLLM, TRTLLM, HF_TRANSFORMERS):
        named = closed_loop(replica(model_id, gpu_id, n, engine, precision), RequestLengths(prompt, output), 1)
        costs = estimate(replace(scenario, efficiency=engine.efficiency(scenario.model)))
        assert named.ttft_s == pytest.approx(costs.ttft_s, rel=1e-12)
        assert costs.ttft_s == pytest.approx(costs.prefill.time_s + engine.request_overhead_s, rel=1e-12)
        assert named.tpot_s == pytest.approx(costs.tpot_s, rel=1e-12)


@pytest.mark.parametrize(("prompt", "chunks"), [(8_192, 1), (8_193, 2), (16_384, 2), (20_000, 3)])
def test_a_chunked_prompt_pays_the_fixed_costs_once_per_chunk(prompt, chunks):
    # Alone, a prompt shares a vLLM-like 8,192-token budget with no decode: 8,192 tokens are one
    # iteration, as `estimate` prefills them; 8,193 are two, 16,384 two full ones, 20,000 three. Each chunk past
    # the first adds the fixed costs once more: 32 layers × 30 µs + 68 µs per sequence (the chunks'
    # FLOPs add up to the whole prompt's). The budget had counted the request's own decode as well:
    # 8,192 tokens took two iterations, 1 ms more than `estimate` (19 ms for DeepSeek-V3 on 8 × H200).
    r = replica("llama-3.1-8b", "h100-sxm", 1, TYPICAL, FP16)
    scenario = Scenario(
        model=r.model,
        gpu=r.gpu,
        precision=FP16,
        efficiency=TYPICAL.efficiency(r.model),
        workload=Workload(prompt_tokens=prompt, output_tokens=200),
    )
    point = closed_loop(r, RequestLengths(prompt, 200), 1)
    extra = point.ttft_s - estimate(scenario).ttft_s
    assert extra == pytest.approx((chunks - 1) * (32 * 30e-6 + 68e-6), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("engine", [TYPICAL, VLLM, TRTLLM], ids=lambda e: e.id)
@pytest.mark.parametrize(("prompt", "output", "low"), [(1024, 1024, 0.8), (8192, 1024, 0.8), (200, 4000, 1.0)])
@pytest.mark.parametrize("requests_per_slot", [None, 10])
def test_littles_law(engine, prompt, output, low, requests_per_slot):
    # Throughput × mean end-to-end latency = requests in flight, including above the memory cap
    # (C up to 2,048: Llama 3.1 70B on 2 × H100 holds a few hundred at most).
    c = np.array([1, 3, 8, 32, 100, 300, 1000, 2048], dtype=float)
    result = closed_loop(replica(engine=engine), RequestLengths(prompt, output, low), c, requests_per_slot)
    assert result.requests_per_s * result.e2e_s == pytest.approx(c, rel=1e-9)
    assert result.e2e_s == pytest.approx(result.ttft_s + output * (1 + low) / 2 * result.tpot_s, rel=1e-12)


@pytest.mark.parametrize(
    ("model_id", "gpu_id", "n", "engine"),
    [("llama-3.1-8b", "h100-sxm", 1, VLLM), ("llama-3.1-70b", "h200", 2, TRTLLM), ("llama-3.1-70b", "b200", 8, VLLM)],
)
def test_more_concurrency_more_throughput_fewer_tokens_per_user(model_id, gpu_id, n, engine):
    lengths = RequestLengths(2000, 500, 0.8)
    r = replica(model_id, gpu_id, n, engine)
    cap = r.max_concurrency_that_fits(lengths)
    c = np.unique(np.geomspace(1, cap, 24).round())
    result = closed_loop(r, lengths, c)
    assert np.all(np.diff(result.output_tokens_per_s_per_gpu) > 0)
    assert np.all(np.diff(result.tokens_per_s_per_user) < 0)
    assert np.all(np.diff(result.ttft_s) > 0)
    # Batching pays: at the cap, several times the throughput of one request.
    assert result.output_tokens_per_s_per_gpu[-1] > 5 * result.output_tokens_per_s_per_gpu[0]


def test_above_the_memory_cap_requests_wait_for_a_slot():
    # Llama 3.1 70B fp8 on 2 × H100, vLLM, 8k/1k: ~50 sequences fit. Above that, throughput stays
    # at the cap's and every extra request adds one service slot's worth of waiting: (C − cap) / X.
    r, lengths = replica(), RequestLengths(8192, 1024, 0.8)
    cap = r.max_concurrency_that_fits(lengths)
    assert 30 < cap < 80
    result = closed_loop(r, lengths, np.array([cap, cap + 10, 2 * cap, 4 * cap], dtype=float))
    assert result.running == pytest.approx([cap] * 4)
    assert result.requests_per_s == pytest.approx([result.requests_per_s[0]] * 4, rel=1e-12)
    extra = np.array([0, 10, cap, 3 * cap])
    assert result.queue_wait_s == pytest.approx(extra / result.requests_per_s[0], rel=1e-12)
    assert result.ttft_s - result.queue_wait_s == pytest.approx([result.ttft_s[0]] * 4, rel=1e-12)


def test_nothing_fits_means_no_throughput():
    # Llama 3.1 405B in 16-bit (810 GB) on one H100.
    point = closed_loop(replica("llama-3.1-405b", "h100-sxm", 1, VLLM, FP16), RequestLengths(100, 100), 4)
    assert point.max_concurrency_that_fits == 0
    assert point.requests_per_s == 0 and point.ttft_s == float("inf")


def test_the_benchmarks_first_burst_only_adds_to_ttft():
    # benchmark_serving sends the first C requests at once: 1 in `requests_per_slot` TTFTs queue
    # behind up to C prefills. TPOT is unchanged, C = 1 has no burst, and the effect fades as 1/n.
    r, lengths = replica(), RequestLengths(1024, 1024, 0.8)
    c = np.array([1, 16, 64], dtype=float)
    steady = closed_loop(r, lengths, c)
    ten, hundred = closed_loop(r, lengths, c, 10), closed_loop(r, lengths, c, 100)
    assert ten.tpot_s == pytest.approx(steady.tpot_s, rel=1e-12)
    assert ten.ttft_s[0] == pytest.approx(steady.ttft_s[0], rel=1e-12)
    assert np.all(ten.ttft_s[1:] > hundred.ttft_s[1:]) and np.all(hundred.ttft_s[1:] > steady.ttft_s[1:])
    assert (ten.ttft_s - steady.ttft_s)[1:] == pytest.approx(10 * (hundred.ttft_s - steady.ttft_s)[1:], rel=1e-9)


def test_decodes_slow_down_as_others_prefill_beside_them():
    # Long prompts, short replies: at C = 32 about 32 / 1,000 of iterations carry an 8k prompt,
    # so TPOT is well above the decode-only iteration at the same batch.
    r, lengths = replica(), RequestLengths(8192, 1000)
    point = closed_loop(r, lengths, 32)
    steps = request_steps(r, 8192.0, lengths.mean_decode_context_tokens, 32.0, 31.0)
    assert point.tpot_s > 1.2 * float(steps.decode_s)


def test_closed_loops_in_one_pass_are_each_closed_loop_to_the_bit():
    # A plan solves dozens of setups' closed loops in one pass. Each must be exactly what it is
    # alone: elementwise arithmetic, and each setup stops its batch passes when its own entries
    # settle. Here setups that settle at once (short prompts) sit beside ones driven into prefill
    # saturation (8k prompts, 128-token replies on 8 × B200: several passes), a mixture of
    # experts, two engines, and one that does not fit at all (405B in 16-bit on one H100).
    grid = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512], dtype=float)
    asked = [
        (replica(), grid),
        (replica("llama-3.1-70b", "b200", 8, TRTLLM), grid),
        (replica("llama-3.1-405b", "h100-sxm", 1, VLLM, FP16), grid[:3]),
        (replica("mixtral-8x7b", "h100-sxm", 2, VLLM, FP16), grid[:7]),
        (replica("llama-3.1-8b", "a100-80gb-sxm", 1, TYPICAL, FP16), np.array([3.0])),
    ]
    for lengths in (RequestLengths(8192, 128), RequestLengths(1024, 1024, 0.8)):
        together = closed_loops(asked, lengths)
        assert len(together) == len(asked)
        for (r, c), found in zip(asked, together, strict=True):
            alone = closed_loop(r, lengths, c)
            for name in ClosedLoop.__slots__:
                assert np.array_equal(getattr(found, name), getattr(alone, name)), name
        assert together[2].max_concurrency_that_fits == 0 and np.all(together[2].requests_per_s == 0)


def test_bad_concurrency_is_refused():
    with pytest.raises(ValueError, match="concurrency must be >= 1"):
        closed_loop(replica(), RequestLengths(100, 100), 0)
    with pytest.raises(ValueError, match="requests_per_slot must be >= 1"):
        closed_loop(replica(), RequestLengths(100, 100), 4, 0.5)


def test_past_the_throughput_knee_prompts_ride_the_iterations_they_arrive_in():
    # Llama 3.1 8B in fp8 on an H200 (typical engine), 1,000 → 200 tokens, 768 in flight (802 fit): the engine
    # runs at its ~37 requests/s throughout, and each iteration (a TPOT, ~94 ms) carries the prompts that
    # arrived during the last one. Sized on a plain decode's 23 ms instead, an iteration carried 2.1 prompts
    # and they queued: TTFT 9.4 s with a TPOT of 55 ms, where a simulation of the same iterations gives about
    # 0.1 s and 99 ms. Now the TPOT is within 5 % of the simulation's and the TTFT under a quarter of that.
    from core.closed_loop import closed_loop
    from core.lengths import RequestLengths

    scenario = Scenario.from_flat(
        {"model": "llama-3.1-8b", "gpu": "h200", "wbits": "8", "engine": "typical", "prompt": "1000", "out": "200"}
    )
    loop = closed_loop(scenario.replica(), RequestLengths(1000, 200), np.array([64.0, 768.0]))
    assert loop.max_concurrency_that_fits > 768
    assert float(loop.tpot_s[1]) == pytest.approx(0.0989, rel=0.05)
    assert float(loop.ttft_s[1]) < 2.5  # the simulation's 0.107 s; the queue approximation still errs long
    assert float(loop.requests_per_s[1]) == pytest.approx(37.5, rel=0.03)


@pytest.mark.parametrize("requests_per_slot", [2001 / 2000, 2.0, 10.0, 100.0])
def test_the_wait_for_a_slot_is_part_of_the_ttft_it_is_said_in(requests_per_slot):
    # Llama 3.1 8B on one H100, C = 2,000 (far past what fits), n × C requests, the first C at once: the
    # first wave's running ones start at once, its others wait as later ones do. The steady state's
    # wait alone (55.4 s) was reported beside a 31.8 s TTFT at n = 2001 / 2000.
    r = replica("llama-3.1-8b", "h100-sxm", 1, TYPICAL, FP16)
    point = closed_loop(r, RequestLengths(200, 500), 2000, requests_per_slot)
    steady = closed_loop(r, RequestLengths(200, 500), 2000)
    assert 0 < point.queue_wait_s < point.ttft_s
    share_waiting = (2000 - point.running) / 2000 / requests_per_slot + 1 - 1 / requests_per_slot
    assert point.queue_wait_s == pytest.approx(steady.queue_wait_s * share_waiting, rel=1e-12)
