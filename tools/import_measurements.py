"""One-off import: every published measurement into one schema, split by source into fit / validation / test.

Inputs: the project's three older files (`calibration_{train,validation,test}.csv`, 68 rows,
in `core/data/` up to commit cf26a73) and the two gathered files `edge.csv` and
`datacenter.csv` (424 rows; their `*_sources.md` describe each source), given as arguments. Output:
`core/data/measurements_{fit,validation,test}.csv` in the schema `core/data/README.md`
documents, and the split printed source by source.

The split rule (written down before any error was computed; `core/data/README.md`):
1. Sources the calibrated defaults were fitted on before (the older training file) → fit.
2. Sources earlier sessions looked at (the older validation and test files) → fit or
   validation, alternately in the order of sha256(source id): never test.
3. New sources, sorted by stratum (the engine family of most of their rows; mixture of
   experts or not) and then by sha256(source id), dealt in turn fit, validation, test, fit —
   the turn continues from one stratum to the next — so about half the sources fit, a
   quarter validate and a quarter test, and every family and MoE appear in each where
   the sources allow.

Run: `git worktree add /tmp/old cf26a73 && python tools/import_measurements.py
/tmp/old/core/data /path/to/edge.csv /path/to/datacenter.csv`.
Standard library only.
"""

from __future__ import annotations

import csv
import hashlib
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "core" / "data"
COLUMNS = (
    "source_id,model,model_id,params_b,active_params_b,layers,hidden,query_heads,kv_heads,head_dim,"
    "experts,experts_per_token,kv_latent_dim,kv_latent_rope_dim,weight_format,weight_bits,kv_bits,"
    "compute_bits,gpu,bandwidth_gb_s,tflops_16,tflops_8,tflops_4,memory_gb,interconnect_gb_s,n_gpus,"
    "engine,engine_version,harness,batch,prompt_tokens,output_tokens,metric,value,published,source,notes"
).split(",")
SHAPE = ("params_b", "active_params_b", "layers", "hidden", "query_heads", "kv_heads", "head_dim")
MOE = ("experts", "experts_per_token", "kv_latent_dim")

# Per-direction GPU-to-GPU bandwidth by the data's GPU names (the presets' values; PCIe
# Gen4 x16 ≈ 32 GB/s per direction for cards without NVLink; one Thunderbolt port for Macs).
INTERCONNECT = (
    ("A100", 300),
    ("H100-PCIe", 64),
    ("H100", 450),
    ("H200", 450),
    ("H20", 450),
    ("B200", 900),
    ("MI300X", 448),
    ("L40", 32),
    ("RTX", 32),
    ("A10G", 32),
    ("M", 5),
)

# Model names in the data → the preset whose config they share (checked shape by shape).
PRESETS = {
    "Llama-3.1-70B": "llama-3.1-70b",
    "DeepSeek-R1-Distill-Llama-70B": "llama-3.1-70b",
    "Llama-3-70B": "llama-3.1-70b",
    "Llama-3.3-70B": "llama-3.3-70b",
    "Llama-3.1-405B": "llama-3.1-405b",
    "Llama-3.1-8B": "llama-3.1-8b",
    "DeepSeek-R1": "deepseek-v3",
    "DeepSeek-V3": "deepseek-v3",
    "Mixtral-8x7B": "mixtral-8x7b",
    "Qwen3-235B-A22B": "qwen3-235b-a22b",
    "Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen3-8B": "qwen3-8b",
    "Qwen3-32B": "qwen3-32b",
    "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
    "Qwen2.5-7B": "qwen2.5-7b",
    "Llama-2-13B": "llama-2-13b",
    "Llama-2-7B": "llama-2-7b",
}

# Source ids for the gathered files: the first pattern the source text matches.
NEW_SOURCES = (
    (r"casper-hansen/AutoAWQ", "autoawq"),
    (r"QwenLM/Qwen2.5@010c37c docs/source/benchmark", "qwen2.5-speed-benchmark"),
    (r"QwenLM/Qwen2.5 docs/source/getting_started/speed_benchmark", "qwen3-speed-benchmark"),
    (r"ml-explore/mlx-examples issue #1029", "mlx-issue-1029"),
    (r"geerlingguy/", "geerlingguy-benchmarks"),
    (r"llama.cpp PR #6766", "llama.cpp-pr-6766"),
    (r"llama.cpp PR #10238", "llama.cpp-pr-10238"),
    (r"llama.cpp PR #2917", "llama.cpp-pr-2917"),
    (r"llama.cpp PR #2959", "llama.cpp-pr-2959"),
    (r"llama.cpp PR #4406", "llama.cpp-pr-4406"),
    (r"llama.cpp PR #12183", "llama.cpp-pr-12183"),
    (r"vllm-project/vllm PR #23197", "vllm-pr-23197"),
    (r"ml-explore/mlx-examples PR #1069|ml-explore/mlx-lm PR", "mlx-team-prs"),
    (r"waybarrios/vllm-mlx", "vllm-mlx-issue-531"),
    (r"pavlokhmel.com", "pavlokhmel-13-gpus"),
    (r"ROCm/rocm-blogs", "rocm-blog-best-practices"),
    (r"dstackai/benchmarks Deepseek-R1", "dstack-deepseek-r1"),
    (r"vllm-project/vllm PR #2542", "vllm-pr-2542"),
    (r"vllm-project/vllm PR #3240", "vllm-pr-3240"),
    (r"vllm-project/vllm PR #4002", "vllm-pr-4002"),
    (r"vllm-project/vllm PR #3692", "vllm-pr-3692"),
    (r"sgl-project/sgl-cookbook", "sglang-cookbook"),
    (r"sgl-project/awesome-sglang", "awesome-sglang-gpt-oss"),
    (r"sgl-project/sglang PR #8638", "sglang-pr-8638"),
    (r"Baseten blog", "baseten-mixtral"),
    (r"dzhsurf/", "dzhsurf-deepseek-v3"),
    (r"dstackai/benchmarks amd/tgi_vs_vllm", "dstack-405b-mi300x"),
    (r"dstackai/benchmarks comparison/h100sxm5_vs_mi300x", "dstack-memory-saturation"),
    (r"NVIDIA/FasterTransformer", "fastertransformer-gpt-guide"),
    (r"text-generation-inference PR #1243", "tgi-pr-1243"),
    (r"DeepSeek-R1-Distill-Llama-70B", "neuralmagic-r1-distill-70b"),
    (r"granite", "neuralmagic-granite-3.1-8b"),
    (r"AUGMXNT/MI300-testing", "augmxnt-mi300x"),
)
OLD_SOURCES = (
    (r"LMDeploy a100_fp16", "lmdeploy-a100-fp16", "lmdeploy", "2023-09"),
    (r"gpt-fast", "gpt-fast-readme", "gpt-fast", "2023-11"),
    (r"ExLlamaV2", "exllamav2-readme", "exllamav2", "2023-09"),
    (r"kipply", "kipply-arithmetic", "fastertransformer", "2022-03"),
    (r"TensorRT-LLM docs/source/performance.md", "trtllm-performance-md", "trtllm", "2023-12"),
    (r"TensorRT-LLM docs/source/blogs", "trtllm-h200-blogs", "trtllm", "2023-11"),
    (r"ROCm/vllm docs/dev-docker", "rocm-vllm-dev-docker", "vllm", "2025-08"),
    (r"lmdeploy docs/en/w4a16", "lmdeploy-w4a16", "lmdeploy", "2023-09"),
    (r"MLC Community blog", "mlc-multi-gpu-blog", "mlc", "2023-10-19"),
    (r"mlc-ai/mlc-llm PR #573", "mlc-llm-pr-573", "mlc", "2023-07-19"),
    (r"llama.cpp PR #4766", "llama.cpp-pr-4766", "llama.cpp", "2024-01-10"),
    (r"llama.cpp PR #3084", "llama.cpp-pr-3084", "llama.cpp", "2023-09-09"),
    (r"llm-awq tinychat", "tinychat-readme", "tinychat", "2024-05"),
    (r"XiongjieDai", "xiongjiedai-gpu-benchmarks", "llama.cpp", "2024-05"),
    (r"quanto", "quanto-bench", "hf-transformers", "2024-03"),
    (r"vLLM CI", "vllm-ci-buildkite", "vllm", "2024-10"),
    (r"Oracle Cloud", "oracle-mi300x-405b", "vllm", "2024-10-10"),
    (r"NVIDIA NIM", "nim-benchmarks", "trtllm", "2025-01"),
    (r"pytorch/ao", "torchao-readme", "gpt-fast", "2024-08"),
    (r"mlc-ai/llm-perf-bench", "mlc-llm-perf-bench", "mlc", "2023-10"),
    (r"SageMaker", "hf-sagemaker-tgi", "tgi", "2023-09"),
)
# Sources measured through an API server: their TTFT (and a single request's total) includes
# the request's way in and out of the server. Every other source ran the engine in-process
# (benchmark_latency, llama-bench, generate loops, static-batch tools) and has no such path.
SERVER_SOURCES = {
    "neuralmagic-granite-3.1-8b",  # GuideLLM against vllm serve
    "neuralmagic-r1-distill-70b",
    "sglang-cookbook",  # sglang.bench_serving
    "awesome-sglang-gpt-oss",  # bench_one_batch_server (HTTP)
    "sglang-pr-8638",  # bench_serving at max concurrency = batch
    "dstack-405b-mi300x",  # one request to the server
    "dzhsurf-deepseek-v3",  # serving benchmark at max concurrency 1
    "vllm-mlx-issue-531",  # vllm-mlx bench against its server
    "nim-benchmarks",  # genai-perf against NIM
    "hf-sagemaker-tgi",  # requests to a SageMaker endpoint
    "baseten-mixtral",  # Baseten's deployed model
    "pavlokhmel-13-gpus",  # a request script against llama-server
}

# Engines with a profile of their own; every other engine is predicted with `typical`.
FAMILY = {
    "vllm": "vllm",
    "trtllm": "trtllm",
    "sglang": "sglang",
    "llama.cpp": "llama.cpp",
    "mlx": "mlx",
    "vllm-mlx": "mlx",  # vLLM's server on MLX kernels
    "ollama": "llama.cpp",  # llama.cpp inside
    "hf-transformers": "hf-transformers",
}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def source_of(text: str, table: tuple) -> tuple:
    for entry in table:
        if re.search(entry[0], text):
            return entry[1:]
    raise ValueError(f"no source id for {text[:80]!r}")


def interconnect(gpu: str) -> str:
    for prefix, gb_s in INTERCONNECT:
        if gpu.startswith(prefix):
            return str(gb_s)
    raise ValueError(gpu)


def number(text: str) -> str:
    """'16.0' → '16'; '' stays ''."""
    if text in ("", "nan"):
        return ""
    value = float(text)
    return str(int(value)) if value == int(value) else repr(value)


def compute_bits(weight_format: str, weight_bits: float) -> str:
    """The maths' precision: fp8 and W8A8 run 8-bit; everything else dequantises to 16-bit."""
    if weight_format in ("fp8", "int8-w8a8"):
        return "8"
    return "16"


def old_rows(path: Path) -> list[dict[str, str]]:
    rows = []
    for row in csv.DictReader(path.open(encoding="utf-8")):
        source_id, engine, published = source_of(row["source"], OLD_SOURCES)
        bits = float(row["weight_bits"])
        text = row["source"]
        if bits == 16:
            fmt = "fp16"
        elif bits == 8:
            # gpt-fast and torchao int8 are weight-only; TRT-LLM and the ROCm/Oracle runs are FP8.
            fmt = "int8-wo" if engine == "gpt-fast" else "fp8"
        elif "EXL2" in text or "ExLlamaV2" in text:
            fmt = "exl2"
        elif engine == "llama.cpp" or "Q4_K_M" in text:
            fmt = "gguf"
        elif engine == "mlc":
            fmt = "mlc-q4f16"
        elif "AWQ" in text or engine in ("lmdeploy", "tinychat"):
            fmt = "awq"
        else:
            fmt = "int4-wo"
        hidden, head_dim = int(row["hidden"]), int(row["head_dim"])
        out = {
            "source_id": source_id,
            "model": row["model"],
            "params_b": row["params_b"],
            "active_params_b": row["params_b"],
            "layers": row["layers"],
            "hidden": row["hidden"],
            "query_heads": str(hidden // head_dim),
            "kv_heads": row["kv_heads"],
            "head_dim": row["head_dim"],
            "weight_format": fmt,
            "weight_bits": row["weight_bits"],
            "kv_bits": row["kv_bits"] or "16",
            "compute_bits": compute_bits(fmt, bits),
            "gpu": row["gpu"],
            "bandwidth_gb_s": row["bandwidth_gb_s"],
            # The older files give one dense peak, at the precision the maths ran in.
            "tflops_16": row["tflops"] if fmt != "fp8" else str(float(row["tflops"]) / 2),
            "tflops_8": row["tflops"],
            "memory_gb": row["memory_gb"],
            "interconnect_gb_s": interconnect(row["gpu"]),
            "n_gpus": row["n_gpus"],
            "engine": engine,
            "batch": row["batch"],
            "prompt_tokens": row["prompt_tokens"],
            "output_tokens": row["output_tokens"],
            "metric": row["metric"],
            "value": row["value"],
            "published": published,
            "source": row["source"],
            "notes": "imported from the older calibration files (query heads = hidden / head_dim)",
        }
        rows.append(out)
    return rows


# Gaps in the gathered rows, filled here and said in the row's notes.
APPLE_TFLOPS_16 = {"M4-Pro": 8.1}  # 20 cores × 128 ALUs × 2 × ~1.58 GHz, estimated like the others
APPLE_MEMORY_GB = {"M2-Max-30c": 32.0, "M4-Max-40c": 48.0}  # not printed; only the fit check reads it


def new_rows(path: Path) -> list[dict[str, str]]:
    rows = []
    for row in csv.DictReader(path.open(encoding="utf-8")):
        (source_id,) = source_of(row["source"], NEW_SOURCES)
        notes = [row["notes"]]
        engine = row["engine"]
        if engine == "other":
            engine = "autoawq" if "AutoAWQ" in row["engine_version"] else "vllm-old-kernel"
            if engine == "vllm-old-kernel":
                engine = "vllm"
        if engine == "llama.cpp" and "Ollama" in row["engine_version"]:
            engine = "ollama"
        if engine == "mlx" and "vllm-mlx" in row["engine_version"]:
            engine = "vllm-mlx"
        prompt, output = row["prompt_tokens"], row["output_tokens"]
        if prompt in ("", "nan"):
            prompt, output = "16", "128"
            notes.append("import: prompt and reply lengths not stated; assumed 16 and 128 (a short chat turn)")
        if number(prompt) == "0":
            prompt = "1"
            notes.append("import: tg from an empty context read as a 1-token prompt (the model needs one)")
        fmt = row["weight_format"]
        bits = float(row["weight_bits"])
        tflops_16 = row["tflops_16"]
        if tflops_16 in ("", "nan"):
            tflops_16 = str(APPLE_TFLOPS_16[row["gpu"]])
            notes.append(f"import: tflops_16 estimated {tflops_16} (cores x 128 x 2 x clock)")
        tflops_8 = row["tflops_8"] if row["tflops_8"] not in ("", "nan") else tflops_16
        memory = row["memory_gb"]
        if memory in ("", "nan"):
            memory = str(APPLE_MEMORY_GB[row["gpu"]])
            notes.append(f"import: memory not printed, {memory} GB assumed (only the fit check reads it)")
        model_id = PRESETS.get(row["model"], "")
        out = {
            "source_id": source_id,
            "model": row["model"],
            "model_id": model_id,
            "weight_format": fmt,
            "weight_bits": number(row["weight_bits"]),
            "kv_bits": number(row["kv_bits"]) or "16",
            "compute_bits": compute_bits(fmt, bits),
            "gpu": row["gpu"],
            "bandwidth_gb_s": number(row["bandwidth_gb_s"]),
            "tflops_16": number(tflops_16),
            "tflops_8": number(tflops_8),
            "tflops_4": number(row["tflops_4"]),
            "memory_gb": number(memory),
            "interconnect_gb_s": interconnect(row["gpu"]),
            "n_gpus": number(row["n_gpus"]),
            "engine": engine,
            "engine_version": row["engine_version"] if row["engine_version"] != "nan" else "",
            "batch": number(row["batch"]),
            "prompt_tokens": number(prompt),
            "output_tokens": number(output),
            "metric": row["metric"],
            "value": row["value"],
            "published": row["published"],
            "source": row["source"],
            "notes": " ".join(n for n in notes if n and n != "nan"),
        }
        if not model_id:
            for key in (*SHAPE, *MOE):
                out[key] = number(row[key])
            if out["kv_latent_dim"]:
                out["kv_latent_rope_dim"] = "64"  # DeepSeek-V3-style MLA: 512 + 64
        rows.append(out)
    return rows


def stratum(rows: list[dict[str, str]]) -> tuple[str, bool]:
    families = Counter(FAMILY.get(r["engine"], "typical") for r in rows)
    moe = sum(bool(r.get("experts")) or r.get("model_id", "") in MOE_PRESETS for r in rows)
    return families.most_common(1)[0][0], moe * 2 > len(rows)


MOE_PRESETS = {"deepseek-v3", "mixtral-8x7b", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-20b", "gpt-oss-120b"}


def split(old: dict[str, list], new: dict[str, list]) -> dict[str, str]:
    role: dict[str, str] = {}
    for source_id in old["train"]:
        role[source_id] = "fit"
    looked_at = sorted({*old["validation"], *old["test"]} - set(role), key=sha)
    for i, source_id in enumerate(looked_at):
        role[source_id] = ("fit", "validation")[i % 2]
    turn = ("fit", "validation", "test", "fit")
    ordered = sorted(new, key=lambda s: (stratum(new[s]), sha(s)))
    for i, source_id in enumerate(ordered):
        role[source_id] = turn[i % len(turn)]
    return role


def main(old_dir: str, edge: str, datacenter: str) -> None:
    old: dict[str, list] = {}
    by_source: dict[str, list] = defaultdict(list)
    for name in ("train", "validation", "test"):
        rows = old_rows(Path(old_dir) / f"calibration_{name}.csv")
        old[name] = sorted({r["source_id"] for r in rows})
        for r in rows:
            by_source[r["source_id"]].append(r)
    new: dict[str, list] = defaultdict(list)
    for path in (edge, datacenter):
        for r in new_rows(Path(path)):
            new[r["source_id"]].append(r)
            by_source[r["source_id"]].append(r)
    role = split(old, new)
    out: dict[str, list] = defaultdict(list)
    for source_id, rows in by_source.items():
        for r in rows:
            server = source_id in SERVER_SOURCES or r["engine"] == "ollama"
            r["harness"] = "server" if server else "offline"
        out[role[source_id]].extend(rows)
    for name in ("fit", "validation", "test"):
        with (DATA / f"measurements_{name}.csv").open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, COLUMNS, lineterminator="\n")
            writer.writeheader()
            for r in out[name]:
                writer.writerow({c: r.get(c, "") for c in COLUMNS})
        sources = sorted({r["source_id"] for r in out[name]})
        print(f"{name}: {len(out[name])} rows, {len(sources)} sources")
        for s in sources:
            rows = by_source[s]
            kind = "older" if s not in new else "new"
            print(f"  {s:<30} {len(rows):>4} rows  {kind:<5} stratum {stratum(rows)}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
