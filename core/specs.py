"""The inputs of every estimate, as frozen dataclasses in SI units, each field described once.

Every input field is written with `described(default, key=..., label=..., low=..., ...)`:
its bounds validate the spec, and the same description names the URL key, the sidebar
widget, the command-line flag and the README's option list (see `core.fields`). A bad
value raises ValueError naming the field, the value and the allowed range. Frozen specs
hash, so the app can cache on them. Bounds are generous physical limits: they exist so no
estimate overflows, underflows or divides by zero, not to second-guess users.

A preset's id stays on a spec whose numbers were edited: `Model(id="llama-3.1-8b",
layers=40, ...)` is Llama 3.1 8B with 40 layers, and its flat form is the id plus the
edited numbers. `custom` is the from-scratch base (the lesson's toy numbers).

Each spec lives in a module of its own (`core.gpu`, `core.model_spec`, `core.precision`,
`core.efficiency_spec`, `core.workload`, `core.pricing`); this module is the one place the
rest of the code and the app take them from, together.
"""

from __future__ import annotations

from core.efficiency_spec import Efficiency
from core.gpu import GPU
from core.model_spec import Model
from core.precision import Precision
from core.pricing import Pricing
from core.validation import MAX_TOKENS, NAME_CHARS
from core.workload import Workload

CUSTOM_ID = "custom"

__all__ = [
    "CUSTOM_ID",
    "GPU",
    "MAX_TOKENS",
    "NAME_CHARS",
    "Efficiency",
    "Model",
    "Precision",
    "Pricing",
    "Workload",
]
