"""Serving engines: what a real server adds to the roofline, per engine, in SI units.

An engine turns the roofline into wall-clock time in two ways.

Its **costs**: kernels reach a share of the datasheet bandwidth and maths (MBU, MFU);
every iteration pays a launch cost per layer (the kernels, or CUDA-graph nodes, it
launches scale with the layers) plus a constant scheduler cost; under tensor parallelism
it pays an all-reduce latency twice per layer; every running sequence costs a little per
iteration (sampling, detokenising, block-table bookkeeping); and every request pays once
for the way in and out of the server (HTTP, tokenising the prompt, handing it to the
engine loop, streaming the first token back), which `estimate` does not count.

Its **scheduling**: how many tokens one iteration may carry, whether a long prompt is
chunked over several iterations, how many sequences may run at once, how much memory it
gives the KV cache, whether it admits a request only when its whole reply is guaranteed
to fit, and whether it holds prompts back to prefill them in bigger batches.

Relation to `Efficiency`: a profile flattens to one `Efficiency` for a given model
(`profile.efficiency(model)`): step overhead = scheduler + per-layer cost × layers, the
other knobs map one to one. So `phases`, `estimate` and everything else in core run
unchanged on an engine, and `TYPICAL` is exactly today's calibrated `Efficiency` with
engine-like scheduling defaults.

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

    def step_overhead_s(self, model: Model) -> float:
        """Fixed cost of one iteration: scheduler + per-layer launches × layers.

        Example: 40 µs per layer on Llama 3.1 70B (80 layers) → 3.2 ms per iteration.
        A model without an attention shape (the lesson's toy) has no layers to count.
        """
        return self.scheduler_overhead_s + self.launch_overhead_per_layer_s * (model.layers or 0)

    def efficiency(self, model: Model) -> Efficiency:
        """This engine's costs as the `Efficiency` the rest of core understands, for `model`."""
        return Efficiency(
            label=self.id,
            mbu=self.mbu,
            mfu=self.mfu,
            step_overhead_s=self.step_overhead_s(model),
            sequence_overhead_s=self.sequence_overhead_s,
            allreduce_latency_s=self.allreduce_latency_s,
        )


# Scheduling defaults shared by the profiles below (each documented at the top of the module).
_GIB = 2**30

# vLLM (V1, its OpenAI server): chunked prefill with an 8,192-token budget shared by decodes
# and prefill; admits by the blocks a sequence holds now and preempts if the cache runs out.
# Costs fitted by `core.serving_calibration` on all 225 vLLM rows of the Llama 3.1 70B load
# measurements (H100, H200, B200); held out, the same procedure scores as core/data/README.md says.
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
)

# TensorRT-LLM (PyTorch backend, trtllm-serve): whole prompts, 8,192 tokens per iteration by
# default, KV cache 90 % of the memory left free, and GUARANTEED_NO_EVICT admission. Costs
# fitted on all 216 TensorRT-LLM rows (H200, B200).
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
)

# The calibrated defaults: fitted by `python -m core calibrate --fit` on single-request and
# static-batch measurements of many engines (core/data/calibration_train.csv: 24 rows, 4
# sources), with vLLM-like scheduling: the engine when the engine is not known.
TYPICAL = EngineProfile(
    id="typical",
    name="Typical engine",
    mbu=0.85,
    mfu=0.56,
    scheduler_overhead_s=2.5e-3,
    launch_overhead_per_layer_s=0.0,
    sequence_overhead_s=14e-6,
    allreduce_latency_s=24e-6,
    request_overhead_s=0.0,  # so that at concurrency 1 the load model is `estimate` exactly
    max_batched_tokens=8192,
    chunked_prefill=True,
    max_sequences=1024,
    memory_utilization=0.9,
    kv_free_memory_fraction=1.0,
    reserved_bytes_per_gpu=3 * _GIB,
    reserves_full_sequence=False,
)

ENGINES = {profile.id: profile for profile in (TYPICAL, VLLM, TRTLLM)}
ALIASES = {"calibrated": "typical"}  # the typical engine's name before engines were an input


def engine(engine_id: str) -> EngineProfile:
    """The named profile; raises ValueError naming the known ids."""
    try:
        return ENGINES[ALIASES.get(engine_id, engine_id)]
    except KeyError:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine_id!r}") from None
