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
from app import formatting as fmt
from app.likely import engine_name
from core.candidates import expert_split
from core.compare import fleet_engine_id
from core.efficiency import efficiency_base
from core.load import Load
from core.memory import weight_bytes
from core.plan import CapacityPlan
from core.plan_spec import WEIGHT_BITS_CHOICES, Plan
from core.scenario import Scenario


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
    best, mine = result.best, scenario.precision
    if best is None:
        return None
    chosen = best.setup.precision
    if (chosen.weight_bits, chosen.expert_bits) == (mine.weight_bits, mine.expert_bits):
        return None
    mixed = expert_split(mine) is not None  # gpt-oss as shipped: the 4-bit candidates keep its experts' split
    quality = (
        " Fewer bits per weight can cost some answer quality, which this tool does not measure."
        if chosen.expert_bits < mine.expert_bits or chosen.weight_bits < mine.weight_bits
        else ""
    )
    if mixed:
        # "16-bit, not the sidebar's 16-bit (experts 4.25-bit)" read as a contradiction: say what is stored.
        stored, shipped = weight_bytes(scenario.model, chosen), weight_bytes(scenario.model, mine)
        include = (
            "Its 4-bit candidates keep that split, and cost more here."
            if 4 in result.spec.weight_bits
            else "Its 4-bit candidates keep that split: add 4 under 'Weight precisions' to include them."
        )
        return (
            f"The plan's fleet stores every weight at {chosen.weight_bits:g} bits, the experts too "
            f"({fmt.gigabytes(stored)}), where the sidebar's model keeps its experts at {mine.expert_bits:g} bits "
            f"({fmt.gigabytes(shipped)}). {include}{quality}"
        )
    shown = f"{mine.weight_bits:g}"
    keep = f" To keep {shown}-bit, list only it under 'Weight precisions'." if shown in WEIGHT_BITS_CHOICES else ""
    return (
        f"The plan's weights are {best.setup.precision_name}, not the sidebar's {mine.weights_words}: it "
        f"tries each precision in its list, each for every weight.{quality}{keep}"
    )


def own_gpu_note(scenario: Scenario, result: CapacityPlan) -> str | None:
    """When the cheapest fleet is on another GPU than the sidebar's, the cheapest on the sidebar's too (or why none).

    An engineer who set 2 × H100 was told "8 × NVIDIA B200 … $13,839" with no word of the H100s, whose cheapest
    fleet ($41,958) sat at rank 9 of the table."""
    best, own = result.best, scenario.gpu
    if best is None or best.setup.gpu.id == own.id:
        return None
    mine = [o for o in result.ranked if o.setup.gpu.id == own.id]
    if mine:
        o = mine[0]
        tp = o.setup.gpus_per_replica
        shape = "each GPU a replica" if tp == 1 else f"{tp} GPUs per replica"
        return (
            f"On the sidebar's GPU, {own.name}: {fmt.plural(o.total_gpus_at_peak or 0, 'GPU')} at the peak ({shape}, weights in "
            f"{o.setup.precision_name}), {fmt.usd(o.monthly_cost_usd or 0.0)} a month autoscaled, "
            f"rank {result.ranked.index(o) + 1} of {len(result.ranked)}."
        )
    if any(o.setup.gpu.id == own.id for o in result.options):
        return f"On the sidebar's GPU, {own.name}, no fleet meets every target: its rows under 'Not ranked' say why."
    return f"The sidebar's GPU, {own.name}, is not among the candidates (it has no price, or is not in the list)."
