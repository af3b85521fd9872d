"""Diagnostics name the exact cause: RDKit's ring-closure limit on writing, InChI's atom
limit, a directory, a symlink loop, a broken symlink, a number where a SMILES belongs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chemgauge.chem import describe_parse_failure, try_canonical_smiles
from chemgauge.chem.matchers import describe_key_failure
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.names.inputs import read_pairs


def _ladder(width: int = 1000) -> str:
    """Three rows of ``width`` carbons joined by ring bonds: RDKit reads it, but writing it
    needs more ring closures open at once than its SMILES writer allows."""
    top = "".join(f"C%({i + 1})" for i in range(width))
    middle = "".join(f"C%({i + 1})%({width + i + 1})" for i in range(width))
    bottom = "".join(f"C%({width + i + 1})" for i in range(width))
    return f"{top}.{middle}.{bottom}"


def test_a_structure_rdkit_cannot_write_is_named_not_unparsable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ladder = _ladder()
    assert describe_parse_failure(ladder).startswith("SMILES characters")  # the default limit
    monkeypatch.setenv("CHEMGAUGE_MAX_SMILES_CHARS", "100000")
    monkeypatch.setenv("CHEMGAUGE_MAX_ATOMS", "10000")
    monkeypatch.setenv("CHEMGAUGE_MAX_RINGS", "2000")
    assert try_canonical_smiles(ladder) is None  # before: ValueError out of every reader
    reason = describe_parse_failure(ladder)
    assert reason.startswith("RDKit cannot write this molecule as SMILES")
    assert "Too many rings open at once" in reason


def test_inchi_atom_limit_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    chain = "C" * 1100
    assert describe_key_failure(chain, "strict_key").startswith("atoms 1,100, over the limit")
    monkeypatch.setenv("CHEMGAUGE_MAX_ATOMS", "2000")
    assert describe_key_failure(chain, "strict_key").startswith(
        "InChI handles fewer than 1,024 atoms (this molecule has 1,100)"
    )
    assert describe_key_failure("C1CC", "strict_key") == describe_parse_failure("C1CC")


def _canon(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chemgauge", "canon", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_canon_names_each_cause(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("C" * 1100 + "\nCCO\n")
    done = _canon(source, "-p", "strict_key", "-j", "1", "--max-atoms", "2000")
    assert done.returncode == 0, done.stderr
    assert "in.smi:1: InChI handles fewer than 1,024 atoms" in done.stderr
    loop = tmp_path / "loop.smi"
    os.symlink(loop, loop)
    broken = tmp_path / "broken.smi"
    os.symlink(tmp_path / "nowhere.smi", broken)
    cases = {
        tmp_path: (2, "expected a file, found a directory"),
        loop: (2, "symlink loop"),
        broken: (3, "broken symlink (its target does not exist)"),
        tmp_path / "absent.smi": (3, "file not found"),
    }
    for path, (status, cause) in cases.items():
        done = _canon(path)
        assert done.returncode == status, done.stderr
        assert done.stderr.strip() == f"error: {path}: {cause}", done.stderr


def test_a_number_where_a_smiles_belongs_is_a_wrong_type(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"smiles": 42, "name": "x"}\n{"smiles": "", "name": "y"}\n')
    stats = RejectionStats()
    assert read_pairs(pairs, stats) == []
    assert dict(stats.counts) == {"smiles_not_a_string": 1, "empty_smiles": 1}
    assert stats.diagnostics[0].detail == "smiles is a JSON int"
