"""Real-browser test set-up: one live app server per session, Debian's chromium, a tall viewport.

The server is started with exactly ``app_command(port)`` from ``REPO_ROOT`` — the command the
Docker image runs (``tests/test_packaging.py`` compares the two) — on a free loopback port,
and stopped by its pid at the end of the session. Playwright drives ``/usr/bin/chromium``
(never ``playwright install``); when it is missing the tests fail, they are never skipped,
so CI cannot go green without running them. Every test in this folder is marked ``e2e``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.app_command import CHROMIUM, CHROMIUM_ARGS, REPO_ROOT, TEST_ADDRESS, app_command, health_url, stop

VIEWPORT = {"width": 1280, "height": 1400}  # tall: stMain scrolls by itself, so full_page captures nothing more
HEALTH_TIMEOUT_S = 30.0
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.e2e)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((TEST_ADDRESS, 0))
        return int(sock.getsockname()[1])


def _health(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode("utf-8", "replace")
    except OSError:
        return ""


def start_server(log_dir: Path) -> tuple[subprocess.Popen[Any], str]:
    """Start the app on a free port and wait for its health check. Returns (process, base URL)."""
    port = free_port()
    stdout, stderr = log_dir / "streamlit.out", log_dir / "streamlit.err"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(app_command(port), cwd=REPO_ROOT, stdout=out, stderr=err)
    url = health_url(port)
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if _health(url) == "ok":
            # Our process must still be the one answering (not another server on a reused port).
            if process.poll() is None:
                return process, f"http://{TEST_ADDRESS}:{port}"
            break
        time.sleep(0.1)
    exited = process.poll()
    stop(process)
    logs = stderr.read_text(errors="replace")[-4000:] + stdout.read_text(errors="replace")[-2000:]
    why = f"it exited with code {exited}" if exited is not None else f"no answer within {HEALTH_TIMEOUT_S:.0f} s"
    pytest.fail(
        f"the app did not answer 'ok' on {url} ({why}); command {app_command(port)}; its output:\n{logs}",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a live app server, shared by every browser test of the session."""
    process, base = start_server(tmp_path_factory.mktemp("streamlit-server"))
    try:
        yield base
    finally:
        stop(process)


@pytest.fixture(scope="session")
def base_url(app_server: str) -> str:
    return app_server


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium. Run `make test`, which "
            "installs it (apt-get install -y chromium); never `playwright install`.",
            pytrace=False,
        )
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_context_args, "viewport": VIEWPORT, "accept_downloads": True}
