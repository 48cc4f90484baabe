"""Files a user hands the command line (`calibrate --serving-file`, `--measurements-file`): read as text, or refused."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from core.fields import cut

_WHY = {
    FileNotFoundError: "no such file",
    IsADirectoryError: "a folder, not a file",
    PermissionError: "not allowed to read it",
}


MAX_FILE_BYTES = 64 * 2**20  # the bundled files are under 1 MB each; 64 MB is some 400,000 rows


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8); ValueError naming the path and why, in words. Example: 'x.csv: cannot be
    read: no such file'. (It said '(IsADirectoryError)' for an empty path, '(UnicodeDecodeError)' for UTF-16.)"""
    if not str(path).strip():
        raise ValueError("no file named: give a CSV file's path")
    try:
        with Path(path).open("rb") as file:  # at most the cap and a byte: /dev/zero was read until killed
            data = file.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(
                f"{path}: cannot be read: larger than {MAX_FILE_BYTES // 2**20} MB (a CSV of measurements)"
            )
        return data.decode("utf-8-sig")  # Excel's "CSV UTF-8" starts with a byte-order mark
    except UnicodeDecodeError:
        raise ValueError(f"{path}: cannot be read: not UTF-8 text (save it as UTF-8 CSV)") from None
    except OSError as error:
        why = next((words for kind, words in _WHY.items() if isinstance(error, kind)), error.strerror or "unreadable")
        raise ValueError(f"{path}: cannot be read: {why}") from None


NUMBER_FLOOR, NUMBER_CEILING = 1e-6, 1e15  # a cell's number, in the file's own unit (ms, GB/s, billions)
WHOLE_CEILING = 1e9  # a count or a length


def number(row: Mapping[str, str | None], column: str, *, whole: bool = False, optional: bool = False) -> float | None:
    """A cell as a finite number above 0 (a whole one ≥ 1 with `whole`), or None when `optional` and empty.

    Every count, length, time and datasheet figure a measurements or serving file gives is one: a
    zero time divided the error by zero, an infinite bandwidth overflowed, a NaN printed 'nan%'.
    ValueError names the column and the allowed range. Example: tpot_ms '0' → "tpot_ms must be a
    number above 0, got '0'".
    """
    text = (row.get(column) or "").strip()
    if optional and not text:
        return None
    allowed = "a whole number ≥ 1" if whole else "a number above 0"
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0 and (not whole or (value.is_integer() and value >= 1))):
        raise ValueError(f"{column} must be {allowed}, got {text[:20]!r}")
    # No measured figure, count or datasheet number lies past these: a time of 1e-300 ms printed a 300-digit
    # error, a length of 1e30 was echoed back as 1000000000000000019884624838656.
    low, high = (1, WHOLE_CEILING) if whole else (NUMBER_FLOOR, NUMBER_CEILING)
    if not low <= value <= high:
        raise ValueError(f"{column} must be {'a whole number' if whole else 'a number'} from {_shown(low)} to "
                         f"{_shown(high)}, got {text[:20]!r}")  # fmt: skip
    return value


def _shown(bound: float) -> str:
    return f"{bound:,.0f}" if bound >= 1 else f"{bound:.6f}".rstrip("0")  # 0.000001, 1,000,000,000


def whole(row: Mapping[str, str | None], column: str) -> int:
    """`number(row, column, whole=True)` as an int."""
    return int(number(row, column, whole=True) or 0)


def cells_match(row: Mapping[str | None, object], columns: int) -> None:
    """ValueError when a row has more or fewer cells than the header (csv.DictReader pads with None)."""
    if None in row or None in row.values():
        raise ValueError(f"its cells do not match the header's {columns} columns")
    for column, cell in row.items():
        # An escape sequence in a cell reached the terminal raw when a report printed it ("\x1b[2J" cleared it).
        if isinstance(cell, str) and not cell.replace("\n", " ").isprintable():
            raise ValueError(f"{column} holds a control character: {cut(repr(cell))}")
