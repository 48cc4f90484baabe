"""What `plan` searches for: traffic shape, latency targets and the candidate deployments.

Traffic (replies per day) and prices live in `Pricing`, lengths in `Workload`, the model,
KV precision and engine in the `Scenario`; a `Plan` adds what only the search needs. Each
field is described once (`core.fields`), so it has a link key, a command-line option and
a line in the README's tables; lists travel comma-separated (`cands=h100-sxm,h200&tp=1,2`).

The per-user speed is a tokens-per-second target rather than a TPOT target: it is how
product people state it ("stream at 30 tokens/s"), it is the x axis of the throughput
frontier (InferenceX's), and 0 says "no target" where a TPOT would need infinity.
TPOT = 1 / (tokens per second per user): 30 tokens/s is a 33.3 ms TPOT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core import presets
from core.fields import described, validate
from core.spec_flat import FlatForm
from core.specs import GPU
from core.units import S_PER_MS

PERCENTILE_CHOICES = ("50", "90", "95", "99")
TENSOR_PARALLEL_CHOICES = ("1", "2", "4", "8")
WEIGHT_BITS_CHOICES = ("16", "8", "4")


def _gpu_ids() -> tuple[str, ...]:
    return tuple(presets.gpu_presets())


@dataclass(frozen=True, slots=True)
class Plan(FlatForm):
    """The search's own inputs: the peak, the targets at the peak, and what it may choose from."""

    peak_to_average: float = described(
        3.0, key="peak", kind=float, label="Peak-to-average traffic", unit="x", low=1, high=100, step=0.5,
        flag="--peak-to-average",
        help="The busiest moment of the day over the day's average request rate; the fleet is sized for it.",
    )  # fmt: skip
    ttft_target_s: float = described(
        1.0, key="ttft", kind=float, label="TTFT target (ms)", unit="ms", scale=S_PER_MS, low=1e-3, high=3600,
        step=100, flag="--ttft-ms",
        help="Time to first token that the chosen percentile of requests must stay under at the peak, "
        "waiting in the queue included.",
    )  # fmt: skip
    ttft_percentile: int = described(
        95, key="pct", kind=int, label="TTFT percentile", unit="%", low=50, high=99, choices=PERCENTILE_CHOICES,
        flag="--ttft-percentile", help="Which share of requests must meet the TTFT target: 50, 90, 95 or 99 %.",
    )  # fmt: skip
    tokens_per_s_per_user: float = described(
        30.0, key="tps", kind=float, label="Tokens/s per user", unit="tokens/s", low=0, high=100_000, step=5,
        flag="--tokens-per-s-per-user",
        help="How fast replies must stream at the peak, on average over requests (1000 / TPOT in ms); 0: no target.",
    )  # fmt: skip
    gpu_ids: tuple[str, ...] = described(
        (), key="cands", kind=tuple, item=str, choices_from=_gpu_ids, label="Candidate GPUs", optional=True,
        flag="--candidate-gpus",
        help="GPU preset ids to consider, comma-separated; empty: every preset with a rental price (and the "
        "scenario's GPU if it has one). The scenario's GPU, with its edits and price, stands in for its preset.",
    )  # fmt: skip
    tensor_parallel: tuple[int, ...] = described(
        (1, 2, 4, 8), key="tp", kind=tuple, item=int, choices=TENSOR_PARALLEL_CHOICES,
        label="GPUs per replica", unit="GPUs", flag="--tensor-parallel",
        help="Tensor-parallel sizes to consider, comma-separated (1, 2, 4, 8).",
    )  # fmt: skip
    weight_bits: tuple[int, ...] = described(
        (16, 8, 4), key="wlist", kind=tuple, item=int, choices=WEIGHT_BITS_CHOICES, label="Weight precisions",
        unit="bits", flag="--weight-precisions",
        help="Weight precisions to consider: 16 (bf16), 8 (fp8/int8 weights and maths), 4 (NVFP4 where the GPU "
        "has 4-bit tensor cores, else int4 weight-only; experts stored narrower than the rest, as gpt-oss "
        "ships them, keep that split).",
    )  # fmt: skip
    max_concurrency: int = described(
        256, key="cmax", kind=int, label="Most requests per replica", unit="requests", low=1, high=100_000,
        flag="--max-concurrency",
        help="The most requests one replica may run at once (the engine's max_num_seqs), whatever fits.",
    )  # fmt: skip
    min_replicas: int = described(
        1, key="floor", kind=int, label="Fewest replicas", unit="replicas", low=0, high=100_000,
        flag="--min-replicas",
        help="The autoscaler never runs fewer replicas than this, however quiet the day (0 scales to zero).",
    )  # fmt: skip
    gpu_discount: float = described(
        0.0, key="discount", kind=float, label="GPU price discount (%)", unit="%", scale=0.01, low=0, high=0.9,
        step=5, flag="--gpu-discount",
        help="Off the GPUs' on-demand $/GPU-hour, for a committed-use or reserved price (one to three year "
        "commitments are often 30-60 % off). Applies to the plan's fleets; the API's prices stay the sidebar's.",
    )  # fmt: skip

    def __post_init__(self) -> None:
        validate(self)
        if str(self.ttft_percentile) not in PERCENTILE_CHOICES:
            raise ValueError(
                f"ttft_percentile must be one of {', '.join(PERCENTILE_CHOICES)}, got {self.ttft_percentile!r}"
            )

    @property
    def ttft_quantile(self) -> float:
        """The TTFT percentile as a fraction: 95 → 0.95."""
        return self.ttft_percentile / 100

    def gpu_usd_per_hour(self, gpu: GPU) -> float | None:
        """One GPU-hour as this plan bills it: the on-demand price less the discount. Example: $3.00, 40 % → $1.80."""
        price = gpu.price_usd_per_hour
        return None if price is None else price * (1 - self.gpu_discount)

    @property
    def tpot_target_s(self) -> float:
        """1 / tokens per second per user: 30 → 33.3 ms; no target (0) → infinity."""
        return 1 / self.tokens_per_s_per_user if self.tokens_per_s_per_user > 0 else math.inf
