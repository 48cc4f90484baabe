"""A generated block of README.md: printed, or written between its two markers (`make docs`).

Each generated block (the option lists, the calibration tables) starts and ends with its
own marker line; the block's module renders it, markers included, and calls `main`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def replaced(readme: str, block: str, start: str, end: str) -> str:
    """README text with `block` (which carries the markers) put where the markers stand."""
    head, _, rest = readme.partition(start)
    _, _, tail = rest.partition(end)
    return head + block + tail


def main(render: Callable[[], str], start: str, end: str) -> None:
    """`--write`: the block into README.md; otherwise printed."""
    if sys.argv[1:] == ["--write"]:
        README.write_text(replaced(README.read_text(encoding="utf-8"), render(), start, end), encoding="utf-8")
    else:
        sys.stdout.write(render() + "\n")
