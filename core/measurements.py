"""Published measurements: each row of `data/measurements_*.csv` as the scenario that reproduces it.

One schema for every row (`data/README.md` documents each column): the model as a preset
id or its shape (MoE and latent-attention fields included), the weight format and the
bits of weights, KV cache and maths, one GPU's datasheet numbers, the GPU count, the
engine and how it was driven (`harness`: through an API server, or in-process), the
static batch and lengths, one metric and its value, the publication date and the source.

Split by source (never by row), each set gathered and judged in turn: `measurements_fit.csv`
(the engines' costs are fitted on these), `measurements_validation.csv` (never fitted; used to
choose the model's structure and to size the likely ranges) and `measurements_test.csv` (looked
at once, at the end), all three before any error was computed; then `measurements_fresh.csv` to
`measurements_fresh29.csv` (`SETS`, in the order they were gathered), each by a helper that
never ran the model and each judged once with the model frozen before it was seen. What each
holds and what it scored as judged: `data/README.md`. A row's engine selects the profile that
predicts it (`PROFILE_OF`; llama.cpp on Apple silicon and on Radeon, `core.engine.backend_for`); engines without a profile of
their own run on `typical`.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from core import presets
from core.efficiency import efficiency_base
from core.engine import backend_for
from core.scenario import Scenario
from core.specs import CUSTOM_ID, GPU, Model, Precision, Workload
from core.units import BYTES_PER_GB, FLOP_PER_TFLOP, PARAMS_PER_BILLION
from core.user_files import cells_match, number, whole
from core.validation import shown_number

SETS = (
    "fit",
    "validation",
    "test",
    "fresh",
    "fresh2",
    "fresh3",
    "fresh4",
    "fresh5",
    "fresh6",
    "fresh7",
    "fresh8",
    "fresh9",
    "fresh10",
    "fresh11",
    "fresh12",
    "fresh13",
    "fresh14",
    "fresh15",
    "fresh16",
    "fresh17",
    "fresh18",
    "fresh19",
    "fresh20",
    "fresh21",
    "fresh22",
    "fresh23",
    "fresh24",
    "fresh25",
    "fresh26",
    "fresh27",
    "fresh28",
    "fresh29",
)
COLUMNS = tuple(
    "source_id model model_id params_b active_params_b layers hidden query_heads kv_heads head_dim experts "
    "experts_per_token kv_latent_dim kv_latent_rope_dim weight_format weight_bits kv_bits compute_bits gpu "
    "bandwidth_gb_s tflops_16 tflops_8 tflops_4 memory_gb interconnect_gb_s n_gpus engine engine_version harness "
    "batch prompt_tokens output_tokens metric value published source notes".split()
)  # data/README.md's "Columns"
METRICS = ("tpot_ms", "ttft_ms", "output_tokens_per_s", "decode_tokens_per_s")
# The published engine → the profile that predicts it. Engines not listed run on `typical`
# (LMDeploy, gpt-fast, torchao, ExLlamaV2, MLC, TinyChat, AutoAWQ, FasterTransformer, TGI).
PROFILE_OF = {
    "vllm": "vllm",
    "trtllm": "trtllm",
    "sglang": "sglang",
    "llama.cpp": "llama.cpp",
    "ollama": "llama.cpp",  # llama.cpp inside
    "mlx": "mlx",
    "vllm-mlx": "mlx",  # vLLM's server on MLX's kernels
    "hf-transformers": "hf-transformers",
}
# GPU-name prefixes and their vendor; any other name is NVIDIA's.
VENDORS = (("MI", "AMD"), ("RX", "AMD"), ("Radeon", "AMD"), ("Arc", "Intel"), ("M", "Apple"))


def vendor_of(gpu_name: str) -> str:
    """The GPU's vendor from its name in the files (`VENDORS`: AMD's MI/RX/Radeon, Intel's Arc, Apple's M-series)."""
    return next((vendor for prefix, vendor in VENDORS if gpu_name.startswith(prefix)), "NVIDIA")


@dataclass(frozen=True, slots=True)
class Measurement:
    """One published measurement and the scenario (on its engine's profile) that reproduces it."""

    label: str
    scenario: Scenario
    metric: str
    value: float
    source_id: str
    engine: str  # as published
    profile: str  # the engine profile that predicts it
    server: bool  # measured through an API server: the TTFT includes the request's path
    weight_format: str
    published: str
    source: str

    @property
    def batch(self) -> int:
        return self.scenario.workload.batch_size

    @property
    def is_moe(self) -> bool:
        return self.scenario.model.is_moe

    @property
    def vendor(self) -> str:
        return vendor_of(self.scenario.gpu.name)

    @property
    def quantised_below_8_bits(self) -> bool:
        """Weights stored in fewer than 8 bits (int4 AWQ/GPTQ, GGUF Q4, MLX 4-bit, MXFP4, EXL2)."""
        return self.scenario.precision.weight_bits < 8


def _optional_int(row: dict[str, str], column: str) -> int | None:
    value = number(row, column, whole=True, optional=True)
    return None if value is None else int(value)


def _billions(row: dict[str, str], column: str, unit: float) -> int:
    """A finite figure above 0 in the file's unit (billions, GB/s, TFLOP/s) in SI units."""
    return round(float(number(row, column) or 0) * unit)  # number() caps it: 1e300 GB/s overflowed round()


def _model(row: dict[str, str]) -> Model:
    if row["model_id"]:
        if any(row[key] for key in ("params_b", "layers", "experts")):
            raise ValueError(f"{row['model']}: give a preset id or a shape, not both")
        return presets.model(row["model_id"])
    return Model(
        id=CUSTOM_ID,
        name=row["model"][:60],  # a label: long ones are cut, as `measurement` cuts every name
        total_params=_billions(row, "params_b", PARAMS_PER_BILLION),
        active_params=_billions(row, "active_params_b", PARAMS_PER_BILLION),
        layers=whole(row, "layers"),
        hidden=whole(row, "hidden"),
        query_heads=whole(row, "query_heads"),
        kv_heads=whole(row, "kv_heads"),
        head_dim=whole(row, "head_dim"),
        experts=_optional_int(row, "experts"),
        experts_per_token=_optional_int(row, "experts_per_token"),
        kv_latent_dim=_optional_int(row, "kv_latent_dim"),
        kv_latent_rope_dim=_optional_int(row, "kv_latent_rope_dim"),
    )


@cache
def vector_flops() -> dict[str, float]:
    """The FP32 vector peak, FLOP/s, of each GPU the files name, as its name is written there.

    `data/gpu_vector_flops.csv`: one datasheet figure and its source per GPU, kept apart from the
    rows (the same card appears in hundreds); a GPU it leaves empty has none published.
    """
    text = resources.files("core").joinpath("data", "gpu_vector_flops.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    return {row["gpu"]: float(row["vector_tflops_fp32"]) * FLOP_PER_TFLOP for row in rows if row["vector_tflops_fp32"]}


def _gpu(row: dict[str, str]) -> GPU:
    """The row's datasheet numbers; what its kernels sustain from the preset its name is, if any (`presets.gpu_like`).

    Its vector peak is `vector_flops()`'s for its name, else the preset's: a file of one's own
    naming a card as the presets do ("NVIDIA A100 80GB SXM") gets it too.
    """

    def tflops(key: str) -> int:
        return _billions(row, key, FLOP_PER_TFLOP)

    like = presets.gpu_like(row["gpu"])

    return GPU(
        id=CUSTOM_ID,
        name=row["gpu"],
        memory_bandwidth_bytes_per_s=_billions(row, "bandwidth_gb_s", BYTES_PER_GB),
        peak_flops_16bit_per_s=tflops("tflops_16"),
        peak_flops_8bit_per_s=tflops("tflops_8"),
        peak_flops_4bit_per_s=tflops("tflops_4") if row["tflops_4"] else None,
        memory_bytes=_billions(row, "memory_gb", BYTES_PER_GB),
        interconnect_bytes_per_s=_billions(row, "interconnect_gb_s", BYTES_PER_GB),
        vector_flops_per_s=vector_flops().get(row["gpu"], None if like is None else like.vector_flops_per_s),
        sustained_bandwidth_share=1.0 if like is None else like.sustained_bandwidth_share,
        sustained_compute_share=1.0 if like is None else like.sustained_compute_share,
    )


# A spec field (or a link key, which cross-field rules lead with) → the file's column for it and that column's
# unit in SI: a core check names the field and states its range in SI ("memory_bytes must be >= 100,000,000"),
# where the file has memory_gb in GB.
_COLUMNS = {
    "total_params": ("params_b", PARAMS_PER_BILLION),
    "active_params": ("active_params_b", PARAMS_PER_BILLION),
    "memory_bytes": ("memory_gb", BYTES_PER_GB),
    "memory_bandwidth_bytes_per_s": ("bandwidth_gb_s", BYTES_PER_GB),
    "interconnect_bytes_per_s": ("interconnect_gb_s", BYTES_PER_GB),
    "peak_flops_16bit_per_s": ("tflops_16", FLOP_PER_TFLOP),
    "peak_flops_8bit_per_s": ("tflops_8", FLOP_PER_TFLOP),
    "peak_flops_4bit_per_s": ("tflops_4", FLOP_PER_TFLOP),
    "batch_size": ("batch", 1.0),
    "gpu_count": ("n_gpus", 1.0),
    "cbits": ("compute_bits", 1.0),
    "wbits": ("weight_bits", 1.0),
    "kvbits": ("kv_bits", 1.0),
}
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?(?:e[+-]?\d+)?"  # 1,024 · 6.74 · 1e+14
# `validation.check_number`'s shape, the one message with figures in SI: "{field} must be [a whole number]
# >= low [and <= high], got value". Others (a mixture's "below total_params (109.00 billion)") say their
# figures in the file's units already: only their fields are renamed.
_RANGE = re.compile(rf"^(?P<kind>must be (?:a (?:whole |finite )?number )?)(?P<low>>=? )(?P<a>{_NUMBER})"
                    rf"(?: and <= (?P<b>{_NUMBER}))?, got .*$")  # fmt: skip
_FIELD = re.compile(r"\b(" + "|".join(_COLUMNS) + r")\b")


def in_file_units(message: str, row: Mapping[str, str] | None = None) -> str:
    """A core check's message in the file's own terms: its columns, a range in the column's unit, the cell as written.

    Example: "memory_bytes must be >= 100,000,000 and <= 1e+14, got 1000000" with the cell memory_gb '0.001' →
    "memory_gb must be >= 0.1 and <= 100,000, got '0.001'".
    """
    field, _, rest = message.partition(" ")
    field = field.removesuffix(":")
    if field not in _COLUMNS:
        return message
    column, unit = _COLUMNS[field]
    ranged = _RANGE.match(rest)
    if ranged is None:
        return _FIELD.sub(lambda m: _COLUMNS[m[1]][0], message)

    def shown(figure: str) -> str:
        return shown_number(float(f"{float(figure.replace(',', '')) / unit:.6g}"))

    high = f" and <= {shown(ranged['b'])}" if ranged["b"] else ""
    cell = (row or {}).get(column, "")
    return f"{column} {ranged['kind']}{ranged['low']}{shown(ranged['a'])}{high}, got {str(cell)[:20]!r}"


def measurement(row: dict[str, str]) -> Measurement:
    """The row as a Measurement; raises ValueError naming the row's problem in the file's own columns and units."""
    try:
        return _measurement(row)
    except ValueError as error:
        raise ValueError(in_file_units(str(error), row)) from None


def _measurement(row: dict[str, str]) -> Measurement:
    if row["metric"] not in METRICS:
        raise ValueError(f"unknown metric {row['metric']!r}; known: {', '.join(METRICS)}")
    if row["harness"] not in ("server", "offline"):
        raise ValueError(f"harness must be server or offline, got {row['harness']!r}")
    model = replace(_model(row), name=row["model"][:60])
    profile = PROFILE_OF.get(row["engine"], "typical")
    profile = backend_for(profile, row["gpu"])  # llama.cpp on Apple and Radeon GPUs: its own backend
    server = row["harness"] == "server"
    efficiency = efficiency_base(profile, model)
    if not server:  # run in-process: no request path in front of the engine
        efficiency = efficiency.in_process()
    scenario = Scenario(
        model=model,
        gpu=_gpu(row),
        precision=Precision(
            weight_bits=float(number(row, "weight_bits") or 0),
            kv_bits=float(number(row, "kv_bits") or 0),
            compute_bits=whole(row, "compute_bits"),
        ),
        efficiency=efficiency,
        workload=Workload(
            prompt_tokens=whole(row, "prompt_tokens"),
            output_tokens=whole(row, "output_tokens"),
            batch_size=whole(row, "batch"),
            gpu_count=whole(row, "n_gpus"),
        ),
    )
    label = (
        f"{row['model'][:22]} {row['weight_format']} {row['gpu'][:13]}x{row['n_gpus']} {row['engine'][:9]} "
        f"B{row['batch']} {row['prompt_tokens']}/{row['output_tokens']}"
    )
    return Measurement(
        label=label,
        scenario=scenario,
        metric=row["metric"],
        value=float(number(row, "value") or 0),
        source_id=row["source_id"],
        engine=row["engine"],
        profile=profile,
        server=server,
        weight_format=row["weight_format"],
        published=row["published"],
        source=row["source"],
    )


@cache
def load(name: str) -> tuple[Measurement, ...]:
    """Every row of `measurements_<name>.csv` (name: one of SETS), loaded once."""
    if name not in SETS:
        raise ValueError(f"set must be one of {', '.join(SETS)}, got {name!r}")
    text = resources.files("core").joinpath("data", f"measurements_{name}.csv").read_text(encoding="utf-8")
    return read_measurements(text, f"measurements_{name}.csv")


def read_measurements(text: str, name: str) -> tuple[Measurement, ...]:
    """Every row of a CSV in this schema; ValueError naming the file `name`, the line and its problem."""
    reader = csv.DictReader(text.splitlines())
    try:
        header = reader.fieldnames or ()
    except csv.Error as error:  # a header past the csv module's field limit: a traceback from the CLI
        raise ValueError(f"{name} line 1: {error}") from None
    missing = [column for column in COLUMNS if column not in header]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise ValueError(f"{name} lacks the columns {', '.join(missing[:3])}{more} (core/data/README.md)")
    try:
        numbered = list(enumerate(reader, start=2))
    except csv.Error as error:  # a field past the csv module's limit, a stray NUL
        raise ValueError(f"{name} line {reader.line_num + 1}: {error}") from None  # the line being read
    rows = []
    for line, row in numbered:
        try:
            cells_match(row, len(reader.fieldnames or ()))
            rows.append(measurement(row))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{name} line {line}: {error}") from None
    if not rows:
        raise ValueError(f"{name} has no rows")
    return tuple(rows)
