"""Shared helpers for the forward-benchmark tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chemgauge.eval.splits import assign_split

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_CORPUS = FIXTURES / "forward_bench_corpus.jsonl"


def corpus_line(
    reaction_id: str, reactants: list[str], accepted: list[list[str]], **extra: Any
) -> str:
    """One schema-1 corpus line."""
    obj: dict[str, Any] = {
        "schema_version": 1,
        "reaction_id": reaction_id,
        "reactants": reactants,
        "accepted_products": accepted,
    }
    obj.update(extra)
    return json.dumps(obj)


@pytest.fixture
def write_corpus(tmp_path: Path) -> Any:
    """Write lines to a corpus file in tmp_path and return its path."""

    def write(lines: list[str], name: str = "corpus.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return path

    return write


AMIDE = "[CH3:1][C:2](=[O:3])[OH:4].[NH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:5][CH3:6]"
ESTER = "[CH3:1][C:2](=[O:3])[OH:4].[OH:5][CH2:6][CH3:7]>>[CH3:1][C:2](=[O:3])[O:5][CH2:6][CH3:7]"


def _key(split: str, n: int = 0) -> str:
    keys = (f"P{i}" for i in range(1000))
    return [k for k in keys if assign_split(k) == split][n]


def write_mapped_corpus(path: Path) -> Path:
    """Five reactions with fixed splits: t1-t3 train (t3 unmapped), v1 val, x1 test. t2 and x1
    share their reactants under different explicit group keys (a train/test leak)."""
    lines = [
        corpus_line(
            "t1", ["CC(=O)O", "CN"], [["CNC(C)=O"]], group_key=_key("train"), mapped_reaction=AMIDE
        ),
        corpus_line(
            "t2",
            ["CC(=O)O", "CCO"],
            [["CCOC(C)=O"]],
            group_key=_key("train", 1),
            mapped_reaction=ESTER,
        ),
        corpus_line("t3", ["CC(=O)O", "CCCO"], [["CCCOC(C)=O"]], group_key=_key("train", 2)),
        corpus_line(
            "v1",
            ["OC(C)=O", "NC"],
            [["CC(=O)NC"], ["CCC"]],
            group_key=_key("val"),
            mapped_reaction=AMIDE,
        ),
        corpus_line(
            "x1",
            ["CC(=O)O", "OCC"],
            [["CCOC(C)=O", "O"]],
            group_key=_key("test"),
            mapped_reaction=ESTER,
        ),
    ]
    path.write_text("".join(line + "\n" for line in lines))
    return path
