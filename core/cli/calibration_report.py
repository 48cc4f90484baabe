"""`python -m core calibrate`: every published measurement against the model, per set and slice."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.units import S_PER_MS, S_PER_US

if TYPE_CHECKING:  # imported for types only: `python -m core estimate` must not load the data
    from core.engine import EngineProfile
    from core.measurements import Measurement

_COSTS = (
    ("MBU", "mbu", 1, ".2f"),
    ("MFU", "mfu", 1, ".2f"),
    ("us/layer", "launch_overhead_per_layer_s", S_PER_US, ".0f"),
    ("us/seq", "sequence_overhead_s", S_PER_US, ".0f"),
    ("us/allreduce", "allreduce_latency_s", S_PER_US, ".0f"),
    ("ms/request", "request_overhead_s", S_PER_MS, ".0f"),
    ("us/stream", "stream_overhead_s", S_PER_US, ".0f"),
    ("us/MoE layer", "moe_layer_overhead_s", S_PER_US, ".0f"),
    ("us/expert", "expert_overhead_s", S_PER_US, ".2f"),
    ("dequant BW", "dequant_bandwidth", 1, ".2f"),
    ("dequant MFU", "dequant_compute", 1, ".2f"),
)
TITLES = {
    "fit": "fit set (the engines' costs are fitted on these)",
    "validation": "validation set (never fitted; used to choose the structure and, with the later sets, to size the likely ranges)",
    "test": "test set (looked at once, after the structure and the costs were frozen)",
    "fresh": "fresh set (ten new sources gathered after the test set was seen; judged once, then it guided the model)",
    "fresh2": "fresh2 set (thirteen new sources gathered after the fresh set was seen; judged once, the model frozen)",
    "fresh3": "fresh3 set (ten more new sources gathered beside fresh2; judged once, the model frozen)",
    "fresh4": "fresh4 set (eight new sources gathered after every other set was seen; judged once, model and ranges frozen)",
    "fresh5": "fresh5 set (nine more new sources gathered beside fresh4; judged once, model and ranges frozen)",
    "fresh6": "fresh6 set (two more new sources; judged once, model and ranges frozen)",
    "fresh7": "fresh7 set (eight new sources, mostly MoE, gathered last; judged once, model and ranges frozen)",
    "fresh8": "fresh8 set (five new sources, batch 1 on AMD, Apple and consumer NVIDIA; judged once, model and ranges frozen)",
    "fresh9": "fresh9 set (two new sources: static batches on H100 and A100, Strix Halo single requests; judged once, model and ranges frozen)",
    "fresh10": "fresh10 set (three new sources of single requests: an RTX 6000 Ada under vLLM and TensorRT-LLM, an RX 7900 XTX under llama.cpp; judged once, model and ranges frozen)",
    "fresh11": "fresh11 set (four new sources on datacenter GPUs: HF transformers' quantized paths, DeepSeek-R1/V3 under SGLang and vLLM, TensorRT-LLM batches; judged once, model and ranges frozen)",
    "fresh12": "fresh12 set (five new sources on consumer GPUs and Apple silicon: llama.cpp, Ollama, vLLM on an RTX 4090; judged once, model and ranges frozen)",
    "fresh13": "fresh13 set (eleven new sources, llama.cpp on NVIDIA, AMD, Intel and Apple GPUs, mostly MoE; gathered after the expert padding was fitted, judged once, model and ranges frozen)",
    "fresh14": "fresh14 set (eleven new sources, llama.cpp on NVIDIA, AMD and Apple GPUs, mostly MoE; gathered after llama.cpp's own cost per MoE layer was fitted, judged once, model and ranges frozen)",
    "fresh15": "fresh15 set (eight new sources, llama.cpp on AMD Radeon cards, dense; gathered after llama.cpp's Radeon backend was fitted, judged once, model and ranges frozen)",
    "fresh16": "fresh16 set (four new sources, AutoAWQ and TensorRT-LLM on A100s; judged once, model and ranges frozen)",
    "fresh17": "fresh17 set (six new sources, MoE under vLLM and SGLang on MI300X and B200, AutoAWQ on an RTX 4090; judged once)",
    "fresh18": "fresh18 set (two new sources, SGLang's bf16, int8 weight-only and W8A8 on an A100, llama.cpp on an L40S; judged once)",
    "fresh19": "fresh19 set (four new sources, HF transformers' eager generate on A100s; gathered after its host launches were made to overlap the GPU's work, judged once)",
    "fresh20": "fresh20 set (six new sources, single requests on consumer and workstation GPUs, Apple and Strix Halo: llama.cpp, MLX, TensorRT-LLM on a DGX Spark; judged once)",
    "fresh21": "fresh21 set (one new source, vLLM's static batches of Llama 3.3 70B on 4 × H100; gathered beside fresh20, judged once)",
    "fresh22": "fresh22 set (single requests through vLLM and SGLang servers, llama.cpp on GeForce cards; judged once)",
    "fresh23": "fresh23 set (single requests on Apple M2 Max and M3 Ultra through Rapid-MLX, Ollama on an RTX 3090; judged once)",
    "fresh24": "fresh24 set (one new source, SGLang's gpt-oss-120b decode on 4 × B200 and 8 × H100; gathered last, judged once)",
    "fresh25": "fresh25 set (five new sources of single requests: Ollama on an M3 Ultra, vLLM on an A100, B200 and RTX 4090, SGLang on 4 × B200; judged once)",
    "fresh26": "fresh26 set (lone requests through servers: vLLM, TGI and NIM on an A10G, vLLM on an RTX 4090, SGLang on 4 × B200; held aside for a change not shipped, judged once)",
    "fresh27": "fresh27 set (TensorRT-LLM on an RTX 3090, llama.cpp HIP on an RX 7900 XTX; gathered 2026-12-03, judged once)",
    "fresh28": "fresh28 set (vLLM 0.6.6 and SGLang 0.5.6 in-process on A100s, TensorRT-LLM's FP8 static batch on an H100; gathered 2026-12-03, judged once)",
    "fresh29": "fresh29 set (Qwen3-30B-A3B under vLLM on a Strix Halo, llama.cpp's MoE and dense Qwen3 on an A10; gathered 2026-12-03, judged once)",
}


def costs_table(profiles: Mapping[str, EngineProfile]) -> list[str]:
    header = f"  {'engine':<16}" + "".join(f"{name:>13}" for name, *_ in _COSTS)
    lines = [header]
    for engine_id, profile in profiles.items():
        cells = "".join(f"{getattr(profile, key) / scale:>13{spec}}" for _, key, scale, spec in _COSTS)
        lines.append(f"  {engine_id:<16}{cells}")
    return lines


def slices_lines(rows: Sequence[Measurement], errors: Sequence[float]) -> list[str]:
    from core.calibration import slice_errors

    lines = [f"  {'slice':<8}{'value':<22}{'rows':>6}{'sources':>9}{'median |error|':>16}"]
    for e in slice_errors(rows, errors):
        lines.append(f"  {e.slice:<8}{e.value:<22}{e.rows:>6}{e.sources:>9}{e.median_abs_pct:>15.1f}%")
    return lines


def spreads_lines() -> list[str]:
    from core.measurements import load
    from core.range_calibration import leave_one_set_out
    from core.ranges import EXTRAPOLATION_WIDENING, REGIMES, SIZED_ON, SIZING_LEVEL, SPREADS

    lines = [
        f"Likely ranges (core.ranges): percentiles {50 - SIZING_LEVEL * 50:g} to {50 + SIZING_LEVEL * 50:g} of "
        "log(measured / estimated) on every set the fit",
        f"never saw ({', '.join(SIZED_ON)}), per regime; x{EXTRAPOLATION_WIDENING:g} on each side where the engine",
        "has no row in that regime:",
        f"  {'regime':<11}{'TTFT':>18}{'TPOT':>18}",
    ]
    for regime in REGIMES:
        cells = [SPREADS[(regime, quantity)] for quantity in ("ttft", "tpot")]
        shown = "".join(f"{f'x{math.exp(c.low):.2f} to x{math.exp(c.high):.2f}':>18}" for c in cells)
        lines.append(f"  {regime:<11}{shown}")
    left_out = leave_one_set_out({name: list(load(name)) for name in SIZED_ON})
    shares = ", ".join(f"{c.group} {c.inside}/{c.rows} ({c.share:.0%})" for c in left_out)
    lines.append(f"  each set judged by ranges sized on the others alone: {shares}")
    return lines


def coverage_lines(rows: Sequence[Measurement]) -> list[str]:
    from core.range_calibration import coverage

    shares = ", ".join(f"{c.group} {c.inside}/{c.rows} ({c.share:.0%})" for c in coverage(rows))
    return [f"  measurements inside their likely range: {shares}"]


def set_lines(title: str, rows: Sequence[Measurement]) -> list[str]:
    """One set of measurements: every row, estimated on the shipped profiles, then its slices and ranges."""
    from core.calibration import median_absolute_error_pct, percentage_error, predict
    from core.engine_fit import ideal_profiles

    lines = ["", f"{title}: {len(rows)} measurements, {len({m.source_id for m in rows})} sources", ""]
    lines.append(f"  {'source':<27}{'measurement':<68}{'metric':<20}{'measured':>11}{'estimated':>11}{'error':>8}")
    errors = []
    for m in rows:
        estimated = predict(m)
        errors.append(percentage_error(estimated, m.value))
        lines.append(
            f"  {m.source_id[:26]:<27}{m.label[:67]:<68}{m.metric:<20}{m.value:>11,.2f}{estimated:>11,.2f}"
            f"{errors[-1]:>+7.1f}%"
        )
    lines += ["", *slices_lines(rows, errors), *coverage_lines(rows)]
    pure = median_absolute_error_pct(rows, ideal_profiles())
    lines.append(f"  a pure roofline (ideal efficiency, no fixed costs) is off by {pure:.1f}% (median)")
    return lines


def file_text(path: str) -> str:
    """The shipped profiles judged on a file of published measurements (`--measurements-file`): nothing is fitted."""
    from core.measurements import read_measurements
    from core.user_files import read_text

    rows = read_measurements(read_text(path), Path(path).name)  # the name, not a long path, leads the error
    header = [
        f"The model against {path}, each row on its engine's profile (engines without one run on `typical`).",
        "Error = (estimated - measured) / measured. Nothing is fitted on this file.",
    ]
    return "\n".join(header + set_lines("This file", rows)) + "\n"


def calibration_text(fit: bool = False, sets: tuple[str, ...] = ()) -> str:
    """Every row of the named sets (all four by default), the slices, and with `fit` the refit."""
    from core.calibration import median_absolute_error_pct
    from core.engine import ENGINES
    from core.engine_fit import fit_profiles
    from core.measurements import SETS, load

    lines = [
        "The model against published measurements (core/data/measurements_*.csv), each row on its engine's",
        "profile (engines without one run on `typical`). Error = (estimated - measured) / measured.",
        "",
        "Engine costs (vLLM and TensorRT-LLM: MBU, MFU, launch, per-sequence, all-reduce, per-request and",
        "per-stream costs from the load measurements; everything else fitted on the fit set). A GPU measured to",
        "sustain less than an H100 (MI300X, MI325X, B200, A100 80GB: core/presets/gpus.toml) derates each MBU/MFU:",
        *costs_table(dict(ENGINES)),
        "",
        *spreads_lines(),
    ]
    for name in sets or SETS:
        lines += set_lines(TITLES[name], load(name))
    if fit:
        fitted = fit_profiles(list(load("fit")))
        same = all(fitted[k] == ENGINES[k] for k in ENGINES)
        lines += [
            "",
            "refit on the fit set (from the neutral start in core.engine_fit.START_COSTS):",
            *costs_table(fitted),
            "  identical to the shipped profiles" if same else "  differs: copy these values into core/engine.py",
        ]
        for name in ("fit", "validation"):
            lines.append(
                f"  {name}: median |error| {median_absolute_error_pct(load(name), fitted):.1f}% with the refit"
            )
    return "\n".join(lines) + "\n"
