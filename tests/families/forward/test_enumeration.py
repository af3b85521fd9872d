"""``forward enumerate`` as a library call: the command's records, notes and refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import chemgauge.families.forward
from chemgauge.cli import app
from chemgauge.errors import ConfigError, DataQualityError, OutputPathError

SOURCE = "CC(=O)O.NCc1ccccc1 amide\n\nC1CC broken\n\xff\nCCOC(=O)c1ccccc1.CN\n"


def _records(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "elapsed_ms"} for line in lines]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "in.smi"
    path.write_bytes(SOURCE.encode("latin-1"))  # line 4 is not UTF-8: unreadable
    return path


def test_the_call_writes_what_the_command_writes(source: Path, tmp_path: Path) -> None:
    notes: list[tuple[int, str]] = []
    done = chemgauge.families.forward.enumerate_candidates(
        source,
        tmp_path / "api.jsonl",
        executor="serial",
        note=lambda line, detail: notes.append((line, detail)),
    )
    assert (done.reactions, done.with_candidates, done.with_errors) == (4, 2, 2)
    assert [line for line, _ in notes] == [4, 3]  # the unreadable line first, then the failure
    args = ["forward", "enumerate", "-i", str(source), "-o", str(tmp_path / "cli.jsonl")]
    result = CliRunner().invoke(app, [*args, "--executor", "serial"])
    assert result.exit_code == 0, result.output
    assert "4 reactions, 2 with errors" in result.stderr
    assert f"{source}:3: " in result.stderr and f"{source}:4: " in result.stderr
    assert _records(tmp_path / "api.jsonl") == _records(tmp_path / "cli.jsonl")
    assert [r["line"] for r in _records(tmp_path / "cli.jsonl")] == [1, 3, 5]


def test_strict_stops_at_the_first_problem_and_writes_nothing(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(DataQualityError):
        chemgauge.families.forward.enumerate_candidates(source, out, strict=True, executor="serial")
    assert not out.exists()


def test_the_call_keeps_the_commands_guards(source: Path, tmp_path: Path) -> None:
    with pytest.raises(OutputPathError, match="--out is the same file as --input"):
        chemgauge.families.forward.enumerate_candidates(source, source, executor="serial")
    assert source.read_bytes() == SOURCE.encode("latin-1")
    for flags, refusal in (
        ({"jobs": -1}, "--jobs must be between 0 and"),
        ({"executor": "cluster"}, "--executor must be one of"),
        ({"max_results": 0}, "--max-results must be >= 1"),
    ):
        with pytest.raises(ConfigError, match=refusal):
            chemgauge.families.forward.enumerate_candidates(source, tmp_path / "x.jsonl", **flags)
