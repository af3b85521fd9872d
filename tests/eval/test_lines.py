"""The one line reader: bytes split first, each line decoded alone, BOM stripped, CSV per line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chemgauge.errors import InputFileError, MissingInputError, excerpt
from chemgauge.eval.lines import FIELD_LIMIT, parse_delimited, read_document, read_lines, read_span
from chemgauge.eval.rejections import RejectionStats


def test_a_bad_byte_spoils_only_its_own_line_with_its_true_number(tmp_path: Path) -> None:
    # 149 good lines, one bad byte on line 150, then more: the error names line 150
    data = b"".join(b"line %d\n" % i for i in range(1, 150)) + b"bad \xff here\nlast\n"
    path = tmp_path / "in.txt"
    path.write_bytes(data)
    lines = list(read_lines(path, keep_undecodable=True))
    assert len(lines) == 151
    bad = [line for line in lines if line.problem is not None]
    assert [line.number for line in bad] == [150]
    assert "not valid UTF-8" in (bad[0].problem or "")
    assert bad[0].text == "bad \\xff here"  # shown lossy, for the diagnostic only
    rejected: list[tuple[int, str]] = []
    good = [
        (x.number, x.text)
        for x in read_lines(path, lambda n, reason, text, detail: rejected.append((n, reason)))
    ]
    assert rejected == [(150, "invalid_utf8")]
    assert good[-1] == (151, "last")
    with pytest.raises(InputFileError, match=r"in\.txt, line 150: not valid UTF-8"):
        list(read_lines(path))


def test_bom_is_stripped_and_spans_read_back_the_text(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n{"b": 2}\rlast')
    lines = list(read_lines(path, keep_undecodable=True))
    assert [(line.number, line.text) for line in lines] == [
        (1, '{"a": 1}'),
        (2, '{"b": 2}'),
        (3, "last"),
    ]
    with open(path, "rb") as handle:
        assert [read_span(handle, s) for s in read_lines(path)] == [
            b'{"a": 1}\r\n',
            b'{"b": 2}\r',
            b"last",
        ]
    # only at the start of the file: a BOM further down is text
    path.write_bytes(b"a\n\xef\xbb\xbfb\n")
    assert [line.text for line in read_lines(path, keep_undecodable=True)] == ["a", "\ufeffb"]


def test_spans_count_undecodable_lines_when_given_stats(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"ok\n\xc3\x28\nfine\n")
    stats = RejectionStats()
    assert [s.number for s in read_lines(path, stats)] == [1, 3]
    assert stats.counts == {"invalid_utf8": 1} and stats.diagnostics[0].line == 2


def test_documents_lose_their_bom(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_document(path) == b'{"a": 1}'


def test_open_errors_name_the_exact_cause(tmp_path: Path) -> None:
    with pytest.raises(MissingInputError, match="file not found"):
        list(read_lines(tmp_path / "absent.txt", keep_undecodable=True))
    with pytest.raises(InputFileError, match="expected a file, found a directory"):
        list(read_lines(tmp_path, keep_undecodable=True))
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    with pytest.raises(InputFileError, match="symlink loop"):
        list(read_lines(loop, keep_undecodable=True))
    dangling = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere", dangling)
    with pytest.raises(MissingInputError, match="broken symlink"):
        read_document(dangling)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputFileError, match="a folder on the path is a file"):
        read_document(tmp_path / "file" / "child.json")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a,b,c", ["a", "b", "c"]),
        ('"x,y",z', ["x,y", "z"]),
        ('"x""y",z', ['x"y', "z"]),
        ('ab"c,d', ['ab"c', "d"]),  # a quote inside an unquoted field is text
        ("", []),
    ],
)
def test_delimited_lines_parse_alone(text: str, expected: list[str]) -> None:
    assert parse_delimited(text) == expected


def test_quoting_errors_are_the_lines_own_problem() -> None:
    open_quote = parse_delimited('"CCO\tname', "\t")
    assert isinstance(open_quote, str) and "not closed on this line" in open_quote
    after_quote = parse_delimited('"ab"c,d')
    assert isinstance(after_quote, str) and "malformed quoting" in after_quote


def test_a_long_field_is_read_and_an_oversized_one_is_refused() -> None:
    long_field = "C" * (200 * 1024)  # over csv's own 128 KiB default
    assert parse_delimited(f"{long_field},x") == [long_field, "x"]
    too_long = parse_delimited("C" * (FIELD_LIMIT + 1) + ",x")
    assert isinstance(too_long, str) and "longer than" in too_long


def test_excerpts_are_capped() -> None:
    text = "C" * 5_000_000
    shown = excerpt(text)
    assert len(shown) < 260 and shown.endswith("[4,999,800 more characters]")
    error = InputFileError("bad", path="f", line=1, value=text)
    assert len(str(error)) < 400
