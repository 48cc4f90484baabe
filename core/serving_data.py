"""Measured serving at load: each row of `data/serving_llama-3.1-70b.csv` (or a file in its
schema) as the setup that reproduces it.

441 points of Llama 3.1 70B under a closed-loop concurrency sweep (InferenceX's method,
as aiconfigurator's `silicon_sample.csv` records it; see `data/README.md`). Each row
becomes a `Replica` (preset model and GPU, the engine with the benchmark's server flags),
`RequestLengths` and a concurrency. What the rows do not state is assumed here, once:

- KV cache in fp8 for every row (TensorRT-LLM's launch config says fp8; vLLM's B200 config
  says fp8; on H200 only an fp8 cache fits the concurrency the runs sustain).
- Lengths: `benchmark_serving`'s random dataset with `--random-range-ratio 0.8` draws prompt
  AND reply lengths uniformly in 80-100 % of the nominal (kimbochen/bench_serving
  `sample_random_requests`), `--num-prompts 10 × concurrency`, the first C sent at once.
  Another file's row may say otherwise (`num_prompts`, `length_low_fraction`).
- Server flags from InferenceX's launch scripts: vLLM max_num_batched_tokens 8192, chunked
  prefill; TensorRT-LLM max_num_tokens 16384, and for 1k/1k below TP 8
  batch_wait_timeout_iters 20 (`benchmarks/70b_fp4_b200_trt_*.sh`, "improves 1k/1k").
- NVFP4: 4 bits + one fp8 scale per 16 weights = 4.5 bits stored; the matmuls run on
  Blackwell's 4-bit tensor cores at 9,000 TFLOP/s dense per B200 (HGX B200 datasheet, 18 PF
  sparse; the B200 preset's 4-bit peak), asked for with `compute_bits=4`.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from core import presets
from core.candidates import split_problem
from core.engine import ENGINES, EngineProfile
from core.fields import inputs, own_bounds
from core.lengths import RequestLengths
from core.load import Load
from core.replica import Replica
from core.specs import Precision, Workload
from core.user_files import cells_match, number, read_text, whole

FILENAME = "serving_llama-3.1-70b.csv"
MODEL_ID = "llama-3.1-70b"
PRECISIONS = {
    "fp8": Precision(weight_bits=8, kv_bits=8),
    "nvfp4": Precision(weight_bits=4.5, kv_bits=8, compute_bits=4),  # Blackwell's 4-bit tensor cores
    "bf16": Precision(weight_bits=16, kv_bits=16),  # for other files: a 16-bit model keeps a 16-bit cache
    # gpt-oss's checkpoint: 4-bit experts with a shared 8-bit scale per 32 weights (4.25 bits), dequantised
    # to 16-bit maths with a 16-bit cache, as the measurement files write it (their gpt-oss rows).
    "mxfp4": Precision(weight_bits=4.25, kv_bits=16),
}
_WEIGHTS = {"fp16": "bf16", "bfloat16": "bf16", "float16": "bf16", "fp4": "nvfp4"}
# Engines as benchmarks write them, letters and digits only ("TensorRT-LLM", "trt", "TRT LLM").
_ENGINE_NAMES = {"tensorrtllm": "trtllm", "trt": "trtllm", "llamacpp": "llama.cpp"}
REQUESTS_PER_SLOT = 10  # --num-prompts 10 × concurrency
# The load's own bounds (serve --request-rate, --length-low-fraction), read from its descriptions.
RATE_LOW, RATE_HIGH = (float(b) for b in own_bounds(dict(inputs(Load))["request_rate_per_s"]))
FRACTION_LOW = float(own_bounds(dict(inputs(Load))["length_low_fraction"])[0])
LOW_FRACTION = 0.8  # --random-range-ratio 0.8
# The benchmark's server flags, per engine.
_FLAGS = {"vllm": {"max_batched_tokens": 8192}, "trtllm": {"max_batched_tokens": 16384}}
_TRT_BATCH_WAIT_ITERATIONS = 20


@dataclass(frozen=True, slots=True)
class ServingMeasurement:
    """One measured point and the setup that reproduces it: a closed loop (`concurrency`) or an open one (`request_rate`)."""

    gpu: str
    engine: str
    weights: str
    tp: int
    isl: int
    osl: int
    concurrency: int | None  # closed loop: at most C in flight; None for an open-loop row
    ttft_ms: float
    tpot_ms: float
    source: str
    model: str = MODEL_ID  # a model preset id
    model_given: str = ""  # the model as the file names it (`presets.model_like` read it as `model`)
    request_rate: float | None = None  # open loop: Poisson arrivals per second (`benchmark_serving --request-rate`)
    ttft_stat: str = "mean"  # "median": an open-loop row is judged on the TTFT's p50, else its mean
    num_prompts: int | None = None  # closed loop: requests the benchmark sent (None: InferenceX's 10 × C)
    length_low_fraction: float = LOW_FRACTION  # lengths uniform in this fraction of nominal to nominal (1: fixed)
    # The weights' format fixes the cache and the maths unless the file says (None): an fp8 cache
    # beside MXFP4 weights, MXFP4 maths on 4-bit tensor cores (AMD's MI355X recipes run both).
    kv_bits: float | None = None
    compute_bits: int | None = None

    @property
    def load(self) -> str:
        """The load it was measured at, as the slices name it: "C8", or "8 req/s"."""
        return f"C{self.concurrency}" if self.request_rate is None else f"{self.request_rate:g} req/s"

    @property
    def requests_per_slot(self) -> float:
        """The benchmark's requests per concurrency slot: n × C sent, the first C at once (1: one wave)."""
        if self.num_prompts is None or self.concurrency is None:
            return REQUESTS_PER_SLOT
        return self.num_prompts / self.concurrency

    @property
    def setup(self) -> tuple[str, str, str, int, int, int]:
        """Rows that share a setup (and model, and precision) differ only in concurrency: one vectorised evaluation."""
        return (self.gpu, self.engine, self.weights, self.tp, self.isl, self.osl)

    @property
    def precision(self) -> Precision:
        """The weights' format's precision, with the cache's and the maths' bits the file gives."""
        own = PRECISIONS[self.weights]
        return replace(
            own,
            kv_bits=own.kv_bits if self.kv_bits is None else self.kv_bits,
            compute_bits=own.compute_bits if self.compute_bits is None else self.compute_bits,
        )

    @property
    def lengths(self) -> RequestLengths:
        return RequestLengths(self.isl, self.osl, self.length_low_fraction)


def load_serving_measurements(path: str | Path | None = None) -> list[ServingMeasurement]:
    """The bundled rows (every one must be modelled), or a file's rows that can be (`read_serving_file`)."""
    if path is not None:
        return read_serving_file(path)[0]
    text = resources.files("core").joinpath("data", FILENAME).read_text(encoding="utf-8")
    rows, skipped = _read(text, f"core/data/{FILENAME}")
    if skipped:
        raise ValueError(f"core/data/{FILENAME}: {sum(skipped.values())} rows cannot be modelled: {dict(skipped)}")
    return rows


def read_serving_file(path: str | Path) -> tuple[list[ServingMeasurement], Counter[str]]:
    """A CSV in the bundled schema: the rows the load model can represent, and why the others cannot.

    Columns: model (or the preset's id in model_id, model then the checkpoint's own name), weights,
    gpu, tp, engine, isl, osl, concurrency, ttft_ms, tpot_ms, source, and for open-loop rows
    request_rate (concurrency empty) and ttft_stat; optionally num_prompts (requests the benchmark
    sent: empty, 10 × the concurrency; equal to it, one wave), length_low_fraction (empty,
    0.8; 1, fixed lengths), kv_bits and compute_bits (what the server ran beside the weights, an
    fp8 cache or FP4 maths; empty, the format's: `PRECISIONS`); others are ignored. A model or GPU is named as people write it:
    a preset's id or its words within the name, in any case and punctuation ("meta-llama/Llama-3.3-70B-Instruct",
    "H100-SXM", "NVIDIA B200"; `presets.model_like`, `presets.gpu_like`, which `names_read` reports);
    weights fp8, nvfp4, mxfp4 or bf16/fp16; any engine profile by its id or name ("TensorRT-LLM",
    "trt"; vLLM's and TensorRT-LLM's benchmark flags are known). A row naming a setup outside the presets is
    skipped and counted by reason; a malformed row (a missing column, a number that is not
    one) raises ValueError naming its line, as does a file with nothing to model.
    """
    rows, skipped = _read(read_text(path), str(path))
    if not rows:
        why = "; ".join(f"{reason} ({n} rows)" for reason, n in skipped.most_common(3))
        raise ValueError(f"{path}: no row the load model can represent" + (f": {why}" if why else ""))
    return rows, skipped


class _Unsupported(Exception):
    """A well-formed row whose setup the presets do not hold."""


def _read(text: str, name: str) -> tuple[list[ServingMeasurement], Counter[str]]:
    rows: list[ServingMeasurement] = []
    skipped: Counter[str] = Counter()
    runs: set[tuple[str, tuple[str, str, str, int, int, int], Precision]] = set()  # setups known to run
    reader = csv.DictReader(text.splitlines())
    try:
        numbered = list(enumerate(reader, start=2))
    except csv.Error as error:  # a field past the csv module's limit, a stray NUL
        raise ValueError(f"{name} line {reader.line_num + 1}: {error}") from None  # the line being read
    for line, row in numbered:
        try:
            cells_match(row, len(reader.fieldnames or ()))
            measurement = _measurement(row)
            known = (measurement.model, measurement.setup, measurement.precision)
            if known not in runs:  # can it run there at all? once a setup
                replica_for(measurement.setup, None, measurement.model, measurement.precision)
                runs.add(known)
        except _Unsupported as reason:
            skipped[str(reason)] += 1
            continue
        except KeyError as error:
            raise ValueError(f"{name} line {line}: no {error} column") from None
        except (ValueError, TypeError, AttributeError) as error:
            raise ValueError(f"{name} line {line}: {error}") from None
        rows.append(measurement)
    return rows, skipped


def _measurement(row: dict[str, str]) -> ServingMeasurement:
    weights = _WEIGHTS.get(row["weights"].strip().lower(), row["weights"].strip().lower())
    engine = _engine_id(row["engine"])
    rate_text, concurrency_text = (row.get("request_rate") or "").strip(), (row["concurrency"] or "").strip()
    if not rate_text and not concurrency_text:
        raise ValueError("a concurrency (closed loop) or a request_rate (open loop) is needed")
    concurrency = whole(row, "concurrency") if concurrency_text else None  # both given: the closed loop it ran
    rate = None if concurrency is not None else _float_or_nan(rate_text)  # 'abc': Python's own words, no column
    if rate is not None and not (0 < rate < math.inf):
        raise ValueError(f"request_rate must be a positive number of requests per second, got {rate_text[:20]!r}")
    if rate is not None and not RATE_LOW <= rate <= RATE_HIGH:  # serve --request-rate's range
        raise ValueError(
            f"request_rate must be from {RATE_LOW:g} to {RATE_HIGH:,.0f} requests/s, got {rate_text[:20]!r}"
        )
    numbers = tuple(_within(row, column, field) for column, field in _SIZES.items())
    num_prompts, low_fraction = _harness(row, concurrency)
    compute_text = (row.get("compute_bits") or "").strip()
    ttft, tpot = number(row, "ttft_ms"), number(row, "tpot_ms")
    if weights not in PRECISIONS:
        raise _Unsupported(f"weights {weights[:20]!r} (known: {', '.join(PRECISIONS)})")
    # The weights' name sets the precision; a weight_bits cell that contradicts it was ignored without a word.
    # Files write nominal widths (4 for NVFP4's 4.5 with scales): a bit either way is the same format.
    stated = number(row, "weight_bits", optional=True) if "weight_bits" in row else None
    named_bits = PRECISIONS[weights].weight_bits
    if stated is not None and abs(stated - named_bits) > 1:
        raise ValueError(f"weight_bits {stated:g} contradicts weights {weights} ({named_bits:g} bits with scales)")
    if engine not in ENGINES:
        raise _Unsupported(f"engine {engine[:20]!r} (known: {', '.join(ENGINES)})")
    named = (row.get("model_id") or "").strip() or (row.get("model") or "").strip()
    if not named and ("model" in row or "model_id" in row):  # an empty cell read as Llama 3.1 70B, unsaid
        raise ValueError("model is empty: give the model's name (or a preset id in model_id)")
    model_given = (named or MODEL_ID)[:80]  # a file without the column: the bundled file's model
    model_id = _model_id(model_given)
    # The engines split attention by head: tp=3 for 64 query heads was modelled, and no server runs it.
    problem = split_problem(presets.model(model_id), numbers[0])
    if problem is not None:
        raise ValueError(f"tp {numbers[0]}: {problem}: no engine runs it")
    return ServingMeasurement(
        gpu=_gpu_name(row["gpu"]),
        engine=engine,
        weights=weights,
        tp=numbers[0],
        isl=numbers[1],
        osl=numbers[2],
        concurrency=concurrency,
        ttft_ms=float(ttft or 0),
        tpot_ms=float(tpot or 0),
        source=row.get("source") or "",
        # The preset id when the file gives one (its `model` is then the checkpoint's own name).
        model=model_id,
        model_given=model_given,
        request_rate=rate,
        ttft_stat=_ttft_stat(row),
        num_prompts=num_prompts,
        length_low_fraction=low_fraction,
        kv_bits=number(row, "kv_bits", optional=True),
        compute_bits=int(number(row, "compute_bits", whole=True) or 0) if compute_text else None,
    )


# The row's sizes and the fields of the load model that bound them: an isl of 10,000,001 stopped the file
# outside its line's check, as "prompt_tokens must be … <= 10,000,000", no line and not the column's name.
_SIZES = {"tp": "gpu_count", "isl": "prompt_tokens", "osl": "output_tokens"}


def _within(row: dict[str, str], column: str, field: str) -> int:
    """A whole-number cell within the range of the field it sets, said with the column's name."""
    value = whole(row, column)
    low, high = own_bounds(dict(inputs(Workload))[field])
    if not low <= value <= high:
        raise ValueError(f"{column} must be a whole number from {low:,.0f} to {high:,.0f}, got {value:,}")
    return value


def _harness(row: dict[str, str], concurrency: int | None) -> tuple[int | None, float]:
    """How the benchmark ran, where the file says: requests sent (closed loop) and the lengths' spread."""
    prompts_text, fraction_text = (row.get("num_prompts") or "").strip(), (row.get("length_low_fraction") or "").strip()
    num_prompts = whole(row, "num_prompts") if prompts_text else None
    if concurrency is not None:  # the rule `serve --num-prompts` follows, in one place
        Load(concurrency=concurrency, num_prompts=num_prompts)
    elif num_prompts is not None:  # it was dropped without a word; serve refuses the same pair
        raise ValueError("num_prompts must be empty with a request_rate (an open loop's arrivals do not stop)")
    low_fraction = _float_or_nan(fraction_text) if fraction_text else LOW_FRACTION
    if not FRACTION_LOW <= low_fraction <= 1:  # serve --length-low-fraction's range (NaN too)
        raise ValueError(
            f"length_low_fraction must be between {FRACTION_LOW:g} and 1 (1: fixed lengths), got {fraction_text[:20]!r}"
        )
    return num_prompts, low_fraction


def _float_or_nan(text: str) -> float:
    """A cell as a float, NaN when it is none (the caller's range check then names the column)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def _ttft_stat(row: dict[str, str]) -> str:
    """'median' (p50) or 'mean' (empty too); any other statistic is refused: a p99 TTFT was judged as a mean."""
    given = (row.get("ttft_stat") or "").strip().lower()
    if given in ("median", "p50"):
        return "median"
    if given in ("", "mean", "avg", "average"):
        return "mean"
    raise ValueError(f"ttft_stat must be mean or median (p50), got {given[:20]!r}")


def _gpu_name(given: str) -> str:
    """The GPU as the file names it (the splits and slices use its words), once it is known to be a preset."""
    _gpu_id(given)
    return given.strip()


def _gpu_id(given: str) -> str:
    """The GPU preset a name is (`presets.gpu_like`); unsupported, naming the presets it may have meant, if none."""
    found = presets.gpu_like(given)
    if found is not None:
        return found.id
    near = _sharing(set(presets.name_words(given)), presets.gpu_presets())
    hint = f": write {' or '.join(near)}" if near else ""
    raise _Unsupported(f"gpu {given.strip()[:40]!r} is not a preset{hint}")


def _model_id(given: str) -> str:
    """The model preset a name is (`presets.model_like`: "meta-llama/Llama-3.3-70B-Instruct" → llama-3.3-70b)."""
    found = presets.model_like(given)
    if found is None:
        sizes = {w for w in presets.name_words(given) if re.fullmatch(r"\d+b", w)}  # "70b"
        near = _sharing(sizes, presets.model_presets())
        hint = f" (presets of its size: {', '.join(near)})" if near else ""
        raise _Unsupported(f"model {given.strip()[:40]!r} is not a preset{hint}")
    return found


def _sharing(words: set[str], preset_ids: Iterable[str]) -> list[str]:
    """The preset ids with one of `words` among their own, in the presets' order."""
    return [p for p in preset_ids if words & set(presets.name_words(p))]


def _squashed(text: str) -> str:
    """Letters and digits only, lower case: "TensorRT-LLM" → "tensorrtllm"."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _engine_id(given: str) -> str:
    """An engine profile's id from its name in any case and punctuation ("TensorRT-LLM", "trt" → trtllm)."""
    known = {_squashed(engine_id): engine_id for engine_id in ENGINES}
    return known.get(_squashed(given)) or _ENGINE_NAMES.get(_squashed(given)) or given.strip().lower()


def names_read(rows: Iterable[ServingMeasurement]) -> Counter[str]:
    """How many rows each model or GPU name was read as a preset by, where the name is not the preset's id."""
    models = Counter((m.model_given, m.model) for m in rows if m.model_given)
    gpus = Counter(m.gpu for m in rows)
    read: Counter[str] = Counter()
    for (given, model_id), n in models.items():
        if _squashed(given) != _squashed(model_id):
            read[f"model {given!r} as {model_id}"] += n
    for given, n in gpus.items():  # each name resolved once, not once a row
        gpu_id = _gpu_id(given)
        if _squashed(given) != _squashed(gpu_id):
            read[f"gpu {given[:40]!r} as {gpu_id}"] += n  # a name, not a whole pasted cell
    return read


def benchmark_engine(profile: EngineProfile, isl: int, osl: int, tp: int) -> EngineProfile:
    """The engine with the flags InferenceX launched it with for this sequence length and TP."""
    flags: dict[str, int] = dict(_FLAGS.get(profile.id, {}))  # another engine: its profile's own defaults
    if profile.id == "trtllm" and (isl, osl) == (1024, 1024) and tp < 8:
        flags["prefill_batch_wait_iterations"] = _TRT_BATCH_WAIT_ITERATIONS
    return replace(profile, **flags)  # type: ignore[arg-type]


def replica_for(
    setup: tuple[str, str, str, int, int, int],
    profiles: dict[str, EngineProfile] | None = None,
    model_id: str = MODEL_ID,
    precision: Precision | None = None,
) -> Replica:
    """The replica a measured setup ran on; `profiles` replaces the named engines' costs (fitting).

    `precision`: the row's own (`ServingMeasurement.precision`), else its weights' format's."""
    gpu_name, engine_id, weights, tp, isl, osl = setup
    profile = (profiles or ENGINES)[engine_id]
    gpu_id = _gpu_id(gpu_name)
    try:
        return Replica(
            model=presets.model(model_id),
            precision=precision or PRECISIONS[weights],
            gpu=presets.gpu(gpu_id),
            gpu_count=tp,
            engine=benchmark_engine(profile, isl, osl, tp),
        )
    except ValueError as error:  # e.g. 4-bit maths on a GPU without 4-bit tensor cores
        text = str(error)
        raise _Unsupported(f"{weights} on {gpu_name}: {text if len(text) <= 100 else text[:99] + '…'}") from None
