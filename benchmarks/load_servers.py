"""The servers a load test runs against: Streamlit replicas started as the Docker image starts
them, HAProxy in front of two of them, and what /proc says each process costs.

A replica is `app_command(port)` from tests/e2e/app_command.py (the image's CMD, which
tests/test_packaging.py keeps equal to the Dockerfile's) run from the repo root, with the
image's environment (`IMAGE_ENV`, also checked against the Dockerfile by a test). HAProxy
runs in the foreground on deploy/haproxy.cfg; the addresses come from the environment
(`LB_BIND`, `REPLICA_1`, `REPLICA_2`), which HAProxy expands in quoted strings.
Every process started here is stopped by its pid.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
START_TIMEOUT_S = 60.0
# The Dockerfile's ENV lines that change how the server runs (no file watcher thread in the image).
IMAGE_ENV = {"STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _load_app_command() -> ModuleType:
    """tests/e2e/app_command.py by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("_load_app_command", ROOT / "tests" / "e2e" / "app_command.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


APP = _load_app_command()
stop = APP.stop


class StartError(RuntimeError):
    """A server did not come up; the message carries the end of its log."""


# --- /proc ------------------------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far (all its threads): /proc/PID/stat fields 14 + 15.

    NaN for pid 0 (a server this tool does not watch)."""
    if pid == 0:
        return math.nan
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mb(pid: int) -> float:
    """Resident memory (VmRSS) of one process, MB; NaN for pid 0."""
    if pid == 0:
        return math.nan
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def own_cpu_s() -> float:
    """CPU seconds this process (the load generator) has used so far."""
    times = os.times()
    return times.user + times.system


def machine_cpu_s() -> tuple[float, float]:
    """(busy, stolen) CPU seconds of the whole machine so far, all cores: /proc/stat's first line.

    Busy is user + nice + system + irq + softirq; stolen is time the hypervisor gave to
    someone else. Other people's processes on a shared machine show up here and not in
    the server's or the generator's own figures."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq) / CLK_TCK, steal / CLK_TCK


# --- processes --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((APP.TEST_ADDRESS, 0))
        return int(sock.getsockname()[1])


def health(url: str, timeout_s: float = 2) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return bytes(response.read())
    except OSError:
        return b""


def _wait_healthy(process: subprocess.Popen[Any], url: str, log: Path, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        if health(url) == b"ok" and process.poll() is None:
            return
        time.sleep(0.1)
    why = f"exited with code {process.poll()}" if process.poll() is not None else f"no 'ok' in {START_TIMEOUT_S:.0f} s"
    stop(process)
    raise StartError(f"{what} did not answer {url} ({why}); end of {log}:\n{log.read_text(errors='replace')[-3000:]}")


@dataclass
class Replica:
    name: str  # the balancer's name for it (its affinity cookie value)
    port: int
    process: subprocess.Popen[Any]

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def url(self) -> str:
        return f"http://{APP.TEST_ADDRESS}:{self.port}"

    @property
    def health_url(self) -> str:
        return str(APP.health_url(self.port))


def start_replica(name: str, log_dir: Path, entry: str | None = None, env: dict[str, str] | None = None) -> Replica:
    """The app as the image runs it; `entry` swaps only the script (the floor page), `env` adds variables."""
    port = free_port()
    log = log_dir / f"streamlit-{name}.log"
    command = APP.app_command(port)
    if entry is not None:
        command[command.index(APP.ENTRY)] = entry
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=APP.REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **IMAGE_ENV, **(env or {})},
        )
    replica = Replica(name, port, process)
    _wait_healthy(process, replica.health_url, log, f"replica {name} (pid {process.pid})")
    return replica


def haproxy_env(bind_port: int, replicas: list[Replica]) -> dict[str, str]:
    """The variables deploy/haproxy.cfg reads: its bind address and the two replicas' addresses."""
    if len(replicas) != 2:
        raise ValueError(f"deploy/haproxy.cfg has two servers, got {len(replicas)} replicas")
    env = {"LB_BIND": f"{APP.TEST_ADDRESS}:{bind_port}"}
    env.update({f"REPLICA_{i}": f"{APP.TEST_ADDRESS}:{r.port}" for i, r in enumerate(replicas, start=1)})
    return env


@dataclass
class Deployment:
    """What a load test runs against: its entry URL, the replicas behind it, the balancer if any."""

    url: str
    replicas: list[Replica] = field(default_factory=list)
    balancer: subprocess.Popen[Any] | None = None
    balancer_log: Path | None = None

    def stop(self) -> None:
        if self.balancer is not None:
            stop(self.balancer)
        for replica in self.replicas:
            stop(replica.process)

    def balancer_events(self) -> list[str]:
        """HAProxy's lines about servers going DOWN or UP during the run."""
        if self.balancer_log is None or not self.balancer_log.exists():
            return []
        lines = self.balancer_log.read_text(errors="replace").splitlines()
        return [line.strip() for line in lines if " is DOWN" in line or " is UP" in line]


def start(replica_count: int, log_dir: Path) -> Deployment:
    """One replica served directly, or two behind HAProxy."""
    replicas: list[Replica] = []
    try:
        for i in range(1, replica_count + 1):
            replicas.append(start_replica(f"s{i}", log_dir))
        if replica_count == 1:
            return Deployment(replicas[0].url, replicas)
        haproxy = shutil.which("haproxy")
        if haproxy is None:
            raise StartError("haproxy is not installed: `make load-scaled` installs Debian's package (as root)")
        port = free_port()
        log = log_dir / "haproxy.log"
        env = {**os.environ, **haproxy_env(port, replicas)}
        with log.open("wb") as out:
            balancer = subprocess.Popen([haproxy, "-db", "-f", str(HAPROXY_CFG)], env=env, stdout=out, stderr=out)
        url = f"http://{APP.TEST_ADDRESS}:{port}"
        _wait_healthy(balancer, url + APP.HEALTH_PATH, log, f"haproxy (pid {balancer.pid})")
        return Deployment(url, replicas, balancer, log)
    except BaseException:
        for replica in replicas:
            stop(replica.process)
        raise
