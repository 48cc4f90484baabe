"""One Scenario: everything an estimate depends on, as one frozen value.

The app's sidebar builds it, the URL encodes it, the CLI parses it and every page reads
it. Its flat form (`core.flat`) is a `{str: str}` dict with short keys in the units people
read, the shape of a URL query string; `Scenario.from_flat(s.to_flat()) == s` for every
valid scenario, exactly. A model or GPU travels as the preset it starts from plus the
numbers that differ from it (`model=llama-3.1-8b&layers=40`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core import flat, presets
from core.efficiency import default_efficiency
from core.engine import ENGINES, TYPICAL, EngineProfile, engine
from core.parallel import Machine, effective_machine
from core.replica import Replica
from core.specs import CUSTOM_ID, GPU, Efficiency, Model, Precision, Pricing, Workload

# Placeholders meaning "the default for this GPU" and "the model's weights as released"; neither
# outlives Scenario construction.
AUTO = Efficiency(label="auto")
AS_RELEASED = Precision()


@dataclass(frozen=True, slots=True)
class Scenario:
    """Model on GPUs at a precision and efficiency, serving a workload at a price."""

    model: Model = field(default_factory=lambda: presets.model(presets.TOY_MODEL_ID))
    gpu: GPU = field(default_factory=lambda: presets.gpu(presets.TOY_GPU_ID))
    # AS_RELEASED resolves on construction: the model's release precision (DeepSeek-V3: FP8).
    precision: Precision = field(default_factory=lambda: AS_RELEASED)
    # AUTO resolves on construction: ideal on the lesson's toy GPU, calibrated on real ones.
    efficiency: Efficiency = field(default_factory=lambda: AUTO)
    workload: Workload = field(default_factory=Workload)
    pricing: Pricing = field(default_factory=Pricing)

    def __post_init__(self) -> None:
        if self.precision is AS_RELEASED:
            object.__setattr__(self, "precision", presets.release_precision(self.model.id))
        if self.efficiency is AUTO:
            object.__setattr__(self, "efficiency", default_efficiency(self.gpu.id, self.model))
        for kind, spec_id, known in (
            ("model", self.model.id, presets.model_presets()),
            ("gpu", self.gpu.id, presets.gpu_presets()),
        ):
            if spec_id != CUSTOM_ID and spec_id not in known:
                raise ValueError(f"{kind} must be a preset id or 'custom', got {spec_id!r}")

        self.gpu.peak_flops_per_s(self.precision.math_bits)  # 4-bit maths needs 4-bit tensor cores
        if self.precision.expert_weight_bits is not None and not self.model.is_moe:  # read nowhere: said
            raise ValueError(f"ebits: {self.model.name} has no experts (only a mixture of experts has); leave it empty")

    @property
    def machine(self) -> Machine:
        """The tensor-parallel group this scenario runs on, derated by its efficiency."""
        micro = self.engine.prefill_micro_batch_tokens
        return effective_machine(self.gpu, self.workload.gpu_count, self.efficiency, self.precision, micro)

    @property
    def engine(self) -> EngineProfile:
        """The serving engine whose scheduling the load model uses (the typical one for ideal physics)."""
        return engine(self.efficiency.label) if self.efficiency.label in ENGINES else TYPICAL

    def replica(self) -> Replica:
        """One replica of this scenario for the load model: its engine's scheduling, its own efficiency."""
        w = self.workload
        return Replica(self.model, self.precision, self.gpu, w.gpu_count, self.engine, efficiency=self.efficiency)

    @property
    def model_is_edited(self) -> bool:
        """True when the model's numbers differ from the preset (or custom base) it starts from."""
        return self.model != presets.model_base(self.model.id)

    @property
    def gpu_is_edited(self) -> bool:
        return self.gpu != presets.gpu_base(self.gpu.id)

    @classmethod
    def lesson(cls) -> Scenario:
        """The lesson's Part 3 long reply: toy 7B fp16 on the toy GPU, ideal, 200 → 500 tokens."""
        return cls()

    def to_flat(self, minimal: bool = False) -> dict[str, str]:
        """The flat form; `minimal` keeps only what differs from the lesson's scenario (a short link)."""
        return flat.to_flat(self, minimal)

    @classmethod
    def from_flat(cls, values: Mapping[str, str]) -> Scenario:
        """Parse the flat form; missing keys take the lesson's defaults. Raises ValueError naming the key."""
        result: Scenario = flat.from_flat(values, cls)
        return result
