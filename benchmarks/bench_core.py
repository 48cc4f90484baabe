"""Speed of the cost model: figures to read, not a pass/fail test (timings flake on shared machines).

Targets (issue #2): one estimate ≤ 20 µs; a 10,000-point sweep ≤ 5 ms; `python -m core
estimate --json` as a whole process ≤ 0.2 s. Run: `make bench`.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
import timeit

import numpy as np

from core import Scenario, estimate, presets
from core.batching import sweep_batch_sizes
from core.efficiency import CALIBRATED
from core.parallel import effective_machine
from core.phases import decode_time_s
from core.specs import Precision, Workload


def best_of(function, number: int, repeat: int = 7) -> float:
    """Seconds per call, best of `repeat` runs of `number` calls (the least disturbed run)."""
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number


def main() -> None:
    lesson = Scenario.lesson()
    real = Scenario(
        model=presets.model("llama-3.1-70b"),
        gpu=presets.gpu("h100-sxm"),
        precision=Precision(8, 16),
        efficiency=CALIBRATED,
        workload=Workload(prompt_tokens=2000, output_tokens=500, batch_size=16, gpu_count=2),
    )
    print(
        f"one estimate, the lesson's scenario : {best_of(lambda: estimate(lesson), 2000) * 1e6:8.1f} µs  (target ≤ 20 µs)"
    )
    print(
        f"one estimate, Llama 3.1 70B, 2×H100 : {best_of(lambda: estimate(real), 2000) * 1e6:8.1f} µs  (target ≤ 20 µs)"
    )

    def first_on_its_machine() -> object:
        # `effective_machine` is cached by GPU, count, efficiency and precision; a new one pays to build it.
        effective_machine.cache_clear()
        return estimate(real)

    print(
        f"  the same, on a machine not yet built: {best_of(first_on_its_machine, 2000) * 1e6:8.1f} µs  (a new GPU, engine or precision)"
    )

    machine = effective_machine(real.gpu, 2, CALIBRATED, real.precision)
    batches = np.arange(1, 10_001, dtype=float)
    # The decode step averaged over the 500-token reply after the 2,000-token prompt, as the estimate's.
    sweep = lambda: sweep_batch_sizes(real.model, real.precision, machine, batches, 2000, 2500, 160e9, 500)  # noqa: E731
    print(f"10,000-point batch sweep            : {best_of(sweep, 50) * 1e3:8.2f} ms  (target ≤ 5 ms)")
    lengths = np.arange(1, 10_001, dtype=float)
    line = lambda: decode_time_s(real.model, real.precision, machine, 2000, lengths, 16)  # noqa: E731
    print(f"10,000-point latency line           : {best_of(line, 50) * 1e3:8.2f} ms  (target ≤ 5 ms)")

    runs = []
    for _ in range(7):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "core", "estimate", "--json"], check=True, capture_output=True)
        runs.append(time.perf_counter() - start)
    print(
        f"python -m core estimate --json      : {min(runs):8.3f} s   (median {statistics.median(runs):.3f} s; target ≤ 0.2 s)"
    )


if __name__ == "__main__":
    main()
