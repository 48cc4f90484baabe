"""How many browser sessions one app process holds: a rough capacity figure for the README.

Starts the app exactly as the browser tests and the Docker image do (`app_command` on a free
loopback port, from the repo root), then for N = 1, 5, 10, 20 opens N Chromium pages at
once (one browser, one context per page, so N separate Streamlit sessions). Each page loads
the Overview, waits for its metrics, types its own output length into the sidebar (a cache
miss per session) and waits for the new total latency. Printed per N: the time until every
session showed its first metrics and its changed metrics, and the server's resident memory
(VmRSS of the process and its children, from /proc) idle, at its peak while the sessions
load, and once they are open; and the server's CPU seconds in the round (with its share of
the round's wall time: near 100% the server is the bottleneck, well below it the browsers). Sessions of one round stay open until the round ends.

Not a load test: one machine runs both the browsers and the server, so the times are an
upper bound. Loopback only, bounded in time; the server is stopped at the end.
Run: `python benchmarks/bench_sessions.py` (needs /usr/bin/chromium, like `make test`).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from types import ModuleType

from playwright.async_api import Browser, async_playwright, expect

from core import Scenario, estimate

ROOT = Path(__file__).resolve().parents[1]
READY = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'
ROUND_TIMEOUT_S = 180.0
STEP_TIMEOUT_MS = 90_000


def _load_app_command() -> ModuleType:
    """tests/e2e/app_command.py by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("_bench_app_command", ROOT / "tests" / "e2e" / "app_command.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


APP = _load_app_command()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((APP.TEST_ADDRESS, 0))
        return int(sock.getsockname()[1])


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def rss_mb(pid: int) -> float:
    """VmRSS of a process and all its descendants, MB."""
    total_kb, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except OSError:
            continue
        todo += _children(current)
    return total_kb / 1024


def cpu_s(pid: int) -> float:
    """User + system CPU seconds used so far by a process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    with log.open("wb") as out:
        server = subprocess.Popen(APP.app_command(port), cwd=APP.REPO_ROOT, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(APP.health_url(port), timeout=2) as response:
                if response.read() == b"ok":
                    return server, f"http://{APP.TEST_ADDRESS}:{port}"
        except OSError:
            time.sleep(0.1)
    stop(server)
    sys.exit(f"the app did not answer on {APP.health_url(port)}:\n{log.read_text(errors='replace')[-3000:]}")


def stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        os.kill(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(server.pid, signal.SIGKILL)
            server.wait(timeout=10)


def expected_total(output_tokens: int) -> str:
    """The Overview's 'Total latency' for the lesson's scenario with this reply length."""
    lesson = Scenario.lesson()
    total = estimate(replace(lesson, workload=replace(lesson.workload, output_tokens=output_tokens))).total_s
    return f"{total:,.2f} s" if total >= 1 else f"{total * 1e3:,.2f} ms"


async def one_session(browser: Browser, base: str, output_tokens: int, t0: float) -> tuple[float, float]:
    """Load the Overview, then type a reply length; seconds from t0 to each result on screen."""
    context = await browser.new_context(base_url=base, viewport={"width": 1280, "height": 1400})
    page = await context.new_page()
    await page.goto("/", timeout=STEP_TIMEOUT_MS)
    await page.locator(READY).wait_for(timeout=STEP_TIMEOUT_MS)
    values = page.get_by_test_id("stMetricValue")
    await expect(values.nth(2)).to_have_text("3.51 s", timeout=STEP_TIMEOUT_MS)
    loaded = time.perf_counter() - t0
    field = page.get_by_test_id("stSidebar").get_by_role("spinbutton", name="Output tokens", exact=True)
    await field.fill(str(output_tokens))
    await field.press("Enter")
    await expect(values.nth(2)).to_have_text(expected_total(output_tokens), timeout=STEP_TIMEOUT_MS)
    changed = time.perf_counter() - t0
    return loaded, changed


async def sample_peak(pid: int, stop_event: asyncio.Event, peak: list[float]) -> None:
    while not stop_event.is_set():
        peak[0] = max(peak[0], rss_mb(pid))
        await asyncio.sleep(0.1)


async def one_round(browser: Browser, base: str, pid: int, n: int, round_no: int) -> None:
    idle = rss_mb(pid)
    peak, done = [idle], asyncio.Event()
    sampler = asyncio.create_task(sample_peak(pid, done, peak))
    contexts_before = set(browser.contexts)
    cpu0 = cpu_s(pid)
    t0 = time.perf_counter()
    try:
        results = await asyncio.wait_for(
            asyncio.gather(*(one_session(browser, base, 600 + 50 * round_no + i, t0) for i in range(n))),
            timeout=ROUND_TIMEOUT_S,
        )
        open_rss = rss_mb(pid)
        wall, server_cpu = time.perf_counter() - t0, cpu_s(pid) - cpu0
        done.set()
        await sampler
        loads, changes = [r[0] for r in results], [r[1] for r in results]
        print(
            f"{n:>8} {max(loads):>12.2f} {statistics.median(loads):>12.2f} {max(changes):>12.2f} "
            f"{server_cpu:>10.1f} ({server_cpu / wall:4.0%}) {idle:>9.0f} {max(peak[0], open_rss):>9.0f} {open_rss:>9.0f}",
            flush=True,
        )
    except TimeoutError:
        done.set()
        await sampler
        print(f"{n:>8}  did not finish within {ROUND_TIMEOUT_S:.0f} s (server RSS {rss_mb(pid):.0f} MB)", flush=True)
    finally:
        for context in set(browser.contexts) - contexts_before:
            await context.close()
        await asyncio.sleep(2)  # let the server notice the closed websockets


async def run(counts: list[int]) -> None:
    if not APP.CHROMIUM.is_file():
        sys.exit(f"{APP.CHROMIUM} is missing: run `make test` (it installs Debian's chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        server, base = start_server(Path(tmp) / "streamlit.log")
        try:
            print(f"server pid {server.pid} on {base}; RSS at start {rss_mb(server.pid):.0f} MB\n")
            print(
                f"{'sessions':>8} {'all loaded s':>12} {'median s':>12} {'all changed':>12} "
                f"{'server CPU s':>17} {'RSS idle':>9} {'RSS peak':>9} {'RSS open':>9}   (MB)"
            )
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=str(APP.CHROMIUM), args=APP.CHROMIUM_ARGS)
                try:
                    for round_no, n in enumerate(counts):
                        await one_round(browser, base, server.pid, n, round_no)
                finally:
                    await browser.close()
            print(f"\nserver RSS after every session closed: {rss_mb(server.pid):.0f} MB")
        finally:
            stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("counts", nargs="*", type=int, default=[1, 5, 10, 20], help="concurrent sessions per round")
    args = parser.parse_args()
    asyncio.run(run(args.counts))


if __name__ == "__main__":
    main()
