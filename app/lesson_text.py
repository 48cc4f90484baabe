"""The lesson page's words: the five drills with their answers (the predictions are page inputs).

Pure text, no Streamlit: the answers are filled in from core's numbers (core.lesson's
Drills), formatted the lesson's way, so the page and its tests read the same strings.
"""

from __future__ import annotations

from app import formatting as fmt
from core.lesson import Drills


def drill_texts(d: Drills) -> tuple[tuple[str, str, str], ...]:
    """(title, question, answer) for D1–D5: the question on the toy machine, the answer in markdown."""
    d1 = d.d1_prefill
    return (
        (
            "D1. Prefill and TTFT",
            "Prefilling a 1,000-token prompt is one pass: 1,000 tokens' worth of FLOPs, the 14 GB of "
            "weights read once. Compute time, memory time, which wins, and the TTFT?",
            f"Compute: 1,000 × 14 GFLOPs ÷ 300 TFLOP/s = **{fmt.ms(d1.compute_time_s, 1)}**. Memory: 14 GB ÷ 2 TB/s = "
            f"{fmt.ms(d1.memory_time_s, 1)}. Compute wins, so prefill is **{d1.bound}-bound** and the TTFT is "
            f"**{fmt.ms(d1.time_s, 1)}**: the maths grows with the prompt, the weight read does not.",
        ),
        (
            "D2. Decode and total latency",
            "With TPOT 7 ms and the TTFT from D1, the total latency of a 300-token reply, and the share that is decode?",
            f"{fmt.ms(d1.time_s, 1)} + 300 × {fmt.ms(d.d3_step.time_s, 0)} = **{fmt.ms(d.d2_total_s, 1)}**, of which decode "
            f"is **{fmt.percent(d.d2_decode_share)}**.",
        ),
        (
            "D3. The memory wall",
            "A batch-1 decode step reads 14 GB and does 14 GFLOPs. Its intensity, the machine's "
            "balance, which bound, and how idle are the compute units?",
            f"**{fmt.flop_per_byte(d.d3_step.intensity_flop_per_byte)}** against a balance of "
            f"**{fmt.flop_per_byte(d.d3_step.balance_flop_per_byte)}**: {d.d3_step.bound}-bound. The compute units sit idle "
            f"**{fmt.percent(d.d3_idle_fraction)}** of each step ({fmt.ms(d.d3_step.memory_time_s, 3)} of reading against "
            f"{fmt.ms(d.d3_step.compute_time_s, 3)} of maths).",
        ),
        (
            "D4. Batching",
            "Roughly what batch makes decode compute-bound, and the throughput at batch 1 versus 64? Why "
            "doesn't batching speed up one lonely request?",
            f"About **{fmt.count(d.d4_critical_batch or 0)}** (intensity = batch FLOP/byte reaches the balance). Batch 1: "
            f"**{fmt.tokens_per_s(d.d4_tokens_per_s[0])}**; batch 64: **{fmt.tokens_per_s(d.d4_tokens_per_s[1])}**, the same "
            "7 ms read now feeding 64 tokens. One request still gets its tokens one step at a time, each a full TPOT: "
            "batching shares the read across requests, it does not shorten any one stream.",
        ),
        (
            "D5. The token bill",
            "Same 1,000-token prompt, replies of 100 and 1,000 tokens, TPOT 7 ms, TTFT from D1, output "
            "priced 3× input: the latency ratio and the cost ratio?",
            f"{fmt.ms(d.d5_latency_s[0], 1)} vs {fmt.ms(d.d5_latency_s[1], 1)}: **{fmt.ratio(d.d5_latency_ratio)}** the "
            f"latency. {fmt.count(d.d5_cost_units[0])} vs {fmt.count(d.d5_cost_units[1])} units: "
            f"**{fmt.ratio(d.d5_cost_ratio)}** the cost. Trim the output first: it is both the slow part and the pricey part.",
        ),
    )
