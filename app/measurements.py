"""Parse a user's latency measurements: a small CSV of `output_tokens,latency_ms` (or `latency_s`).

Pure: bytes or text in, arrays out, or a ValueError whose message names the row (the
file's line number, the header being row 1, as a spreadsheet counts) and the column.
The input comes from strangers, so it is bounded before it is read (size, rows, field
length), must be UTF-8 text, and may hold only plain numbers: no formulas (a cell
starting with = or @ runs in a spreadsheet when the CSV is reopened), no markup, no
NaN or infinity. Messages never echo the user's text back, so nothing they upload is
rendered.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

import numpy as np

from core.specs import MAX_TOKENS

MAX_BYTES = 256 * 1024
MAX_ROWS = 10_000
MAX_FIELD_CHARS = 40
MAX_LINE_CHARS = 1_000
MAX_OUTPUT_TOKENS = MAX_TOKENS  # the scenario's own bound on output tokens
MAX_LATENCY_S = 86_400.0  # one day: anything longer is not one reply
# 0.1 ms: no server answers faster (a kernel launch alone is microseconds); 1e-300 s gave a 300-digit MBU.
MIN_LATENCY_S = 1e-4
TOKENS = "output_tokens"
LATENCY_COLUMNS = {"latency_ms": 1e-3, "latency_s": 1.0}  # column → seconds per unit
EXAMPLE = "output_tokens,latency_ms\n1,30.2\n100,724.3\n800,5621.7"  # three rows of the lesson's lab

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_NOT_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
Header = tuple[int, int, str, list[str]]  # tokens index, latency index, latency column, column names


@dataclass(frozen=True, slots=True)
class Measurements:
    """Parsed rows: output tokens and latency in seconds, in file order."""

    output_tokens: np.ndarray
    latency_s: np.ndarray
    latency_column: str  # "latency_ms" or "latency_s", as the file gave it

    @property
    def rows(self) -> int:
        return int(self.output_tokens.size)


def _text(data: bytes | str) -> str:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > MAX_BYTES:
        raise ValueError(f"the file is {len(raw) / 1024:,.1f} KB; the limit is {MAX_BYTES // 1024} KB")
    # Windows tools save "Unicode text" as UTF-16 with a byte-order mark: text, not a binary file.
    encoding = "utf-16" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    if encoding != "utf-16" and b"\x00" in raw:
        raise ValueError("this looks like a binary file, not a CSV: save it as plain text (UTF-8)")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        raise ValueError(f"the file is not {encoding.upper()[:6]} text (bad byte at position {error.start})") from None
    if not text.strip():
        raise ValueError(f"the file is empty: give a header `{TOKENS},latency_ms` and at least two rows")
    for row, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise ValueError(f"row {row}: the line is {len(line):,} characters long (limit {MAX_LINE_CHARS:,})")
    return text


def _check_cell(cell: str, row: int, column: str) -> None:
    if len(cell) > MAX_FIELD_CHARS:
        raise ValueError(
            f"row {row}, column {column}: the value is {len(cell):,} characters long (limit {MAX_FIELD_CHARS})"
        )
    if _CONTROL.search(cell):
        raise ValueError(f"row {row}, column {column}: contains control characters; give plain numbers")
    if "<" in cell or ">" in cell:
        raise ValueError(f"row {row}, column {column}: contains markup (< or >); give plain numbers")
    if cell[:1] in ("=", "@"):
        raise ValueError(
            f"row {row}, column {column}: starts with {cell[0]!r}, a spreadsheet formula; give plain numbers"
        )


def _number(cell: str, row: int, column: str) -> float:
    if cell.lower() in _NOT_FINITE:
        raise ValueError(f"row {row}, column {column}: must be a finite number (NaN and infinity are not measurements)")
    if not _NUMBER.fullmatch(cell):
        what = "is empty" if not cell else "is not a number"
        raise ValueError(f"row {row}, column {column}: {what}; give a plain number such as 250 or 1.5e3")
    value = float(cell)
    if not np.isfinite(value):
        raise ValueError(f"row {row}, column {column}: the number is too large")
    return value


def _header(cells: list[str], row: int) -> Header:
    names = [c.strip().lower() for c in cells]
    for name in names:
        _check_cell(name, row, "header")
    found = [n for n in LATENCY_COLUMNS if n in names]
    if TOKENS not in names or not found:
        hint = " (use commas between columns)" if len(names) == 1 and any(s in names[0] for s in ";\t|") else ""
        raise ValueError(f"row {row}: the header must name the columns {TOKENS} and latency_ms (or latency_s){hint}")
    if len(found) == 2:
        raise ValueError(f"row {row}: give latency_ms or latency_s, not both")
    named = [n for n in names if n]
    if len(set(named)) != len(named):
        raise ValueError(f"row {row}: a column name appears twice in the header")
    shown = [n if re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", n) else f"column {i}" for i, n in enumerate(names, start=1)]
    return names.index(TOKENS), names.index(found[0]), found[0], shown


def _row(cells: list[str], row: int, header: Header, width: int) -> tuple[float, float]:
    """One data row → (output tokens, latency in seconds), or ValueError naming row and column."""
    token_index, latency_index, latency_name, names = header
    if len(cells) < width:
        raise ValueError(f"row {row}, column {names[len(cells)]}: missing (the row has {len(cells)} of {width} values)")
    if len(cells) > width:
        raise ValueError(f"row {row}: {len(cells)} values, but the header names only {width} columns")
    cells = [c.strip() for c in cells]
    for cell, name in zip(cells, names, strict=True):
        _check_cell(cell, row, name)
    tokens = _number(cells[token_index], row, TOKENS)
    if not tokens.is_integer() or not 0 <= tokens <= MAX_OUTPUT_TOKENS:
        raise ValueError(f"row {row}, column {TOKENS}: must be a whole number from 0 to {MAX_OUTPUT_TOKENS:,}")
    seconds = _number(cells[latency_index], row, latency_name) * LATENCY_COLUMNS[latency_name]
    if not MIN_LATENCY_S <= seconds <= MAX_LATENCY_S:
        unit, per = latency_name.removeprefix("latency_"), LATENCY_COLUMNS[latency_name]
        raise ValueError(
            f"row {row}, column {latency_name}: must be from {MIN_LATENCY_S / per:g} to {MAX_LATENCY_S / per:,.0f} {unit}"
        )
    return tokens, seconds


def parse_measurements(data: bytes | str) -> Measurements:
    """Rows of (output tokens, latency) from CSV bytes or pasted text; ValueError names row and column.

    Tolerates a UTF-8 byte-order mark, CRLF line ends, blank lines, spaces around values
    and extra columns (ignored). Example: b"output_tokens,latency_ms\\n1,30.2\\n800,5621.7\\n"
    → output_tokens [1, 800], latency_s [0.0302, 5.6217].
    """
    reader = csv.reader(io.StringIO(_text(data), newline=""), strict=True)
    header: Header | None = None
    width = 0
    rows: list[tuple[float, float]] = []
    try:
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if header is None:
                header, width = _header(cells, reader.line_num), len(cells)
            elif len(rows) >= MAX_ROWS:
                raise ValueError(f"more than {MAX_ROWS:,} rows of measurements; send at most {MAX_ROWS:,}")
            else:
                rows.append(_row(cells, reader.line_num, header, width))
    except csv.Error:
        raise ValueError(f"row {reader.line_num}: not valid CSV (check the quotes)") from None
    if header is None:
        raise ValueError(f"the file has no header: start with `{TOKENS},latency_ms`")
    if len(rows) < 2:
        raise ValueError(f"need at least 2 rows of measurements, got {len(rows)}")
    tokens, latency = (np.asarray(column) for column in zip(*rows, strict=True))
    if np.unique(tokens).size < 2:
        raise ValueError(f"need at least two different {TOKENS} values to fit a line, got only {tokens[0]:,.0f}")
    return Measurements(tokens, latency, header[2])


def read_measurements(source: bytes | str | None, uploaded: bool = False) -> tuple[Measurements | None, str | None]:
    """(rows, None) for a good file, (None, the parser's message) for a bad one, (None, None) for nothing.

    An uploaded file is never "nothing": an empty one gets the parser's message.
    """
    if not uploaded and (not source or not source.strip()):
        return None, None
    try:
        return parse_measurements(source or b""), None
    except ValueError as error:
        return None, str(error)
