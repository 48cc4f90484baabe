"""A load test that measures the server, not a browser: N Streamlit sessions over the websocket protocol.

Each session (a `st_protocol.Session`: no browser, one asyncio task, all in this process)
GETs its page, opens the websocket, loads the page, then types a new value into one number
input (`load_pages.PAGES`: "Output tokens" by default) every `--period` seconds at a random
phase (seeded), or, with `--burst N`, all sessions at once, N times. Every run is timed from
sending the message to `script_finished`, and its headline (the Overview's "Total latency"
by default) is checked against `core` with the app's formatting: a wrong or missing value is
an error. Meanwhile a thread GETs /_stcore/health every 0.5 s on every replica, and /proc
gives each server's CPU seconds and resident memory, this process's own CPU, and how busy
the whole machine was (other people's jobs on a shared machine show up there). A 5 s idle
baseline before the sessions start gives the servers' idle CPU rate, which is taken off
the CPU per rerun.

Unless `--url` is given, it starts the servers itself, as the Docker image does
(`load_servers`): one replica, or `--replicas 2` behind HAProxy with cookie affinity
(deploy/haproxy.cfg), where each session keeps its cookie and the report says whether
every session's reruns stayed on one replica. Before the timed run, one session per
replica loads the page and changes the input once (warming the process, and checking that
the labels in `load_pages` are still on the page: if not, it stops with exit code 2).

Run: `make load SESSIONS=50 SECONDS=60`, `make load-burst`, `make load-scaled`, or
`python benchmarks/load.py --help`. The figures are for reading, not a pass/fail test; the
exit code is 0 unless the tool could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import load_report
import load_servers
import websockets
from load_figures import Measured, Rerun, ServerTrace, SessionTrace, figures
from load_pages import PAGES, PagePlan, expected_headline, headline_problem, new_value, scenario_of
from st_protocol import ProtocolError, Session

FLOOR_ENTRY = "benchmarks/floor_app.py"
FAILURES = (ProtocolError, OSError, TimeoutError, websockets.WebSocketException)


class LayoutError(RuntimeError):
    """The page no longer has what load_pages.PAGES says it has."""


def probe_health(trace: ServerTrace, url: str, interval_s: float, timeout_s: float, stop: threading.Event) -> None:
    """GET the health URL every interval (a thread: the event loop's own delays stay out of it).

    A failure or timeout is recorded at the timeout, so it weighs in the percentiles."""
    next_at = time.monotonic()
    while not stop.is_set():
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(url, timeout=timeout_s) as response:
                ok = response.read() == b"ok"
        except OSError:
            ok = False
        elapsed = time.perf_counter() - start
        if time.monotonic() - elapsed >= trace.health_from:  # probes of the idle baseline are not counted
            trace.health_s.append(elapsed if ok else max(elapsed, timeout_s))
            trace.health_failures += not ok
        next_at += interval_s
        stop.wait(max(0.0, next_at - time.monotonic()))


class LoadTest:
    """The sessions of one run, and what they measured."""

    def __init__(self, args: argparse.Namespace, url: str, servers: list[ServerTrace], balancer_pid: int = 0) -> None:
        self.args, self.url, self.balancer_pid = args, url, balancer_pid
        self.plan = PAGES[args.page]
        self.query = self.plan.query if args.query is None else args.query
        self.base = scenario_of(self.query)
        self.m = Measured(servers=servers)
        self.open: list[Session] = []
        self.pending_loads = args.sessions

    def error(self, session: int, message: str) -> None:
        self.m.errors.append(f"session {session}: {message}")

    def _load_done(self) -> None:
        self.pending_loads -= 1
        if self.pending_loads == 0:
            self.m.loaded_at = time.monotonic()
            for server in self.m.servers:
                server.cpu_loaded_s = load_servers.cpu_s(server.pid)

    async def open_session(self, i: int, rng: random.Random, start: float) -> Session | None:
        """Open at a random moment of the ramp, load the page, check its headline."""
        await asyncio.sleep(max(0.0, start + rng.uniform(0, self.args.ramp) - time.monotonic()))
        session = Session(self.url, self.plan.url_path, self.query)
        self.open.append(session)
        try:
            began = time.perf_counter()
            await session.open()
            self.m.connects.append(time.perf_counter() - began)
            run = await session.load()
            self.m.first_loads.append(run.elapsed_s)
            problem = headline_problem(self.plan, run, expected_headline(self.plan, self.base))
            if problem:
                self.error(i, f"first load: {problem}")
            return session
        except FAILURES as failure:
            self.error(i, f"first load: {failure}")
            return None
        finally:
            self.m.sessions.append(SessionTrace(session.cookies.get("SERVERID", ""), session.served_by))
            self._load_done()

    async def change(self, i: int, session: Session, rng: random.Random) -> float | None:
        """One input change; its rerun time, or None on an error (recorded)."""
        try:
            value = new_value(rng, self.plan, session.number_value(self.plan.input_label))
            run = await session.set_number(self.plan.input_label, value)
        except FAILURES as failure:
            self.error(i, f"rerun: {failure}")
            return None
        replica = session.served_by[-1] if session.served_by else session.cookies.get("SERVERID", "")
        self.m.reruns.append(Rerun(time.monotonic(), run.elapsed_s, replica))
        problem = headline_problem(self.plan, run, expected_headline(self.plan, self.base, value))
        if problem:
            self.error(i, f"rerun ({self.plan.input_label} = {value}): {problem}")
        return run.elapsed_s

    async def steady(self, i: int, start: float, end: float) -> None:
        """A change every period at a random phase until the end (at once when a rerun outlasts the period)."""
        rng = random.Random(f"{self.args.seed}:{i}")
        session = await self.open_session(i, rng, start)
        if session is None:
            return
        next_at = time.monotonic() + rng.uniform(0, self.args.period)
        while next_at < end:
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            if await self.change(i, session, rng) is None:
                return
            next_at += self.args.period
            if next_at < time.monotonic():
                self.m.late_changes += 1
                next_at = time.monotonic()

    async def bursts(self, start: float) -> None:
        """Every session opens; then, a period apart, every session changes its input at the same moment."""
        rngs = [random.Random(f"{self.args.seed}:{i}") for i in range(self.args.sessions)]
        opened = await asyncio.gather(*(self.open_session(i, rngs[i], start) for i in range(self.args.sessions)))
        live = [(i, s) for i, s in enumerate(opened) if s is not None]
        for _ in range(self.args.burst):
            await asyncio.sleep(self.args.period)
            began = time.monotonic()
            times = await asyncio.gather(*(self.change(i, s, rngs[i]) for i, s in live))
            done = [t for t in times if t is not None]
            self.m.bursts.append({**load_report.summary(done), "drain_s": time.monotonic() - began})

    async def idle_baseline(self) -> None:
        """The servers' CPU rate with nothing but the health probes (and the preflight's closed sessions)."""
        if self.args.baseline <= 0:
            return
        cpu0, began = [load_servers.cpu_s(s.pid) for s in self.m.servers], time.monotonic()
        await asyncio.sleep(self.args.baseline)
        for server, before in zip(self.m.servers, cpu0, strict=True):
            server.idle_cpu_per_s = (load_servers.cpu_s(server.pid) - before) / (time.monotonic() - began)

    async def sample(self, wall0: float) -> None:
        """Resident memory and event-loop lag every 0.5 s; a progress line every 10 s."""
        ticks = 0
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.5)
            self.m.loop_lags_s.append(time.perf_counter() - before - 0.5)
            ticks += 1
            for server in self.m.servers:
                server.rss_mb.append(load_servers.rss_mb(server.pid))
            if ticks % 20 == 0:
                print(f"  {time.monotonic() - wall0:4.0f} s: {len(self.m.first_loads)} loaded, {len(self.m.reruns)} "
                      f"reruns, {len(self.m.errors)} errors", file=sys.stderr, flush=True)  # fmt: skip

    async def run(self, health_urls: dict[str, str]) -> Measured:
        a, stop = self.args, threading.Event()
        for server in self.m.servers:
            server.health_from = math.inf
        probes = [
            threading.Thread(
                target=probe_health, args=(s, health_urls[s.name], a.health_interval, a.health_timeout, stop)
            )
            for s in self.m.servers
        ]
        for probe in probes:
            probe.start()
        await self.idle_baseline()
        for server in self.m.servers:
            server.rss_mb.append(load_servers.rss_mb(server.pid))
        own0, wall0 = load_servers.own_cpu_s(), time.monotonic()
        busy0, stolen0 = load_servers.machine_cpu_s()
        balancer0 = load_servers.cpu_s(self.balancer_pid)
        for server in self.m.servers:
            server.cpu_start_s, server.health_from = load_servers.cpu_s(server.pid), wall0
        sampler = asyncio.create_task(self.sample(wall0))
        try:
            if a.burst:
                await self.bursts(wall0)
            else:
                end = wall0 + a.seconds
                await asyncio.gather(*(self.steady(i, wall0, end) for i in range(a.sessions)))
        finally:
            self.m.ended_at = time.monotonic()
            self.m.wall_s = self.m.ended_at - wall0
            self.m.generator_cpu_s = load_servers.own_cpu_s() - own0
            busy, stolen = load_servers.machine_cpu_s()
            self.m.machine_busy_s, self.m.machine_stolen_s = busy - busy0, stolen - stolen0
            self.m.balancer_cpu_s = load_servers.cpu_s(self.balancer_pid) - balancer0 if self.balancer_pid else 0.0
            self.m.cores = os.cpu_count() or 1
            for server in self.m.servers:
                server.cpu_end_s = load_servers.cpu_s(server.pid)
                server.rss_mb.append(load_servers.rss_mb(server.pid))
            stop.set()
            sampler.cancel()
            await asyncio.gather(*(s.close() for s in self.open), return_exceptions=True)
            for probe in probes:
                probe.join()
        return self.m


async def preflight(plan: PagePlan, query: str, url: str) -> tuple[float, list[dict[str, str]]]:
    """Load the page once and change the input once; LayoutError if a label in the plan is missing.

    Returns the first load's time (a cold process pays its imports and caches here, not in
    the run) and the plotly figures the page drew (spec and config JSON: the floor's figures)."""
    base = scenario_of(query)
    session = Session(url, plan.url_path, query)
    try:
        await session.open()
        run = await session.load(timeout_s=120)
        try:
            session.number_input(plan.input_label)
        except ProtocolError as missing:
            raise LayoutError(f"{plan.title}: the input to change is not there: {missing}") from None
        problem = headline_problem(plan, run, expected_headline(plan, base))
        value = plan.values[0] + 1
        if problem is None:
            rerun = await session.set_number(plan.input_label, value)
            problem = headline_problem(plan, rerun, expected_headline(plan, base, value))
        if problem:
            raise LayoutError(f"{plan.title}: {problem}")
        return run.elapsed_s, [{"spec": f.spec, "config": f.config} for f in run.of_kind("plotly_chart")]
    finally:
        await session.close()


def config_of(args: argparse.Namespace, url: str, replicas: int) -> dict[str, Any]:
    plan = PAGES[args.page]
    return {
        "mode": "burst" if args.burst else "steady",
        "sessions": args.sessions,
        "seconds": args.seconds,
        "period_s": args.period,
        "bursts": args.burst,
        "ramp_s": args.ramp,
        "seed": args.seed,
        "page": args.page,
        "page_title": plan.title,
        "url_path": plan.url_path,
        "query": plan.query if args.query is None else args.query,
        "input_label": plan.input_label,
        "headline_label": plan.headline_label,
        "url": url,
        "replicas": replicas,
        "health_interval_s": args.health_interval,
        "health_timeout_s": args.health_timeout,
    }


async def measure(
    args: argparse.Namespace,
    deployment: load_servers.Deployment | None,
    drawn: list[list[dict[str, str]]] | None = None,
) -> dict[str, Any]:
    """Preflight every replica, then the timed run; `drawn` collects the page's figures from the preflight."""
    plan = PAGES[args.page]
    query = plan.query if args.query is None else args.query
    if deployment is None:  # --url: probe its health, watch --pid if given
        url = args.url.rstrip("/")
        direct = {"server": url}
        servers = [ServerTrace("server", args.pid, load_servers.cpu_s(args.pid))]
        health = {"server": url + load_servers.APP.HEALTH_PATH}
    else:
        url, direct = deployment.url, {r.name: r.url for r in deployment.replicas}
        servers = [ServerTrace(r.name, r.pid, load_servers.cpu_s(r.pid)) for r in deployment.replicas]
        health = {r.name: r.health_url for r in deployment.replicas}
    for name, target in direct.items():
        cold, figures_drawn = await preflight(plan, query, target)
        if drawn is not None:
            drawn.append(figures_drawn)
        print(f"preflight on {name}: first load {cold:.2f} s; labels found, headline checked", file=sys.stderr)
    balancer = deployment.balancer.pid if deployment and deployment.balancer else 0
    measured = await LoadTest(args, url, servers, balancer).run(health)
    return figures(config_of(args, url, max(1, len(servers))), measured)


def measure_floor(args: argparse.Namespace, drawn: list[dict[str, str]], log_dir: Path) -> dict[str, Any]:
    """The same sessions against the floor page (one replica, started here), after the app's run."""
    specs = log_dir / "floor_figures.json"
    specs.write_text(json.dumps({args.page: drawn}))
    print(f"floor: {len(drawn)} figures from the app's page, prebuilt; same sessions again", file=sys.stderr)
    replica = load_servers.start_replica("floor", log_dir, FLOOR_ENTRY, {"FLOOR_FIGURES": str(specs)})
    try:
        floor_args = argparse.Namespace(**{**vars(args), "replicas": 1, "url": None})
        return asyncio.run(measure(floor_args, load_servers.Deployment(replica.url, [replica])))
    finally:
        load_servers.stop(replica.process)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50, help="concurrent sessions (default 50)")
    parser.add_argument("--seconds", type=float, default=60, help="length of a steady run (default 60)")
    parser.add_argument("--period", type=float, default=5, help="seconds between a session's changes (default 5)")
    parser.add_argument("--burst", type=int, default=0, metavar="N", help="N bursts: every session changes at once")
    parser.add_argument("--ramp", type=float, default=5, help="sessions open at random moments of this many seconds")
    parser.add_argument("--page", choices=sorted(PAGES), default="overview")
    parser.add_argument("--query", help="the link's query string (default: the page's row in load_pages.PAGES)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--replicas", type=int, choices=(1, 2), default=1, help="2: two replicas behind HAProxy")
    parser.add_argument("--url", help="an app (or balancer) already running: no servers are started")
    parser.add_argument("--pid", type=int, default=0, help="with --url: the server's pid, for its CPU and memory")
    parser.add_argument("--baseline", type=float, default=5, help="seconds of idle server CPU measured first")
    parser.add_argument("--health-interval", type=float, default=0.5)
    parser.add_argument("--health-timeout", type=float, default=10)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="then run the same sessions against a bare page drawing the same figures (benchmarks/floor_app.py)",
    )
    parser.add_argument("--log-dir", type=Path, help="keep server and balancer logs here (default: thrown away)")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.period <= 0 or args.seconds <= 0 or args.burst < 0 or args.ramp < 0:
        parser.error("--sessions must be ≥ 1, --period and --seconds > 0, --burst and --ramp ≥ 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="load-") as tmp:
        log_dir = args.log_dir or Path(tmp)
        log_dir.mkdir(parents=True, exist_ok=True)
        deployment = None
        try:
            if args.url is None:
                deployment = load_servers.start(args.replicas, log_dir)
            drawn: list[list[dict[str, str]]] = []
            result = asyncio.run(measure(args, deployment, drawn))
            if deployment is not None:
                result["balancer_events"] = deployment.balancer_events()
            if args.floor:
                if deployment is not None:  # the app's servers stop first: the floor gets the machine alone
                    deployment.stop()
                    deployment = None
                result["floor"] = measure_floor(args, drawn[0], log_dir)
        except (LayoutError, load_servers.StartError) as problem:
            print(
                f"error: {problem}\nIf the page changed, update its row in benchmarks/load_pages.py.", file=sys.stderr
            )
            return 2
        finally:
            if deployment is not None:
                deployment.stop()
    print(load_report.render(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(load_report.json_safe(result), indent=2, allow_nan=False) + "\n")
        print(f"\nfigures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
