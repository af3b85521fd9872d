"""The leakage audit: reactant sets and products shared across splits, hand-checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chemgauge.errors import DataQualityError
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.corpus import BenchReaction, load_corpus
from chemgauge.families.forward.leakage import LeakageAudit, audit_rows
from chemgauge.families.forward.runner import run_benchmark

from .conftest import corpus_line

# Splits, hand-checked with assign_split: the reactant-hash fallback of CCO + acetic acid is
# train, of acetic acid + propanol val; group keys P2 -> test, P6 -> val.
LINES = [
    corpus_line("L1", ["CCO", "CC(=O)O"], [["CCOC(C)=O"]]),  # fallback -> train
    corpus_line("L2", ["OCC", "OC(C)=O"], [["CCOC(C)=O", "O"]], group_key="P2"),  # test
    corpus_line("L3", ["CC(=O)O", "CCCO"], [["CCCOC(C)=O"]]),  # fallback -> val
    corpus_line("L4", ["CC(=O)Cl", "CCO"], [["CCOC(C)=O"]], group_key="P6"),  # val
    corpus_line("L5", ["CCO", "CC(=O)O"], [["C=C"]], group_key="P6"),  # val
]


def _pairs(block: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    return {
        pair: (c["shared"], c["reactions"]["explicit"], c["reactions"]["fallback"])
        for pair, c in block["by_split_pair"].items()
    }


def _audit(reactions: list[BenchReaction]) -> dict[str, Any]:
    with LeakageAudit() as audit:
        for reaction in reactions:
            audit.add_reaction(reaction)
        return audit.result()


@pytest.fixture
def leaky(write_corpus: Any) -> Path:
    path: Path = write_corpus(LINES)
    return path


def test_audit_counts_per_pair_of_splits_and_group_key_source(leaky: Path) -> None:
    reactions = load_corpus(leaky).reactions
    assert [r.split for r in reactions] == ["train", "test", "val", "val", "val"]
    result = _audit(reactions)
    reactants = result["reactant_sets"]
    assert reactants["distinct"] == 3 and reactants["shared_across_splits"] == 1
    # One reactant set (CCO + acetic acid) in all three splits: L1 (train, fallback),
    # L2 (test, explicit), L5 (val, explicit).
    assert _pairs(reactants) == {
        "train/val": (1, 1, 1),
        "train/test": (1, 1, 1),
        "val/test": (1, 2, 0),
    }
    [example] = reactants["examples"]
    assert example["smiles"] == "CC(=O)O.CCO"
    assert {s: [e["line"] for e in v] for s, v in example["splits"].items()} == {
        "train": [1],
        "val": [5],
        "test": [2],
    }
    assert example["splits"]["test"][0] == {
        "line": 2,
        "reaction_id": "L2",
        "group_key_source": "explicit",
    }
    products = result["products"]
    # Ethyl acetate alone: L1 (train, fallback) and L4 (val, explicit); with water (L2) it is
    # another multiset.
    assert products["distinct"] == 4 and products["shared_across_splits"] == 1
    assert _pairs(products) == {
        "train/val": (1, 1, 1),
        "train/test": (0, 0, 0),
        "val/test": (0, 0, 0),
    }
    assert products["examples"][0]["smiles"] == "CCOC(C)=O"
    assert len(result["warnings"]) == 3
    assert any("both train and test" in w and "explicit group_key" in w for w in result["warnings"])


def test_no_overlap_without_explicit_keys(write_corpus: Any) -> None:
    lines = [corpus_line(f"r{i}", ["CCO", "CC(=O)O"], [[p]]) for i, p in enumerate(["C", "CC"])]
    result = _audit(load_corpus(write_corpus(lines)).reactions)
    assert result["reactant_sets"]["shared_across_splits"] == 0 and result["warnings"] == []


def test_every_report_carries_the_audit_and_rows_recompute_it(leaky: Path, tmp_path: Path) -> None:
    result = run_benchmark(BenchmarkConfig(corpus=leaky, out=tmp_path, executor="serial"))
    leakage = result.report["metrics"]["leakage"]
    assert leakage["reactant_sets"]["shared_across_splits"] == 1
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [r["group_key_source"] for r in rows] == [
        "fallback",
        "explicit",
        "fallback",
        "explicit",
        "explicit",
    ]
    assert audit_rows(rows) == leakage


def test_strict_refuses_a_cross_split_reactant_set_before_predicting(
    leaky: Path, tmp_path: Path
) -> None:
    config = BenchmarkConfig(corpus=leaky, out=tmp_path, strict=True, executor="serial")
    with pytest.raises(DataQualityError) as info:
        run_benchmark(config)
    message = str(info.value)
    assert f"{leaky}, line 1" in message and "'CC(=O)O.CCO'" in message
    assert "train: line 1" in message and "test: line 2" in message
    assert not (tmp_path / "rows.jsonl").exists()
    assert not (tmp_path / "rows.jsonl.journal").exists()
