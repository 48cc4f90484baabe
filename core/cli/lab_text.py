"""The lab's transcript: the lesson's reference run, printed from a computed LabRun.

The wording follows the lesson's reference run line for line, so a reader can hold the
two side by side; every number comes from `core.lesson`. The app's lesson page shows
this same text, so the terminal and the browser cannot disagree.
"""

from __future__ import annotations

from core.lesson import PART1_PROMPT_TOKENS, PART3_PROMPT_TOKENS, LabRun, Prediction

RULE = "=" * 78


def _banner(title: str) -> list[str]:
    return [RULE, title, RULE]


def _part1(run: LabRun) -> list[str]:
    p1 = run.part1
    lines = _banner("Part 1: prefill vs decode. One parallel pass, then a token at a time")
    lines += [
        "model: 7B params, fp16, so 14 GB of weights to read per pass",
        "gpu: 2 TB/s memory bandwidth, 300 TFLOP/s compute",
        f"TTFT (prefill a {PART1_PROMPT_TOKENS}-token prompt, one pass): {p1.prefill.time_s * 1e3:.2f} ms",
        f"TPOT (one decode step, one output token): {p1.decode.time_s * 1e3:.2f} ms",
        f"Serving the same {PART1_PROMPT_TOKENS}-token prompt with growing output:",
        f"  {'output tokens':>13}   {'total latency':>13}",
    ]
    lines += [f"  {m:>13}   {t * 1e3:>10.1f} ms" for m, t in zip(p1.output_tokens, p1.measured_latency_s, strict=True)]
    lines += [
        "Fit total = intercept + slope * (output tokens):",
        f"  measured TPOT (slope)     = {p1.fit.tpot_s * 1e3:.3f} ms per output token",
        f"  measured TTFT (intercept) = {p1.fit.ttft_s * 1e3:.2f} ms",
        "A straight line. Total latency is TTFT + M * TPOT, linear in OUTPUT",
        "tokens. The prompt sets a one-off start cost; every output token",
        "after that adds a fixed TPOT, because the model runs once per token.",
        f"Now the punchline. {PART1_PROMPT_TOKENS} tokens as INPUT vs {PART1_PROMPT_TOKENS} tokens as OUTPUT:",
        f"  {PART1_PROMPT_TOKENS} prompt tokens (prefill, one pass) : {p1.prompt_as_input_s * 1e3:.2f} ms",
        f"  {PART1_PROMPT_TOKENS} output tokens (decode, {PART1_PROMPT_TOKENS} passes): {p1.prompt_as_output_s * 1e3:.2f} ms",
        f"  output is {p1.prompt_as_output_s / p1.prompt_as_input_s:.0f}x slower, for the SAME number of tokens",
        "Input tokens share one pass. Output tokens each need their own. That",
        "asymmetry is the whole economics of serving an LLM.",
    ]
    return lines


def _part2(run: LabRun) -> list[str]:
    p2 = run.part2
    step = p2.step
    balance = step.balance_flop_per_byte
    lines = _banner("Part 2: memory-bound, not compute-bound. Why batching is the whole game")
    lines += [
        "A single decode step, batch of 1:",
        f"  reads {step.bytes_moved / 1e9:.0f} GB of weights, does {step.flops / 1e9:.0f} GFLOPs of math",
        f"  time if memory-bound  = {step.memory_time_s * 1e3:.3f} ms (bytes / bandwidth)",
        f"  time if compute-bound = {step.compute_time_s * 1e3:.3f} ms (flops / compute)",
        f"  memory loses by {step.memory_time_s / step.compute_time_s:.0f}x, so the step waits on {step.bound.upper()}.",
        f"  arithmetic intensity = {step.intensity_flop_per_byte:.1f} FLOP/byte (math done per byte read)",
        f"  machine balance      = {balance:.0f} FLOP/byte (compute / bandwidth)",
        f"  {step.intensity_flop_per_byte:.0f} is far below {balance:.0f}, so the math units are idle "
        f"{p2.idle_fraction * 100:.1f}% of the time.",
        "The GPU reads 14 GB to do the arithmetic of ONE token. That is the",
        "memory wall: the weights, not the maths, set the clock.",
        "So reuse the read. Batch B requests, and one 14 GB read feeds all B",
        "tokens. Intensity becomes B FLOP/byte, and throughput climbs until",
        "the step finally turns compute-bound (at B = machine balance).",
        f"  {'batch':>5}  {'intensity':>9}  {'step time':>11}  {'throughput':>14}  bound by",
    ]
    sweep = p2.sweep
    for i, batch in enumerate(sweep.batch_size):
        lines.append(
            f"  {batch:>5.0f}  {sweep.intensity_flop_per_byte[i]:>9.0f}  {sweep.step_time_s[i] * 1e3:>8.3f} ms"
            f"  {sweep.output_tokens_per_s[i]:>8,.0f} tok/s  {'compute' if sweep.compute_bound[i] else 'memory'}"
        )
    gain = sweep.output_tokens_per_s[-2] / sweep.output_tokens_per_s[0]
    lines += [
        f"From batch 1 to batch {p2.critical_batch} the step time barely moves, but throughput",
        f"goes up {gain:.0f}x, because the one expensive read now pays for {p2.critical_batch} tokens.",
        f"Past {p2.critical_batch} the math units are full, so throughput plateaus and latency",
        "starts to climb. THIS is why an LLM server batches: Day 37.",
    ]
    return lines


def _part3(run: LabRun) -> list[str]:
    p3 = run.part3
    short, long = p3.short, p3.long
    lines = _banner("Part 3: your token bill. Output is the part that costs")
    lines += [
        f"Same {PART3_PROMPT_TOKENS}-token prompt, two replies. TTFT is a flat {p3.ttft_s * 1e3:.1f} ms,",
        f"then every output token adds {p3.tpot_s * 1e3:.1f} ms.",
        f"  {'reply':<12} {'latency':>10}  {'cost':>10}",
    ]
    for reply in (short, long):
        lines.append(
            f"  {f'{reply.output_tokens} tokens':<12} {reply.latency_s * 1e3:>7.1f} ms  {f'${reply.cost_usd:.6f}':>10}"
        )
    lines += [
        f"{long.output_tokens // short.output_tokens}x the output tokens -> {p3.latency_ratio:.1f}x the latency "
        f"and {p3.cost_ratio:.1f}x the cost.",
        "Latency scales almost 1:1 with output because decode dwarfs the fixed",
        "prefill. Cost scales with output because output tokens are priced",
        "higher AND there are more of them. A chatbot that streams 500 tokens",
        "is a different animal from one that returns 50, on both the clock and",
        "the invoice. Trim the output before you trim anything else.",
        f"At 100,000 replies a day: the 50-token answer costs ${short.monthly_usd:,.0f} a",
        f"month, the 500-token answer ${long.monthly_usd:,.0f}. Same prompt, same model.",
    ]
    return lines


def _score_line(prediction: Prediction) -> str:
    return (
        f"{prediction.label:<32} you = {prediction.guess:>6.1f}  actual = {prediction.actual:>7.2f} "
        f"{prediction.unit:<9} {prediction.verdict}"
    )


def _closing(run: LabRun) -> list[str]:
    lines = _banner("Scoreboard") + [_score_line(p) for p in run.scoreboard]
    lines += _banner("The number to carry")
    lines += [
        "One decode step reads all 14 GB of weights to make a single",
        "token: 7 ms, set by memory bandwidth, not by the 300 TFLOP/s of",
        "compute that sits 150x idle. So an output token costs about",
        "150x a prompt token, total latency is TTFT + M * TPOT (a line in",
        "M), and the same 150 is the batch size you need to put the compute",
        "to work. Memory-bound decode is the one fact that explains prefill vs",
        "decode, your latency, your bill, and why Day 37 is all about batching.",
    ]
    return lines


def render_lab(run: LabRun) -> str:
    """The whole reference run (Parts 1–3, scoreboard, the number to carry) as text."""
    return "\n".join(_part1(run) + _part2(run) + _part3(run) + _closing(run)) + "\n"
