"""The efficiency a scenario starts from: the lesson's ideal machine, or a serving engine's costs.

An engine's costs (`core.engine`) flatten to one `Efficiency` for a given model (its
per-step cost counts the model's layers). `ideal` is MBU = MFU = 1 with nothing added:
the lesson's physics. The `typical` engine is the one for an engine not known, fitted by
`python -m core calibrate --fit` on `core/data/measurements_fit.csv` and judged on
measurements from other sources (see `core/data/README.md`).
"""

from __future__ import annotations

from core.engine import ALIASES, ENGINES, TYPICAL, engine
from core.specs import Efficiency, Model

IDEAL = Efficiency(
    label="ideal", mbu=1.0, mfu=1.0, step_overhead_s=0.0, sequence_overhead_s=0.0, allreduce_latency_s=0.0
)

# The typical engine's costs for a model without layers (the lesson's toy, or no model
# given): its per-layer and MoE costs count layers, so on a real model `efficiency_base`
# flattens them for that model. Fitted on measurements_fit.csv; see core/data/README.md.
CALIBRATED = TYPICAL.efficiency()

# What an efficiency can start from: the lesson's physics or an engine (the link's `engine=`).
BASES: tuple[str, ...] = (IDEAL.label, *ENGINES)


def efficiency_base(label: str, model: Model) -> Efficiency:
    """The named starting point for `model`: ideal, or an engine's costs flattened for it.

    Raises ValueError naming the known bases. Example: vLLM (25 µs per layer) for Llama 3.1
    70B (80 layers) → a 2.0 ms step overhead; for the toy model (no layers) → 0.
    """
    if label == IDEAL.label:
        return IDEAL
    if label not in ENGINES and label not in ALIASES:
        raise ValueError(f"engine must be one of auto, {', '.join(BASES)}, got {label!r}")
    return engine(label).efficiency(model)


def default_efficiency(gpu_id: str, model: Model | None = None) -> Efficiency:
    """Ideal only for the lesson's toy GPU; every real or custom GPU gets the typical engine's costs."""
    from core.presets import TOY_GPU_ID

    if gpu_id == TOY_GPU_ID:
        return IDEAL
    return CALIBRATED if model is None else efficiency_base(TYPICAL.id, model)
