"""The sidebar's words, without Streamlit: preset labels and sources, and the notes under inputs."""

from __future__ import annotations

import math
from dataclasses import replace

from app import formatting
from app.safe import plain
from core import presets
from core.checks import engine_memory_problems, memory_problem, memory_shortfall
from core.engine import BACKENDS, ENGINES
from core.memory import MemoryPlan, memory_plan, weight_bytes
from core.scenario import Scenario
from core.specs import CUSTOM_ID


def engine_caption(base: str) -> str:
    """The caption under an engine option (the options themselves travel in the link as ids)."""
    if base == "auto":
        return "ideal on the lesson's toy GPU, the typical engine on real ones"
    if base == "ideal":
        return "the lesson's physics: datasheet peaks, nothing added"
    profile = ENGINES[base]
    if base == "typical":
        return "costs fitted on published measurements of many engines"
    if base in BACKENDS:  # the sidebar moves it to its backend's profile on those GPUs
        return f"{profile.name}'s costs, fitted on measured servers; on Apple or Radeon GPUs, their backend's"
    return f"{profile.name}'s costs, fitted on measured servers"


SCENARIO_HIDDEN = (
    "The traffic, prices, model and GPU the other pages use are hidden here: this page always runs the "
    "lesson's toy machine. They keep their values, and a shared link shows them."
)
SCENARIO_NOT_HERE = (
    "The scenario below is the one the other pages use (from the link): this page always runs the lesson's "
    "toy machine, so editing it changes nothing here."
)
WEIGHT_FORMATS = {16: "fp16 / bf16", 8: "fp8 / int8", 4.5: "int4 with group scales (AWQ, GPTQ), MXFP4", 4: "NVFP4"}


def preset_label(kind: str, chosen: str) -> str:
    """What the model or GPU select shows: the preset's own name (its id goes in the tooltip)."""
    if chosen == CUSTOM_ID:
        return "Custom: from scratch, edit the numbers"
    return presets.model(chosen).name if kind == "model" else presets.gpu(chosen).name


def provenance(kind: str, chosen: str) -> str:
    """The select's tooltip: the preset's id and where its numbers come from (escaped: sources hold '*')."""
    if chosen == CUSTOM_ID:
        return "Custom: your own numbers, under 'Edit the numbers'."
    known = presets.model_presets() if kind == "model" else presets.gpu_presets()
    source = known[chosen].provenance
    estimated = " Compute figures estimated: the vendor publishes none." if source.estimated else ""
    where = f"Preset id `{chosen}` (`{kind}={chosen}` in a link)."
    return f"{where}\n\n" + plain(f"Source (checked {source.as_of}): {source.source}. {source.notes}{estimated}", 1500)


def bits_note(bits: float, release: str | None = None, experts_apart: bool = False) -> str:
    """'8 bits: fp8 / int8' — what a width usually is; or, at a model's release width other than bf16,
    how the model ships ('as the model ships: FP8 (e4m3) …'). `experts_apart`: the experts have their own
    width below, and "16 bits per weight … (4.46 bits per weight on average)" had read as a contradiction."""
    width = f"{bits:g} {'bit' if bits == 1 else 'bits'} per weight{' outside the experts' if experts_apart else ''}"
    if release and release != presets.BF16:
        return f"{width}, as the model ships: {release}."
    known = WEIGHT_FORMATS.get(bits)
    return width + (f": {known}." if known else ".")


def traffic_note(replies_per_day: float | None, days_per_month: int | None) -> str | None:
    """The traffic in words, with thousands separators (a number input cannot show them)."""
    if replies_per_day is None or days_per_month is None:
        return None
    return (
        f"{formatting.count(replies_per_day)} replies a day × {days_per_month} days = "
        f"{formatting.count(replies_per_day * days_per_month)} a month."
    )


def memory_warning(scenario: Scenario, plan: MemoryPlan) -> str | None:
    """What to change when weights + KV cache do not fit, or None when they do."""
    problem = memory_problem(scenario, plan)
    if problem is None:
        return None
    # Per GPU: with more GPUs than KV heads each holds a whole head, so KV does not split evenly.
    needed = math.ceil(plan.required_bytes / scenario.gpu.memory_bytes) if plan.kv_replication == 1 else None
    more = f"at least {needed:,} GPUs" if needed else "more GPUs"
    shortfall = memory_shortfall(plan)
    if shortfall == "weights":  # no batch or length helps
        fix = f"{more} or fewer bits per weight{_narrower_that_fits(scenario)}"
    elif shortfall == "sequence":  # a batch of 1 is already the least
        fix = f"{more}, fewer bits per KV value, or shorter sequences"
    else:
        fix = f"{more}, fewer bits per weight, or a batch of at most {plan.max_batch_that_fits:,}"
    return f"{sentence(problem)} Use {fix}."


_NARROWER = {8: "fp8 or int8", 4.5: "int4 AWQ/GPTQ or MXFP4"}


def narrower_bits_that_fit(scenario: Scenario) -> float | None:
    """The widest common width below the scenario's at which one request fits, and a server would start it.

    DeepSeek-V3 ships in fp8 and is served so on 8 × H200; at the sidebar's 16 bits it does not fit,
    and "fewer bits" alone leaves the reader to guess how many."""
    w, precision = scenario.workload, scenario.precision
    for bits in _NARROWER:
        if bits >= precision.weight_bits:
            continue
        narrower = replace(precision, weight_bits=bits, compute_bits=None)
        trial = memory_plan(scenario.model, narrower, scenario.gpu.memory_bytes, w.gpu_count, 1, w.sequence_tokens)
        # Only a width a server would start: 8-bit Llama 3.1 70B fits an A100's 80 GB, not vLLM's 68.8 GB of it.
        if trial.fits and not engine_memory_problems(replace(scenario, precision=narrower), trial):
            return bits
    return None


def _narrower_that_fits(scenario: Scenario) -> str:
    """': at 8 bits (fp8 or int8) the weights take 671.03 GB and one request fits', or ''."""
    bits = narrower_bits_that_fit(scenario)
    if bits is None:
        return ""
    narrower = replace(scenario.precision, weight_bits=bits, compute_bits=None)
    size = formatting.gigabytes(weight_bytes(scenario.model, narrower))
    return f": at {bits:g} bits ({_NARROWER[bits]}) the weights take {size} and one request fits"


def sentence(text: str) -> str:
    """A core message (lower case, no full stop) as a sentence on the page, shown as plain text."""
    return plain(text[0].upper() + text[1:], 400) + "."
