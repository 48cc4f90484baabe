"""Calibration: the estimator against published real-hardware measurements.

Three data files beside this module, same columns, split by source (see `data/README.md`):
- `calibration_train.csv`: the measurements the calibrated defaults are fitted on;
- `calibration_validation.csv`: other sources, used to decide which knobs the model
  needs (never fitted on);
- `calibration_test.csv`: more sources, gathered after the defaults were frozen — the
  honest measure of how well the model predicts hardware it has not seen.
`python -m core calibrate` prints each row (measured, estimated, error) and the median
absolute percentage error of each set; `--fit` refits the defaults on the training set.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from importlib import resources
from statistics import median

from core.efficiency import CALIBRATED
from core.estimate import estimate
from core.scenario import Scenario
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Workload
from core.units import BYTES_PER_GB, FLOP_PER_TFLOP, PARAMS_PER_BILLION, S_PER_MS

METRICS = ("tpot_ms", "ttft_ms", "output_tokens_per_s")
DATASETS = (
    ("calibration_train.csv", "training set (the defaults were fitted on these)"),
    ("calibration_validation.csv", "validation set (other sources; used to choose the model's knobs, never fitted)"),
    ("calibration_test.csv", "test set (more sources, gathered after the defaults were frozen)"),
)
# Per-direction GPU-to-GPU bandwidth (GB/s) by the data's GPU names; not a column because
# it is a property of the GPU, not of the measurement. Same values as the presets.
_INTERCONNECT_GB_PER_S = {
    "A100": 300.0,
    "H100-SXM": 450.0,
    "H200": 450.0,
    "H100-PCIe": 64.0,
    "MI300X": 448.0,
    "L40S": 32.0,
    "RTX": 32.0,
    "A10G": 32.0,
    "M2-Ultra": 5.0,
}


@dataclass(frozen=True, slots=True)
class Measurement:
    """One published measurement and the scenario that reproduces its setup."""

    label: str
    scenario: Scenario
    metric: str
    value: float
    source: str


def _interconnect_bytes_per_s(gpu_name: str) -> float:
    for prefix, gb_per_s in _INTERCONNECT_GB_PER_S.items():
        if gpu_name.startswith(prefix):
            return gb_per_s * BYTES_PER_GB
    raise ValueError(f"no interconnect bandwidth known for GPU {gpu_name!r}")


def _measurement(row: dict[str, str], efficiency: Efficiency) -> Measurement:
    params = round(float(row["params_b"]) * PARAMS_PER_BILLION)
    hidden, head_dim = int(row["hidden"]), int(row["head_dim"])
    model = Model(
        id=CUSTOM_ID,
        name=row["model"],
        total_params=params,
        active_params=params,
        layers=int(row["layers"]),
        hidden=hidden,
        query_heads=hidden // head_dim,
        kv_heads=int(row["kv_heads"]),
        head_dim=head_dim,
    )
    # The data give one dense peak: the precision the maths ran in. Use it for both widths.
    flops = round(float(row["tflops"]) * FLOP_PER_TFLOP)
    gpu = GPU(
        id=CUSTOM_ID,
        name=row["gpu"],
        memory_bandwidth_bytes_per_s=round(float(row["bandwidth_gb_s"]) * BYTES_PER_GB),
        peak_flops_16bit_per_s=flops,
        peak_flops_8bit_per_s=flops,
        memory_bytes=round(float(row["memory_gb"]) * BYTES_PER_GB),
        interconnect_bytes_per_s=_interconnect_bytes_per_s(row["gpu"]),
    )
    workload = Workload(
        prompt_tokens=int(row["prompt_tokens"]),
        output_tokens=int(row["output_tokens"]),
        batch_size=int(row["batch"]),
        gpu_count=int(row["n_gpus"]),
    )
    precision = Precision(weight_bits=float(row["weight_bits"]), kv_bits=float(row["kv_bits"] or 16))
    if row["metric"] not in METRICS:
        raise ValueError(f"unknown metric {row['metric']!r}; known: {', '.join(METRICS)}")
    label = (
        f"{row['model']} {row['weight_bits']}b {row['gpu']}x{row['n_gpus']} "
        f"B{row['batch']} {row['prompt_tokens']}/{row['output_tokens']}"
    )
    scenario = Scenario(model=model, gpu=gpu, precision=precision, efficiency=efficiency, workload=workload)
    return Measurement(label, scenario, row["metric"], float(row["value"]), row["source"])


def load_measurements(filename: str, efficiency: Efficiency = CALIBRATED) -> list[Measurement]:
    text = resources.files("core").joinpath("data", filename).read_text(encoding="utf-8")
    return [_measurement(row, efficiency) for row in csv.DictReader(text.splitlines())]


def predict(measurement: Measurement, efficiency: Efficiency | None = None) -> float:
    """The estimator's value for the measured metric, in the metric's own unit."""
    scenario = measurement.scenario if efficiency is None else replace(measurement.scenario, efficiency=efficiency)
    result = estimate(scenario)
    if measurement.metric == "tpot_ms":
        return result.tpot_s / S_PER_MS
    if measurement.metric == "ttft_ms":
        return result.ttft_s / S_PER_MS
    return result.output_tokens_per_s


def percentage_error(estimated: float, measured: float) -> float:
    """(estimated - measured) / measured × 100: positive means the estimate is too high."""
    return (estimated - measured) / measured * 100


def median_absolute_error_pct(measurements: list[Measurement], efficiency: Efficiency | None = None) -> float:
    return median(abs(percentage_error(predict(m, efficiency), m.value)) for m in measurements)


# The grids the fit searches, one knob at a time (coordinate descent, a few sweeps).
_GRID = {
    "mbu": [x / 100 for x in range(40, 101)],
    "mfu": [x / 100 for x in range(20, 101, 2)],
    "step_overhead_s": [x * 1e-4 for x in range(0, 61)],
    "sequence_overhead_s": [x * 1e-6 for x in range(0, 101, 2)],
    "allreduce_latency_s": [x * 1e-6 for x in range(0, 101, 2)],
}


def _loss(measurements: list[Measurement], efficiency: Efficiency) -> float:
    """Mean absolute log error: symmetric in too-fast and too-slow, robust to the metric's scale."""
    return sum(abs(math.log(predict(m, efficiency) / m.value)) for m in measurements) / len(measurements)


def fit_efficiency(measurements: list[Measurement], start: Efficiency = CALIBRATED, sweeps: int = 3) -> Efficiency:
    """Fit MBU, MFU, per-step overhead and all-reduce latency by coordinate descent on grids."""
    best = replace(start, label="calibrated")
    for _ in range(sweeps):
        for knob, grid in _GRID.items():
            candidates = [replace(best, **{knob: value}) for value in grid]  # type: ignore[arg-type]
            best = min(candidates, key=lambda e: _loss(measurements, e))
    return best
