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

from chemgauge.errors import InputFileError
from chemgauge.eval.metrics import Rate
from chemgauge.eval.stats import wilson_interval
from chemgauge.families.p2s.scoring import (
    MAX_DIAGNOSTICS,
    Prediction,
    ScoreResult,
    main,
    read_predictions,
    score_files,
)

SRC = Path(__file__).resolve().parents[3] / "src"
ABSENT = object()  # a prediction line without the key


def wilson_rate(count: int, n: int) -> dict[str, Any]:
    """The report's rate shape, its interval from the numpy-side Wilson (the reference)."""
    ref = wilson_interval(count, n)
    interval = [ref.low, ref.high]
    return {
        "count": count,
        "n": n,
        "value": ref.estimate,
        "interval": interval,
        "method": "wilson95",
    }


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
        "accuracy": wilson_rate(1, 6),
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
from chemgauge.families.p2s import scoring
result = scoring.score_files({str(data)!r}, "dipole", "correct", {str(predictions)!r})
assert (result.hits, result.tasks) == (1, 3), result
from chemgauge.families.p2s import taskfile
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
    assert counts["hits"] == expected_hits and counts["accuracy"] == wilson_rate(expected_hits, 4)
    Rate.model_validate(counts["accuracy"])  # the one rate shape of every report
    assert counts["missing"] == answers.count(None)


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
import chemgauge.families.p2s.scoring, chemgauge.families.p2s.taskfile
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


@pytest.mark.parametrize(
    ("flag", "counted_invalid", "named"),
    [
        # unset: absent, null, false and the number zero say nothing (the seed's contract)
        (ABSENT, False, False),
        (None, False, False),
        (False, False, False),
        (0, False, False),
        (0.0, False, False),
        # exactly true: the submission did not parse
        (True, True, False),
        # anything else is no boolean and cannot vouch for the index: invalid, and named
        (1, True, True),
        (1.0, True, True),
        ("true", True, True),
        ("yes", True, True),
        ("false", True, True),
        ("0", True, True),
        ("no", True, True),
        ("", True, True),
        ([], True, True),
        ({}, True, True),
    ],
)
def test_invalid_counts_only_when_exactly_true_and_fails_closed_otherwise(
    tmp_path: Path, flag: Any, counted_invalid: bool, named: bool
) -> None:
    """r0 answers its label (0): it is a hit unless the flag marks the line. A non-boolean
    flag never reads as "not invalid" (it would let a line that failed to parse score),
    and the diagnostic names the value and its line."""
    data = hand_dataset(tmp_path, [0])
    row: dict[str, Any] = {"record_id": "r0", "selected_candidate_index": 0}
    if flag is not ABSENT:
        row["invalid"] = flag
    predictions = write_jsonl(tmp_path / "pred.jsonl", [row])
    result = score_files(data, "dipole", "correct", predictions)
    status = "invalid" if counted_invalid else "hit"
    assert [(o.status, o.selected) for o in result.outcomes] == [
        (status, None if counted_invalid else 0)
    ]
    expected = [f"{predictions}:1: invalid flag {flag!r} is not a boolean; counted as invalid"]
    assert list(read_predictions(predictions).diagnostics) == (expected if named else [])


def test_each_outcome_keeps_its_record_id_and_the_selected_index(tmp_path: Path) -> None:
    """Outcomes follow the task file; an out-of-range answer keeps the index it gave (for the
    report), an invalid or missing one has none."""
    data = hand_dataset(tmp_path, [0, 1, 2, 1])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": "r0", "selected_candidate_index": 2},  # miss
            {"record_id": "r1", "invalid": True},
            {"record_id": "r2", "selected_candidate_index": 7},  # K = 3: out of range
        ],
    )
    result = score_files(data, "dipole", "correct", predictions)
    assert [(o.record_id, o.status, o.selected) for o in result.outcomes] == [
        ("r0", "miss", 2),
        ("r1", "invalid", None),
        ("r2", "out_of_range", 7),
        ("r3", "missing", None),
    ]


def test_index_boundaries_zero_and_k_minus_one_are_in_range(tmp_path: Path) -> None:
    """K = 3: 0 and 2 are candidates, -1 and 3 are not (the half-open range [0, K))."""
    data = hand_dataset(tmp_path, [0, 2, 0, 2])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": "r0", "selected_candidate_index": 0},
            {"record_id": "r1", "selected_candidate_index": 2},
            {"record_id": "r2", "selected_candidate_index": -1},
            {"record_id": "r3", "selected_candidate_index": 3},
        ],
    )
    statuses = [o.status for o in score_files(data, "dipole", "correct", predictions).outcomes]
    assert statuses == ["hit", "hit", "out_of_range", "out_of_range"]


def test_read_predictions_keeps_the_path_record_index_and_line(tmp_path: Path) -> None:
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            "",  # a blank line is skipped, but still numbered
            {"record_id": "r0", "selected_candidate_index": 1},
            {"record_id": "r1", "invalid": True},
        ],
    )
    read = read_predictions(predictions)
    assert read.path == str(predictions)
    assert read.by_record == {
        "r0": Prediction("r0", 1, 2),
        "r1": Prediction("r1", None, 3),
    }


def test_blank_lines_are_skipped_not_counted_and_do_not_end_the_file(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [0, 1])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": "r0", "selected_candidate_index": 0},
            "",
            "   \t",
            {"record_id": "r1", "selected_candidate_index": 1},
        ],
    )
    result = score_files(data, "dipole", "correct", predictions)
    assert (result.hits, result.unattributable_lines) == (2, 0)
    assert read_predictions(predictions).diagnostics == ()


def test_a_record_id_must_be_a_non_empty_string(tmp_path: Path) -> None:
    """An integer id (7, even though a task may be called "7") or an empty one names no
    record: the line is unattributable, not an unknown record, and says why."""
    data = hand_dataset(tmp_path, [0])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": 7, "selected_candidate_index": 0},
            {"record_id": "", "selected_candidate_index": 0},
            {"record_id": ["r0"], "selected_candidate_index": 0},
        ],
    )
    result = score_files(data, "dipole", "correct", predictions)
    assert (result.unattributable_lines, result.unknown_records) == (3, 0)
    assert result.count("missing") == 1
    assert read_predictions(predictions).diagnostics == tuple(
        f"{predictions}:{n}: no string record_id" for n in (1, 2, 3)
    )


def test_a_line_that_is_not_utf8_is_unattributable_even_when_its_decoding_is_json(
    tmp_path: Path,
) -> None:
    """The bad byte sits inside a string, so the lossy decoding is a valid answer line for
    r0; it must still not be scored (the file is not what the model wrote)."""
    data = hand_dataset(tmp_path, [0])
    predictions = tmp_path / "pred.jsonl"
    predictions.write_bytes(b'{"record_id": "r0", "selected_candidate_index": 0, "note": "\xff"}\n')
    result = score_files(data, "dipole", "correct", predictions)
    assert (result.hits, result.count("missing"), result.unattributable_lines) == (0, 1, 1)
    (diagnostic,) = read_predictions(predictions).diagnostics
    assert diagnostic.startswith(f"{predictions}:1: not valid UTF-8")


def test_strict_error_names_the_line_and_shows_its_text(tmp_path: Path) -> None:
    predictions = write_jsonl(
        tmp_path / "pred.jsonl", [{"record_id": "r0", "selected_candidate_index": 0}, "oops"]
    )
    with pytest.raises(InputFileError, match=r"line 2: malformed JSON .*\(value: 'oops'\)"):
        read_predictions(predictions, strict=True)


@pytest.mark.parametrize("bad", [MAX_DIAGNOSTICS - 1, MAX_DIAGNOSTICS, MAX_DIAGNOSTICS + 1])
def test_diagnostics_stop_at_max_diagnostics_but_counts_do_not(tmp_path: Path, bad: int) -> None:
    """n unattributable lines give min(n, 20) diagnostics and a count of n; the same for
    non-boolean flags (each such line is one diagnostic)."""
    lines = write_jsonl(tmp_path / "lines.jsonl", ["not json"] * bad)
    read = read_predictions(lines)
    assert (read.unattributable, len(read.diagnostics)) == (bad, min(bad, MAX_DIAGNOSTICS))
    flags = write_jsonl(
        tmp_path / "flags.jsonl",
        [{"record_id": f"r{i}", "invalid": "yes"} for i in range(bad)],
    )
    read = read_predictions(flags)
    assert len(read.by_record) == bad
    assert len(read.diagnostics) == min(bad, MAX_DIAGNOSTICS)
    assert all(p.selected is None for p in read.by_record.values())


def test_summary_states_every_count(tmp_path: Path) -> None:
    """7 tasks: 1 hit, 1 invalid, 3 out of range, 2 missing; 1 unknown record and 2
    unattributable lines. Accuracy 1/7 = 0.142857... -> 0.1429."""
    data = hand_dataset(tmp_path, [0, 1, 2, 1, 0, 2, 1])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl",
        [
            {"record_id": "r0", "selected_candidate_index": 0},
            {"record_id": "r1", "invalid": True},
            {"record_id": "r2", "selected_candidate_index": 3},
            {"record_id": "r3", "selected_candidate_index": -1},
            {"record_id": "r4", "selected_candidate_index": 99},
            {"record_id": "zz", "selected_candidate_index": 0},
            "nope",
            {"selected_candidate_index": 0},
        ],
    )
    result = score_files(data, "dipole", "correct", predictions)
    assert result.summary() == (
        "dipole/correct: 1 hits / 7 tasks, accuracy 0.1429; missing 2, invalid 1, "
        "out of range 3; unknown records 1, unattributable lines 2"
    )


def test_an_empty_view_has_no_accuracy() -> None:
    empty = ScoreResult("dipole", "shuffled", (), 0, 0)
    assert (empty.tasks, empty.accuracy) == (0, None)
    assert empty.summary().startswith("dipole/shuffled: 0 hits / 0 tasks, accuracy n/a;")


def test_standalone_main_reads_data_from_the_current_folder_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hand_dataset(tmp_path, [0, 1])  # writes tmp_path/data
    predictions = write_jsonl(
        tmp_path / "pred.jsonl", [{"record_id": "r1", "selected_candidate_index": 1}]
    )
    monkeypatch.chdir(tmp_path)
    args = ["--property", "dipole", "--condition", "correct", "--predictions", str(predictions)]
    assert main(args) == 0
    # r0 missing, r1 hit: accuracy 1/2
    assert capsys.readouterr().out == (
        "dipole/correct: 1 hits / 2 tasks, accuracy 0.5000; missing 1, invalid 0, "
        "out of range 0; unknown records 0, unattributable lines 0\n"
    )


def test_standalone_json_is_sorted_by_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stable, diffable line: the same counts always print as the same bytes."""
    data = hand_dataset(tmp_path, [0, 1])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl", [{"record_id": "r0", "selected_candidate_index": 0}]
    )
    args = ["--data", str(data), "--property", "dipole", "--condition", "correct"]
    assert main([*args, "--predictions", str(predictions), "--json"]) == 0
    expected = {
        "accuracy": wilson_rate(1, 2),
        "condition": "correct",
        "hits": 1,
        "invalid": 0,
        "missing": 1,
        "out_of_range": 0,
        "property": "dipole",
        "tasks": 2,
        "unattributable_lines": 0,
        "unknown_records": 0,
    }
    assert capsys.readouterr().out == json.dumps(expected, sort_keys=True) + "\n"


def test_standalone_strict_turns_an_unattributable_line_into_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = hand_dataset(tmp_path, [0])
    predictions = write_jsonl(
        tmp_path / "pred.jsonl", [{"record_id": "r0", "selected_candidate_index": 0}, "[1]"]
    )
    args = ["--data", str(data), "--property", "dipole", "--condition", "correct"]
    assert main([*args, "--predictions", str(predictions)]) == 0
    assert "unattributable lines 1" in capsys.readouterr().out
    assert main([*args, "--predictions", str(predictions), "--strict"]) == 2
    assert "pred.jsonl, line 2: malformed JSON" in capsys.readouterr().err
    with pytest.raises(InputFileError, match="line 2"):
        score_files(data, "dipole", "correct", predictions, strict=True)


@pytest.mark.parametrize("left_out", ["--property", "--condition", "--predictions"])
def test_standalone_main_requires_property_condition_and_predictions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], left_out: str
) -> None:
    given = {"--property": "dipole", "--condition": "correct", "--predictions": "p.jsonl"}
    args = ["--data", str(tmp_path)]
    for option, value in given.items():
        if option != left_out:
            args += [option, value]
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    assert f"the following arguments are required: {left_out}" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "bad"), [("--property", "polarity"), ("--condition", "true")])
def test_standalone_main_rejects_unknown_properties_and_conditions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, bad: str
) -> None:
    given = {"--property": "dipole", "--condition": "correct", option: bad}
    args = ["--data", str(tmp_path), "--predictions", "p.jsonl"]
    for key, value in given.items():
        args += [key, value]
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 2
    assert f"argument {option}: invalid choice: {bad!r}" in capsys.readouterr().err


def test_standalone_help_says_what_it_scores_and_where_the_data_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "\n\nScore one p2s prediction file.\n\n" in out  # the description, on its own
    assert "--data DATA benchmark data folder" in " ".join(out.split())
