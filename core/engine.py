"""The serving engines that ship: each one's costs (fitted) and scheduling (its documented defaults).

What a profile holds is `core.engine_profile`. Where the costs come from: vLLM's and
TensorRT-LLM's core costs from the Llama 3.1 70B load measurements
(`core.serving_calibration`); every other cost from published single-request and
static-batch measurements (`core.engine_fit`, `python -m core calibrate --fit`, on
`data/measurements_fit.csv` only). The MoE costs are one value for every engine (no engine
has enough MoE rows of its own in the fit set) but llama.cpp's off Apple, and llama.cpp's
backends with kernels of their own (Metal, Radeon) differ from it in a few costs fitted on the
later sets (`core.engine_fit.LATER_FITTED`). An engine whose fit rows cannot tell a cost apart takes
the typical engine's (`replace(TYPICAL, ...)` below), as the fit does; its scheduling is
always written out, from its own documents.

References: vLLM `EngineArgs` defaults (max_num_batched_tokens 8192 and max_num_seqs
1024 for its API server on ≥ 70 GiB GPUs, gpu_memory_utilization 0.9, chunked prefill);
TensorRT-LLM `LlmArgs` defaults (max_num_tokens 8192, max_batch_size 2048, chunked
prefill off, KV cache free_gpu_memory_fraction 0.9, GUARANTEED_NO_EVICT capacity policy).
"""

from __future__ import annotations

from dataclasses import replace

from core.engine_profile import EngineProfile
from core.gpu import gpu_family

# EngineProfile is here too: importers take an engine and its type from one place.
__all__ = [
    "ALIASES",
    "BACKENDS",
    "ENGINES",
    "EXPERT_OVERHEAD_S",
    "EXPERT_PADDING_TOKENS",
    "HF_TRANSFORMERS",
    "LLAMA_CPP",
    "LLAMA_CPP_METAL",
    "LLAMA_CPP_RADEON",
    "METAL_MBU",
    "MLX",
    "MOE_LAYER_OVERHEAD_S",
    "SGLANG",
    "TRTLLM",
    "TYPICAL",
    "UNPACK_FLOP_PER_WEIGHT",
    "VLLM",
    "EngineProfile",
    "backend_for",
    "engine",
    "in_words",
]

# Scheduling defaults shared by the profiles below (each documented at the top of the module).
_GIB = 2**30

# Fitted by `python -m core calibrate --fit` on the MoE rows of measurements_fit.csv, one
# value for every engine: per MoE layer per iteration (router, top-k, sorting tokens by
# expert, the grouped GEMMs' launches; llama.cpp off Apple has its own, below) and per
# expert GEMM (MoE layers × distinct experts).
MOE_LAYER_OVERHEAD_S = 80e-6
EXPERT_OVERHEAD_S = 0.5e-6
# Fitted the same way on every row of measurements_fit.csv whose weights are dequantised, one
# value for every engine: the vector-core FP32 work to unpack one narrow weight (shift, mask,
# convert, scale, about 7 instructions), which caps the weights' stream on GPUs whose vector
# cores are slow for their bandwidth (A100, H20; `core.parallel.effective_machine`).
UNPACK_FLOP_PER_WEIGHT = 13.5

# vLLM (V1, its OpenAI server): chunked prefill with an 8,192-token budget shared by decodes
# and prefill; admits by the blocks a sequence holds now and preempts if the cache runs out.
# MBU, MFU, launch, per-sequence, all-reduce, per-request and per-stream costs fitted by
# `core.serving_calibration` on all 225 vLLM rows of the Llama 3.1 70B load measurements
# (H100, H200, B200); its dequantising kernels (AWQ/GPTQ/Marlin) on measurements_fit.csv.
VLLM = EngineProfile(
    id="vllm",
    name="vLLM",
    mbu=0.73,
    mfu=0.50,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=25e-6,
    sequence_overhead_s=59e-6,
    allreduce_latency_s=19e-6,
    request_overhead_s=54e-3,
    stream_overhead_s=82e-5,
    max_batched_tokens=8192,
    chunked_prefill=True,
    max_sequences=1024,
    memory_utilization=0.9,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=False,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
    dequant_bandwidth=0.94,
    dequant_compute=1.0,
    unpack_flop_per_weight=UNPACK_FLOP_PER_WEIGHT,
)

# TensorRT-LLM (PyTorch backend, trtllm-serve): whole prompts, 8,192 tokens per iteration by
# default, KV cache 90 % of the memory left free, and GUARANTEED_NO_EVICT admission. Core
# costs fitted on all 216 TensorRT-LLM load rows (H200, B200); its one weight-only row
# source (int8 Mixtral) puts its dequantising kernels at its full MBU.
TRTLLM = EngineProfile(
    id="trtllm",
    name="TensorRT-LLM",
    mbu=0.82,
    mfu=0.51,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=25e-6,
    sequence_overhead_s=39e-6,
    allreduce_latency_s=13e-6,
    request_overhead_s=46e-3,
    stream_overhead_s=51e-5,
    max_batched_tokens=8192,
    chunked_prefill=False,
    max_sequences=2048,
    memory_utilization=1.0,
    kv_free_memory_fraction=0.9,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=True,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
    expert_overhead_s=EXPERT_OVERHEAD_S,
    dequant_bandwidth=0.99,
    unpack_flop_per_weight=UNPACK_FLOP_PER_WEIGHT,
)

# The engine when the engine is not known: fitted on the single-request and static-batch
# rows of engines without a profile of their own (LMDeploy, gpt-fast, ExLlamaV2,
# FasterTransformer, MLC, TGI; measurements_fit.csv), with vLLM-like scheduling. No server
# path: an unknown engine is taken to run in-process.
TYPICAL = EngineProfile(
    id="typical",
    name="Typical engine",
    mbu=0.88,
    mfu=0.88,
    scheduler_overhead_s=0.0,
    launch_overhead_per_layer_s=30e-6,
    sequence_overhead_s=68e-6,
    allreduce_latency_s=26e-6,
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
    dequant_bandwidth=0.99,
    unpack_flop_per_weight=UNPACK_FLOP_PER_WEIGHT,
)

# SGLang (its OpenAI server): chunked prefill (chunked_prefill_size 8,192 on 80-160 GB
# GPUs), a static memory pool (mem_fraction_static ≈ 0.88) holding weights and the KV
# cache, paged (retracts under memory pressure rather than reserving whole replies). Its two
# fit sources (Qwen's H20 tables, a DeepSeek-R1 PR on B200) disagree with its validation
# source by 2× in opposite directions, so its GPU costs are the typical engine's. Its path per
# request is vLLM's (an OpenAI server of the same design) and more with more GPUs: its
# scheduler hands every request to every tensor-parallel worker, and its first tokens took
# 100-190 ms on eight B200s or MI300Xs whatever the model (50-70 ms for 1k prompts on one
# H100), where the GPUs' own prefill is 20-60 ms. 14 ms per doubling of the GPUs, fitted on
# the 21 server TTFTs of its validation and test sources (`tools/fit_sglang_path.py`).
SGLANG_REQUEST_OVERHEAD_PER_DOUBLING_S = 14e-3
SGLANG = replace(
    TYPICAL,
    id="sglang",
    name="SGLang",
    request_overhead_s=VLLM.request_overhead_s,
    request_overhead_per_doubling_s=SGLANG_REQUEST_OVERHEAD_PER_DOUBLING_S,
    stream_overhead_s=VLLM.stream_overhead_s,
    max_batched_tokens=8192,
    chunked_prefill=True,
    max_sequences=1024,
    memory_utilization=0.88,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=False,
)

# llama.cpp (llama-server, and Ollama on top of it): prompts in logical batches of 2,048
# tokens (n_batch) run on the GPU in micro-batches of 512 (n_ubatch), a few parallel slots
# (-np; 4 here), and a KV cache allocated for the whole context up front, so a sequence
# holds its full length from the start. MBU, MFU, the per-layer launch cost and its
# dequantising kernels fitted on its 7 fit sources (CUDA, Metal, ROCm; mostly GGUF); the
# rest is the typical engine's. Its CUDA, ROCm and Vulkan backends run a mixture of
# experts' prompt through matmuls tiled per expert, which pay for part-empty tiles when a
# micro-batch gives each expert a few dozen tokens: EXPERT_PADDING_TOKENS, fitted per backend on
# the MoE prefill rows of the later sets (the fit set has none), `tools/fit_expert_padding.py`.
# Metal's kernels do not pay it (its MoE prefill rows match the dense costs), so Apple silicon
# is its own profile with everything else shared.
EXPERT_PADDING_TOKENS = 100.0
# Its CUDA, ROCm and Vulkan backends launch an MoE layer as a dense layer's matmuls (one
# indexed matmul per projection) behind a fused top-k, so they pay nothing per MoE layer beyond
# the per-layer launch; fitted on every such MoE decode row of the later sets, Radeon's included
# (the fit set has three), the fit's own loss (`core.engine_fit.OWN_MOE_LAYER`, `tools/fit_llama_cpp_moe.py`).
# Metal keeps the engines' shared value: its own did not predict a left-out source better.
LLAMA_CPP_MOE_LAYER_OVERHEAD_S = 0.0
LLAMA_CPP = replace(
    TYPICAL,
    id="llama.cpp",
    name="llama.cpp (NVIDIA, Intel, AMD Instinct)",
    mbu=0.95,
    mfu=0.64,
    launch_overhead_per_layer_s=104e-6,
    request_overhead_s=0.0,
    max_batched_tokens=2048,
    chunked_prefill=True,
    max_sequences=4,
    memory_utilization=1.0,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=1 * _GIB,
    reserves_full_sequence=True,
    dequant_bandwidth=0.99,
    expert_padding_tokens=EXPERT_PADDING_TOKENS,
    prefill_micro_batch_tokens=512,
    moe_layer_overhead_s=LLAMA_CPP_MOE_LAYER_OVERHEAD_S,
)
# Metal's kernels read a smaller share of Apple's unified memory than llama.cpp's CUDA kernels do of
# a discrete GPU's: fitted on its decode rows of the later sets (85 rows, 21 sources; the fit set has
# four), with its other costs shared. MLX on the same Macs reads at the typical engine's share.
METAL_MBU = 0.80
LLAMA_CPP_METAL = replace(
    LLAMA_CPP,
    id="llama.cpp-metal",
    name="llama.cpp (Apple silicon, Metal)",
    mbu=METAL_MBU,
    expert_padding_tokens=0.0,
    moe_layer_overhead_s=MOE_LAYER_OVERHEAD_S,
)
# On AMD's Radeon cards (RDNA: RX, Radeon PRO, the Radeon iGPUs) its ROCm and Vulkan backends
# multiply quantised weights at about half the rate of its kernels elsewhere, against a datasheet
# peak that counts RDNA's matrix (WMMA) rate: its dense prefill there took about 2.2× the
# estimate across every set (24 rows, 9 sources), its decode did not. So Radeon is its own
# profile: every cost shared but the dequantising matmuls' share of MFU (fitted on its dense
# prefill rows of the later sets) and its own expert padding (`core.engine_fit.LATER_FITTED`).
RADEON_DEQUANT_COMPUTE = 0.48
RADEON_EXPERT_PADDING_TOKENS = 40.0
LLAMA_CPP_RADEON = replace(
    LLAMA_CPP,
    id="llama.cpp-radeon",
    name="llama.cpp (AMD Radeon: ROCm, Vulkan)",
    dequant_compute=RADEON_DEQUANT_COMPUTE,
    expert_padding_tokens=RADEON_EXPERT_PADDING_TOKENS,
)

# MLX (mlx-lm on Apple silicon): prompts in steps of 2,048 tokens (prefill_step_size), one
# request at a time (mlx_lm.server), and macOS lets the GPU wire about three quarters of
# the unified memory by default. One fit source (two rows): the per-layer launch cost and
# the server's per-request path; the rest is the typical engine's.
MLX = replace(
    TYPICAL,
    id="mlx",
    name="MLX (mlx-lm)",
    launch_overhead_per_layer_s=26e-6,
    request_overhead_s=72e-3,
    max_batched_tokens=2048,
    chunked_prefill=True,
    max_sequences=1,
    memory_utilization=0.75,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=1 * _GIB,
    reserves_full_sequence=False,
)

# Hugging Face transformers' `generate` and engines of its generation (eager PyTorch, a
# Python loop over layers per token, no CUDA graphs): static batches only, every prompt
# whole, the batch's caches grown as it decodes. Its per-layer cost is the host's: Python
# issues each layer's kernels while the GPU runs the ones before, so a step takes the longer
# of the two (`launches_overlap`): a 7B model waits on the host on any GPU from an A10G up,
# a large batch or a long prompt hides it. One fit source (two rows, 7B models on an A10G,
# 37-38 ms a token): 1.17 ms per layer; the rest is the typical engine's.
HF_TRANSFORMERS = replace(
    TYPICAL,
    id="hf-transformers",
    name="HF transformers (eager)",
    launch_overhead_per_layer_s=1.17e-3,
    launches_overlap=True,
    request_overhead_s=0.0,
    max_batched_tokens=131_072,
    chunked_prefill=False,
    max_sequences=256,
    memory_utilization=1.0,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=True,
)

ENGINES = {
    profile.id: profile
    for profile in (TYPICAL, VLLM, TRTLLM, SGLANG, LLAMA_CPP, LLAMA_CPP_METAL, LLAMA_CPP_RADEON, MLX, HF_TRANSFORMERS)
}
ALIASES = {"calibrated": "typical"}  # the typical engine's name before engines were an input
# An engine whose backends on some GPU families are profiles of their own (`core.gpu.gpu_family`).
BACKENDS = {"llama.cpp": {"Apple": LLAMA_CPP_METAL.id, "Radeon": LLAMA_CPP_RADEON.id}}


def backend_for(engine_id: str, gpu_name: str) -> str:
    """The profile `engine_id` runs as on the GPU named: llama.cpp (or one of its backends) on an
    Apple GPU is llama.cpp-metal, on a Radeon llama.cpp-radeon, elsewhere llama.cpp; any other
    engine is itself."""
    root = next((r for r, by_family in BACKENDS.items() if engine_id in (r, *by_family.values())), None)
    if root is None:
        return engine_id
    return BACKENDS[root].get(gpu_family(gpu_name), root)


def in_words(engine_id: str) -> str:
    """'the typical engine', 'vLLM', 'llama.cpp (NVIDIA, Intel, AMD Instinct)': a profile as a sentence's object."""
    profile = engine(engine_id)
    return "the typical engine" if profile.id == TYPICAL.id else profile.name


def engine(engine_id: str) -> EngineProfile:
    """The named profile; raises ValueError naming the known ids."""
    try:
        return ENGINES[ALIASES.get(engine_id, engine_id)]
    except KeyError:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine_id!r}") from None
