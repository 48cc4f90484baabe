"""The deployments a plan compares: GPU × GPUs per replica × weight precision, on the scenario's engine.

Precision mapping (weights asked for → what runs):
- 16 → 16-bit weights and maths (bf16).
- 8 → 8-bit weights and maths, W8A8: fp8 on GPUs that have it, int8 on the others (A100,
  A10G, TPU v5e: their 8-bit peak is the int8 one).
- 4 → on a GPU with a 4-bit tensor-core peak (B200), NVFP4: 4-bit values plus one 8-bit
  scale per 16 = 4.5 bits stored, maths at 4 bits; on every other GPU, int4 weight-only
  (AWQ/GPTQ with group scales, 4.5 bits stored) dequantised to 16-bit maths.
The KV cache keeps the scenario's bits in every case.

A scenario whose experts are stored narrower than its other weights (gpt-oss as shipped: MXFP4
experts, 4.25 bits, beside bf16 attention, router and embeddings) keeps that split at 4: its
experts at their own 4-bit width, the rest at the scenario's, the maths as above. Re-quantising
gpt-oss's attention to 4 bits is nobody's deployment, and reading it at 4.5 bits made the
120b's decode read 3.2 GB a token where the checkpoint reads 6.2. At 16 and 8 every weight
takes the width, as for any model.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import presets
from core.plan_spec import Plan
from core.scenario import Scenario
from core.specs import GPU, Model, Precision

NVFP4_BITS = 4.5  # 4 bits + one fp8 scale per 16 values
INT4_BITS = 4.5  # 4 bits + fp16 scale and zero point per 128-value group (4.25), rounded up as the README does


@dataclass(frozen=True, slots=True)
class Setup:
    """One candidate deployment unit: a replica of `gpus_per_replica` GPUs at one precision."""

    gpu: GPU
    gpus_per_replica: int
    weight_bits: int  # as asked: 16, 8 or 4
    precision: Precision

    @property
    def precision_name(self) -> str:
        """'16-bit', '8-bit', '4-bit NVFP4', '4-bit int4' (weight-only) or '16-bit (experts 4.25-bit)'."""
        if self.precision.expert_weight_bits is not None:
            return self.precision.weights_words
        if self.weight_bits == 4:
            return "4-bit NVFP4" if self.precision.math_bits == 4 else "4-bit int4"
        return f"{self.weight_bits}-bit"

    @property
    def label(self) -> str:
        """'H200, TP 2, 8-bit'."""
        return f"{self.gpu.name}, TP {self.gpus_per_replica}, {self.precision_name}"


def expert_split(precision: Precision) -> Precision | None:
    """The scenario's weights when its experts are stored narrower than the rest (what a 4-bit
    candidate keeps, `setup_precision`), else None: the only part of its precision a plan reads
    besides the KV cache's bits."""
    experts = precision.expert_weight_bits
    if experts is None or experts >= precision.weight_bits:
        return None
    return Precision(precision.weight_bits, precision.kv_bits, expert_weight_bits=experts)


def setup_precision(gpu: GPU, weight_bits: int, kv_bits: float, split: Precision | None = None) -> Precision:
    """The precision a weight width runs at on `gpu` (see the module docstring); `split` the scenario's,
    whose narrower experts a 4-bit candidate keeps.

    Example: 4 on a B200 → Precision(4.5, kv, compute_bits=4); on an H100 → (4.5, kv, 16); for
    gpt-oss as shipped (16, experts 4.25) on an H100 → (16, kv, 16, experts 4.25).
    """
    if weight_bits == 4:
        bits, maths = (NVFP4_BITS, 4) if gpu.peak_flops_4bit_per_s is not None else (INT4_BITS, 16)
        split = None if split is None else expert_split(split)
        if split is not None:
            experts = split.expert_bits
            own = experts if experts <= bits else bits  # MXFP4's 4.25 as shipped; wider experts become 4-bit
            return Precision(split.weight_bits, kv_bits, compute_bits=maths, expert_weight_bits=own)
        return Precision(weight_bits=bits, kv_bits=kv_bits, compute_bits=maths)
    return Precision(weight_bits=float(weight_bits), kv_bits=kv_bits, compute_bits=weight_bits)


def candidate_gpus(scenario: Scenario, spec: Plan) -> tuple[GPU, ...]:
    """The GPUs to try, in the plan's order (or preset order); the scenario's GPU replaces its preset.

    Default (an empty list): every preset with a rental price, plus the scenario's GPU when it
    has a price — so giving the sidebar's GPU a price puts it in the running.
    """
    own = scenario.gpu

    def chosen(gpu_id: str) -> GPU:
        return own if gpu_id == own.id else presets.gpu(gpu_id)

    if spec.gpu_ids:
        return tuple(chosen(gpu_id) for gpu_id in spec.gpu_ids)
    ids = [gpu_id for gpu_id in presets.gpu_presets() if chosen(gpu_id).price_usd_per_hour is not None]
    if own.price_usd_per_hour is not None and own.id not in ids:
        ids.append(own.id)
    return tuple(chosen(gpu_id) for gpu_id in ids)


def setups(scenario: Scenario, spec: Plan) -> tuple[Setup, ...]:
    """Every GPU × tensor-parallel size × weight precision, GPU first, then size, then precision."""
    kv_bits = scenario.precision.kv_bits
    return tuple(
        Setup(gpu, n, bits, setup_precision(gpu, bits, kv_bits, scenario.precision))
        for gpu in candidate_gpus(scenario, spec)
        for n in spec.tensor_parallel
        for bits in spec.weight_bits
    )


def splits_evenly(query_heads: int, kv_heads: int | None, gpu_count: int) -> bool:
    """Whether the serving engines accept this tensor-parallel size: it divides the query heads, and
    it divides the KV heads or they divide it (vLLM's, SGLang's and TensorRT-LLM's own check).
    kv_heads None: latent attention, one latent every head reads, whatever the split."""
    kv_ok = kv_heads is None or kv_heads % gpu_count == 0 or gpu_count % kv_heads == 0
    return query_heads % gpu_count == 0 and kv_ok


def attention_heads(model: Model) -> tuple[int, int | None] | None:
    """(query heads, KV heads; None for a latent cache) as the split sees them; None without an attention shape."""
    if not model.has_attention_shape or model.query_heads is None:
        return None
    return model.query_heads, None if model.kv_latent_dim is not None else (model.kv_heads or 1)


def split_problem(model: Model, gpus_per_replica: int) -> str | None:
    """Why a model cannot be split over this many GPUs, or None (`splits_evenly`).

    Engines split attention by head, so the heads must divide evenly (vLLM refuses
    otherwise); a model without an attention shape (the lesson's toy) splits any way.
    Example: Gemma 2 9B's 16 heads over 8 GPUs → fine; over 3 → not.
    """
    heads = attention_heads(model)
    if heads is None or splits_evenly(*heads, gpus_per_replica):
        return None
    query, kv = heads
    if query % gpus_per_replica:
        return f"{gpus_per_replica} GPUs cannot split the model's {query} query heads evenly"
    return f"{gpus_per_replica} GPUs cannot split the model's {kv} KV heads evenly"
