"""llama.cpp's expert padding, per backend: the fitted value, and how well it predicts a source it did not see.

No fit-set row measures a mixture of experts' prefill under llama.cpp's CUDA, ROCm or Vulkan
backends, so each backend's padding (`core.engine.EXPERT_PADDING_TOKENS`, and
`RADEON_EXPERT_PADDING_TOKENS` on Radeon) is fitted on its rows of the later sets
(`core.engine_fit.fit_expert_padding`), which makes them in-sample for it. What it would do on a
new source is answered by leaving one source out at a time: the padding fitted on the other
sources predicts the left-out source's rows, against no padding at all.

First fitted on 2026-12-02 on one backend off Apple (37 rows from 13 sources, fresh4-fresh12):
160 tokens, left-one-source-out 35.5 % against 73.0 % without; fresh13 then judged it and did not
confirm the gain (47.1 % against 42.5 % on its four rows). Refitted the same day on every set up
to fresh14 once Radeon became its own backend: 100 tokens (23 rows, 13 sources) and 40 on Radeon
(26 rows, 9 sources); the left-one-source-out figures are printed.

Run: `python tools/fit_expert_padding.py` (a few seconds). Not part of `make test`.
"""

from __future__ import annotations

import statistics

from left_one_source_out import left_one_source_out  # tools/, beside this script

from core.calibration import percentage_error
from core.engine import ENGINES
from core.engine_fit import LATER_FITTED_ON, estimated_with_padding, fit_expert_padding, padding_rows
from core.measurements import SETS, Measurement, load

BACKENDS = ("llama.cpp", "llama.cpp-radeon")


def error_pct(measurement: Measurement, padding: float) -> float:
    return abs(percentage_error(estimated_with_padding(measurement, padding), measurement.value))


def main() -> None:
    everything = [m for name in LATER_FITTED_ON for m in load(name)]
    later = [m for name in SETS if name not in LATER_FITTED_ON for m in load(name)]
    for backend in BACKENDS:
        rows = padding_rows(everything, backend)
        sources = sorted({m.source_id for m in rows})
        fitted = fit_expert_padding(everything, backend)
        print(f"{backend}: fitted on {len(rows)} rows from {len(sources)} sources: {fitted:g} tokens")
        without, left_out = left_one_source_out(
            rows,
            rows,
            lambda others, backend=backend: fit_expert_padding(others, backend),
            error_pct,
            0.0,
            lambda padding: f"padding {padding:4g}",
        )
        print(
            f"  left one source out: median {statistics.median(left_out):.1f} % "
            f"against {statistics.median(without):.1f} % without padding ({len(rows)} rows)"
        )
        judged = padding_rows(later, backend)
        if judged:
            shipped = ENGINES[backend].expert_padding_tokens
            print(
                f"  the sets gathered after it, judged once: median "
                f"{statistics.median(error_pct(m, shipped) for m in judged):.1f} % against "
                f"{statistics.median(error_pct(m, 0.0) for m in judged):.1f} % without padding ({len(judged)} rows)"
            )


if __name__ == "__main__":
    main()
