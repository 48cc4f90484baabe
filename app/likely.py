"""The engine and the likely ranges as the pages show them: the words, and the band under the latency line.

`core.ranges.likely_range` gives every estimate a range, the ideal machine's included (as
"extrapolated"). The pages show none for ideal physics: it is the lesson's calculation, reproduced
to the digit, not a prediction of a real server, and no measurement was ever taken of it. Every
engine's estimate gets core's range beside its headline numbers, with its confidence in words.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from app import formatting as fmt
from app.figures import Numbers
from core.efficiency import IDEAL, efficiency_base
from core.engine import ALIASES, ENGINES, in_words
from core.estimate import Estimate
from core.parallel import Machine, unpacking_bytes_per_s
from core.ranges import COVERAGE, EXTRAPOLATION_WIDENING, LikelyRange, likely_range, spread
from core.scenario import Scenario

REGIME_WORDS = {
    "batch 1": "at batch 1",
    "batch > 1": "at batches above 1",
    "MoE": "on mixtures of experts",
    "eager": "where the host launches every kernel",
}
NO_RANGE = (
    "Ideal physics (the lesson's machine: datasheet peaks, nothing added) is a calculation, reproduced to the "
    "digit, not a prediction of a real server: no likely range. Pick an engine under 'Self-hosting' in the "
    "sidebar for estimates with one."
)


DOES_NOT_RUN = (
    "It does not fit in memory (said above): these are the times the physics gives as if it did, not what any "
    "server would run, so they carry no likely range."
)


def shown_range(est: Estimate) -> LikelyRange | None:
    """core's likely range for the estimate; None on ideal physics (see the module's docstring) or for a setup
    that does not fit (a range says where real servers land, and none runs it)."""
    return None if is_ideal(est.scenario) or not est.memory.fits else likely_range(est)


def is_ideal(scenario: Scenario) -> bool:
    return scenario.efficiency.label == IDEAL.label


def engine_name(scenario: Scenario) -> str:
    """'vLLM', 'the typical engine', 'ideal physics': the engine in words, as a sentence's object."""
    label = scenario.efficiency.label
    if label == IDEAL.label:
        return "ideal physics"
    return in_words(label) if ALIASES.get(label, label) in ENGINES else "a custom engine"


def efficiency_edited(scenario: Scenario) -> bool:
    """Whether the efficiency numbers differ from the engine's own for this model (sidebar edits)."""
    label = scenario.efficiency.label
    if label != IDEAL.label and ALIASES.get(label, label) not in ENGINES:
        return True
    base = efficiency_base(label, scenario.model)
    return replace(base, label=label) != scenario.efficiency


def engine_phrase(scenario: Scenario) -> str:
    """'vLLM (MBU 73.0%, MFU 50.0%)': the engine and the share of the datasheet it reaches."""
    e = scenario.efficiency
    if is_ideal(scenario) and not efficiency_edited(scenario):
        return "ideal physics (MBU = MFU = 100%, nothing added)"
    edited = ", your edited numbers" if efficiency_edited(scenario) else ""
    # On a GPU whose kernels sustain less than an H100's, say what reaches the datasheet in all: "bandwidth 88%
    # of an H100's" read as the A100 having 88% of an H100's bandwidth (it has 61%).
    gpu = scenario.gpu
    on = (
        f"; in all {fmt.percent(e.mbu * gpu.sustained_bandwidth_share)} of this GPU's datasheet bandwidth and "
        f"{fmt.percent(e.mfu * gpu.sustained_compute_share)} of its compute"
        if _derated(scenario)
        else ""
    )
    if scenario.machine.host_time_s:  # an eager engine's pace is its host's: its GPU shares alone would flatter it
        return (
            f"{engine_name(scenario)} (the host's {_host_per_layer(scenario)} a layer of launches; on the GPU MBU "
            f"{fmt.percent(e.mbu)}, MFU {fmt.percent(e.mfu)}{edited}{on})"
        )
    return f"{engine_name(scenario)} (MBU {fmt.percent(e.mbu)}, MFU {fmt.percent(e.mfu)}{edited}{on})"


def _host_per_layer(scenario: Scenario) -> str:
    """'1.17 ms': an eager engine's launches per layer, from the scenario (the fit's, or the user's own)."""
    return fmt.ms(scenario.machine.host_time_s / (scenario.model.layers or 1), 2)


def _derated(scenario: Scenario) -> bool:
    """True when an engine runs on a GPU whose kernels sustain less than the reference H100 (the ideal never is)."""
    gpu = scenario.gpu
    return not scenario.efficiency.is_ideal and (gpu.sustained_bandwidth_share, gpu.sustained_compute_share) != (1, 1)


def _shares(scenario: Scenario) -> str:
    """'85.0% of an H100's fraction for bandwidth and 64.0% for compute': the GPU's sustained shares that are not 1,
    said as fractions of an H100's ("bandwidth 88% of an H100's" read as the A100 having 88% of an H100's
    bandwidth: it has 61%)."""
    gpu = scenario.gpu
    parts = [(what, share) for what, share in (
        ("bandwidth", gpu.sustained_bandwidth_share), ("compute", gpu.sustained_compute_share)
    ) if share != 1]  # fmt: skip
    said = [f"{fmt.percent(share)} of an H100's fraction for {what}" if i == 0 else f"{fmt.percent(share)} for {what}"
            for i, (what, share) in enumerate(parts)]  # fmt: skip
    return " and ".join(said)


def roofline_engine_line(scenario: Scenario, machine: Machine) -> str:
    """The roofline page's sentence on the engine: which one, and how much of the datasheet its kernels reach."""
    e = scenario.efficiency
    if is_ideal(scenario) and not efficiency_edited(scenario):
        return "The engine is **ideal physics**: MBU = MFU = 100%, so the roof below is the datasheet's own."
    edited = " (your edited numbers)" if efficiency_edited(scenario) else ""
    derated = _derated(scenario)
    bandwidth, compute = (
        ("the memory bandwidth", "the compute") if derated else ("the datasheet's memory bandwidth", "its compute")
    )
    sustains = " that this GPU sustains" if derated else ""
    line = (
        f"The engine is **{engine_name(scenario)}**{edited}: its kernels reach {fmt.percent(e.mbu)} of {bandwidth} "
        f"(MBU) and {fmt.percent(e.mfu)} of {compute} (MFU){sustains}, so its roof (solid) sits under the "
        "datasheet's (dotted)."
    )
    shares = [f"{what} {fmt.percent(share)} of that {of}" for what, share, of in (
        ("their reads reach", e.dequant_bandwidth, "bandwidth"), ("their maths", e.dequant_compute, "compute")
    ) if share != 1]  # fmt: skip
    if machine.dequantised and shares:
        bits = f"{scenario.precision.narrowest_weight_bits:g}"
        line += f" These {bits}-bit weights are unpacked inside the matmul: {' and '.join(shares)}."
    line += _unpacking_note(scenario, machine)
    return line + (_sustained_note(scenario) if derated else "")


def _unpacking_note(scenario: Scenario, machine: Machine) -> str:
    """' Unpacking caps them: …' when the vector cores stream the weights slower than the kernel reads them, else ''."""
    e, gpus = scenario.efficiency, scenario.workload.gpu_count
    unpacked = unpacking_bytes_per_s(scenario.gpu, gpus, e, scenario.precision)
    read = machine.bandwidth_bytes_per_s * e.dequant_bandwidth
    vector = scenario.gpu.vector_flops_per_s
    if not machine.dequantised or unpacked is None or vector is None or unpacked >= read:
        return ""
    return (
        f" Unpacking caps them: at {e.unpack_flop_per_weight:g} FLOP a weight on its vector cores "
        f"({fmt.tflops(vector * gpus)} FP32), "
        f"they stream at {fmt.bandwidth(unpacked)}, not {fmt.bandwidth(read)}."
    )


def _sustained_note(scenario: Scenario) -> str:
    """' In microbenchmarks this GPU's kernels sustain a smaller fraction of their datasheet than an H100's: …':
    its shares, and the engine's in all."""
    gpu, e = scenario.gpu, scenario.efficiency
    return (
        " In microbenchmarks this GPU's kernels sustain a smaller fraction of their datasheet than an H100's: "
        f"{_shares(scenario)}; in all, "
        f"{fmt.percent(e.mbu * gpu.sustained_bandwidth_share)} of the datasheet's bandwidth and "
        f"{fmt.percent(e.mfu * gpu.sustained_compute_share)} of its compute."
    )


def confidence_words(scenario: Scenario, rng: LikelyRange) -> str:
    """'calibrated on vLLM measurements at batch 1', or why the range is extrapolated (and wider)."""
    name = engine_name(scenario)
    who = "typical-engine" if name == "the typical engine" else name
    where = REGIME_WORDS.get(rng.regime, f"in this regime ({rng.regime})")
    if rng.confidence == "calibrated":
        words = f"calibrated on {who} measurements {where}"
    else:
        words = (
            f"extrapolated: no measurements of {name} {where}, so the range is "
            f"{EXTRAPOLATION_WIDENING:g}× wider on each side"
        )
    if efficiency_edited(scenario):
        words += " (measured on the engine's own efficiency numbers, not your edits)"
    return words


def range_note(scenario: Scenario, rng: LikelyRange | None, fits: bool = True) -> str:
    """The caption under the headline numbers: what 'likely' means, how sure it is, or why there is none."""
    if not fits:
        return DOES_NOT_RUN
    if rng is None:
        return NO_RANGE
    # An eager engine's range is its own regime's (core.ranges.regime), sized on eager rows alone.
    host = (
        " This engine's steps wait on its host's kernel launches, whose speed depends on the host's CPU "
        f"(measured hosts launch a layer in about 0.45-1.2 ms; here {_host_per_layer(scenario)}), so its "
        "range is sized on eager engines' measurements alone: on a fast host a token may take "
        f"{math.exp(spread(scenario, 'tpot').low):.2f}× the estimate."
        if scenario.machine.host_time_s
        else ""
    )
    return (
        f"Likely: where about {COVERAGE:.0%} of real measurements of this kind fall, sized on published "
        f"measurements the model was never fitted on; {confidence_words(scenario, rng)}. Real servers mostly run "
        f"slower than the model, so the ranges reach further up than down.{host}"
    )


def latency_summary(scenario: Scenario, est: Estimate, rng: LikelyRange | None) -> str:
    """The latency page's line on the engine and the reply's likely total, or why there is no range."""
    out = fmt.count(scenario.workload.output_tokens)
    if not est.memory.fits:
        return DOES_NOT_RUN
    if rng is None:
        return NO_RANGE if not efficiency_edited(scenario) else f"Engine: {engine_phrase(scenario)}. {NO_RANGE}"
    total = fmt.duration_range(rng.total_low_s, rng.total_high_s)
    rate = fmt.tokens_per_s_range(rng.output_tokens_per_s_low, rng.output_tokens_per_s_high)
    return (
        f"Engine: {engine_phrase(scenario)}. At M = {out}, total {fmt.duration(est.total_s)} (likely {total}), "
        f"output {fmt.tokens_per_s(est.output_tokens_per_s)} (likely {rate}): the shaded band on the chart. "
        f"{range_note(scenario, rng)}"
    )


def metric_help(scenario: Scenario, rng: LikelyRange) -> str:
    """A headline metric's tooltip: the same, in two sentences."""
    words = confidence_words(scenario, rng)
    return (
        f"Likely range: where about {COVERAGE:.0%} of real measurements of this kind fall. "
        f"{words[0].upper()}{words[1:]}; engine: {engine_phrase(scenario)}."
    )


def latency_band(est: Estimate, latency_s: Numbers) -> tuple[np.ndarray, np.ndarray] | None:
    """Total latency's likely low and high (s) at M = 0 and at each length of `latency_s` (the model's line).

    core's total range at every M: TTFT × e^(its spread) + the decode steps (line − TTFT) ×
    e^(TPOT's spread), each at its own bound; at the scenario's own M it is `likely_range`'s
    total. None on ideal physics.
    """
    if shown_range(est) is None:
        return None
    ttft, tpot = spread(est.scenario, "ttft"), spread(est.scenario, "tpot")
    decode = np.concatenate([[0.0], np.asarray(latency_s, dtype=float) - est.ttft_s])
    low = est.ttft_s * math.exp(ttft.low) + decode * math.exp(tpot.low)
    high = est.ttft_s * math.exp(ttft.high) + decode * math.exp(tpot.high)
    return low, high
