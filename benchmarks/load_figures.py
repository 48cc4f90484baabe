"""What a load run recorded, and the figures made from it (what the report prints and `--json` writes).

Pure: `figures()` only does arithmetic on what `load.py` measured, so the tests can check
the CPU per rerun, the affinity verdict and the per-replica split by hand. Times in
seconds, memory in MB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from load_report import judged, percentile, summary

FIRST_ERRORS = 5  # error messages kept in the figures (all are counted)


@dataclass
class ServerTrace:
    """One server process: /proc readings at the start, when the last session had loaded, at the end."""

    name: str  # the balancer's name for it ("s1"), or "server"
    pid: int
    cpu_start_s: float
    cpu_loaded_s: float = math.nan
    cpu_end_s: float = math.nan
    rss_mb: list[float] = field(default_factory=list)  # sampled every 0.5 s, first and last included
    idle_cpu_per_s: float = 0.0  # CPU seconds per second with no session working (health probes, timers)
    health_from: float = 0.0  # time.monotonic() from which health probes count
    health_s: list[float] = field(default_factory=list)
    health_failures: int = 0


@dataclass
class SessionTrace:
    """Where a session's requests went: the affinity cookie it was given and the replicas that answered."""

    cookie: str = ""  # SERVERID from the balancer's first response ("" without a balancer)
    served_by: list[str] = field(default_factory=list)  # X-Served-By of each websocket upgrade

    @property
    def replica(self) -> str:
        return self.served_by[-1] if self.served_by else self.cookie

    @property
    def replicas(self) -> set[str]:
        return ({self.cookie} | set(self.served_by)) - {""}


@dataclass
class Rerun:
    finished_at: float  # time.monotonic()
    seconds: float
    replica: str


@dataclass
class Measured:
    wall_s: float = 0.0
    connects: list[float] = field(default_factory=list)
    first_loads: list[float] = field(default_factory=list)
    reruns: list[Rerun] = field(default_factory=list)
    loaded_at: float = math.nan  # when the last session finished its first load
    ended_at: float = math.nan
    bursts: list[dict[str, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    late_changes: int = 0
    servers: list[ServerTrace] = field(default_factory=list)
    sessions: list[SessionTrace] = field(default_factory=list)
    generator_cpu_s: float = 0.0
    balancer_cpu_s: float = 0.0
    machine_busy_s: float = math.nan  # every process on the machine, all cores
    machine_stolen_s: float = 0.0
    cores: int = 1
    loop_lags_s: list[float] = field(default_factory=list)


def cpu_per_rerun_ms(m: Measured) -> tuple[float, int]:
    """Server CPU (all replicas) per rerun, from the last first load to the end: (ms, reruns counted).

    No first load runs in that span. The servers' idle rate (health probes, timers: measured
    before the sessions started) times the span's length is taken off, so that a quiet run
    does not charge its reruns for the idle time. NaN without a span or without reruns in it.
    """
    after = [r for r in m.reruns if r.finished_at >= m.loaded_at]
    span_s = m.ended_at - m.loaded_at
    cpu = sum(s.cpu_end_s - s.cpu_loaded_s - s.idle_cpu_per_s * span_s for s in m.servers)
    if not after or not m.servers or math.isnan(cpu):
        return math.nan, len(after)
    return 1e3 * cpu / len(after), len(after)


def machine(m: Measured) -> dict[str, float]:
    """How busy the whole machine was, in cores on average, and how much of that was not this test."""
    ours = sum(s.cpu_end_s - s.cpu_start_s for s in m.servers) + m.generator_cpu_s + m.balancer_cpu_s
    return {
        "cores": m.cores,
        "busy_cores": m.machine_busy_s / m.wall_s,
        "this_test_cores": ours / m.wall_s,
        "other_processes_cores": max(0.0, m.machine_busy_s - ours) / m.wall_s,
        "stolen_cores": m.machine_stolen_s / m.wall_s,
        "balancer_cpu_s": m.balancer_cpu_s,
    }


def figures(config: dict[str, Any], m: Measured) -> dict[str, Any]:
    several = len(m.servers) > 1
    servers = []
    for s in m.servers:
        used = s.cpu_end_s - s.cpu_start_s
        servers.append(
            {
                "name": s.name,
                "pid": s.pid,
                "cpu_s": used,
                "cpu_pct": 100 * used / m.wall_s,
                "rss_before_mb": s.rss_mb[0],
                "rss_after_mb": s.rss_mb[-1],
                "rss_max_mb": max(s.rss_mb),
                "sessions": sum(t.replica == s.name for t in m.sessions) if several else len(m.sessions),
                "reruns": sum(r.replica == s.name for r in m.reruns) if several else len(m.reruns),
                "health_p95_s": percentile(s.health_s, 95),
            }
        )
    per_rerun_ms, counted = cpu_per_rerun_ms(m)
    health = [x for s in m.servers for x in s.health_s]
    result: dict[str, Any] = {
        "config": config,
        "wall_s": m.wall_s,
        "connect": summary(m.connects),
        "first_load": summary(m.first_loads),
        "rerun": summary([r.seconds for r in m.reruns]),
        "bursts": m.bursts,
        "late_changes": m.late_changes,
        "errors": {"count": len(m.errors), "first": m.errors[:FIRST_ERRORS]},
        "health": {**summary(health), "timeouts": sum(s.health_failures for s in m.servers)},
        "servers": servers,
        "server_cpu_per_rerun_ms": per_rerun_ms,
        "server_cpu_per_rerun_basis": (
            f"server CPU after the last first load, less the idle rate "
            f"({1e3 * sum(s.idle_cpu_per_s for s in m.servers):.0f} ms/s), ÷ the {counted} reruns after it"
        ),
        "generator": {
            "cpu_s": m.generator_cpu_s,
            "cpu_pct": 100 * m.generator_cpu_s / m.wall_s,
            "loop_lag_p95_ms": 1e3 * percentile(m.loop_lags_s, 95),
            "loop_lag_max_ms": 1e3 * max(m.loop_lags_s, default=0.0),
        },
        "machine": machine(m),
        "affinity": {
            "checked": several,
            # A session whose cookie and websocket upgrades name more than one replica.
            "sessions_off_their_replica": sum(len(t.replicas) > 1 for t in m.sessions) if several else 0,
            # Sessions with a cookie but no X-Served-By: the balancer's word is missing.
            "sessions_unverified": sum(bool(t.cookie) and not t.served_by for t in m.sessions) if several else 0,
            "sessions_by_replica": {s["name"]: s["sessions"] for s in servers},
        },
    }
    result["targets"] = judged(result)
    return result
