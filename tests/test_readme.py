"""The README is checked against the code, so it cannot drift from what ships."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.site_pages import PAGES
from core.cli import SUBCOMMANDS, build_parser
from core.engine import ENGINES

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def page_titles() -> list[str]:
    """Every page's title, from the one list the entry file builds its pages from."""
    return [title for _, title, _ in PAGES.values()]


def test_every_page_is_described():
    titles = page_titles()
    assert len(titles) == 7
    for title in titles:
        assert f"**{title}**" in README, title


def test_every_cli_subcommand_is_described():
    parser_subcommands = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert parser_subcommands == set(SUBCOMMANDS)
    for name in SUBCOMMANDS:
        assert f"python -m core {name}" in README, name


def test_the_option_tables_are_generated_from_the_descriptions():
    # `make docs` writes them; a field added without regenerating fails here.
    from core.cli.options_doc import END, START, options_markdown

    assert options_markdown() in README
    assert README.count(START) == 1 and README.count(END) == 1


@pytest.mark.parametrize("command", ["estimate", "serve", "plan"])
def test_every_option_is_listed(command):
    parser = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    options = {o for action in parser._actions for o in action.option_strings if o.startswith("--") and o != "--help"}
    assert len(options) > 40  # the scenario's options are there too
    for option in options:
        assert f"`{option}" in README or f" {option}" in README, option


def test_the_two_commands():
    block = re.search(r"## Quickstart.*?```bash\n(.*?)```", README, re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make run", "make test"]
    assert (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1] == "make test"


def test_the_calibration_tables_are_generated_from_the_code_and_the_data():
    # `make docs` writes the engines' costs, the errors per set and slice and the likely ranges.
    from core.cli.calibration_doc import END, START, calibration_markdown

    assert calibration_markdown() in README
    assert README.count(START) == 1 and README.count(END) == 1


def test_every_engine_is_named_in_the_readme():
    for engine_id in ENGINES:
        assert f"`{engine_id}`" in README, engine_id


def test_screenshots_named_in_the_readme_exist():
    for path in re.findall(r"\]\((docs/screenshots/[^)]+\.png)\)", README):
        assert (ROOT / path).is_file(), path
