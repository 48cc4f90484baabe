"""Measured serving at load: each row of `data/serving_llama-3.1-70b.csv` as the setup that reproduces it.

441 points of Llama 3.1 70B under a closed-loop concurrency sweep (InferenceX's method,
as aiconfigurator's `silicon_sample.csv` records it; see `data/README.md`). Each row
becomes a `Replica` (preset model and GPU, the engine with the benchmark's server flags),
`RequestLengths` and a concurrency. What the rows do not state is assumed here, once:

- KV cache in fp8 for every row (TensorRT-LLM's launch config says fp8; vLLM's B200 config
  says fp8; on H200 only an fp8 cache fits the concurrency the runs sustain).
- Lengths: `benchmark_serving`'s random dataset with `--random-range-ratio 0.8` draws prompt
  AND reply lengths uniformly in 80-100 % of the nominal (kimbochen/bench_serving
  `sample_random_requests`), `--num-prompts 10 × concurrency`, the first C sent at once.
- Server flags from InferenceX's launch scripts: vLLM max_num_batched_tokens 8192, chunked
  prefill; TensorRT-LLM max_num_tokens 16384, and for 1k/1k below TP 8
  batch_wait_timeout_iters 20 (`benchmarks/70b_fp4_b200_trt_*.sh`, "improves 1k/1k").
- NVFP4: 4 bits + one fp8 scale per 16 weights = 4.5 bits stored; the matmuls run on
  Blackwell's 4-bit tensor cores at 9,000 TFLOP/s dense per B200 (HGX B200 datasheet, 18 PF
  sparse; the B200 preset's 4-bit peak), asked for with `compute_bits=4`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, replace
from importlib import resources

from core import presets
from core.engine import ENGINES, EngineProfile
from core.lengths import RequestLengths
from core.replica import Replica
from core.specs import Precision

FILENAME = "serving_llama-3.1-70b.csv"
MODEL_ID = "llama-3.1-70b"
GPU_IDS = {"H100-SXM": "h100-sxm", "H200-SXM": "h200", "B200": "b200"}
PRECISIONS = {
    "fp8": Precision(weight_bits=8, kv_bits=8),
    "nvfp4": Precision(weight_bits=4.5, kv_bits=8, compute_bits=4),  # Blackwell's 4-bit tensor cores
}
REQUESTS_PER_SLOT = 10  # --num-prompts 10 × concurrency
LOW_FRACTION = 0.8  # --random-range-ratio 0.8
# The benchmark's server flags, per engine.
_FLAGS = {"vllm": {"max_batched_tokens": 8192}, "trtllm": {"max_batched_tokens": 16384}}
_TRT_BATCH_WAIT_ITERATIONS = 20


@dataclass(frozen=True, slots=True)
class ServingMeasurement:
    """One measured point and the setup that reproduces it."""

    gpu: str
    engine: str
    weights: str
    tp: int
    isl: int
    osl: int
    concurrency: int
    ttft_ms: float
    tpot_ms: float
    source: str

    @property
    def setup(self) -> tuple[str, str, str, int, int, int]:
        """Rows that share a setup differ only in concurrency: one vectorised evaluation."""
        return (self.gpu, self.engine, self.weights, self.tp, self.isl, self.osl)

    @property
    def lengths(self) -> RequestLengths:
        return RequestLengths(self.isl, self.osl, LOW_FRACTION)


def load_serving_measurements(filename: str = FILENAME) -> list[ServingMeasurement]:
    text = resources.files("core").joinpath("data", filename).read_text(encoding="utf-8")
    rows = []
    for row in csv.DictReader(text.splitlines()):
        if row["gpu"] not in GPU_IDS or row["weights"] not in PRECISIONS or row["engine"] not in _FLAGS:
            raise ValueError(f"unknown setup in {filename}: {row['gpu']}, {row['weights']}, {row['engine']}")
        rows.append(
            ServingMeasurement(
                gpu=row["gpu"],
                engine=row["engine"],
                weights=row["weights"],
                tp=int(row["tp"]),
                isl=int(row["isl"]),
                osl=int(row["osl"]),
                concurrency=int(row["concurrency"]),
                ttft_ms=float(row["ttft_ms"]),
                tpot_ms=float(row["tpot_ms"]),
                source=row["source"],
            )
        )
    return rows


def benchmark_engine(profile: EngineProfile, isl: int, osl: int, tp: int) -> EngineProfile:
    """The engine with the flags InferenceX launched it with for this sequence length and TP."""
    flags: dict[str, int] = dict(_FLAGS[profile.id])
    if profile.id == "trtllm" and (isl, osl) == (1024, 1024) and tp < 8:
        flags["prefill_batch_wait_iterations"] = _TRT_BATCH_WAIT_ITERATIONS
    return replace(profile, **flags)  # type: ignore[arg-type]


def replica_for(
    setup: tuple[str, str, str, int, int, int], profiles: dict[str, EngineProfile] | None = None
) -> Replica:
    """The replica a measured setup ran on; `profiles` replaces the named engines' costs (fitting)."""
    gpu_name, engine_id, weights, tp, isl, osl = setup
    profile = (profiles or ENGINES)[engine_id]
    gpu_id = GPU_IDS[gpu_name]
    return Replica(
        model=presets.model(MODEL_ID),
        precision=PRECISIONS[weights],
        gpu=presets.gpu(gpu_id),
        gpu_count=tp,
        engine=benchmark_engine(profile, isl, osl, tp),
    )
