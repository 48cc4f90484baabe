"""Does llama.cpp on Radeon as its own backend predict a source it did not see better than one backend off Apple?

Radeon's own profile (`core.engine.LLAMA_CPP_RADEON`) adds two costs fitted on the later sets
(`core.engine_fit.LATER_FITTED`): its dequantising matmuls' share of MFU and its own expert
padding. Both structures are refitted leaving one source out at a time, on every set up to
fresh14, and judged on the left-out source's llama.cpp rows off Apple (prefill and decode):
- one backend: Radeon's rows on `llama.cpp`, its padding and cost per MoE layer refitted;
- two backends: every `LATER_FITTED` cost refitted (`core.engine_fit.fit_later`).

On 2026-12-02 (240 rows): prefill 48.2 % → 34.0 %, decode 14.8 % both, all rows 23.9 % → 21.3 %.

Run: `python tools/fit_llama_cpp_backends.py` (about a minute). Not part of `make test`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import replace

from core import engine_fit
from core.calibration import percentage_error, predict
from core.engine import ENGINES
from core.measurements import Measurement, load

SHIPPED = dict(ENGINES)


def one_backend(rows: list[Measurement]) -> dict[str, dict[str, float]]:
    return {
        "llama.cpp": {
            "expert_padding_tokens": engine_fit.fit_expert_padding(rows),
            "moe_layer_overhead_s": engine_fit.fit_own_moe_layer_overhead(rows, ("llama.cpp",)),
        }
    }


def left_out_errors(
    rows: list[Measurement], fit: Callable[[list[Measurement]], dict[str, dict[str, float]]]
) -> dict[str, list[float]]:
    """Each llama.cpp row off Apple, predicted with the costs `fit` gives on every other source."""
    judged = [m for m in rows if m.profile in engine_fit.OWN_MOE_LAYER]
    errors: dict[str, list[float]] = {"prefill": [], "decode": []}
    for source in sorted({m.source_id for m in judged}):
        ENGINES.update(SHIPPED)  # every fit starts from the shipped costs
        for family, costs in fit([m for m in rows if m.source_id != source]).items():
            ENGINES[family] = replace(SHIPPED[family], **costs)  # type: ignore[arg-type]
        for m in judged:
            if m.source_id == source:
                kind = "prefill" if m.metric == "ttft_ms" else "decode"
                errors[kind].append(abs(percentage_error(predict(m, ENGINES), m.value)))
    ENGINES.update(SHIPPED)
    return errors


def main() -> None:
    rows = [m for name in engine_fit.LATER_FITTED_ON for m in load(name)]
    merged = [replace(m, profile="llama.cpp") if m.profile == "llama.cpp-radeon" else m for m in rows]
    for name, data, fit in (("one backend", merged, one_backend), ("Radeon its own", rows, engine_fit.fit_later)):
        errors = left_out_errors(data, fit)
        both = errors["prefill"] + errors["decode"]
        print(
            f"{name:15} left one source out: prefill {statistics.median(errors['prefill']):.1f} % "
            f"({len(errors['prefill'])}), decode {statistics.median(errors['decode']):.1f} % "
            f"({len(errors['decode'])}), all {statistics.median(both):.1f} % ({len(both)} rows)"
        )


if __name__ == "__main__":
    main()
