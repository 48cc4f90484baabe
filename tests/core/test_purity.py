"""The wall between core/ and the app: core needs the standard library and numpy, nothing else.

STYLE lesson 1 and issue 2 section 1: a fresh interpreter imports core and its CLI, runs
the CLI, and must not have loaded streamlit, plotly or pandas; a static scan checks
every import in core/ against the standard library.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
UI_PACKAGES = ("streamlit", "plotly", "pandas")

PROBE = """
import contextlib, io, json, sys
import core, core.cli, core.estimate, core.lesson, core.calibration
import core.closed_loop, core.open_loop, core.serving_calibration, core.load, core.plan, core.cli.load_commands
estimate_out, lab_out = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(estimate_out):
    estimate_code = core.cli.main(["estimate", "--json"])
with contextlib.redirect_stdout(lab_out):
    lab_code = core.cli.main(["lab"])
print(json.dumps({
    "codes": [estimate_code, lab_code],
    "estimate": json.loads(estimate_out.getvalue()),
    "lab": lab_out.getvalue(),
    "loaded": sorted({name.split(".")[0] for name in sys.modules}),
}))
"""


@pytest.fixture(scope="module")
def probe() -> dict:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_core_and_cli_run_without_ui_packages(probe: dict) -> None:
    assert probe["codes"] == [0, 0]
    assert [name for name in UI_PACKAGES if name in probe["loaded"]] == []
    # The probe really ran core: numpy is loaded and the lesson's Part 3 came out.
    assert "numpy" in probe["loaded"] and "core" in probe["loaded"]


def test_the_probe_ran_the_lesson(probe: dict) -> None:
    # The lesson's Part 3 long reply: TTFT 2 × 7e9 × 200 / 300e12 = 9.33 ms; TPOT 14e9 / 2e12 = 7 ms;
    # total 9.33 + 500 × 7 = 3,509.33 ms; $0.000850 a reply × 100,000 × 30 = $2,550 a month.
    result = probe["estimate"]
    assert result["ttft_ms"] == pytest.approx(28 / 3, rel=1e-12)
    assert result["tpot_ms"] == pytest.approx(7.0, rel=1e-12)
    assert result["total_ms"] == pytest.approx(3509 + 1 / 3, rel=1e-12)
    assert result["monthly_cost_usd"] == pytest.approx(2550, rel=1e-12)
    assert "23.33 ms" in probe["lab"] and "5621.7 ms" in probe["lab"]


def _top_level_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


CORE_FILES = sorted(CORE.rglob("*.py"))


def test_scan_finds_the_core_modules() -> None:
    relative = {p.relative_to(CORE).as_posix() for p in CORE_FILES}
    assert {"specs.py", "scenario.py", "phases.py", "cli/__init__.py"} <= relative
    # The scan sees imports, including numpy's and the stdlib's.
    assert {"numpy", "dataclasses"} <= set().union(*map(_top_level_imports, CORE_FILES))


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: p.relative_to(CORE).as_posix())
def test_core_imports_only_stdlib_numpy_and_itself(path: Path) -> None:
    allowed = set(sys.stdlib_module_names) | {"numpy", "core", "__future__"}
    assert sorted(_top_level_imports(path) - allowed) == []
