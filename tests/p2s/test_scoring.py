"""The standard-library scorer: hand-checked counts, duplicate rejection, stdlib only."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import require_module

from chemgauge.benchmarks.p2s.scoring import main, read_predictions, score_files
from chemgauge.errors import InputFileError

SRC = Path(__file__).resolve().parents[2] / "src"


def task(rid: str, candidates: list[str], dipole: float = 1.0) -> dict[str, Any]:
    return {
        "record_id": rid,
        "masked_smiles": "Oc1ccc([*:1])cc1",
        "mask": {
            "token": "[*:1]",
            "masked_heavy_atoms": 1,
            "attachment_points": [{"label": 1, "bond": "single", "scaffold_element": "C"}],
        },
        "properties": {"dipole": {"value": dipole, "unit": "D"}},
        "candidate_completed_smiles": candidates,
    }


CANDIDATES = ["Oc1ccc(F)cc1", "Oc1ccc(Cl)cc1", "Oc1ccc(Br)cc1"]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def hand_dataset(root: Path, labels: list[int]) -> Path:
    """dipole/{correct,shuffled,counterfactual}: len(labels) records, 3 candidates each."""
    data = root / "data"
    ids = [f"r{i}" for i in range(len(labels))]
    for cond in ("correct", "shuffled"):
        write_jsonl(data / "dipole" / f"{cond}.jsonl", [task(r, CANDIDATES) for r in ids])
        write_jsonl(
            data / "dipole" / f"{cond}.labels.jsonl",
            [{"record_id": r, "label": lab} for r, lab in zip(ids, labels, strict=True)],
        )
    cf_rows, cf_labels = [], []
    for r, lab in zip(ids, labels, strict=True):
        donor = (lab + 1) % 3
        cf_rows.append(task(f"{r}-cf", CANDIDATES, dipole=2.0))
        cf_labels.append(
            {"record_id": f"{r}-cf", "label": donor, "base_record_id": r, "source_label": lab}
        )
    write_jsonl(data / "dipole" / "counterfactual.jsonl", cf_rows)
    write_jsonl(data / "dipole" / "counterfactual.labels.jsonl", cf_labels)
    return data


def test_hand_checked_counts(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2, 1, 0, 2])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": "r0", "selected_candidate_index": 0, "reasoning": "x"},  # hit
            {"record_id": "r1", "invalid": True},  # invalid
            {"record_id": "r2", "selected_candidate_index": 3},  # out of range (K = 3)
            # r3 missing
            {"record_id": "r4", "selected_candidate_index": -1},  # negative: out of range
            {"record_id": "r5", "selected_candidate_index": True},  # a boolean is no index
            {"record_id": "elsewhere", "selected_candidate_index": 0},  # unknown record
            "{not json",  # unattributable
            {"selected_candidate_index": 1},  # unattributable: no record_id
        ],
    )
    result = score_files(data, "dipole", "correct", predictions)
    assert result.to_dict() == {
        "property": "dipole",
        "condition": "correct",
        "hits": 1,
        "tasks": 6,
        "accuracy": 1 / 6,
        "missing": 1,
        "invalid": 2,
        "out_of_range": 2,
        "unknown_records": 1,
        "unattributable_lines": 2,
    }
    assert [o.status for o in result.outcomes] == [
        "hit",
        "invalid",
        "out_of_range",
        "missing",
        "out_of_range",
        "invalid",
    ]


def test_invalid_flag_wins_over_an_index_and_floats_are_invalid(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [0, 1])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": "r0", "selected_candidate_index": 0, "invalid": True},
            {"record_id": "r1", "selected_candidate_index": 1.0},
        ],
    )
    result = score_files(data, "dipole", "correct", predictions)
    assert (result.hits, result.count("invalid")) == (0, 2)


def test_wrong_answers_are_misses_and_all_right_is_one(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2])
    right = write_jsonl(
        tmp_path / "right.jsonl",
        [{"record_id": f"r{i}", "selected_candidate_index": i} for i in range(3)],
    )
    wrong = write_jsonl(
        tmp_path / "wrong.jsonl",
        [{"record_id": f"r{i}", "selected_candidate_index": (i + 1) % 3} for i in range(3)],
    )
    assert score_files(data, "dipole", "correct", right).accuracy == 1.0
    result = score_files(data, "dipole", "correct", wrong)
    assert (result.hits, result.count("miss")) == (0, 3)


def test_duplicate_record_id_is_rejected_naming_file_and_line(tmp_path: Path) -> None:
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": "r0", "selected_candidate_index": 0},
            {"record_id": "r1", "selected_candidate_index": 0},
            {"record_id": "r0", "selected_candidate_index": 1},
        ],
    )
    with pytest.raises(InputFileError, match=r"pred\.jsonl, line 3: duplicate record_id") as err:
        read_predictions(predictions)
    assert "'r0'" in str(err.value) and "first on line 1" in str(err.value)


def test_strict_makes_unattributable_lines_errors(tmp_path: Path) -> None:
    predictions = write_jsonl(tmp_path / "pred.jsonl", ["[1, 2]"])
    assert read_predictions(predictions).unattributable == 1
    with pytest.raises(InputFileError, match="line 1: malformed JSON"):
        read_predictions(predictions, strict=True)


def test_standalone_main_prints_counts_and_exits_2_on_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = hand_dataset(tmp_path, [0, 1])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl", [{"record_id": "r0", "selected_candidate_index": 0}]
    )
    args = ["--data", str(data), "--property", "dipole", "--condition", "correct"]
    assert main([*args, "--predictions", str(predictions), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["hits"], out["tasks"], out["missing"]) == (1, 2, 1)
    assert main([*args, "--predictions", str(tmp_path / "absent.jsonl")]) == 2
    assert "absent.jsonl: file not found" in capsys.readouterr().err


def test_scorer_path_imports_only_the_standard_library(tmp_path: Path) -> None:
    """Without site-packages (-S) the scorer must import and score; nothing else is loaded."""
    data = hand_dataset(tmp_path, [0, 1, 2])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl", [{"record_id": "r2", "selected_candidate_index": 2}]
    )
    code = f"""
import sys
sys.path.insert(0, {str(SRC)!r})
from chemgauge.benchmarks.p2s import scoring
result = scoring.score_files({str(data)!r}, "dipole", "correct", {str(predictions)!r})
assert (result.hits, result.tasks) == (1, 3), result
from chemgauge.benchmarks.p2s import taskfile
assert taskfile.main([{str(data)!r}]) == 0
foreign = sorted(
    m for m in sys.modules
    if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "chemgauge"
    and m != "__main__"
)
assert not foreign, foreign
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "dipole: correct 3, shuffled 3, counterfactual 3"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    answers=st.lists(
        st.one_of(
            st.none(),  # missing
            st.just("invalid"),
            st.integers(min_value=-2, max_value=4),
        ),
        min_size=4,
        max_size=4,
    ),
    reverse=st.booleans(),
)
def test_every_task_counts_once_whatever_the_predictions(
    tmp_path: Path, answers: list[Any], reverse: bool
) -> None:
    labels = [0, 1, 2, 1]
    data = hand_dataset(tmp_path, labels)
    rows: list[Any] = []
    for i, answer in enumerate(answers):
        if answer == "invalid":
            rows.append({"record_id": f"r{i}", "invalid": True})
        elif answer is not None:
            rows.append({"record_id": f"r{i}", "selected_candidate_index": answer})
    predictions = write_jsonl(tmp_path / "pred.jsonl", rows[::-1] if reverse else rows)
    result = score_files(data, "dipole", "correct", predictions)
    counts = result.to_dict()
    parts = ("hits", "missing", "invalid", "out_of_range")
    assert sum(counts[k] for k in parts) + result.count("miss") == 4
    expected_hits = sum(1 for a, lab in zip(answers, labels, strict=True) if a == lab)
    assert counts["hits"] == expected_hits and counts["accuracy"] == expected_hits / 4
    assert counts["missing"] == answers.count(None)


@pytest.mark.parametrize("flag", [None, False, 0, 0.0])
def test_an_unset_invalid_flag_scores_like_no_flag(tmp_path: Path, flag: Any) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [{"record_id": f"r{i}", "selected_candidate_index": i, "invalid": flag} for i in range(3)],
    )
    result = score_files(data, "dipole", "correct", predictions)
    assert (result.hits, result.count("invalid")) == (3, 0)


@pytest.mark.parametrize("flag", [True, 1, "true", "no", [], {}])
def test_a_set_or_non_boolean_invalid_flag_counts_invalid(tmp_path: Path, flag: Any) -> None:
    """The seed's flag is a boolean; a value that is neither unset nor true cannot vouch for
    the index, so the line is invalid, and a non-boolean one is named in the diagnostics."""
    data = hand_dataset(tmp_path, [0, 1, 2])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [{"record_id": "r0", "selected_candidate_index": 0, "invalid": flag}],
    )
    result = score_files(data, "dipole", "correct", predictions)
    assert (result.hits, result.count("invalid")) == (0, 1)
    diagnostics = read_predictions(predictions).diagnostics
    assert bool(diagnostics) == (flag is not True)
    if flag is not True:
        assert "not a boolean" in diagnostics[0]


def test_a_bom_is_stripped_and_the_summary_shows_every_count(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": "r0", "selected_candidate_index": 0},
            {"record_id": "zz", "selected_candidate_index": 0},
            "not json",
        ],
    )
    predictions.write_bytes(b"\xef\xbb\xbf" + predictions.read_bytes())
    result = score_files(data, "dipole", "correct", predictions)
    assert result.hits == 1  # the first line, behind the BOM, still counts
    assert result.summary().endswith("unknown records 1, unattributable lines 1")


def _stdlib_modules() -> list[Path]:
    """The files of every chemgauge module the scorer and the loader import (bare Python)."""
    code = f"""
import sys
sys.path.insert(0, {str(SRC)!r})
import chemgauge.benchmarks.p2s.scoring, chemgauge.benchmarks.p2s.taskfile
for name, module in sorted(sys.modules.items()):
    if name.split(".")[0] == "chemgauge":
        print(module.__file__)
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, check=True
    )
    return [Path(line) for line in proc.stdout.split()]


def test_scorer_and_loader_need_nothing_newer_than_python_3_9() -> None:
    """vermin on every module they import, and the Makefile's list is that list."""
    files = _stdlib_modules()
    makefile = (SRC.parent / "Makefile").read_text()
    listed = re.search(r"STDLIB_39 :=(.*?)\n\n", makefile, re.S)
    assert listed is not None
    names = set(listed.group(1).replace("\\", " ").split())
    assert {str(f.relative_to(SRC.parent)) for f in files} == names
    require_module("vermin")
    vermin = Path(sys.executable).with_name("vermin")
    proc = subprocess.run(
        [str(vermin), "-t=3.9-", "--violations", "--no-tips", *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # vermin does not see a union of types built at run time, which 3.9 cannot evaluate
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
                assert not isinstance(node.args[1], ast.BinOp), f"{path}:{node.lineno}"
