"""One wave (C requests at once, none replaced): a wave worked by hand, its limits, and the
serving-file rows that ask for it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core import presets
from core.closed_loop import closed_loop
from core.engine import VLLM
from core.iteration import iteration
from core.lengths import RequestLengths
from core.one_wave import one_wave
from core.replica import Replica
from core.serving_calibration import predict
from core.serving_data import replica_for
from tests.core.test_serving import FP16, IDEAL_ENGINE, TOY_WITH_KV
from tests.core.test_serving_calibration import _read

TOY = Replica(TOY_WITH_KV, FP16, presets.gpu("toy-gpu"), 1, IDEAL_ENGINE)


def test_a_wave_by_hand():
    # The toy with a KV cache on the toy GPU (2 TB/s, 300 TFLOP/s), ideal engine; 2 requests of
    # 200 prompt tokens and 3 reply tokens sent at once. Both prompts fit the 8,192-token budget:
    # iteration 1 prefills 400 tokens, 2 × 7e9 × 400 + 400 × 524,288 × (200 + 1) / 2 FLOP = 5.6211e12
    #   / 300e12 = 18.7369 ms (compute-bound; 14.05 GB to read take 7.03 ms): both first tokens.
    # Iterations 2 and 3 decode both: 14e9 + 2 × 200 × 131,072 B = 14.05243 GB / 2e12 = 7.026214 ms,
    #   then at context 201: 7.026345 ms (memory-bound: 28 GFLOP take 0.09 ms).
    # TTFT 18.7369 ms; TPOT (7.026214 + 7.026345) / 2 = 7.026280 ms; e2e 32.7895 ms; X = 2 / e2e.
    wave = one_wave(TOY, RequestLengths(200, 3), 2)
    assert wave.ttft_s == pytest.approx(18.73692e-3, rel=1e-6)
    assert wave.tpot_s == pytest.approx(7.026280e-3, rel=1e-6)
    assert wave.e2e_s == pytest.approx(32.78948e-3, rel=1e-6)
    assert wave.requests_per_s == pytest.approx(60.99517, rel=1e-6)
    assert wave.output_tokens_per_s_per_gpu == pytest.approx(60.99517 * 3, rel=1e-6)
    assert (wave.running, wave.queue_wait_s) == (2, 0)


def test_a_chunked_burst_makes_the_first_replies_ride_along_the_others_prefills():
    # 4 prompts of 5,000 tokens on a budget of 8,192: iteration 1 carries prompt 1 and 3,192 of
    # prompt 2; iteration 2 the rest of 2 (1,808), prompt 3 and 1,384 of 4 beside 1 decode ... so
    # the first reply's tokens take prefill-long iterations and its TPOT exceeds any decode-only one.
    wave = one_wave(TOY, RequestLengths(5000, 50), 4)
    decode_only = float(iteration(TOY, 4.0, 5000.0).time_s)
    assert wave.tpot_s > decode_only
    # Every first token comes after prompt 1's prefill and by the end of the burst (20,000 tokens).
    first = float(iteration(TOY, 0.0, 0.0, 5000.0).time_s)
    assert first < wave.ttft_s < 4 * first * 1.1


def test_beyond_the_memory_cap_the_wave_waits_for_slots():
    # A 20 GB budget of KV cache at 131,072 B per token held: sequences of 1,000 + 500 tokens fit
    # about 100 at once; 300 sent at once means two thirds wait for a slot, their wait in TTFT.
    small = Replica(TOY_WITH_KV, FP16, replace(presets.gpu("toy-gpu"), memory_bytes=34e9), 1, IDEAL_ENGINE)
    lengths = RequestLengths(1000, 500)
    fits = small.max_concurrency_that_fits(lengths)
    assert 50 < fits < 200
    wave = one_wave(small, lengths, 3 * fits)
    assert wave.running == fits and wave.queue_wait_s > 0
    assert wave.ttft_s > wave.queue_wait_s
    assert one_wave(small, lengths, fits).queue_wait_s == 0


def test_one_request_is_the_closed_loops_one_request():
    # Alone, a wave is a prefill and then decodes: the closed loop at C = 1 (its steps all at the
    # reply's mean context, the wave's one by one, so they differ by under 0.1 %).
    r = Replica(presets.model("llama-3.1-8b"), FP16, presets.gpu("h100-sxm"), 1, VLLM)
    lengths = RequestLengths(1000, 200)
    wave, loop = one_wave(r, lengths, 1), closed_loop(r, lengths, 1)
    assert wave.ttft_s == pytest.approx(loop.ttft_s, rel=1e-3)
    assert wave.tpot_s == pytest.approx(loop.tpot_s, rel=1e-3)


def test_nothing_fits_and_bad_concurrency():
    huge = Replica(presets.model("llama-3.1-405b"), FP16, presets.gpu("h100-sxm"), 1, VLLM)
    assert one_wave(huge, RequestLengths(100, 100), 4).ttft_s == float("inf")
    with pytest.raises(ValueError, match="concurrency must be >= 1"):
        one_wave(TOY, RequestLengths(100, 100), 0)


HEADER = "model,model_id,weights,gpu,tp,engine,isl,osl,concurrency,request_rate,ttft_ms,tpot_ms,num_prompts,length_low_fraction"


def test_a_row_with_as_many_prompts_as_its_cap_is_one_wave(tmp_path):
    rows = [
        "Qwen3-32B,qwen3-32b,bf16,h100-sxm,8,vllm,4096,128,100,,2480,27.7,100,1",
        "Qwen3-32B,qwen3-32b,bf16,h100-sxm,8,vllm,4096,128,100,,2480,27.7,,",  # InferenceX's way
    ]
    (wave_row, default_row), skipped = _read(tmp_path, HEADER, rows)
    assert not skipped
    assert (wave_row.requests_per_slot, wave_row.lengths.low_fraction) == (1, 1)
    assert (default_row.requests_per_slot, default_row.lengths.low_fraction) == (10, 0.8)
    replica = replica_for(wave_row.setup, None, wave_row.model)
    expected = one_wave(replica, RequestLengths(4096, 128, 1), 100)
    got = predict([wave_row])[0]
    assert got.tpot_ms == pytest.approx(expected.tpot_s * 1e3) and got.ttft_ms == pytest.approx(expected.ttft_s * 1e3)
    # No replacement prefill interrupts a wave's replies: fewer ms per token than the steady state's.
    assert got.tpot_ms < predict([default_row])[0].tpot_ms


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ("100,,2480,27.7,50,1", "line 2: num_prompts must be at least the concurrency"),
        ("100,,2480,27.7,100,1.5", "line 2: length_low_fraction must be between 0.05 and 1"),
        ("100,,2480,27.7,many,1", "line 2: num_prompts must be a whole number ≥ 1, got 'many'"),
    ],
)
def test_bad_harness_columns_name_the_line(tmp_path, cells, message):
    with pytest.raises(ValueError, match=message):
        _read(tmp_path, HEADER, [f"Qwen3-32B,qwen3-32b,bf16,h100-sxm,8,vllm,4096,128,{cells}"])


@pytest.mark.parametrize("engine", [VLLM, replace(VLLM, chunked_prefill=False)], ids=["chunked", "whole prompts"])
def test_waiting_for_a_slot_jumps_to_the_next_reply_that_ends(monkeypatch, engine):
    # Llama 3.1 8B on one H100: 40 requests of 20,000 prompt tokens, 300 reply tokens, of which only a few fit
    # the KV cache at once. While every slot holds a reply the wave now runs the decodes until one ends as
    # one call, where it ran them one Python iteration each (10,000 requests of 100,000 tokens took hours):
    # the same iterations, so the same means as stepping them one by one.
    from core import one_wave as module

    replica = Replica(presets.model("llama-3.1-8b"), FP16, presets.gpu("h100-sxm"), 1, engine)
    lengths = RequestLengths(20_000, 300)
    assert replica.max_concurrency_that_fits(lengths) < 40
    jumped = one_wave(replica, lengths, 40)

    def step_by_step(self) -> None:
        while self.waiting:
            self._prefill_iteration()
        while self.cohorts:
            self._decode_until_a_reply_ends()

    monkeypatch.setattr(module._Wave, "run", step_by_step)
    stepped = one_wave(replica, lengths, 40)
    for field in ("ttft_s", "tpot_s", "e2e_s", "queue_wait_s", "requests_per_s"):
        assert getattr(jumped, field) == pytest.approx(getattr(stepped, field), rel=1e-9), field
    assert jumped.queue_wait_s > 0  # some did wait for a slot
