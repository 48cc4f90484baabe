"""Serving engines: what a real server adds to the roofline, per engine, in SI units.

An engine turns the roofline into wall-clock time in two ways.

Its **costs**: kernels reach a share of the datasheet bandwidth and maths (MBU, MFU), and
dequantising kernels (weights stored narrower than the maths: int4 AWQ/GPTQ, GGUF) a
share of those; every iteration pays a launch cost per layer (the kernels, or CUDA-graph
nodes, it launches scale with the layers), a mixture of experts more per MoE layer
(router, top-k, sorting tokens by expert) and a little per expert GEMM it runs; under
tensor parallelism it pays an all-reduce latency twice per layer; every running sequence
costs a little per iteration (sampling, detokenising, block-table bookkeeping); and every
request pays once for the way in and out of the server (HTTP, tokenising the prompt,
handing it to the engine loop, streaming the first token back).

Its **scheduling**: how many tokens one iteration may carry, whether a long prompt is
chunked over several iterations, how many sequences may run at once, how much memory it
gives the KV cache, whether it admits a request only when its whole reply is guaranteed
to fit, and whether it holds prompts back to prefill them in bigger batches.

Relation to `Efficiency`: a profile flattens to one `Efficiency` for a given model
(`profile.efficiency(model)`): step overhead = scheduler + per-layer cost × layers + per
MoE-layer cost × layers of a mixture of experts; the other knobs map one to one. So
`phases`, `estimate` and everything else in core run unchanged on an engine.

Where the costs come from: vLLM's and TensorRT-LLM's core costs from the Llama 3.1 70B
load measurements (`core.serving_calibration`); every other cost from published
single-request and static-batch measurements (`core.calibration`, `python -m core
calibrate --fit`, on `data/measurements_fit.csv` only). The MoE costs are one value for
every engine (no engine has enough MoE rows of its own).

References: vLLM `EngineArgs` defaults (max_num_batched_tokens 8192 and max_num_seqs
1024 for its API server on ≥ 70 GiB GPUs, gpu_memory_utilization 0.9, chunked prefill);
TensorRT-LLM `LlmArgs` defaults (max_num_tokens 8192, max_batch_size 2048, chunked
prefill off, KV cache free_gpu_memory_fraction 0.9, GUARANTEED_NO_EVICT capacity policy).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.specs import Efficiency, Model
from core.validation import check_int, check_number, check_text


@dataclass(frozen=True, slots=True)
class EngineProfile:
    """One serving engine's costs (fitted) and scheduling (its documented defaults)."""

    id: str
    name: str
    mbu: float
    mfu: float
    scheduler_overhead_s: float  # per iteration, whatever the model
    launch_overhead_per_layer_s: float  # per iteration per layer: what the engine launches
    sequence_overhead_s: float  # per running sequence per iteration
    allreduce_latency_s: float  # per all-reduce (two per layer under tensor parallelism)
    request_overhead_s: float  # once per request, added to its TTFT: the API server's path
    max_batched_tokens: int  # tokens one iteration may carry: decodes + prefill
    chunked_prefill: bool  # False: a prompt is prefilled whole, in one iteration
    max_sequences: int  # running sequences at most (vLLM max_num_seqs, TRT-LLM max_batch_size)
    memory_utilization: float  # share of device memory the engine may use at all
    kv_free_memory_fraction: float  # share of what is left after weights and reserve given to KV
    reserved_bytes_per_gpu: float  # activations, CUDA graphs, the CUDA context
    reserves_full_sequence: bool  # admit only if prompt + whole reply fit (no preemption)
    prefill_batch_wait_iterations: int = 0  # TRT-LLM batch_wait_timeout_iters
    # Per iteration per mixture-of-experts layer, on top of the per-layer launches: routing
    # (gate, top-k, sorting tokens by expert) and the grouped expert GEMMs' fixed cost.
    moe_layer_overhead_s: float = 0.0
    expert_overhead_s: float = 0.0  # per expert GEMM per pass: MoE layers × distinct experts touched
    dequant_bandwidth: float = 1.0  # share of MBU its dequantising kernels reach (weight-only int4, GGUF)
    dequant_compute: float = 1.0  # share of MFU its dequantising matmuls reach

    def __post_init__(self) -> None:
        check_text("engine id", self.id, 40)
        check_text("engine name", self.name)
        check_number("mbu", self.mbu, 0.01, 1)
        check_number("mfu", self.mfu, 0.01, 1)
        check_number("scheduler_overhead_s", self.scheduler_overhead_s, 0, 1)
        check_number("launch_overhead_per_layer_s", self.launch_overhead_per_layer_s, 0, 0.01)
        check_number("sequence_overhead_s", self.sequence_overhead_s, 0, 0.01)
        check_number("allreduce_latency_s", self.allreduce_latency_s, 0, 0.1)
        check_number("request_overhead_s", self.request_overhead_s, 0, 10)
        check_int("max_batched_tokens", self.max_batched_tokens, 16, 10_000_000)
        check_int("max_sequences", self.max_sequences, 1, min(self.max_batched_tokens, 1_000_000))
        check_number("memory_utilization", self.memory_utilization, 0.05, 1)
        check_number("kv_free_memory_fraction", self.kv_free_memory_fraction, 0.05, 1)
        check_number("reserved_bytes_per_gpu", self.reserved_bytes_per_gpu, 0, 1e12)
        check_int("prefill_batch_wait_iterations", self.prefill_batch_wait_iterations, 0, 10_000)
        check_number("moe_layer_overhead_s", self.moe_layer_overhead_s, 0, 0.01)
        check_number("expert_overhead_s", self.expert_overhead_s, 0, 0.001)
        check_number("dequant_bandwidth", self.dequant_bandwidth, 0.01, 1)
        check_number("dequant_compute", self.dequant_compute, 0.01, 1)

    def step_overhead_s(self, model: Model | None = None) -> float:
        """Fixed cost of one iteration: scheduler + per-layer launches × layers (+ routing × MoE layers).

        What an engine launches scales with the layers, and a mixture of experts launches
        more per layer (the router, top-k, sorting tokens by expert, grouped GEMMs).
        Examples: 40 µs per layer on Llama 3.1 70B (80 layers) → 3.2 ms per iteration; the
        typical engine (34 µs per layer, 70 µs more per MoE layer) on Mixtral 8x7B (32 layers)
        → 32 × 104 µs = 3.328 ms. A model without an attention shape (the lesson's toy) has no
        layers to count.
        """
        layers = 0 if model is None else model.layers or 0
        routed = layers if model is not None and model.is_moe else 0
        return (
            self.scheduler_overhead_s + self.launch_overhead_per_layer_s * layers + self.moe_layer_overhead_s * routed
        )

    def efficiency(self, model: Model | None = None) -> Efficiency:
        """This engine's costs as the `Efficiency` the rest of core understands, for `model`.

        None: a model without layers (the lesson's toy), whose step pays the scheduler only.
        """
        return Efficiency(
            label=self.id,
            mbu=self.mbu,
            mfu=self.mfu,
            step_overhead_s=self.step_overhead_s(model),
            sequence_overhead_s=self.sequence_overhead_s,
            allreduce_latency_s=self.allreduce_latency_s,
            request_overhead_s=self.request_overhead_s,
            expert_overhead_s=self.expert_overhead_s,
            dequant_bandwidth=self.dequant_bandwidth,
            dequant_compute=self.dequant_compute,
        )


# Scheduling defaults shared by the profiles below (each documented at the top of the module).
_GIB = 2**30

# Fitted by `python -m core calibrate --fit` on every MoE row of measurements_fit.csv, one
# value for every engine: per MoE layer per iteration (router, top-k, sorting tokens by
# expert, the grouped GEMMs' launches) and per expert GEMM (MoE layers × distinct experts).
MOE_LAYER_OVERHEAD_S = 70e-6
EXPERT_OVERHEAD_S = 0.5e-6

# vLLM (V1, its OpenAI server): chunked prefill with an 8,192-token budget shared by decodes
# and prefill; admits by the blocks a sequence holds now and preempts if the cache runs out.
# MBU, MFU, launch, per-sequence, all-reduce and per-request costs fitted by
# `core.serving_calibration` on all 225 vLLM rows of the Llama 3.1 70B load measurements
# (H100, H200, B200); its dequantising kernels (AWQ/GPTQ/Marlin) on measurements_fit.csv.
VLLM = EngineProfile(
    id="vllm",
    name="vLLM",
    mbu=0.73,
    mfu=0.48,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=25e-6,
    sequence_overhead_s=59e-6,
    allreduce_latency_s=19e-6,
    request_overhead_s=62e-3,
    max_batched_tokens=8192,
    chunked_prefill=True,
    max_sequences=1024,
    memory_utilization=0.9,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=False,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
    dequant_bandwidth=0.76,
    dequant_compute=1.0,
)

# TensorRT-LLM (PyTorch backend, trtllm-serve): whole prompts, 8,192 tokens per iteration by
# default, KV cache 90 % of the memory left free, and GUARANTEED_NO_EVICT admission. Core
# costs fitted on all 216 TensorRT-LLM load rows (H200, B200); its one weight-only row
# source (int8 Mixtral) puts its dequantising kernels at 95 % of its MBU.
TRTLLM = EngineProfile(
    id="trtllm",
    name="TensorRT-LLM",
    mbu=0.83,
    mfu=0.47,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=26e-6,
    sequence_overhead_s=42e-6,
    allreduce_latency_s=13e-6,
    request_overhead_s=54e-3,
    max_batched_tokens=8192,
    chunked_prefill=False,
    max_sequences=2048,
    memory_utilization=1.0,
    kv_free_memory_fraction=0.9,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=True,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
    dequant_bandwidth=0.95,
)

# The engine when the engine is not known: fitted on the single-request and static-batch
# rows of engines without a profile of their own (LMDeploy, gpt-fast, ExLlamaV2,
# FasterTransformer, MLC, TGI; measurements_fit.csv), with vLLM-like scheduling. No server
# path: an unknown engine is taken to run in-process.
TYPICAL = EngineProfile(
    id="typical",
    name="Typical engine",
    mbu=0.82,
    mfu=0.88,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=34e-6,
    sequence_overhead_s=78e-6,
    allreduce_latency_s=18e-6,
    request_overhead_s=0.0,
    max_batched_tokens=8192,
    chunked_prefill=True,
    max_sequences=1024,
    memory_utilization=0.9,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=False,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
)

# SGLang (its OpenAI server): chunked prefill (chunked_prefill_size 8,192 on 80-160 GB
# GPUs), a static memory pool (mem_fraction_static ≈ 0.88) holding weights and the KV
# cache, paged (retracts under memory pressure rather than reserving whole replies). Its two
# fit sources (Qwen's H20 tables, a DeepSeek-R1 PR on B200) disagree with its validation
# source by 2× in opposite directions, so none of its costs is fitted: the typical
# engine's, with vLLM's per-request path (an OpenAI server of the same design).
SGLANG = EngineProfile(
    id="sglang",
    name="SGLang",
    mbu=TYPICAL.mbu,
    mfu=TYPICAL.mfu,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=TYPICAL.launch_overhead_per_layer_s,
    sequence_overhead_s=TYPICAL.sequence_overhead_s,
    allreduce_latency_s=TYPICAL.allreduce_latency_s,
    request_overhead_s=VLLM.request_overhead_s,
    max_batched_tokens=8192,
    chunked_prefill=True,
    max_sequences=1024,
    memory_utilization=0.88,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=False,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
)

# llama.cpp (llama-server, and Ollama on top of it): prompts in logical batches of 2,048
# tokens (n_batch), a few parallel slots (-np; 4 here), and a KV cache allocated for the
# whole context up front, so a sequence holds its full length from the start. MBU, MFU and
# the per-layer launch cost fitted on its 7 fit sources (CUDA, Metal, ROCm; mostly GGUF).
LLAMA_CPP = EngineProfile(
    id="llama.cpp",
    name="llama.cpp",
    mbu=0.95,
    mfu=0.64,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=92e-6,
    sequence_overhead_s=TYPICAL.sequence_overhead_s,
    allreduce_latency_s=TYPICAL.allreduce_latency_s,
    request_overhead_s=0.0,
    max_batched_tokens=2048,
    chunked_prefill=True,
    max_sequences=4,
    memory_utilization=1.0,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=1 * _GIB,
    reserves_full_sequence=True,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
    dequant_bandwidth=0.91,
)

# MLX (mlx-lm on Apple silicon): prompts in steps of 2,048 tokens (prefill_step_size), one
# request at a time (mlx_lm.server), and macOS lets the GPU wire about three quarters of
# the unified memory by default. One fit source (two rows): the per-layer launch cost and
# the server's per-request path; the rest is the typical engine's.
MLX = EngineProfile(
    id="mlx",
    name="MLX (mlx-lm)",
    mbu=TYPICAL.mbu,
    mfu=TYPICAL.mfu,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=20e-6,
    sequence_overhead_s=TYPICAL.sequence_overhead_s,
    allreduce_latency_s=TYPICAL.allreduce_latency_s,
    request_overhead_s=72e-3,
    max_batched_tokens=2048,
    chunked_prefill=True,
    max_sequences=1,
    memory_utilization=0.75,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=1 * _GIB,
    reserves_full_sequence=False,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
)

# Hugging Face transformers' `generate` and engines of its generation (eager PyTorch, a
# Python loop over layers per token, no CUDA graphs): static batches only, every prompt
# whole, the batch's caches grown as it decodes. One fit source (two rows): the per-layer
# launch cost, ~9× a CUDA-graph engine's; the rest is the typical engine's.
HF_TRANSFORMERS = EngineProfile(
    id="hf-transformers",
    name="HF transformers (eager)",
    mbu=TYPICAL.mbu,
    mfu=TYPICAL.mfu,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=294e-6,
    sequence_overhead_s=TYPICAL.sequence_overhead_s,
    allreduce_latency_s=TYPICAL.allreduce_latency_s,
    request_overhead_s=0.0,
    max_batched_tokens=131_072,
    chunked_prefill=False,
    max_sequences=256,
    memory_utilization=1.0,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=True,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
)

ENGINES = {profile.id: profile for profile in (TYPICAL, VLLM, TRTLLM, SGLANG, LLAMA_CPP, MLX, HF_TRANSFORMERS)}
ALIASES = {"calibrated": "typical"}  # the typical engine's name before engines were an input


def engine(engine_id: str) -> EngineProfile:
    """The named profile; raises ValueError naming the known ids."""
    try:
        return ENGINES[ALIASES.get(engine_id, engine_id)]
    except KeyError:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine_id!r}") from None
