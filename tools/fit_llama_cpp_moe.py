"""llama.cpp's own cost per MoE layer, per backend: the fitted value, and how well it predicts a source it did not see.

Every engine once paid one cost per MoE layer per step, fitted on the fit set's MoE rows; under
llama.cpp that made a mixture of experts' decode on fast GPUs 2-2.7× too slow (the error grew
with the GPU's bandwidth, which a fixed cost too high does and a dense model's rows did not show).
So llama.cpp off Apple has its own (`core.engine_fit.OWN_MOE_LAYER`: its Radeon profile too), fitted
on those MoE decode rows of the later sets (`fit_own_moe_layer_overhead`; every set up to fresh13
first, up to fresh14 since), which makes them in-sample for it.
What it would do on a new source is answered by leaving one source out at a time: the value
fitted on the other sources predicts the left-out source's rows, against the engines' shared value.

The Metal backend is tested the same way: its own value did not predict a left-out source better
than the shared one, so it is not shipped (`OWN_MOE_LAYER` is llama.cpp off Apple alone).

On 2026-12-02, on the sets up to fresh13: 0 µs (64 rows, 23 sources; left one source out 15.6 %
against 32.6 % at the shared 80 µs); Metal would be 105 µs (29 rows, 9 sources; 13.6 % against
11.9 %). fresh14, gathered after and judged once: its 10 such rows off Apple 14.2 % against 30.7 %
at the shared value (Metal: one row, 5.4 % at 105 µs against 8.5 %). Refitted on every set up to
fresh14 with Radeon its own backend: still 0 µs (74 rows, 29 sources; 14.2 % against 31.4 %);
Metal would be 120 µs (30 rows; 14.6 % against 11.8 %).

Run: `python tools/fit_llama_cpp_moe.py` (about ten seconds). Not part of `make test`.
"""

from __future__ import annotations

import statistics
from dataclasses import replace

from left_one_source_out import left_one_source_out  # tools/, beside this script

from core.calibration import percentage_error, predicted, scenario_on
from core.engine import ENGINES, MOE_LAYER_OVERHEAD_S
from core.engine_fit import LATER_FITTED_ON, OWN_MOE_LAYER, fit_own_moe_layer_overhead, own_moe_rows
from core.estimate import estimate
from core.measurements import SETS, Measurement, load


def error_pct(measurement: Measurement, moe_layer_overhead_s: float) -> float:
    profile = replace(ENGINES[measurement.profile], moe_layer_overhead_s=moe_layer_overhead_s)
    return abs(
        percentage_error(predicted(estimate(scenario_on(measurement, profile)), measurement.metric), measurement.value)
    )


def main() -> None:
    everything = [m for name in LATER_FITTED_ON for m in load(name)]
    later = [m for name in SETS if name not in LATER_FITTED_ON for m in load(name)]
    for families in (OWN_MOE_LAYER, ("llama.cpp-metal",)):
        family = " and ".join(families)
        shipped = "shipped" if families == OWN_MOE_LAYER else "not shipped: keeps the shared value"
        rows = own_moe_rows(everything, families)
        sources = sorted({m.source_id for m in rows})
        fitted = fit_own_moe_layer_overhead(everything, families)
        print(
            f"{family}: fitted on {len(rows)} rows from {len(sources)} sources: "
            f"{fitted * 1e6:g} µs per MoE layer ({shipped})"
        )
        shared, left_out = left_one_source_out(
            rows,
            everything,
            lambda others, families=families: fit_own_moe_layer_overhead(others, families),
            error_pct,
            MOE_LAYER_OVERHEAD_S,
            lambda value: f"{value * 1e6:4g} µs",
        )
        print(
            f"  left one source out: median {statistics.median(left_out):.1f} % against "
            f"{statistics.median(shared):.1f} % at the shared {MOE_LAYER_OVERHEAD_S * 1e6:g} µs ({len(rows)} rows)"
        )
        judged = own_moe_rows(later, families)
        if judged:
            print(
                f"  the sets gathered after it, judged once: median at {fitted * 1e6:g} µs "
                f"{statistics.median(error_pct(m, fitted) for m in judged):.1f} % against "
                f"{statistics.median(error_pct(m, MOE_LAYER_OVERHEAD_S) for m in judged):.1f} % at the shared value "
                f"({len(judged)} rows)"
            )


if __name__ == "__main__":
    main()
