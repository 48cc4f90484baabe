"""The load test's arithmetic and its printout: percentiles, the issue's targets, the report.

Pure: no I/O, no clock, so the tests can check every number. Figures are one flat-ish dict
(what `--json` writes); times are in seconds, memory in MB.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), interpolating linearly between ranks (numpy's default); NaN if empty.

    Example: percentile([1, 2, 3, 4], 50) = 2.5; percentile([1, 2, 3, 4], 95) = 3.85.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"q must be from 0 to 100, got {q}")
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(values: Sequence[float]) -> dict[str, float]:
    """n, p50, p95, p99 and max of a list of times (NaN for an empty list)."""
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
        "max": max(values) if values else math.nan,
    }


@dataclass(frozen=True)
class Target:
    """A figure the issue asks for, under the set-up it was stated for."""

    text: str
    mode: str  # "steady" or "burst"
    replicas: int
    sessions: int
    period_s: float | None  # None: any period (a burst)
    figure: str  # a key of `flat_figures`
    limit: float  # met when the figure is <= limit


# Issue 11, on this 2-CPU machine.
TARGETS = (
    Target("rerun p95 ≤ 1 s", "steady", 1, 50, 5.0, "rerun_p95_s", 1.0),
    Target("health p95 ≤ 1 s", "steady", 1, 50, 5.0, "health_p95_s", 1.0),
    Target("0 errors", "steady", 1, 50, 5.0, "errors", 0),
    Target("burst drains with rerun p95 ≤ 3 s", "burst", 1, 50, None, "rerun_p95_s", 3.0),
    Target("0 errors", "burst", 1, 50, None, "errors", 0),
    Target("rerun p95 ≤ 1 s", "steady", 2, 100, 5.0, "rerun_p95_s", 1.0),
    Target("0 errors", "steady", 2, 100, 5.0, "errors", 0),
    Target("every session's reruns on one replica", "steady", 2, 100, 5.0, "sessions_off_their_replica", 0),
)


def flat_figures(figures: dict[str, Any]) -> dict[str, float]:
    """The numbers the targets are stated in."""
    return {
        "rerun_p95_s": figures["rerun"]["p95"],
        "health_p95_s": figures["health"]["p95"],
        "errors": figures["errors"]["count"],
        "sessions_off_their_replica": figures["affinity"]["sessions_off_their_replica"],
    }


def judged(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """Each target for this run's mode and replica count: its value, PASS/FAIL, and a note when the
    run's sessions or period differ from the target's set-up (the verdict then only indicates)."""
    config, flat = figures["config"], flat_figures(figures)
    results = []
    for target in TARGETS:
        if target.mode != config["mode"] or target.replicas != config["replicas"]:
            continue
        value = flat[target.figure]
        differs = []
        if config["sessions"] != target.sessions:
            differs.append(f"{config['sessions']} sessions, the target is for {target.sessions}")
        if target.period_s is not None and config["period_s"] != target.period_s:
            differs.append(f"a change every {config['period_s']:g} s, the target is for {target.period_s:g} s")
        results.append(
            {
                "target": target.text,
                "value": value,
                "pass": bool(value <= target.limit),  # NaN (nothing measured) fails
                "note": "; ".join(differs),
            }
        )
    return results


def json_safe(value: Any) -> Any:
    """The figures with NaN (nothing measured) as null, so the file is strict JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def _s(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def _times(name: str, stats: dict[str, float]) -> str:
    return (
        f"  {name:<14} n={stats['n']:<6} p50 {_s(stats['p50']):>9}  p95 {_s(stats['p95']):>9}  "
        f"p99 {_s(stats['p99']):>9}  max {_s(stats['max']):>9}"
    )


def render(figures: dict[str, Any]) -> str:
    """The printed report."""
    c = figures["config"]
    how = (
        f"{c['bursts']} burst(s) of simultaneous changes, {c['period_s']:g} s apart"
        if c["mode"] == "burst"
        else f"one change every {c['period_s']:g} s at a random phase for {c['seconds']:g} s"
    )
    lines = [
        f"Load test: {c['sessions']} sessions on {c['page_title']} (/{c['url_path']}"
        + (f"?{c['query']}" if c["query"] else "")
        + f"), {how}; changing {c['input_label']!r}, checking {c['headline_label']!r}; seed {c['seed']}",
        f"  against {c['url']} ({c['replicas']} replica(s){', HAProxy' if c['replicas'] > 1 else ''})",
        "",
        "Latency (from sending the message to script_finished):",
        _times("connect", figures["connect"]),
        _times("first load", figures["first_load"]),
        _times("rerun", figures["rerun"]),
    ]
    for i, burst in enumerate(figures.get("bursts", []), start=1):
        lines.append(f"  burst {i}: {burst['n']} reruns, p95 {_s(burst['p95'])}, drained in {_s(burst['drain_s'])}")
    late = figures["late_changes"]
    lines.append(
        f"  reruns: {figures['rerun']['n']}"
        + (f" ({late} sent late: the previous one was still running)" if late else "")
    )
    errors = figures["errors"]
    lines.append(f"  errors: {errors['count']}")
    lines += [f"    {message}" for message in errors["first"]]
    h = figures["health"]
    lines += [
        "",
        f"Health probes (GET /_stcore/health every {c['health_interval_s']:g} s, timeout {c['health_timeout_s']:g} s): "
        f"{h['n']} probes, {h['timeouts']} failed or timed out; p50 {_s(h['p50'])}, p95 {_s(h['p95'])}, max {_s(h['max'])}",
        "",
        f"Server(s), over {figures['wall_s']:.1f} s of wall time:",
    ]
    for s in figures["servers"]:
        lines.append(
            f"  {s['name']} (pid {s['pid']}): CPU {s['cpu_s']:.1f} s = {s['cpu_pct']:.0f}% of one core; "
            f"RSS {s['rss_before_mb']:.0f} MB before, {s['rss_max_mb']:.0f} MB max, {s['rss_after_mb']:.0f} MB after; "
            f"{s['sessions']} sessions, {s['reruns']} reruns; health p95 {_s(s['health_p95_s'])}"
        )
    if figures["machine"]["balancer_cpu_s"]:
        balancer = figures["machine"]["balancer_cpu_s"]
        lines.append(f"  haproxy: CPU {balancer:.1f} s = {100 * balancer / figures['wall_s']:.0f}% of one core")
    per_rerun = figures["server_cpu_per_rerun_ms"]
    if not math.isnan(per_rerun):
        lines.append(f"  server CPU per rerun: {per_rerun:.0f} ms ({figures['server_cpu_per_rerun_basis']})")
    g = figures["generator"]
    lines.append(
        f"Load generator (this process, same machine): CPU {g['cpu_s']:.1f} s = {g['cpu_pct']:.0f}% of one core; "
        f"event-loop lag p95 {g['loop_lag_p95_ms']:.0f} ms, max {g['loop_lag_max_ms']:.0f} ms"
    )
    mc = figures["machine"]
    lines.append(
        f"Machine ({mc['cores']} cores): busy {mc['busy_cores']:.2f} cores on average, of which this test "
        f"{mc['this_test_cores']:.2f} (servers, generator, balancer) and other processes {mc['other_processes_cores']:.2f}"
        + (f"; {mc['stolen_cores']:.2f} stolen by the hypervisor" if mc["stolen_cores"] >= 0.01 else "")
    )
    if mc["other_processes_cores"] >= 0.1:
        lines.append("  (other processes shared the cores: the latencies above are worse than on a quiet machine)")
    a = figures["affinity"]
    if a["checked"]:
        lines.append(
            f"Affinity: every session's reruns on one replica: {'yes' if a['sessions_off_their_replica'] == 0 else 'no'} "
            f"({a['sessions_off_their_replica']} sessions off their replica; sessions per replica {a['sessions_by_replica']})"
        )
        if a["sessions_unverified"]:
            lines.append(f"  {a['sessions_unverified']} sessions had a cookie but no X-Served-By: only the cookie says")
    for event in figures.get("balancer_events", []):
        lines.append(f"  haproxy: {event}")
    lines += ["", "Targets (issue 11, this 2-core machine):"]
    verdicts = figures["targets"]
    if not verdicts:
        lines.append("  none stated for this set-up")
    for v in verdicts:
        value = v["value"]
        shown = f"{value:g}" if v["target"].startswith(("0 ", "every")) else _s(value)
        note = f"   ({v['note']})" if v["note"] else ""
        lines.append(f"  {v['target']:<40} {shown:>9}  {'PASS' if v['pass'] else 'FAIL'}{note}")
    if "floor" in figures:
        lines += ["", *floor_lines(figures, figures["floor"])]
    return "\n".join(lines)


FLOOR_RATIO_TARGET = 1.3  # issue 11 §1: a page's server CPU per rerun within 1.3 × its bare-page floor


def floor_ratio(figures: dict[str, Any], floor: dict[str, Any]) -> float:
    """The app's server CPU per rerun over the floor page's, both net of idle CPU; NaN if either is missing."""
    app_ms, floor_ms = figures["server_cpu_per_rerun_ms"], floor["server_cpu_per_rerun_ms"]
    return app_ms / floor_ms if floor_ms > 0 else math.nan


def floor_lines(figures: dict[str, Any], floor: dict[str, Any]) -> list[str]:
    """The floor run (benchmarks/floor_app.py, the same sessions after the app's), and app ÷ floor."""
    ratio = floor_ratio(figures, floor)
    verdict = "PASS" if ratio <= FLOOR_RATIO_TARGET else "FAIL"  # NaN fails
    return [
        "Floor: a bare page with one input, the headline and the page's own figures prebuilt, the same sessions,",
        "  run after the app's on the same machine:",
        _times("rerun", floor["rerun"]),
        f"  errors: {floor['errors']['count']}; server CPU per rerun: {floor['server_cpu_per_rerun_ms']:.1f} ms "
        f"({floor['server_cpu_per_rerun_basis']})",
        f"  app ÷ floor, server CPU per rerun: {figures['server_cpu_per_rerun_ms']:.1f} ÷ "
        f"{floor['server_cpu_per_rerun_ms']:.1f} ms = {ratio:.2f}x  (target ≤ {FLOOR_RATIO_TARGET:g}x: {verdict})",
    ]
