"""What a scenario cannot do, in words: setups that do not fit, prompts past the context window.

The estimate still runs for such scenarios (people explore beyond the edge); these checks
say why a number is missing or what it extrapolates, for the CLI and the app to show.
"""

from __future__ import annotations

from typing import Literal

from core import presets
from core.candidates import attention_heads, split_problem, splits_evenly
from core.engine import ENGINES, backend_for
from core.gpu import gpu_family
from core.lengths import RequestLengths
from core.memory import MemoryPlan
from core.replica import fit_problem
from core.scenario import Scenario
from core.units import BYTES_PER_GB


def _gb(value_bytes: float) -> str:
    return f"{value_bytes / BYTES_PER_GB:,.1f} GB"


def memory_problem(scenario: Scenario, plan: MemoryPlan) -> str | None:
    """Why the batch cannot run on these GPUs (weights + KV caches over memory), or None when it fits.

    Example: Llama 3.1 70B in 16-bit on one A100 80GB, batch 1, 700 tokens → "Llama 3.1 70B
    at batch 1 does not fit on 1 × NVIDIA A100 80GB SXM: it needs 141.3 GB (weights 141.1 GB
    + KV cache 0.2 GB), the GPUs hold 80.0 GB; the weights alone do not fit".
    """
    if plan.fits:
        return None
    work = scenario.workload
    message = (
        f"{scenario.model.name} at batch {work.batch_size:,} does not fit on {work.gpu_count} × "
        f"{scenario.gpu.name}: it needs {_gb(plan.required_bytes)} (weights {_gb(plan.weight_bytes)} + "
        f"KV cache {_gb(plan.kv_cache_bytes)}), the GPUs hold {_gb(plan.available_bytes)}"
    )
    shortfall = memory_shortfall(plan)
    if shortfall == "weights":
        return message + "; the weights alone do not fit"
    if shortfall == "sequence":
        return message + f"; not one sequence of {work.sequence_tokens:,} tokens fits beside the weights"
    return message + f"; at most {plan.max_batch_that_fits:,} sequences of {work.sequence_tokens:,} tokens fit"


def memory_shortfall(plan: MemoryPlan) -> Literal["weights", "sequence", "batch"] | None:
    """What does not fit, which decides what helps: None (it fits); "weights" (they alone overflow:
    no batch or length helps); "sequence" (the weights fit, one sequence's KV cache does not fit
    beside them); "batch" (some sequences fit, not this many)."""
    if plan.fits:
        return None
    if plan.weight_bytes > plan.available_bytes:
        return "weights"
    return "batch" if plan.max_batch_that_fits else "sequence"


def context_window_tokens(scenario: Scenario) -> int | None:
    """The model preset's documented context window; None for custom models and the toy."""
    preset = presets.model_presets().get(scenario.model.id)
    return None if preset is None else preset.context_tokens


def context_problems(scenario: Scenario) -> tuple[str, ...]:
    """Warnings when a sequence outgrows the model's documented context window (empty when none).

    Not an error: people explore beyond the window, and the physics still runs; the
    estimate then extrapolates past what the model supports. Example: a 1,000,000-token
    prompt for Llama 3.1 8B → "1,000,000 prompt + 500 reply = 1,000,500 tokens per
    sequence exceed Llama 3.1 8B's documented context window of 131,072 tokens ...".
    """
    window = context_window_tokens(scenario)
    work = scenario.workload
    if window is None or work.sequence_tokens <= window:
        return ()
    return (
        f"{work.prompt_tokens:,} prompt + {work.output_tokens:,} reply = {work.sequence_tokens:,} tokens per "
        f"sequence exceed {scenario.model.name}'s documented context window of {window:,} tokens: "
        "the model does not support it, and these figures extrapolate past it",
    )


_FAMILY_NAMES = {"Apple": "Apple silicon", "Radeon": "AMD's Radeon cards", "": "this GPU"}


def backend_problems(scenario: Scenario) -> tuple[str, ...]:
    """A note when the engine runs as another of its profiles on this GPU (`core.engine.backend_for`).

    Not an error: a link or `--engine` takes the id as written. Example: llama.cpp on the M2 Ultra
    preset → "on Apple silicon llama.cpp runs as engine llama.cpp-metal; these figures use engine
    llama.cpp's costs, fitted for NVIDIA, Intel, AMD Instinct".
    """
    label = scenario.efficiency.label
    if label not in ENGINES:
        return ()
    expected = backend_for(label, scenario.gpu.name)
    if expected == label:
        return ()
    where = _FAMILY_NAMES[gpu_family(scenario.gpu.name)]
    fitted_for = ENGINES[label].name.partition(" (")[2].rstrip(")")
    return (
        f"on {where} {ENGINES[label].name.partition(' (')[0]} runs as engine {expected}; these figures use "
        f"engine {label}'s costs, fitted for {fitted_for}",
    )


def tensor_parallel_problems(scenario: Scenario) -> tuple[str, ...]:
    """A warning when the GPU count does not split the model's attention heads evenly (empty when it does).

    Not an error: the physics runs (each GPU holds the busiest share, `core.memory.kv_replication`),
    but vLLM, SGLang and TensorRT-LLM refuse such a size. Example: Llama 3.1 70B (64 query heads, 8
    KV heads) on 3 GPUs → "... do not split evenly over 3 GPUs ...: 1, 2, 4, 8 or 16 GPUs do".
    """
    model, n = scenario.model, scenario.workload.gpu_count
    shape = attention_heads(model)
    if n > 1 and not model.has_attention_shape:  # the lesson's toy: nothing to split by, nothing to all-reduce
        return (
            f"{model.name} has no attention shape, so its {n:,} GPUs split every step perfectly, with no all-reduce "
            "between them: no real server scales so; pick a real model to see tensor parallel's costs",
        )
    if n == 1 or shape is None or split_problem(model, n) is None:
        return ()
    query, kv = shape
    sizes = [str(k) for k in range(1, 17) if splits_evenly(query, kv, k)]
    heads = f"{query:,} query heads" + ("" if kv is None else f" and {kv:,} KV heads")
    allowed = f"{', '.join(sizes[:-1])} or {sizes[-1]} GPUs do" if len(sizes) > 1 else "only 1 GPU does"
    return (
        f"{model.name}'s {heads} do not split evenly over {n:,} GPUs: vLLM, SGLang and TensorRT-LLM refuse "
        f"this tensor-parallel size (these figures give each GPU the busiest share); {allowed}",
    )


def engine_memory_problems(scenario: Scenario, plan: MemoryPlan) -> tuple[str, ...]:
    """A warning when one request fits the GPUs' memory but not the share its engine uses (empty otherwise).

    The static estimate asks whether weights and KV caches fit in the datasheet's memory (the
    lesson's physics); a server first keeps some for itself — vLLM 10 % and about 3 GB of
    activations and CUDA graphs per GPU — and the Capacity plan sizes fleets on what is left.
    Without this the Overview said "fits" where the plan said "does not fit". Example: Llama
    3.1 70B in 8 bits (70.55 GB) on one H100 80 GB under the typical engine → "... fits the
    80.0 GB of 1 × NVIDIA H100 SXM 80GB, but not what a server leaves itself: 70.5 GB of weights
    fill the 68.8 GB the typical engine may use on 1 × 80 GB; ..."."""
    if scenario.efficiency.label not in ENGINES or not scenario.model.has_attention_shape:
        return ()  # the lesson's ideal physics, or its toy: nothing a server keeps for itself
    w = scenario.workload
    if not plan.max_batch_that_fits:
        return ()  # not even the datasheet's memory holds one request: memory_problem says so
    replica = scenario.replica()
    lengths = RequestLengths.of(w)
    if replica.max_concurrency_that_fits(lengths) > 0:
        return ()
    return (
        f"{scenario.model.name} fits the {_gb(plan.available_bytes)} of {w.gpu_count:,} × {scenario.gpu.name}, but "
        f"not what a server leaves itself: {fit_problem(replica, lengths)}; a real server would "
        "not start it, and the Capacity plan counts it as not fitting",
    )


def attention_problems(scenario: Scenario) -> tuple[str, ...]:
    """A warning when the query heads are not a whole number of groups per KV head (empty when they are).

    Not an error: the physics runs on the shape as given, but no grouped-query model is built so, and
    an engine would refuse it. Example: Llama 3.1 8B with 9 KV heads → "32 query heads cannot be grouped
    over 9 KV heads ...: 1, 2, 4, 8, 16 or 32 KV heads can"."""
    model = scenario.model
    query, kv = model.query_heads, model.kv_heads
    if query is None or kv is None or query % kv == 0:
        return ()
    can = [str(k) for k in range(1, query + 1) if query % k == 0]
    return (
        f"{model.name}'s {query:,} query heads cannot be grouped over {kv:,} KV heads: grouped-query attention "
        f"gives each KV head the same number of query heads, so {', '.join(can[:-1])} or {can[-1]} KV heads can",
    )


# Where an engine runs, from its own documentation: MLX on Apple silicon alone; vLLM, SGLang and
# TensorRT-LLM not on Apple's GPUs; TensorRT-LLM on NVIDIA's alone.
_RUNS_ON = {
    "mlx": (lambda family, name: family == "Apple", "MLX runs on Apple silicon alone, and {gpu} is not"),
    **{
        engine_id: (
            lambda family, name: family != "Apple",
            f"{words} does not run on Apple silicon's GPUs, and {{gpu}} is one",
        )
        for engine_id, words in (("vllm", "vLLM"), ("sglang", "SGLang"))
    },
    "trtllm": (
        lambda family, name: name.startswith("NVIDIA"),
        "TensorRT-LLM runs on NVIDIA GPUs alone, and {gpu} is not one",
    ),
}


def hardware_problems(scenario: Scenario) -> tuple[str, ...]:
    """A warning when the engine does not run on this GPU preset at all (empty otherwise, and for a custom GPU).

    Example: MLX on an H100 → "MLX runs on Apple silicon alone, and NVIDIA H100 SXM 80GB is not: these are
    its costs on hardware it cannot use"."""
    label, gpu = scenario.efficiency.label, scenario.gpu
    if label not in _RUNS_ON or gpu.id not in presets.gpu_presets():
        return ()
    runs, sentence = _RUNS_ON[label]
    if runs(gpu_family(gpu.name), gpu.name):
        return ()
    return (f"{sentence.format(gpu=gpu.name)}: these are its costs on hardware it cannot use",)


def scenario_problems(scenario: Scenario) -> tuple[str, ...]:
    """Every warning about the scenario itself, for the CLI: the context window, the shape, the tensor-parallel
    split, the engine's hardware, the backend."""
    return (
        *context_problems(scenario),
        *attention_problems(scenario),
        *tensor_parallel_problems(scenario),
        *hardware_problems(scenario),
        *backend_problems(scenario),
    )
