"""A lone request's server path: what vLLM's and TensorRT-LLM's single-request first tokens imply.

The two engines' path per request (54 and 46 ms, `core.engine`) is fitted on the Llama 3.1 70B
load measurements, all at concurrency 4 or more. A request alone on an idle server pays it too
(`Efficiency.request_path_s`), and the later sets' first tokens of lone requests say it pays far
less. For every server TTFT row at batch 1 of either engine (prompts up to 16k tokens; the
validation set's only rows are 16-128k prompts on MI300X, which a broken build made 5-13× slower),
this prints the path the row implies (measured TTFT - the estimate without its path) and the
median error were the lone path a constant L instead: each row's TTFT is its estimate less the
shipped path plus L, so nothing is rerun.

On 2026-12-03 (27 rows, 12 sources, every set but validation; seen, so no test figure): the
shipped paths give a median 55.5 % (+54.9 % signed: too slow), L = 5 ms 37.9 %, 10 ms 35.8 %,
15 ms 32.0 %, 20 ms 27.7 %, 30 ms 31.1 %. The fit set alone has three such rows (TensorRT-LLM:
NIM's Llama 3.3 70B, Baseten's Mixtral), implying 5.5, -8.5 and 40 ms. Not shipped: see
`core/data/README.md`, "Structures considered on 2026-12-03".

Run: `python tools/lone_request_path.py` (a few seconds). Not part of `make test`.
"""

from __future__ import annotations

import statistics
from dataclasses import replace

from core.calibration import predict
from core.measurements import SETS, Measurement, load

ENGINES_WITH_A_LOADED_PATH = ("vllm", "trtllm")
LONGEST_PROMPT = 16_384
LONE_PATHS_MS = (0, 5, 10, 15, 20, 30)


def lone_ttfts() -> list[tuple[str, Measurement, float, float]]:
    """(set, row, estimate in ms, the shipped path in ms) for each lone server TTFT of the two engines."""
    rows = []
    for name in SETS:
        for m in load(name):
            w = m.scenario.workload
            if m.profile in ENGINES_WITH_A_LOADED_PATH and m.server and m.batch == 1 and m.metric == "ttft_ms":
                path_ms = m.scenario.efficiency.request_path_s(w.gpu_count) * 1e3
                rows.append((name, m, predict(m), path_ms))
    return rows


def main() -> None:
    rows = lone_ttfts()
    kept = [r for r in rows if r[0] != "validation" and r[1].scenario.workload.prompt_tokens <= LONGEST_PROMPT]
    print(f"{len(rows)} lone server TTFTs of {', '.join(ENGINES_WITH_A_LOADED_PATH)}; {len(kept)} kept")
    for name, m, est, path in kept:
        w = m.scenario.workload
        implied = m.value - (est - path)
        tpot = predict(replace(m, metric="tpot_ms"))
        print(
            f"  {name:8s} {m.profile:6s} {m.source_id[:30]:30s} {m.scenario.gpu.name[:16]:16s} x{w.gpu_count} "
            f"prompt {w.prompt_tokens:6,}: measured {m.value:8.1f} ms, estimated {est:8.1f} "
            f"(path {path:.0f}, TPOT {tpot:.1f}), implied path {implied:7.1f}"
        )
    sources = len({m.source_id for _, m, _, _ in kept})
    print(f"median |error| over {len(kept)} rows from {sources} sources:")
    for lone in (None, *LONE_PATHS_MS):
        errors = [((est - path + (path if lone is None else lone)) / m.value - 1) for _, m, est, path in kept]
        label = "shipped paths" if lone is None else f"lone path {lone:2d} ms"
        signed = statistics.median(errors) * 100
        print(f"  {label:16s} {statistics.median(abs(e) for e in errors) * 100:5.1f} %  (signed {signed:+.1f} %)")


if __name__ == "__main__":
    main()
