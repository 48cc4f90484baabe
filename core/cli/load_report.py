"""`python -m core calibrate --load`: the load model against measured servers, as text."""

from __future__ import annotations

import math

from core.engine import ENGINES, EngineProfile
from core.serving_calibration import FITTED, SPLITS, Prediction, SliceError, predict, slice_errors, split_report
from core.serving_data import FILENAME, load_serving_measurements, names_read, read_serving_file

TPOT_TARGET_PCT, TTFT_TARGET_PCT = 15.0, 30.0


def _costs(profile: EngineProfile) -> str:
    return (
        f"{profile.id}: MBU {profile.mbu:.2f}, MFU {profile.mfu:.2f}, "
        f"launch {profile.launch_overhead_per_layer_s * 1e6:.0f} us/layer, "
        f"per sequence {profile.sequence_overhead_s * 1e6:.0f} us, "
        f"all-reduce {profile.allreduce_latency_s * 1e6:.0f} us, "
        f"per request {profile.request_overhead_s * 1e3:.0f} ms, "
        f"per stream {profile.stream_overhead_s * 1e6:.0f} us"
    )


def _pct(value: float) -> str:
    """A median error, or ∞ where half its rows or more have no finite estimate (listed under the table)."""
    return f"{'∞':>12}" if math.isinf(value) else f"{value:>11.1f}%"


def _table(errors: list[SliceError]) -> list[str]:
    lines = [f"  {'slice':<13}{'value':<15}{'rows':>5}{'TPOT |err|':>12}{'TTFT |err|':>12}"]
    for e in errors:
        lines.append(
            f"  {e.slice:<13}{_cut(e.value):<15}{e.rows:>5}{_pct(e.tpot_median_abs_pct)}{_pct(e.ttft_median_abs_pct)}"
        )
    return lines


def _cut(value: str, most: int = 30) -> str:
    """A slice's value as a file named it, cut to a column's width: a GPU named in a 5,000-character cell is not echoed whole."""
    return value if len(value) <= most else value[: most - 1] + "…"


def _rows(count: int) -> str:
    return f"{count} row{'' if count == 1 else 's'}"


def _unbounded(predictions: list[Prediction]) -> list[str]:
    """The rows without a finite estimate, by why: they do not fit, or arrive faster than the replica serves."""
    unbounded = [p for p in predictions if math.isinf(p.tpot_ms) or math.isinf(p.ttft_ms)]
    lines = []
    for why, rows in (
        (
            "cannot run as measured: the weights and one request's KV cache do not fit on the GPUs given",
            [p.measurement for p in unbounded if p.fits == 0],
        ),
        (
            "arrive faster than the replica serves them: the queue, and the TTFT, grow without bound",
            [p.measurement for p in unbounded if p.fits > 0],
        ),
    ):
        if rows:
            lines.append(f"{_rows(len(rows))} {why}; each counts as a miss (∞) in every median:")
            lines += [
                f"  {m.model} {m.weights} on {m.tp} x {m.gpu}, {m.engine}, {m.isl}/{m.osl}, {m.load}" for m in rows
            ]
    return lines


def load_calibration_text(fit: bool = False) -> str:
    rows = load_serving_measurements()
    lines = [
        f"Load model (closed loop, continuous batching) against {len(rows):,} measured point{'s' * (len(rows) != 1)}: "
        f"Llama 3.1 70B under vLLM and TensorRT-LLM (core/data/{FILENAME}).",
        f"Median absolute error on the rows each split did NOT fit; targets {TPOT_TARGET_PCT:.0f}% TPOT, "
        f"{TTFT_TARGET_PCT:.0f}% TTFT. {'Costs refitted now.' if fit else 'Frozen fits; --fit refits (minutes).'}",
    ]
    for split in SPLITS:
        report = split_report(split, rows, refit=fit)
        overall = report.errors[0]
        verdict = (
            "meets both targets"
            if overall.tpot_median_abs_pct <= TPOT_TARGET_PCT and overall.ttft_median_abs_pct <= TTFT_TARGET_PCT
            else "misses a target"
        )
        lines += ["", f'split "{split.name}": {split.description} — {verdict}']
        lines += [f"  fitted {_costs(profile)}" for profile in report.fitted.values()]
        lines += _table(report.errors)
    shipped = slice_errors(predict(rows))
    lines += [
        "",
        "shipped profiles, fitted on every row (in-sample, for reference):",
        *(f"  {_costs(ENGINES[engine_id])}" for engine_id in ("vllm", "trtllm")),
        *_table(shipped[:1]),
        f"  (fitted knobs: {', '.join(FITTED)})",
    ]
    return "\n".join(lines) + "\n"


def file_calibration_text(path: str) -> str:
    """The shipped profiles judged on a file of measured servers (`--serving-file`): nothing is fitted on it."""
    rows, skipped = read_serving_file(path)
    predictions = predict(rows)
    errors = slice_errors(predictions)
    overall = errors[0]
    verdict = (
        "within both targets"
        if overall.tpot_median_abs_pct <= TPOT_TARGET_PCT and overall.ttft_median_abs_pct <= TTFT_TARGET_PCT
        else "outside a target"
    )
    lines = [
        f"Load model (continuous batching) against {len(rows):,} measured point{'s' * (len(rows) != 1)} in {path}, "
        "each as the benchmark ran it (closed loop: num_prompts requests, 10 x C where not given, the first C at once, "
        "one wave when only C; open loop: Poisson arrivals at the rate, TTFT at p50 where the row gives a median; "
        "lengths from length_low_fraction, 80 % where not given, to 100 % of nominal).",
        "The shipped engine profiles, fitted on the bundled Llama 3.1 70B rows; nothing is fitted on this file:",
        *(f"  {_costs(ENGINES[engine_id])}" for engine_id in sorted({m.engine for m in rows})),
        f"Median absolute error (targets {TPOT_TARGET_PCT:.0f}% TPOT, {TTFT_TARGET_PCT:.0f}% TTFT) — {verdict}:",
        *_table(errors),
        *_unbounded(predictions),
    ]
    read = names_read(rows)
    if read:
        lines += ["names read as presets (check them: a preset's numbers stand for the name):"]
        lines += [f"  {n:>5} × {reading}" for reading, n in read.most_common()]
    if skipped:
        lines += [f"skipped {sum(skipped.values())} rows the load model cannot represent:"]
        lines += [f"  {n:>5} × {reason}" for reason, n in skipped.most_common()]
    return "\n".join(lines) + "\n"
