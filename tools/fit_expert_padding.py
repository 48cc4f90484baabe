"""llama.cpp's expert padding off Apple: the fitted value, and how well it predicts a source it did not see.

No fit-set row measures a mixture of experts' prefill under llama.cpp's CUDA, ROCm or Vulkan
backends, so the padding (`core.engine.EXPERT_PADDING_TOKENS`) is fitted on those rows of the
later sets (`core.engine_fit.fit_expert_padding`), which makes them in-sample for it. What it
would do on a new source is answered by leaving one source out at a time: the padding fitted on
the other sources predicts the left-out source's rows, against no padding at all.

On 2026-12-02 (37 rows from 13 sources, fresh4-fresh12): fitted 160 tokens; left-one-source-out
median error 35.5 % against 73.0 % without padding (details printed). fresh13, gathered after and
judged once, has four such rows: 47.1 % with the padding against 42.5 % without (three of the four
better, one, gpt-oss-20b on an RTX 4090 at a micro-batch of 1,024, 2.2× too slow).

Run: `python tools/fit_expert_padding.py` (a few seconds). Not part of `make test`.
"""

from __future__ import annotations

import statistics

from core.calibration import percentage_error
from core.engine import ENGINES
from core.engine_fit import PADDING_FITTED_ON, estimated_with_padding, fit_expert_padding, padding_rows
from core.measurements import SETS, Measurement, load


def error_pct(measurement: Measurement, padding: float) -> float:
    return abs(percentage_error(estimated_with_padding(measurement, padding), measurement.value))


def main() -> None:
    everything = [m for name in PADDING_FITTED_ON for m in load(name)]
    rows = padding_rows(everything)
    sources = sorted({m.source_id for m in rows})
    print(f"fitted on all {len(rows)} rows from {len(sources)} sources: {fit_expert_padding(everything):g} tokens")
    without, left_out = [], []
    for source in sources:
        padding = fit_expert_padding([m for m in rows if m.source_id != source])
        own = [m for m in rows if m.source_id == source]
        before = [error_pct(m, 0.0) for m in own]
        after = [error_pct(m, padding) for m in own]
        without += before
        left_out += after
        print(
            f"  {source[:44]:44} {len(own):2} rows  padding {padding:4g}  "
            f"median {statistics.median(before):6.1f} % -> {statistics.median(after):6.1f} %"
        )
    print(
        f"left one source out: median {statistics.median(left_out):.1f} % "
        f"against {statistics.median(without):.1f} % without padding ({len(rows)} rows)"
    )
    later = padding_rows(m for name in SETS if name not in PADDING_FITTED_ON for m in load(name))
    if later:
        shipped = ENGINES["llama.cpp"].expert_padding_tokens
        print(
            f"the sets gathered after it, judged once: median {statistics.median(error_pct(m, shipped) for m in later):.1f} % "
            f"against {statistics.median(error_pct(m, 0.0) for m in later):.1f} % without padding ({len(later)} rows)"
        )


if __name__ == "__main__":
    main()
