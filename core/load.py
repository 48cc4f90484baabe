"""What `serve` measures: a load on one replica — requests in flight, or requests arriving per second.

A `Load` is the closed loop's concurrency (at most C in flight, a new request sent as one
finishes: how vLLM's `benchmark_serving` and InferenceX measure a server) or the open
loop's request rate (Poisson arrivals: how real traffic comes), and how much request
lengths vary around the workload's nominal prompt and reply (uniform between a low share
and the nominal; InferenceX draws 80-100 %), and, for a closed loop, how many requests a
benchmark sends in all (empty: the steady state of a run that never ends). Each field is
described once (`core.fields`), so it has a link key, a command-line option and a line in the
README's tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.closed_loop import ClosedLoop
from core.fields import described, validate
from core.lengths import RequestLengths
from core.one_wave import benchmark_run
from core.open_loop import OpenLoop, open_loop
from core.scenario import Scenario
from core.spec_flat import FlatForm
from core.specs import Workload


@dataclass(frozen=True, slots=True)
class Load(FlatForm):
    """A closed loop at `concurrency`, or an open loop at `request_rate_per_s`; never both.

    Neither given: the closed loop at one request, which is `estimate` exactly (fixed lengths;
    `core.closed_loop` says when an eager engine's reply differs).
    """

    concurrency: int | None = described(
        None, key="conc", kind=int, label="Concurrency (requests in flight)", unit="requests", low=1, high=100_000,
        optional=True, flag="--concurrency",
        help="Requests in flight at once, a new one sent as each finishes (closed loop, as benchmarks run a "
        "server); latencies are means. Empty with a request rate; both empty: 1.",
    )  # fmt: skip
    request_rate_per_s: float | None = described(
        None, key="rate", kind=float, label="Request rate (per s)", unit="requests/s", low=1e-4, high=1e6,
        step=0.1, optional=True, flag="--request-rate",
        help="Requests arriving at random, per second (Poisson, open loop): TTFT percentiles include the "
        "wait in the queue.",
    )  # fmt: skip
    num_prompts: int | None = described(
        None, key="prompts", kind=int, label="Requests the benchmark sends", unit="requests", low=1, high=10_000_000,
        optional=True, flag="--num-prompts",
        help="Closed loop, as a benchmark runs it: this many requests in all, the first `concurrency` at once "
        "(vLLM's --num-prompts). Equal to the concurrency: one wave, none replaced. Empty: the steady state.",
    )  # fmt: skip
    length_low_fraction: float = described(
        1.0, key="lenlow", kind=float, label="Shortest length (share of nominal)", low=0.05, high=1, step=0.05,
        flag="--length-low-fraction",
        help="Each prompt and reply is drawn uniformly between this share of its nominal length and the nominal: "
        "1 = fixed lengths, 0.8 = InferenceX's 80-100 %.",
    )  # fmt: skip

    def __post_init__(self) -> None:
        validate(self)
        if self.concurrency is not None and self.request_rate_per_s is not None:
            raise ValueError(
                f"request_rate_per_s must be empty when a concurrency is given (a closed or an open loop, "
                f"not both), got {self.request_rate_per_s!r}"
            )
        if self.num_prompts is not None:
            if self.request_rate_per_s is not None:
                raise ValueError(
                    f"num_prompts must be empty with a request rate (the open loop is a steady state), "
                    f"got {self.num_prompts!r}"
                )
            if self.num_prompts < (self.concurrency or 1):
                raise ValueError(
                    f"num_prompts must be at least the concurrency ({self.concurrency or 1:,}), got {self.num_prompts!r}"
                )

    def lengths(self, workload: Workload) -> RequestLengths:
        """The workload's nominal prompt and reply, varied by `length_low_fraction`."""
        return RequestLengths.of(workload, self.length_low_fraction)


def serve(scenario: Scenario, load: Load) -> ClosedLoop | OpenLoop:
    """The scenario's replica (its model, precision, GPUs and engine) under `load`.

    Closed loop: means over requests at `concurrency` (1 when neither is given): the steady
    state, or the benchmark's run when `num_prompts` is given (n × C requests, the first C at
    once; n = 1 is one wave, `core.one_wave`). Open loop:
    TTFT percentiles at `request_rate_per_s`, infinite at or past capacity. The scenario's
    cached prompt tokens are not used: the load model assumes no prefix-cache hits.
    """
    replica, lengths = scenario.replica(), load.lengths(scenario.workload)
    if load.request_rate_per_s is not None:
        return open_loop(replica, lengths, load.request_rate_per_s)
    concurrency = load.concurrency or 1
    per_slot = None if load.num_prompts is None else load.num_prompts / concurrency
    return benchmark_run(replica, lengths, concurrency, per_slot)
