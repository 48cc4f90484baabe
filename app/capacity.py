"""The capacity plan for this run's scenario, shared by the pages that show it (plan, bill, compare).

The plan's inputs are page inputs (`app.page_inputs`: the targets and candidates, in the
link); pages that do not draw them get their values as held, else their defaults. The
search runs on real GPUs, so when the sidebar's automatic engine resolves to the lesson's
ideal physics (the toy GPU), it runs on the typical engine instead, and says so.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app import compute, page_inputs
from app.likely import engine_name
from core.compare import fleet_engine_id
from core.efficiency import efficiency_base
from core.load import Load
from core.plan import CapacityPlan
from core.plan_spec import WEIGHT_BITS_CHOICES, Plan
from core.scenario import Scenario

PLAN_PAGE = "app/app_pages/plan.py"  # for st.page_link (relative to the entry script)


def searched(scenario: Scenario) -> tuple[Scenario, str]:
    """The scenario the search runs on (`core.compare.fleet_engine_id`, told whether the sidebar's engine
    was chosen), and which engine that is in words."""
    engine_id = fleet_engine_id(scenario, engine_chosen=st.session_state.get("engine", "auto") != "auto")
    if engine_id != scenario.efficiency.label:  # the automatic ideal physics: the typical engine instead
        typical = replace(scenario, efficiency=efficiency_base(engine_id, scenario.model))
        return typical, (
            "the typical engine (the sidebar's automatic choice is the lesson's ideal physics, which no real "
            "server reaches)"
        )
    return scenario, f"{engine_name(scenario)} (the sidebar's)"  # "vLLM", not "the vllm engine"


def current_plan(scenario: Scenario) -> tuple[CapacityPlan, str, list[str]]:
    """(the plan, the engine it ran on in words, warnings about the plan's inputs)."""
    flat = page_inputs.flat_of("plan")
    spec, warnings = Plan.read_flat(flat)
    load, more = Load.read_flat(flat)
    run_on, engine = searched(scenario)
    return compute.cached_plan(run_on, spec, load.lengths(run_on.workload)), engine, warnings + more


def precision_note(scenario: Scenario, result: CapacityPlan) -> str | None:
    """When the plan's cheapest fleet stores its weights at another width than the sidebar's, say so.

    The search tries every width in its list; a reader who set 16-bit in the sidebar should not miss that
    the cheapest fleet quantises the model (or that it keeps more bits than the sidebar's)."""
    best, bits = result.best, scenario.precision.weight_bits
    if best is None or best.setup.weight_bits == bits:
        return None
    quality = (
        " Fewer bits per weight can cost some answer quality, which this tool does not measure."
        if best.setup.weight_bits < bits
        else ""
    )
    keep = (
        f" To keep {bits:g}-bit, list only it under 'Weight precisions'." if f"{bits:g}" in WEIGHT_BITS_CHOICES else ""
    )
    return (
        f"The plan's weights are {best.setup.precision_name}, not the sidebar's {bits:g}-bit: it tries each "
        f"precision in its list.{quality}{keep}"
    )
