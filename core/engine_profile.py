"""What a serving engine is to the model: its costs and its scheduling, in SI units.

An engine turns the roofline into wall-clock time in two ways.

Its **costs**: kernels reach a share of the datasheet bandwidth and maths (MBU, MFU), and
dequantising kernels (weights stored narrower than the maths: int4 AWQ/GPTQ, GGUF) a
share of those, streaming the weights no faster than the GPU's vector cores unpack
them; every iteration pays a launch cost per layer (the kernels, or CUDA-graph
nodes, it launches scale with the layers), a mixture of experts more per MoE layer
(router, top-k, sorting tokens by expert) and a little per expert GEMM it runs, and
kernels that tile each expert's tokens pay for part-empty tiles in a prompt's expert
matmuls (padding tokens per expert per micro-batch); under
tensor parallelism it pays an all-reduce latency twice per layer; every running sequence
costs a little per iteration (sampling, detokenising, block-table bookkeeping); and every
request pays once for the way in and out of the server (HTTP, tokenising the prompt,
handing it to the engine loop, streaming the first token back).
An engine that launches every kernel from Python (eager PyTorch: HF transformers) pays its
per-layer cost on the host, which runs ahead of the GPU: its iterations take the longer of
the host's launches and the GPU's work, not their sum (`launches_overlap`).

Its **scheduling**: how many tokens one iteration may carry, whether a long prompt is
chunked over several iterations, how many sequences may run at once, how much memory it
gives the KV cache, whether it admits a request only when its whole reply is guaranteed
to fit, and whether it holds prompts back to prefill them in bigger batches.

Relation to `Efficiency`: a profile flattens to one `Efficiency` for a given model
(`profile.efficiency(model)`): step overhead = scheduler + per-layer cost × layers + per
MoE-layer cost × layers of a mixture of experts; the other knobs map one to one. So
`phases`, `estimate` and everything else in core run unchanged on an engine. The engines
that ship, and where their numbers come from, are `core.engine`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from core.fields import inputs, own_bounds
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
    # Per pass, the tokens of maths each touched expert's prompt matmul pays beyond its own
    # (tiled kernels running part-empty), and the prompt tokens one pass carries on the GPU.
    expert_padding_tokens: float = 0.0
    prefill_micro_batch_tokens: int = 0  # llama.cpp's n_ubatch; 0: the whole chunk in one pass
    dequant_bandwidth: float = 1.0  # share of MBU its dequantising kernels reach (weight-only int4, GGUF)
    dequant_compute: float = 1.0  # share of MFU its dequantising matmuls reach
    # Vector-core FP32 work to unpack one narrow weight: caps the weights' stream where those cores are slow.
    unpack_flop_per_weight: float = 0.0
    # Under load, per request already in flight, added to a new request's TTFT: its first token goes
    # out through the server loop that streams every other request's tokens (the load model only).
    stream_overhead_s: float = 0.0
    # Each time the tensor-parallel GPUs double, added to the path per request: a server whose
    # scheduler hands every request to every GPU's worker (`Efficiency.request_path_s`).
    request_overhead_per_doubling_s: float = 0.0
    # The host issues each iteration's kernels while the GPU runs the ones before (eager PyTorch,
    # no CUDA graphs): the launches overlap the GPU's work, and an iteration takes the longer.
    launches_overlap: bool = False

    def __post_init__(self) -> None:
        check_text("engine id", self.id, 40)
        check_text("engine name", self.name)
        # The costs an Efficiency also holds, against its described ranges (one place each).
        for name, low, high in _SHARED_COSTS:
            check_number(name, getattr(self, name), low, high)
        check_number("scheduler_overhead_s", self.scheduler_overhead_s, 0, 1)
        check_number("launch_overhead_per_layer_s", self.launch_overhead_per_layer_s, 0, 0.01)
        check_int("max_batched_tokens", self.max_batched_tokens, 16, 10_000_000)
        check_int("max_sequences", self.max_sequences, 1, min(self.max_batched_tokens, 1_000_000))
        check_number("memory_utilization", self.memory_utilization, 0.05, 1)
        check_number("kv_free_memory_fraction", self.kv_free_memory_fraction, 0.05, 1)
        check_number("reserved_bytes_per_gpu", self.reserved_bytes_per_gpu, 0, 1e12)
        check_int("prefill_batch_wait_iterations", self.prefill_batch_wait_iterations, 0, 10_000)
        check_number("moe_layer_overhead_s", self.moe_layer_overhead_s, 0, 0.01)
        check_int("prefill_micro_batch_tokens", self.prefill_micro_batch_tokens, 0, self.max_batched_tokens)

    def step_overhead_s(self, model: Model | None = None) -> float:
        """Fixed cost of one iteration: scheduler + per-layer launches × layers (+ routing × MoE layers).

        What an engine launches scales with the layers, and a mixture of experts launches
        more per layer (the router, top-k, sorting tokens by expert, grouped GEMMs).
        Examples: 40 µs per layer on Llama 3.1 70B (80 layers) → 3.2 ms per iteration; the
        typical engine (30 µs per layer, 75 µs more per MoE layer) on Mixtral 8x7B (32 layers)
        → 32 × 105 µs = 3.36 ms. A model without an attention shape (the lesson's toy) has no
        layers to count.
        """
        layers = 0 if model is None else model.layers or 0
        routed = layers if model is not None and model.is_moe else 0
        total = (
            self.scheduler_overhead_s + self.launch_overhead_per_layer_s * layers + self.moe_layer_overhead_s * routed
        )
        # To the picosecond: 48 × (92 + 75) µs sums to 0.008015999999999998 in binary, which the
        # sidebar (showing the exact value) would print as 8.015999999999998 ms.
        return round(total, 12)

    def efficiency(self, model: Model | None = None) -> Efficiency:
        """This engine's costs as the `Efficiency` the rest of core understands, for `model`.

        None: a model without layers (the lesson's toy), whose step pays the scheduler only.
        """
        return Efficiency(
            label=self.id,
            mbu=self.mbu,
            mfu=self.mfu,
            step_overhead_s=self.step_overhead_s(model),
            launches_overlap=self.launches_overlap,
            sequence_overhead_s=self.sequence_overhead_s,
            allreduce_latency_s=self.allreduce_latency_s,
            request_overhead_s=self.request_overhead_s,
            request_overhead_per_doubling_s=self.request_overhead_per_doubling_s,
            stream_overhead_s=self.stream_overhead_s,
            expert_overhead_s=self.expert_overhead_s,
            expert_padding_tokens=self.expert_padding_tokens,
            dequant_bandwidth=self.dequant_bandwidth,
            dequant_compute=self.dequant_compute,
            unpack_flop_per_weight=self.unpack_flop_per_weight,
        )


# The costs a profile hands to its `Efficiency` one to one (`EngineProfile.efficiency`), with
# the bounds Efficiency describes for them: (name, low, high).
_SHARED_COSTS = tuple(
    (name, *own_bounds(described_input))
    for name, described_input in inputs(Efficiency)
    if name in {f.name for f in fields(EngineProfile)} and described_input.kind is float
)
