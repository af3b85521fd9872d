"""A full disk (here: a file-size limit, RLIMIT_FSIZE with SIGXFSZ ignored, so every write
past the limit fails with EFBIG as ENOSPC would) is a one-line error naming the file, exit
2, no traceback; the journal stays resumable and the same command then finishes the run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.reliability.commands import (
    forward_benchmark,
    ocsr_cohort,
    ocsr_run,
    p2s_data,
    retro_eval,
    retro_inputs,
)
from tests.reliability.commands import run_cli as _cli


def _full_disk(done: subprocess.CompletedProcess[str], names: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert lines[-1].startswith("error: ") and "File too large" in lines[-1], done.stderr
    assert names in lines[-1], lines[-1]


def _verify(folder: Path) -> None:
    done = _cli(["verify", str(folder), "-q"])
    assert done.returncode == 0, done.stdout + done.stderr


def test_forward_journal_on_a_full_disk_resumes(tmp_path: Path) -> None:
    args = forward_benchmark

    clean = tmp_path / "clean"
    assert _cli(args(clean)).returncode == 0
    limit = (clean / "rows.jsonl").stat().st_size // 2
    full = tmp_path / "full"
    _full_disk(_cli(args(full), limit), str(full))
    journal = full / "rows.jsonl.journal"
    assert journal.read_bytes().endswith(b"\n")  # no torn row left behind
    assert not (full / "rows.jsonl").exists()
    assert _cli(args(full)).returncode == 0
    _verify(full)
    same = json.loads((clean / "report.json").read_bytes())
    again = json.loads((full / "report.json").read_bytes())
    assert same["reproducibility_sha256"] == again["reproducibility_sha256"]


def test_retro_journal_on_a_full_disk_resumes(tmp_path: Path) -> None:
    data, preds = retro_inputs(tmp_path, copies=40)

    def args(out: Path) -> list[str]:
        return retro_eval(data, preds, out)

    clean = tmp_path / "clean"
    assert _cli(args(clean)).returncode == 0
    full = tmp_path / "full"
    _full_disk(_cli(args(full), (clean / "journal.jsonl").stat().st_size // 2), str(full))
    assert (full / "journal.jsonl").read_bytes().endswith(b"\n")
    assert _cli(args(full)).returncode == 0
    _verify(full)
    assert (clean / "rows.jsonl").read_bytes() == (full / "rows.jsonl").read_bytes()


def test_p2s_run_on_a_full_disk_resumes(tmp_path: Path) -> None:
    data = p2s_data(tmp_path)

    def args(out: Path) -> list[str]:
        return [
            "p2s",
            "run",
            str(data),
            "-m",
            "random",
            "--out",
            str(out),
            "--batch-size",
            "1",
            "-q",
        ]

    clean = tmp_path / "clean"
    assert _cli(args(clean)).returncode == 0
    rows = next(clean.rglob("rows.jsonl"))
    full = tmp_path / "full"
    _full_disk(_cli(args(full), rows.stat().st_size // 3), str(full))
    assert _cli(args(full)).returncode == 0
    again = next(full.rglob("rows.jsonl"))
    assert again.read_bytes() == rows.read_bytes()


def test_canon_and_report_outputs_on_a_full_disk_leave_nothing(
    tmp_path: Path, nci_smiles: list[str]
) -> None:
    source = tmp_path / "in.smi"
    source.write_text("\n".join(nci_smiles[:400]) + "\n")
    out = tmp_path / "out.smi"
    _full_disk(_cli(["canon", str(source), "--out", str(out), "-q", "-j", "1"], 4096), str(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.smi"]  # no partial file
    run = tmp_path / "run"
    done = _cli(
        [
            "forward",
            "benchmark",
            "--out",
            str(run),
            "--executor",
            "serial",
            "-q",
        ]
    )
    assert done.returncode == 0, done.stderr
    page = tmp_path / "page.html"
    _full_disk(_cli(["report", str(run), "--out", str(page), "-q"], 8192), str(page))
    assert not page.exists()


@pytest.mark.external
def test_names_journal_on_a_full_disk_resumes(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    named = {"C": "methane", "CC": "ethane", "CCO": "ethanol", "CO": "methanol"}
    named |= {"c1ccccc1": "benzene", "Cc1ccccc1": "toluene", "Oc1ccccc1": "phenol"}
    body = [f"{s}\t{n}\tp{r}-{i}" for r in range(20) for i, (s, n) in enumerate(named.items())]
    pairs.write_text("smiles\tname\tid\n" + "\n".join(body) + "\n")

    def args(out: Path) -> list[str]:
        out.mkdir(exist_ok=True)
        return [
            "names",
            "coverage",
            "-i",
            str(pairs),
            "--out",
            str(out),
            "-j",
            "1",
            "-q",
        ]

    clean = tmp_path / "clean"
    assert _cli(args(clean)).returncode == 0
    full = tmp_path / "full"
    _full_disk(_cli(args(full), (clean / "rows.jsonl").stat().st_size // 2), str(full))
    assert _cli(args(full)).returncode == 0
    assert (clean / "rows.jsonl").read_bytes() == (full / "rows.jsonl").read_bytes()


def test_ocsr_attempts_journal_on_a_full_disk_resumes(tmp_path: Path) -> None:
    manifest, script = ocsr_cohort(tmp_path, 6)

    def args(out: Path) -> list[str]:
        return ocsr_run(manifest, script, out, "--repeats", "3")

    clean = tmp_path / "clean"
    assert _cli(args(clean)).returncode == 0
    full = tmp_path / "full"
    _full_disk(_cli(args(full), (clean / "attempts.jsonl").stat().st_size // 2), str(full))
    journal = full / "attempts.jsonl"
    assert journal.read_bytes().endswith(b"\n")  # no torn attempt left behind
    assert _cli(args(full)).returncode == 0
    _verify(full)
    same = json.loads((clean / "report.json").read_bytes())
    again = json.loads((full / "report.json").read_bytes())
    assert same["reproducibility_sha256"] == again["reproducibility_sha256"]
