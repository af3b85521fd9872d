"""Counted rejections, atomic writes and the resumable journal."""

from __future__ import annotations

from pathlib import Path

import pytest

from chemgauge.errors import ConfigError, DataQualityError, InputFileError, OutputFileError
from chemgauge.eval.atomic import atomic_write_json, atomic_write_text
from chemgauge.eval.journal import ResumableJsonlWriter
from chemgauge.eval.jsonl import read_jsonl
from chemgauge.eval.rejections import RejectionStats


def test_reader_counts_rejections_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"a": 1}\n\n   \n{broken\n[1, 2]\n{"a": 2}\n')
    stats = RejectionStats()
    rows = list(read_jsonl(path, stats))
    assert rows == [(1, {"a": 1}), (6, {"a": 2})]
    assert stats.counts["malformed_json"] == 2
    assert [d.line for d in stats.diagnostics] == [4, 5]
    assert stats.to_dict()["rejected"] == 2


def test_diagnostics_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("x\n" * 120)
    stats = RejectionStats(max_diagnostics=10)
    assert list(read_jsonl(path, stats)) == []
    assert stats.rejected == 120 and len(stats.diagnostics) == 10
    assert stats.to_dict()["diagnostics_truncated"] is True


def test_strict_mode_names_file_line_and_value(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"a": 1}\nnot json\n')
    with pytest.raises(DataQualityError, match=r"in\.jsonl, line 2.*not json"):
        list(read_jsonl(path, RejectionStats(strict=True)))


def test_missing_file_and_bad_utf8(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="file not found"):
        list(read_jsonl(tmp_path / "nope.jsonl", RejectionStats()))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"a": 1}\n\xff\xfe\n{"a": 3}\n')
    stats = RejectionStats()
    assert list(read_jsonl(bad, stats)) == [(1, {"a": 1}), (3, {"a": 3})]
    assert dict(stats.counts) == {"invalid_utf8": 1}
    assert stats.diagnostics[0].line == 2
    with pytest.raises(DataQualityError, match=r"bad\.jsonl, line 2: invalid_utf8"):
        list(read_jsonl(bad, RejectionStats(strict=True)))


def test_atomic_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "report.json"
    atomic_write_json(target, {"b": 1, "a": 2})
    assert target.read_text() == '{\n  "a": 2,\n  "b": 1\n}\n'
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_journal_resumes_and_drops_truncated_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.journal.jsonl"
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id") as journal:
        journal.write({"id": "a", "v": 1})
        journal.write({"id": "b", "v": 2})
    with open(path, "ab") as handle:
        handle.write(b'{"id": "c", "v"')  # a crash mid-write
    journal = ResumableJsonlWriter(path, config_sha256="c1", key_field="id")
    assert journal.truncated_bytes > 0
    assert journal.done("a") and journal.done("b") and not journal.done("c")
    journal.write({"id": "c", "v": 3})
    journal.close()
    reopened = ResumableJsonlWriter(path, config_sha256="c1", key_field="id")
    assert sorted(reopened.existing) == ["a", "b", "c"]
    reopened.close()


def test_journal_refuses_another_config(tmp_path: Path) -> None:
    path = tmp_path / "rows.journal.jsonl"
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id") as journal:
        journal.write({"id": "a"})
    with pytest.raises(ConfigError, match="another configuration"):
        ResumableJsonlWriter(path, config_sha256="c2", key_field="id")
    fresh = ResumableJsonlWriter(path, config_sha256="c2", key_field="id", restart=True)
    assert fresh.existing == {}
    fresh.close()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"v": 1}\n', "line 3: journal row has no 'id' field"),
        (b"[1, 2]\n", "line 3: corrupt journal line"),
        (b"not json\n", "line 3: corrupt journal line"),
    ],
)
def test_a_hand_edited_journal_line_is_an_error_naming_the_line(
    tmp_path: Path, line: bytes, message: str
) -> None:
    path = tmp_path / "rows.journal.jsonl"
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id") as journal:
        journal.write({"id": "a", "v": 1})
    with open(path, "ab") as handle:
        handle.write(line)
    with pytest.raises(ConfigError, match=message):
        ResumableJsonlWriter(path, config_sha256="c1", key_field="id")


def test_atomic_write_uses_normal_permissions(tmp_path: Path) -> None:
    import os

    target = tmp_path / "shared.html"
    atomic_write_text(target, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_streaming_journal_keeps_keys_not_rows(tmp_path: Path) -> None:
    from chemgauge.eval.journal import iter_journal

    path = tmp_path / "rows.journal"
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id", keep_rows=False) as j:
        j.write({"id": 1, "v": "a"})
        j.write({"id": 2, "v": "b"})
        assert j.existing == {} and j.keys == set()
    with open(path, "ab") as handle:
        handle.write(b'{"id": 3, "v"')  # a crash mid-write
    reopened = ResumableJsonlWriter(path, config_sha256="c1", key_field="id", keep_rows=False)
    assert reopened.truncated_bytes > 0 and reopened.existing == {}
    assert reopened.done("1") and reopened.done("2") and not reopened.done("3")
    reopened.write({"id": 3, "v": "c"})
    reopened.close()
    assert [row["v"] for row in iter_journal(path)] == ["a", "b", "c"]


def test_journal_rows_come_back_in_item_order_after_a_resume(tmp_path: Path) -> None:
    from chemgauge.eval.journal import index_journal, iter_journal_by_keys

    path = tmp_path / "rows.journal"
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id", keep_rows=False) as j:
        j.write({"id": "t:3", "v": "c"})  # finished first (completion order)
        j.write({"id": "t:1", "v": "a-old"})
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id", keep_rows=False) as j:
        j.write({"id": "t:1", "v": "a"})  # rewritten after the resume: the last row wins
        j.write({"id": "t:2", "v": "b"})
    assert sorted(index_journal(path, "id")) == ["t:1", "t:2", "t:3"]
    rows = list(iter_journal_by_keys(path, "id", ["t:1", "t:2", "t:4", "t:3"]))
    assert [None if r is None else r["v"] for r in rows] == ["a", "b", None, "c"]


def test_journal_index_names_a_corrupt_line(tmp_path: Path) -> None:
    from chemgauge.eval.journal import index_journal

    path = tmp_path / "rows.journal"
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id") as j:
        j.write({"id": "a"})
    with open(path, "ab") as handle:
        handle.write(b'{"no_id": 1}\n')
    with pytest.raises(ConfigError, match=r"line 3: corrupt journal line"):
        index_journal(path, "id")


def test_line_spans_split_like_text_mode_and_read_back(tmp_path: Path) -> None:
    from chemgauge.eval.lines import read_lines, read_span

    path = tmp_path / "lines.txt"
    path.write_bytes("a\r\nbé\rc\n\nd".encode())
    spans = list(read_lines(path))
    assert [(s.number, s.text) for s in spans] == [(s.number, s.text) for s in read_lines(path)]
    with open(path, "rb") as handle:
        assert [read_span(handle, s) for s in spans] == [
            b"a\r\n",
            "bé\r".encode(),
            b"c\n",
            b"\n",
            b"d",
        ]
    path.write_bytes(b"ok\n\xff\n")
    with pytest.raises(InputFileError, match=r"lines.txt, line 2: not valid UTF-8"):
        list(read_lines(path))
    with pytest.raises(InputFileError, match="file not found"):
        list(read_lines(tmp_path / "missing.txt"))


def test_a_journal_without_rows_is_replaced_silently(tmp_path: Path) -> None:
    # a failed start leaves a header and no row: the next (corrected) run must not need
    # --restart
    path = tmp_path / "rows.journal"
    ResumableJsonlWriter(path, config_sha256="c1", key_field="id").close()
    with ResumableJsonlWriter(path, config_sha256="c2", key_field="id") as journal:
        journal.write({"id": "a"})
    with ResumableJsonlWriter(path, config_sha256="c2", key_field="id") as journal:
        assert journal.done("a")


def test_a_journal_of_another_program_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rows.journal"
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id") as journal:
        journal.write({"id": "a"})
    with pytest.raises(ConfigError, match=r"another version of the program.*pass --restart"):
        ResumableJsonlWriter(path, config_sha256="c1", key_field="id", program_sha256="0" * 64)
    # an older journal that recorded no program is refused the same way
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b'{"chemgauge_rows_journal": 1, "config_sha256": "c1"}\n' + lines[1])
    with pytest.raises(ConfigError, match="not recorded"):
        ResumableJsonlWriter(path, config_sha256="c1", key_field="id")


def test_a_failed_write_leaves_no_torn_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import os

    from chemgauge.eval import journal as journal_module

    path = tmp_path / "rows.journal"
    journal = ResumableJsonlWriter(path, config_sha256="c1", key_field="id")
    journal.write({"id": "a"})
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        if len(data) > 4:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module.os, "write", half_then_full)
    with pytest.raises(OutputFileError, match=r"No space left.*rerun to resume"):
        journal.write({"id": "b", "payload": "x" * 100})
    monkeypatch.undo()
    journal.close()
    assert path.read_bytes().endswith(b'{"id":"a"}\n')
    with ResumableJsonlWriter(path, config_sha256="c1", key_field="id") as again:
        assert again.done("a") and not again.done("b") and again.truncated_bytes == 0
