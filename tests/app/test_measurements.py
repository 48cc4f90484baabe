"""The uploaded-measurements parser on good, bad and hostile files.

Every rejection must be a ValueError whose message says where (row = the file's line
number, header = row 1; and the column) and never echoes the user's text back.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.measurements import EXAMPLE, MAX_BYTES, MAX_ROWS, parse_measurements, read_measurements

# The lesson's Part 1 measurements (seed 36), rounded as the lab prints them.
LESSON_CSV = "output_tokens,latency_ms\n1,30.2\n25,200.3\n50,371.8\n100,724.3\n200,1424.8\n400,2827.8\n800,5621.7\n"


def test_lesson_file_parses_in_seconds():
    data = parse_measurements(LESSON_CSV.encode())
    assert data.rows == 7
    assert data.latency_column == "latency_ms"
    assert data.output_tokens.tolist() == [1, 25, 50, 100, 200, 400, 800]
    assert data.latency_s[0] == pytest.approx(0.0302)  # 30.2 ms
    assert data.latency_s[-1] == pytest.approx(5.6217)  # 5621.7 ms


def test_latency_s_column_is_not_scaled():
    data = parse_measurements("output_tokens,latency_s\n1,0.0302\n800,5.6217\n")
    assert data.latency_column == "latency_s"
    assert data.latency_s.tolist() == pytest.approx([0.0302, 5.6217])


def test_bom_crlf_blank_lines_and_spaces_are_tolerated():
    raw = b"\xef\xbb\xbf Output_Tokens , latency_ms \r\n\r\n 1 , 30.2 \r\n\r\n800,5621.7\r\n\r\n"
    data = parse_measurements(raw)
    assert data.output_tokens.tolist() == [1, 800]
    assert data.latency_s.tolist() == pytest.approx([0.0302, 5.6217])


def test_pasted_text_and_bytes_agree():
    assert (
        parse_measurements(LESSON_CSV).latency_s.tolist() == parse_measurements(LESSON_CSV.encode()).latency_s.tolist()
    )


def test_extra_columns_and_any_column_order():
    data = parse_measurements("latency_ms,gpu,output_tokens\n30.2,h100,1\n5621.7,h100,800\n")
    assert data.output_tokens.tolist() == [1, 800]
    assert data.latency_s.tolist() == pytest.approx([0.0302, 5.6217])


def test_quoted_numbers_and_exponents():
    data = parse_measurements('output_tokens,latency_ms\n"1","3.02e1"\n8e2,5621.7\n')
    assert data.output_tokens.tolist() == [1, 800]
    assert data.latency_s[0] == pytest.approx(0.0302)


def test_exactly_the_row_limit_is_accepted():
    rows = "".join(f"{i % 50 + 1},{i % 50 + 10}\n" for i in range(MAX_ROWS))
    assert parse_measurements("output_tokens,latency_ms\n" + rows).rows == MAX_ROWS


# (name, file, words the message must contain)
BAD = [
    ("missing latency column", "output_tokens\n1\n2\n", ["row 1", "latency_ms"]),
    ("missing tokens column", "tokens,latency_ms\n1,2\n3,4\n", ["row 1", "output_tokens"]),
    ("no header at all", "1,30.2\n800,5621.7\n", ["row 1", "header"]),
    ("both latency columns", "output_tokens,latency_ms,latency_s\n1,2,3\n", ["row 1", "not both"]),
    ("semicolons", "output_tokens;latency_ms\n1;30\n2;40\n", ["row 1", "commas"]),
    ("text in a number", "output_tokens,latency_ms\n1,30.2\n25,fast\n", ["row 3", "latency_ms", "not a number"]),
    ("empty cell", "output_tokens,latency_ms\n1,30.2\n,200\n", ["row 3", "output_tokens", "empty"]),
    ("short row", "output_tokens,latency_ms\n1,30.2\n25\n", ["row 3", "latency_ms", "missing"]),
    ("long row", "output_tokens,latency_ms\n1,30.2,9\n25,200\n", ["row 2", "3 values"]),
    ("NaN", "output_tokens,latency_ms\n1,NaN\n25,200\n", ["row 2", "latency_ms", "finite"]),
    ("infinity", "output_tokens,latency_ms\n1,30\n25,inf\n", ["row 3", "latency_ms", "finite"]),
    ("overflow", "output_tokens,latency_ms\n1,30\n25,1e999\n", ["row 3", "latency_ms", "too large"]),
    ("negative latency", "output_tokens,latency_ms\n1,-30\n25,200\n", ["row 2", "latency_ms", "from 0.1 to"]),
    ("zero latency", "output_tokens,latency_ms\n1,0\n25,200\n", ["row 2", "latency_ms", "from 0.1 to"]),
    # 1e-300 s is no reply's latency: it was accepted, and implied a 300-digit MBU.
    (
        "a femtosecond",
        "output_tokens,latency_s\n1,1e-300\n2,2e-300\n",
        ["row 2", "latency_s", "from 0.0001 to 86,400 s"],
    ),
    ("negative tokens", "output_tokens,latency_ms\n-1,30\n25,200\n", ["row 2", "output_tokens", "whole number"]),
    ("fractional tokens", "output_tokens,latency_ms\n1.5,30\n25,200\n", ["row 2", "output_tokens", "whole number"]),
    ("too many tokens", "output_tokens,latency_ms\n1,30\n20000000,200\n", ["row 3", "output_tokens"]),
    ("a day in seconds", "output_tokens,latency_s\n1,30\n25,86401\n", ["row 3", "latency_s", "86,400 s"]),
    ("one row", "output_tokens,latency_ms\n1,30.2\n", ["at least 2 rows", "got 1"]),
    ("header only", "output_tokens,latency_ms\n", ["at least 2 rows", "got 0"]),
    ("empty file", "", ["empty"]),
    ("blank file", "\r\n\r\n  \n", ["empty"]),
    ("duplicate x only", "output_tokens,latency_ms\n100,700\n100,705\n100,699\n", ["two different output_tokens"]),
    ("unclosed quote", 'output_tokens,latency_ms\n1,"30\n', ["row 2", "quotes"]),
]


@pytest.mark.parametrize(("name", "text", "words"), BAD, ids=[b[0] for b in BAD])
def test_bad_files_name_row_and_column(name, text, words):
    with pytest.raises(ValueError) as error:
        parse_measurements(text.encode())
    for word in words:
        assert word in str(error.value), (name, str(error.value))


def test_10001_rows_are_refused():
    rows = "".join(f"{i % 50 + 1},{i % 50 + 10}\n" for i in range(MAX_ROWS + 1))  # ~80 KB: under the byte limit
    with pytest.raises(ValueError, match="more than 10,000 rows"):
        parse_measurements("output_tokens,latency_ms\n" + rows)


def test_300_kb_file_is_refused_before_parsing():
    big = b"output_tokens,latency_ms\n" + b"1,30.2\n" * (300 * 1024 // 7)
    assert len(big) > MAX_BYTES
    with pytest.raises(ValueError, match=r"the file is 3\d\d\.\d KB; the limit is 256 KB"):
        parse_measurements(big)


HOSTILE = [
    ("binary (PNG header)", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["binary"]),
    ("not UTF-8", b"output_tokens,latency_ms\n1,30\xff\n", ["not UTF-8"]),
    # UTF-16 without its byte-order mark is NUL bytes every other byte: not text we can read.
    ("UTF-16 without a BOM", "output_tokens,latency_ms\n1,30\n".encode("utf-16-le"), ["binary"]),
    ("formula =", b"output_tokens,latency_ms\n1,=cmd|' /C calc'!A0\n2,40\n", ["row 2", "latency_ms", "formula"]),
    ("formula @", b"output_tokens,latency_ms\n1,30\n@SUM(1+1),40\n", ["row 3", "output_tokens", "formula"]),
    (
        "formula in an ignored column",
        b"output_tokens,latency_ms,note\n1,30,=HYPERLINK(x)\n2,40,ok\n",
        ["row 2", "note", "formula"],
    ),
    ("formula +", b"output_tokens,latency_ms\n1,+cmd|x\n2,40\n", ["row 2", "latency_ms", "not a number"]),
    ("markup", b"output_tokens,latency_ms\n1,<script>alert(1)</script>\n2,40\n", ["row 2", "latency_ms", "markup"]),
    ("markup in the header", b"output_tokens,latency_ms,<b>x</b>\n1,30,1\n2,40,1\n", ["row 1", "markup"]),
    ("huge field", b"output_tokens,latency_ms\n1," + b"9" * 5000 + b"\n2,40\n", ["row 2", "characters long"]),
    ("long but legal line", b"output_tokens,latency_ms\n1," + b"1" * 41 + b"\n2,40\n", ["row 2", "latency_ms", "41"]),
    ("control characters", b"output_tokens,latency_ms\n1,3\x1b[31m0\n2,40\n", ["row 2", "latency_ms", "control"]),
]


@pytest.mark.parametrize(("name", "raw", "words"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_files_are_refused_clearly(name, raw, words):
    with pytest.raises(ValueError) as error:
        parse_measurements(raw)
    message = str(error.value)
    for word in words:
        assert word in message, (name, message)
    for echoed in ("cmd", "script", "HYPERLINK", "calc", "SUM"):
        assert echoed not in message  # the user's text is never shown back


@given(st.binary(max_size=2000))
def test_any_bytes_parse_or_raise_value_error(raw):
    try:
        data = parse_measurements(raw)
    except ValueError:
        return
    assert data.rows >= 2 and len(set(data.output_tokens.tolist())) >= 2


@given(
    st.lists(
        st.tuples(st.integers(0, 10_000_000), st.floats(0.1, 8.64e7, allow_nan=False)), min_size=2, max_size=50
    ).filter(lambda rows: len({m for m, _ in rows}) >= 2)
)
def test_round_trip_of_valid_rows(rows):
    text = "output_tokens,latency_ms\n" + "".join(f"{m},{t!r}\n" for m, t in rows)
    data = parse_measurements(text)
    assert data.output_tokens.tolist() == [m for m, _ in rows]
    np.testing.assert_allclose(data.latency_s, [t / 1e3 for _, t in rows], rtol=1e-15)


def test_the_paste_boxs_example_is_a_valid_file():
    data = parse_measurements(EXAMPLE)
    assert data.output_tokens.tolist() == [1, 100, 800]  # three of the lesson's rows


@pytest.mark.parametrize(("source", "expected"), [(None, (None, None)), ("", (None, None)), (b"  \n", (None, None))])
def test_nothing_to_read_is_neither_data_nor_a_problem(source, expected):
    assert read_measurements(source) == expected


def test_a_bad_file_reads_as_the_parsers_message():
    data, problem = read_measurements("output_tokens,latency_ms\n1,30\n")
    assert data is None and problem == "need at least 2 rows of measurements, got 1"
    data, problem = read_measurements(EXAMPLE.encode())
    assert problem is None and data is not None and data.rows == 3


def test_a_utf16_file_with_its_byte_order_mark_is_read_as_text() -> None:
    # What Excel's "Unicode Text" and Windows' Notepad save: UTF-16 with a BOM (issue 11: it was called binary).
    data = parse_measurements("output_tokens,latency_ms\n1,30\n2,40\n".encode("utf-16"))
    assert data.output_tokens.tolist() == [1, 2] and data.latency_s.tolist() == [0.030, 0.040]


def test_an_empty_uploaded_file_gets_a_message_and_an_empty_box_does_not() -> None:
    assert read_measurements(b"", uploaded=True) == (None, read_measurements(b"  ", uploaded=True)[1])
    assert "empty" in (read_measurements(b"", uploaded=True)[1] or "")
    assert read_measurements("", uploaded=False) == (None, None)
