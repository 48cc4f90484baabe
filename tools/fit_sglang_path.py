"""SGLang's path per request: vLLM's base and a cost per doubling of the tensor-parallel GPUs, fitted and checked.

SGLang took vLLM's 54 ms whatever the GPUs until 2026-12-02. Its measured first tokens disagree
with any one constant: 50-70 ms for 1k-token prompts on one H100 (gpt-oss), 100-190 ms on eight
B200s or MI300Xs whatever the model's size (DeepSeek-R1, Kimi-K2, GLM, MiniMax), where the GPU's
own prefill is 20-60 ms. Its scheduler hands every request to every tensor-parallel worker
before the prefill starts, so the path grows with the GPUs. The form: vLLM's base (an OpenAI
server of the same design, its 54 ms fitted on the Llama 3.1 70B load measurements) + a cost
per doubling × log2(GPUs), the one cost fitted, by grid, on the server TTFTs of SGLang's
validation and test sources (both seen before). Each row's TTFT is its estimate with no path
plus the path, so the grid does not rerun the model.

On 2026-12-02: 14 ms per doubling (21 rows, 2 sources): median 16.5 % in-sample against 27.2 %
at 54 ms alone. Fitting the base too gives 42 + 16 ms (12.2 %), but its base rests on one
one-GPU source and makes fresh18's one-GPU SGLang throughputs worse (20.4 → 26.1 %); a constant
alone would be 82 ms (14.6 %). The later sets' SGLang TTFTs, not fitted but looked at before
(fresh2, fresh22): 61.9 % and 15.6 % against 63.3 % and 41.9 % (fresh2's are static batches of
4k prompts on 8 GPUs, whose TTFTs of 0.8-7.7 s the model puts 3-5× too fast: not the path).

Run: `python tools/fit_sglang_path.py` (a few seconds). Not part of `make test`.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

from core.calibration import predicted
from core.engine import SGLANG, VLLM
from core.estimate import estimate
from core.measurements import SETS, Measurement, load

FITTED_ON = ("validation", "test")
BASE_MS = VLLM.request_overhead_s * 1e3
PER_DOUBLING_MS = range(0, 42, 2)


def server_ttfts(set_names: tuple[str, ...]) -> list[tuple[Measurement, float]]:
    """Each SGLang server TTFT row with its estimate less the path (ms)."""
    rows = []
    for name in set_names:
        for m in load(name):
            if m.profile == SGLANG.id and m.server and m.metric == "ttft_ms":
                bare = replace(m.scenario, efficiency=m.scenario.efficiency.in_process())
                rows.append((m, predicted(estimate(bare), "ttft_ms")))
    return rows


def error_pct(row: tuple[Measurement, float], base_ms: float, per_doubling_ms: float) -> float:
    m, bare_ms = row
    path_ms = base_ms + per_doubling_ms * math.log2(m.scenario.workload.gpu_count)
    return abs((bare_ms + path_ms) / m.value - 1) * 100


def median_pct(rows: list[tuple[Measurement, float]], base_ms: float, per_doubling_ms: float) -> float:
    return statistics.median(error_pct(r, base_ms, per_doubling_ms) for r in rows)


def fit(rows: list[tuple[Measurement, float]]) -> float:
    """The cost per doubling (ms) with the least median absolute error on `rows`, on vLLM's base."""
    return min(PER_DOUBLING_MS, key=lambda b: (median_pct(rows, BASE_MS, b), b))


def main() -> None:
    rows = server_ttfts(FITTED_ON)
    base, per = BASE_MS, fit(rows)
    sources = sorted({m.source_id for m, _ in rows})
    shipped = (SGLANG.request_overhead_s * 1e3, SGLANG.request_overhead_per_doubling_s * 1e3)
    print(
        f"fitted on {len(rows)} server TTFTs of {', '.join(FITTED_ON)} ({len(sources)} sources): "
        f"{base:g} ms + {per} ms per doubling"
    )
    print(f"  shipped {shipped[0]:g} ms + {shipped[1]:g} ms per doubling")
    print(
        f"  in-sample median {median_pct(rows, base, per):.1f} % against {median_pct(rows, base, 0):.1f} % at {base:g} ms alone"
    )
    later = tuple(name for name in SETS if name not in FITTED_ON and name != "fit")
    for name in later:
        judged = server_ttfts((name,))
        if judged:
            print(
                f"  {name}: {len(judged)} rows, median {median_pct(judged, base, per):.1f} % "
                f"against {median_pct(judged, base, 0):.1f} % at {base:g} ms alone"
            )


if __name__ == "__main__":
    main()
