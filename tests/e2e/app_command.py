"""The command that serves the dashboard, shared by the browser tests, the load test and the Dockerfile; and how to stop one.

The e2e fixture starts ``app_command(port)`` with ``cwd=REPO_ROOT`` (so that
``.streamlit/config.toml`` applies, as in the image) and polls ``health_url(port)``.
``tests/test_packaging.py`` checks that the Dockerfile's ``CMD`` is ``docker_cmd()``: the
same ``streamlit`` arguments (``STREAMLIT_ARGS``), apart from the address and port. Change
the arguments here and the Dockerfile test tells you to change the image too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]

ENTRY = "streamlit_app.py"
HEALTH_PATH = "/_stcore/health"

# Everything after `streamlit` on both command lines, except --server.address/--server.port.
STREAMLIT_ARGS: list[str] = ["run", ENTRY]

# Debian's chromium, never a downloaded browser; the flags keep it off the closed network.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

DOCKER_ADDRESS = "0.0.0.0"
DOCKER_PORT = 8501
TEST_ADDRESS = "127.0.0.1"


def address_args(address: str, port: int) -> list[str]:
    """The per-environment part of the command line."""
    return [f"--server.address={address}", f"--server.port={port}"]


def app_command(port: int, address: str = TEST_ADDRESS) -> list[str]:
    """The command the browser tests run (from REPO_ROOT), with this venv's Python."""
    return [sys.executable, "-m", "streamlit", *STREAMLIT_ARGS, *address_args(address, port)]


def docker_cmd() -> list[str]:
    """The Dockerfile's CMD, exactly."""
    return ["streamlit", *STREAMLIT_ARGS, *address_args(DOCKER_ADDRESS, DOCKER_PORT)]


def health_url(port: int, address: str = TEST_ADDRESS) -> str:
    """Streamlit's health endpoint; it answers ``ok`` once the server is up."""
    return f"http://{address}:{port}{HEALTH_PATH}"


def stop(process: subprocess.Popen[Any]) -> None:
    """Stop a server by its pid: SIGTERM, then SIGKILL if it has not gone after 10 s."""
    if process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
