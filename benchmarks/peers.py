"""Our estimate beside two peers' for one scenario, in one run: llm-analysis and GenZ (figures to read).

The scenario: Llama 3.1 70B on 2× H100 SXM, fp8 weights and maths (W8A8), a 1,024-token prompt,
a 1,024-token reply, batch 1. Printed for each tool: time to first token, time per output
token, total latency, and the CPU time of one call (best of several). Each peer runs at its
own defaults, which are ideal hardware (efficiency 1, no fixed costs); our "ideal" engine is
the same physics, so those rows should agree; our `typical` and `vllm` engines add what real
servers lose (fitted on measurements: docs/benchmarks.md, "Accuracy").

What differs between the tools, beyond efficiency (read the numbers with these in mind):
- llm-analysis 0.2.2 has no gated MLP in inference: Llama's SwiGLU MLP (three 8,192 × 28,672
  matrices) is given to it as a two-matrix MLP of width 1.5 × 28,672 = 43,008, the same
  weights. Every decode step reads (and writes back) the KV cache of the whole prompt + reply,
  not the cache as it grows, and its H100 SXM is 3,350 GB/s, 989 TFLOP/s 16-bit, 1,979 8-bit.
- GenZ 0.0.16's `H100_GPU` is 3,400 GB/s and 989 TFLOP/s 16-bit, its 8-bit maths twice that;
  with `bits="fp8"` its KV cache is 8-bit too (ours stays 16-bit, the scenario's). Its decode
  is modelled at one context length (the prompt); it writes each model's layer table to
  /tmp/genz/data/.

Not part of `make test`: the peers are optional (`make peers` installs requirements-peers.txt
into .venv and runs this). A peer that is not installed is reported as such; the rest still runs.
"""

from __future__ import annotations

import contextlib
import io
import logging
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from core import Scenario, estimate

PROMPT_TOKENS = 1024
OUTPUT_TOKENS = 1024
GPUS = 2
SCENARIO = {
    "model": "llama-3.1-70b",
    "gpu": "h100-sxm",
    "gpus": str(GPUS),
    "wbits": "8",
    "prompt": str(PROMPT_TOKENS),
    "out": str(OUTPUT_TOKENS),
    "batch": "1",
}
# Llama 3.1 70B's shape (HF meta-llama/Llama-3.1-70B config.json, as core/presets/models.toml).
LAYERS, HIDDEN, HEADS, KV_HEADS, FFN, VOCAB = 80, 8192, 64, 8, 28672, 128256


@dataclass(frozen=True)
class Row:
    tool: str
    setting: str
    ttft_s: float
    tpot_s: float
    total_s: float
    cpu_s_per_call: float


def cpu_per_call(call: Callable[[], object], repeat: int = 5) -> float:
    """CPU seconds of one call, best of `repeat` (a shared machine's other jobs only add to it)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def ours(engine: str) -> Row:
    scenario = Scenario.from_flat({**SCENARIO, "engine": engine})
    result = estimate(scenario)
    return Row(
        "this project", engine, result.ttft_s, result.tpot_s, result.total_s, cpu_per_call(lambda: estimate(scenario))
    )


def llm_analysis() -> Row:
    from llm_analysis.analysis import LLMAnalysis
    from llm_analysis.config import ModelConfig, ParallelismConfig, get_dtype_config_by_name, get_gpu_config_by_name

    model = ModelConfig(
        name="llama-3.1-70b",
        num_layers=LAYERS,
        n_head=HEADS,
        hidden_dim=HIDDEN,
        vocab_size=VOCAB,
        max_seq_len=131072,
        num_key_value_heads=KV_HEADS,
        ffn_embed_dim=FFN * 3 // 2,  # SwiGLU's three matrices as two (see the docstring)
        expansion_ratio=FFN * 3 / 2 / HIDDEN,
        model_type="llama",
    )
    analysis = LLMAnalysis(
        model,
        get_gpu_config_by_name("h100-sxm-80gb"),
        get_dtype_config_by_name("w8a8e16"),
        ParallelismConfig(tp_size=GPUS),
    )

    def run() -> dict[str, float]:
        return analysis.inference(
            batch_size_per_gpu=1,
            seq_len=PROMPT_TOKENS,
            num_tokens_to_generate=OUTPUT_TOKENS,
            kv_cache_dtype_bytes=2,
        )

    summary = run()
    return Row(
        "llm-analysis 0.2.2",
        "defaults (efficiency 1)",
        summary["prefill_latency"],
        summary["decode_latency"],
        summary["total_latency"],
        cpu_per_call(run),
    )


def genz() -> Row:
    from GenZ import decode_moddeling, prefill_moddeling

    common = {
        "model": "meta-llama/Llama-3.1-70B",
        "batch_size": 1,
        "input_tokens": PROMPT_TOKENS,
        "system_name": "H100_GPU",
        "bits": "fp8",
        "tensor_parallel": GPUS,
    }

    def run() -> tuple[float, float]:
        prefill = prefill_moddeling(**common)
        decode = decode_moddeling(**common, output_tokens=OUTPUT_TOKENS, Bb=1)
        return prefill["Latency"] / 1e3, decode["Latency"] / 1e3  # GenZ reports milliseconds

    ttft, tpot = run()
    return Row(
        "GenZ (genz-llm 0.0.16)",
        "defaults (efficiency 1)",
        ttft,
        tpot,
        ttft + OUTPUT_TOKENS * tpot,
        cpu_per_call(run),
    )


def quietly(peer: Callable[[], Row]) -> Row | str:
    """A peer's row, its chatter (logging, prints, warnings) kept off the table; or why it did not run."""
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            return peer()
    except ImportError as missing:
        return f"not installed ({missing.name}): `make peers` installs requirements-peers.txt"
    finally:
        logging.disable(logging.NOTSET)


def main() -> None:
    print(
        f"Llama 3.1 70B on {GPUS}× H100 SXM, fp8 weights and maths, {PROMPT_TOKENS:,}-token prompt, "
        f"{OUTPUT_TOKENS:,}-token reply, batch 1"
    )
    print(f"{'tool':<24} {'setting':<24} {'TTFT':>10} {'TPOT':>10} {'total':>10} {'CPU per call':>14}")
    rows: list[Row | str] = [ours("ideal"), ours("typical"), ours("vllm")]
    rows += [quietly(llm_analysis), quietly(genz)]
    names = ["", "", "", "llm-analysis", "GenZ"]
    for name, row in zip(names, rows, strict=True):
        if isinstance(row, str):
            print(f"{name:<24} {row}")
            continue
        print(
            f"{row.tool:<24} {row.setting:<24} {row.ttft_s * 1e3:>7.1f} ms {row.tpot_s * 1e3:>7.2f} ms "
            f"{row.total_s:>8.2f} s {row.cpu_s_per_call * 1e3:>11.3f} ms"
        )


if __name__ == "__main__":
    main()
