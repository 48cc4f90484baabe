"""llm-serving-cost's cost model: the physics of serving an LLM, in SI units, stdlib + numpy only.

Start with `estimate(Scenario.lesson())`; see README.md "The model" for the equations.
"""

from core.estimate import Estimate, estimate
from core.scenario import Scenario
from core.specs import GPU, Efficiency, Model, Precision, Pricing, Workload

__all__ = ["GPU", "Efficiency", "Estimate", "Model", "Precision", "Pricing", "Scenario", "Workload", "estimate"]
