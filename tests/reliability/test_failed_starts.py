"""A failed start leaves nothing that blocks, and rows of two programs are never mixed.

A journal holding only its header (what a run that failed before its first row leaves, here
under another configuration) is replaced silently by the next run of any configuration. A
journal with rows written by another chemgauge source tree is refused with a one-line
message naming the change and ``--restart``; ``--restart`` then starts over. Forward and
retro through the real CLI (the families with a ``ResumableJsonlWriter`` journal and a
single run folder); the writer itself is tested in ``tests/eval/test_records.py``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.reliability.commands import forward_benchmark, retro_eval, retro_inputs, run_cli

from chemgauge.eval.journal import ResumableJsonlWriter


def _header_only(journal: Path) -> None:
    """The journal a start that failed before its first row leaves (another config)."""
    with ResumableJsonlWriter(journal, config_sha256="f" * 64, key_field="id"):
        pass
    assert journal.read_bytes().count(b"\n") == 1


def _from_another_program(journal: Path) -> None:
    """Rewrite the journal's header as an older chemgauge source tree would have written it."""
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) > 1, "the journal must hold rows"
    header = json.loads(lines[0])
    header["source_tree_sha256"] = "0" * 64
    journal.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr[-3000:]


def _verified(folder: Path) -> None:
    _ok(run_cli(["verify", str(folder), "-q"]))


def _refused_as_another_program(done: subprocess.CompletedProcess[str], journal: Path) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    assert "Traceback" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and str(journal) in last, last
    assert "another version of the program" in last and "--restart" in last, last


def test_forward_header_only_journal_is_replaced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    _header_only(out / "rows.jsonl.journal")
    _ok(run_cli(forward_benchmark(out)))
    _verified(out)
    assert not (out / "rows.jsonl.journal").exists()


def test_retro_header_only_journal_is_replaced(tmp_path: Path) -> None:
    data, preds = retro_inputs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    _header_only(out / "journal.jsonl")
    _ok(run_cli(retro_eval(data, preds, out)))
    _verified(out)


def test_retro_rows_of_another_program_need_restart(tmp_path: Path) -> None:
    data, preds = retro_inputs(tmp_path)
    out = tmp_path / "out"
    _ok(run_cli(retro_eval(data, preds, out)))
    rows = (out / "rows.jsonl").read_bytes()
    journal = out / "journal.jsonl"
    _from_another_program(journal)
    edited = journal.read_bytes()
    _refused_as_another_program(run_cli(retro_eval(data, preds, out)), journal)
    assert journal.read_bytes() == edited  # refused before touching it
    _ok(run_cli(retro_eval(data, preds, out, "restart=true")))
    _verified(out)
    assert (out / "rows.jsonl").read_bytes() == rows


def test_forward_rows_of_another_program_need_restart(tmp_path: Path) -> None:
    # A journal with rows, as a stopped run leaves it: a real run cut short by a file-size
    # limit (tests/reliability/test_disk_faults.py) keeps its finished rows.
    clean = tmp_path / "clean"
    _ok(run_cli(forward_benchmark(clean)))
    out = tmp_path / "out"
    journal = out / "rows.jsonl.journal"
    stopped = run_cli(forward_benchmark(out), (clean / "rows.jsonl").stat().st_size // 2)
    assert stopped.returncode == 2, stopped.stderr[-3000:]
    _from_another_program(journal)
    _refused_as_another_program(run_cli(forward_benchmark(out)), journal)
    _ok(run_cli(forward_benchmark(out, "--restart")))
    _verified(out)
    same, again = (json.loads((f / "report.json").read_bytes()) for f in (clean, out))
    assert same["reproducibility_sha256"] == again["reproducibility_sha256"]  # rows hold timings
