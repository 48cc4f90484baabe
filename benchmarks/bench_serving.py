"""Speed of the load model: figures to read, not a pass/fail test (timings flake on shared machines).

Targets (issue #9 §6): one closed-loop point ≤ 1 ms; one open-loop point with percentiles
≤ 20 ms; a whole plan — `core.plan.plan` over 15 GPUs × 4 tensor-parallel sizes × 3
precisions, each with its concurrency grid (closed loop), goodput search and peak point
(open loop) — ≤ 300 ms in-process. Times are the best of several runs, in CPU seconds of
this process (a shared machine's other jobs inflate wall-clock time). Run: `make bench`.
"""

from __future__ import annotations

import time
import timeit

import numpy as np

from core import presets
from core.closed_loop import closed_loop, closed_loops
from core.efficiency import efficiency_base
from core.engine import TRTLLM, VLLM
from core.lengths import RequestLengths
from core.one_wave import one_wave
from core.open_loop import capacity_requests_per_s, goodput, open_loop
from core.plan import plan
from core.plan_spec import Plan
from core.replica import Replica
from core.scenario import Scenario
from core.specs import Precision, Pricing, Workload

CONCURRENCY_GRID = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512], dtype=float)
TP_SIZES = (1, 2, 4, 8)
PRECISIONS = (Precision(16, 16), Precision(8, 8), Precision(4.5, 8))


def best_of(function, number: int, repeat: int = 7) -> float:
    """CPU seconds per call, best of `repeat` runs of `number` calls (the least disturbed run)."""
    return min(timeit.repeat(function, number=number, repeat=repeat, timer=time.process_time)) / number


def plan_setups() -> list[Replica]:
    """Every GPU preset × TP × precision for Llama 3.1 70B under vLLM."""
    model = presets.model("llama-3.1-70b")
    return [
        Replica(model, precision, p.gpu, n, VLLM)
        for p in presets.gpu_presets().values()
        for n in TP_SIZES
        for precision in PRECISIONS
    ]


def plan_evaluations(lengths: RequestLengths, together: bool) -> int:
    """Each setup's closed loop over the concurrency grid, one by one or in one pass; returns how many fit."""
    setups = plan_setups()
    if together:
        results = closed_loops([(replica, CONCURRENCY_GRID) for replica in setups], lengths)
    else:
        results = [closed_loop(replica, lengths, CONCURRENCY_GRID) for replica in setups]
    return sum(result.max_concurrency_that_fits > 0 for result in results)


def main() -> None:
    lengths = RequestLengths(1024, 1024, 0.8)
    replica = Replica(presets.model("llama-3.1-70b"), Precision(8, 8), presets.gpu("h100-sxm"), 2, VLLM)
    point = best_of(lambda: closed_loop(replica, lengths, 32), 200)
    print(f"closed loop, one point (70B, 2×H100, C=32)   : {point * 1e3:8.3f} ms  (target ≤ 1 ms)")
    grid = best_of(lambda: closed_loop(replica, lengths, CONCURRENCY_GRID), 200)
    print(f"closed loop, 10-point concurrency grid       : {grid * 1e3:8.3f} ms")
    trt = Replica(presets.model("llama-3.1-70b"), Precision(8, 8), presets.gpu("b200"), 8, TRTLLM)
    saturated = best_of(lambda: closed_loop(trt, RequestLengths(8192, 128, 0.8), CONCURRENCY_GRID), 20)
    print(f"closed loop, grid into prefill saturation    : {saturated * 1e3:8.3f} ms  (8k→128 on 8×B200)")
    # One wave is simulated iteration by iteration: its cost grows with C × prompt ÷ the token budget.
    wave = best_of(lambda: one_wave(replica, RequestLengths(1024, 1024, 1), 64), 20)
    print(f"one wave, C=64 at once (1k→1k, 70B, 2×H100)  : {wave * 1e3:8.3f} ms")
    big = best_of(lambda: one_wave(trt, RequestLengths(8192, 1024, 1), 512), 3)
    print(f"one wave, C=512 at once (8k→1k, 8×B200)      : {big * 1e3:8.3f} ms")

    rate = 0.7 * capacity_requests_per_s(replica, lengths)
    open_point = best_of(lambda: open_loop(replica, lengths, rate), 20)
    print(f"open loop, one point with percentiles        : {open_point * 1e3:8.3f} ms  (target ≤ 20 ms)")
    search = best_of(lambda: goodput(replica, lengths, 1.0, 0.05), 3)
    print(f"open loop, goodput for p95 TTFT and TPOT     : {search * 1e3:8.3f} ms")

    gpus = len(presets.gpu_presets())
    combos = gpus * len(TP_SIZES) * len(PRECISIONS)
    for together in (False, True):
        runs = []
        for _ in range(5):
            start = time.process_time()
            fitting = plan_evaluations(lengths, together)
            runs.append(time.process_time() - start)
        print(
            f"closed loops of a plan ({'in one pass' if together else 'one by one'}): {gpus} GPUs × "
            f"{len(TP_SIZES)} TP × {len(PRECISIONS)} precisions × {len(CONCURRENCY_GRID)} concurrencies "
            f"({combos} setups, {fitting} fit): {min(runs) * 1e3:8.1f} ms"
        )
    whole_plan(lengths)


def whole_plan(lengths: RequestLengths) -> None:
    """`core.plan.plan` for Llama 3.1 70B at 2,000,000 replies a day over every GPU preset."""
    model = presets.model("llama-3.1-70b")
    scenario = Scenario(
        model=model,
        gpu=presets.gpu("h100-sxm"),
        efficiency=efficiency_base("vllm", model),
        workload=Workload(prompt_tokens=lengths.prompt_tokens, output_tokens=lengths.output_tokens),
        pricing=Pricing(replies_per_day=2_000_000),
    )
    spec = Plan(gpu_ids=tuple(presets.gpu_presets()))
    runs, result = [], None
    for _ in range(5):
        start = time.process_time()
        result = plan(scenario, spec, lengths)
        runs.append(time.process_time() - start)
    assert result is not None
    sized = sum(o.requests_per_s_per_replica is not None for o in result.options)
    print(
        f"plan: {len(spec.gpu_ids)} GPUs × {len(spec.tensor_parallel)} TP × {len(spec.weight_bits)} precisions "
        f"({len(result.options)} candidates: {len(result.ranked)} ranked, {sized} sized by the open loop): "
        f"{min(runs) * 1e3:8.1f} ms  (target ≤ 300 ms)"
    )


if __name__ == "__main__":
    main()
