"""Files a user hands the command line (`calibrate --serving-file`, `--measurements-file`): read as text, or refused."""

from __future__ import annotations

from pathlib import Path


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8); ValueError naming the path and why it cannot be read. Example: 'x.csv: cannot be read (FileNotFoundError)'."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: cannot be read ({type(error).__name__})") from None
