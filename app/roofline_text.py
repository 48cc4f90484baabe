"""The Roofline page's words under its chart: where each step sits, and why one sits under the roof.

A step sits on the roof, min(compute, bandwidth × intensity), when all it reads and multiplies
moves at the group's one rate; under it when part moves slower (`RooflinePoint.attained_flops_per_s`).
The page says which, for decode and for prefill, naming the slower rate.
"""

from __future__ import annotations

from app import formatting as fmt
from app.overview_text import fixed_costs_set_the_pace
from core.batching import BatchSweep
from core.estimate import Estimate
from core.phases import decode_step
from core.roofline import under_the_roof
from core.step_time import waits_on_host


def chart_caption(est: Estimate, table: BatchSweep, engine_name: str) -> str:
    """Where the chart's steps sit and why, the prefill's intensity and bound, and the fixed costs on top."""
    p, workload = est.prefill, est.scenario.workload
    under = _prefill_placement(est)
    fixed = est.decode.fixed_time_s
    fixed_costs = f": {fmt.rounded_duration(fixed)} per decode step on {engine_name} here" if fixed > 0 else ""
    # A step whose maths runs slower than the roof's rate turns compute-bound left of the page's ridge: say so
    # where the reader sees the contradiction (Qwen3-30B-A3B's prompt on an RTX 4090: 78.9 against 110).
    ridge = est.machine.balance_flop_per_byte
    early = (
        f" although left of the ridge ({fmt.flop_per_byte(ridge)})"
        if p.bound == "compute" and p.intensity_flop_per_byte < ridge
        else ""
    )
    text = (
        f"{_decode_placement(est, table, prefill_on_the_roof=not under)} "
        f"Prefill of {fmt.tokens(workload.prefill_tokens)} ({'the prompt' if workload.batch_size == 1 else 'the whole batch'}"
        f", one pass): {fmt.flop_per_byte(p.intensity_flop_per_byte)}, {p.bound}-bound{early}.{under} "
    )
    host = est.decode.host_time_s
    if host > 0:
        return text + _host_launches(est, engine_name)
    text += f"Fixed per-step costs (kernel launches, all-reduces) come on top{fixed_costs}."
    if fixed_costs_set_the_pace(est):  # the roof is then not what sets the step: said where the points sit on it
        step_s = est.decode.time_s
        text += (
            f" Here they are {fmt.percent(fixed / step_s)} of the mean decode step ({fmt.ms(step_s)}): they, not the "
            "roof, set its pace, and a larger batch shares them."
        )
    return text


def _host_launches(est: Estimate, engine_name: str) -> str:
    """An eager engine's steps: the host's launches overlap the GPU's work, and which of the two sets the pace."""
    d, s, w = est.decode, est.scenario, est.scenario.workload
    gpu_s = max(d.memory_time_s, d.compute_time_s) + d.fixed_time_s  # the GPU's share of the mean step
    # The reply's first step is its shortest on the GPU: if it outlasts the host, every step does.
    first = decode_step(s.model, s.precision, est.machine, w.batch_size, w.prompt_tokens)
    if d.host_bound:
        pace = "the host's at every step: the GPU waits"
    elif not waits_on_host(first.time_s, first.host_time_s):
        pace = "the GPU's at every step: it hides the host"
    else:
        pace = "the host's for the first steps, then the GPU's as the caches grow"
    return (
        f"On {engine_name} the host launches each step's kernels ({fmt.rounded_duration(d.host_time_s)} a step) while the "
        f"GPU works ({fmt.rounded_duration(gpu_s)} for the mean decode step, its fixed costs included): a step takes the "
        f"longer of the two, here {pace}."
    )


def _decode_placement(est: Estimate, table: BatchSweep, prefill_on_the_roof: bool) -> str:
    """'Points sit on the roof …' or why decode sits under it (dequantised weights: the dashed roof)."""
    m = est.machine
    placed = (table.attained_flops_per_s, table.intensity_flop_per_byte, m.compute_flops_per_s, m.bandwidth_bytes_per_s)
    if not under_the_roof(*placed).any():
        return f"{'Points sit' if prefill_on_the_roof else 'Decode sits'} on the roof: it is a bound."
    rates = []
    if m.weight_bandwidth_bytes_per_s < m.bandwidth_bytes_per_s:
        rates.append(
            f"stream at {fmt.bandwidth(m.weight_bandwidth_bytes_per_s)}, "
            f"where the KV cache reads at {fmt.bandwidth(m.bandwidth_bytes_per_s)}"
        )
    if m.weight_compute_flops_per_s < m.compute_flops_per_s:
        rates.append(f"multiply at {fmt.tflops(m.weight_compute_flops_per_s)}")
    if not rates:  # attention at a wider precision than the weights' maths, at a long context
        # Such a step's own ridge is lower than the page's: a batch just left of it may already be compute-bound.
        early = table.compute_bound & (table.intensity_flop_per_byte < m.balance_flop_per_byte)
        before = (
            f"; so a batch a little left of the ridge is already compute-bound (batch "
            f"{fmt.count(int(table.batch_size[early][0]))} at {fmt.flop_per_byte(float(table.intensity_flop_per_byte[early][0]))})"
            if early.any()
            else ""
        )
        return (
            f"Decode sits under the roof where attention dominates: it multiplies at "
            f"{fmt.tflops(m.attention_flops_per_s)}, the weights at {fmt.tflops(m.compute_flops_per_s)}{before}."
        )
    ridge = m.weight_compute_flops_per_s / m.weight_bandwidth_bytes_per_s
    return (
        f"Dequantised weights (the dashed roof, its ridge at {fmt.flop_per_byte(ridge)}) {' and '.join(rates)}: "
        "decode sits between the two roofs, nearer the dashed one while the weights are most of what a step reads."
    )


def _prefill_placement(est: Estimate) -> str:
    """'' when prefill sits on the roof, else why it sits under it (padding, attention's precision, dequantising)."""
    m, p = est.machine, est.prefill
    if not under_the_roof(
        p.attained_flops_per_s, p.intensity_flop_per_byte, m.compute_flops_per_s, m.bandwidth_bytes_per_s
    ):
        return ""
    useful = fmt.tflops(p.attained_flops_per_s)
    model = est.scenario.model
    if model.is_moe and m.expert_padding_tokens > 0:
        why = (
            f"each expert its prompt's tokens reach pays for {m.expert_padding_tokens:g} more tokens of maths "
            "(the engine's tiles)"
        )
    elif m.attention_flops_per_s < m.compute_flops_per_s:
        bits = est.scenario.precision.attention_bits
        why = (
            f"its attention multiplies at {bits:g}-bit, {fmt.tflops(m.attention_flops_per_s)}, "
            f"not the weights' {fmt.tflops(m.compute_flops_per_s)}"
        )
    else:
        why = f"the dequantised weights multiply at {fmt.tflops(m.weight_compute_flops_per_s)}"
    return f" It sits under the roof, at {useful} of the model's maths: {why}."


def host_floor(est: Estimate, last_waiting: int | None, engine_name: str) -> str:
    """'' unless the engine's launches are the host's: then up to which batch the step sits flat on them.

    `last_waiting` is `Estimate.host_bound_batch` (the page caches it by scenario).
    """
    host = est.decode.host_time_s
    if not host or last_waiting is None:
        return ""
    floor = f" On {engine_name} no step is quicker than the host's {fmt.rounded_duration(host)} of launches"
    if last_waiting == 0:
        return floor + ": even one sequence's step takes the GPU longer."
    return (
        floor + f": up to batch {fmt.count(last_waiting)} the step waits on it, so in the model throughput grows "
        "with the batch for free (measured eager runs fall behind it from about 32 sequences)."
    )


# A step time that rises less than this from batch 1 "barely moves" (the lesson's toy: exactly flat).
BARELY = 1.2


def sweep_caption(est: Estimate, table: BatchSweep, critical: int | None, ceiling: int | None) -> str:
    """What the sweep shows, from its own numbers: how far the step time and throughput move up to the critical
    batch (or the largest that fits, if that comes first), and what lies past it.

    Every sequence adds its own work to each step: its KV-cache read, the engine's per-sequence costs, and
    in a mixture of experts more of the experts' weights. Llama 3.1 70B fp8 on 2 × H100 (typical engine):
    18.62 ms at batch 1, 56.96 ms at 389, of which 26.5 ms is 389 × 68 µs per sequence and 9.7 ms the caches.
    "Barely moves" is true only without them (the lesson's toy: 7.00 ms at every batch).
    """
    sizes = [int(b) for b in table.batch_size]
    reachable = [b for b in (critical, ceiling) if b is not None and b in sizes]
    end = min(reachable) if reachable else max(sizes)
    if 1 not in sizes or end <= 1:
        return ""
    first, last = sizes.index(1), sizes.index(end)
    t1, t_end = float(table.step_time_s[first]), float(table.step_time_s[last])
    gain = float(table.output_tokens_per_s[last] / table.output_tokens_per_s[first])
    upto = (
        f"Up to the critical batch ({fmt.count(end)})"
        if end == critical
        else f"Up to the largest batch that fits ({fmt.count(end)})"
        if end == ceiling
        else f"Up to batch {fmt.count(end)}"
    )
    if t_end / t1 < BARELY:
        text = (
            f"{upto} the step time barely moves ({fmt.ms(t1)} → {fmt.ms(t_end)}) while throughput climbs "
            f"{fmt.ratio(gain)}: the weight read was going to happen anyway."
        )
    else:
        model, machine = est.scenario.model, est.machine
        adds = [
            *(["its KV-cache read"] if model.has_attention_shape else []),
            *(["the engine's per-sequence work"] if machine.sequence_overhead_s > 0 else []),
            *(["more of the experts' weights"] if model.is_moe else []),
        ]
        why = f": each sequence adds {fmt.listed(adds)} to every step" if adds else ""
        text = (
            f"{upto} the step time rises {fmt.ratio(t_end / t1)} ({fmt.ms(t1)} → {fmt.ms(t_end)}){why}. Throughput "
            f"still climbs {fmt.ratio(gain)}: the weights are read once for the whole batch."
        )
    if ceiling == 0:  # not one sequence fits: the sweep is the physics as if memory were no wall at all
        return text + " None of it runs here: not one sequence fits in memory, so these are the times as if it did."
    if critical is None:
        return text + " Decode never turns compute-bound here, so no maths wall: memory ends the climb."
    if ceiling is not None and critical > ceiling:
        return text + f" The critical batch ({fmt.count(critical)}) lies past what fits: memory ends the climb first."
    return text + " Past the critical batch the maths is the wall and throughput plateaus."
