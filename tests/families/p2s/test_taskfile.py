"""Task-file validation: each broken rule is an error naming file, line and value."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chemgauge.errors import InputFileError
from chemgauge.families.p2s.spec import PROPERTY_DIRECTORIES, validate_property_value
from chemgauge.families.p2s.taskfile import load_dataset, load_directory, load_view
from chemgauge.families.p2s.validate import check_view

from .test_scoring import hand_dataset, write_jsonl


def rewrite(path: Path, change: Callable[[list[dict[str, Any]]], None]) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    change(rows)
    write_jsonl(path, rows)


def test_fifteen_property_directories() -> None:
    assert len(PROPERTY_DIRECTORIES) == 15
    assert PROPERTY_DIRECTORIES[0] == "dipole" and PROPERTY_DIRECTORIES[-1] == "all_properties"


def test_hand_dataset_loads(tmp_path: Path) -> None:
    views = load_directory(hand_dataset(tmp_path, [0, 1, 2]), "dipole")
    assert {c: len(v.tasks) for c, v in views.items()} == {
        "correct": 3,
        "shuffled": 3,
        "counterfactual": 3,
    }
    assert views["counterfactual"].labels["r1-cf"].base_record_id == "r1"


@pytest.mark.parametrize(
    ("condition", "change", "message"),
    [
        ("correct", lambda rows: rows[1].update(label=1), "the answer must not be in the task"),
        ("correct", lambda rows: rows[0].update(extra=1), "unexpected key 'extra'"),
        (
            "correct",
            lambda rows: rows[0]["candidate_completed_smiles"].append("Oc1ccc(F)cc1"),
            "candidates must be distinct",
        ),
        (
            "correct",
            lambda rows: rows[0]["properties"]["dipole"].update(unit="debye"),
            "unit must be 'D'",
        ),
        ("correct", lambda rows: rows[2].update(record_id="r0"), "duplicate record_id"),
        ("correct", lambda rows: rows[0].update(masked_smiles="Oc1ccccc1"), "mask token"),
        (
            "shuffled",
            lambda rows: rows[0]["candidate_completed_smiles"].reverse(),
            "candidate list differs",
        ),
    ],
)
def test_task_rules(
    tmp_path: Path,
    condition: str,
    change: Callable[[list[dict[str, Any]]], None],
    message: str,
) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2])
    path = data / "dipole" / f"{condition}.jsonl"
    rewrite(path, change)
    with pytest.raises(InputFileError, match=message) as err:
        load_directory(data, "dipole")
    assert str(path) in str(err.value) and ", line " in str(err.value)


@pytest.mark.parametrize(
    ("condition", "change", "message"),
    [
        ("correct", lambda rows: rows[0].update(label=3), "label outside 0..2"),
        ("correct", lambda rows: rows.pop(), "task has no label"),
        ("shuffled", lambda rows: rows[0].update(label=2), "answer index differs"),
        ("counterfactual", lambda rows: rows[0].update(label=0), "other than the source"),
        ("counterfactual", lambda rows: rows[0].update(base_record_id="zz"), "base_record_id"),
        ("counterfactual", lambda rows: rows[0].update(source_label="1"), "must be an integer"),
        ("counterfactual", lambda rows: rows[0].update(base_record_id=""), "non-empty string"),
    ],
)
def test_label_rules(
    tmp_path: Path,
    condition: str,
    change: Callable[[list[dict[str, Any]]], None],
    message: str,
) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2])
    rewrite(data / "dipole" / f"{condition}.labels.jsonl", change)
    with pytest.raises(InputFileError, match=message):
        load_directory(data, "dipole")


def test_nan_and_missing_files_are_errors(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [0, 1])
    path = data / "dipole" / "correct.jsonl"
    path.write_text(path.read_text().replace('"value": 1.0', '"value": NaN', 1))
    with pytest.raises(InputFileError, match=r"line 1: malformed JSON.*NaN"):
        load_view(data, "dipole", "correct")
    (data / "dipole" / "shuffled.labels.jsonl").unlink()
    with pytest.raises(InputFileError, match=r"shuffled\.labels\.jsonl: file not found"):
        load_view(data, "dipole", "shuffled")
    with pytest.raises(InputFileError, match="no property directory"):
        load_dataset(tmp_path)


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        ("Oc1ccc(Xx)cc1", "candidate 2: SMILES syntax error"),
        ("OC1=CC=C(F)C=C1", "candidates 0 and 2 are the same structure"),
        ("CCCCCC", "candidate 2 does not complete the masked scaffold"),
    ],
)
def test_chemical_checks(tmp_path: Path, candidate: str, message: str) -> None:
    data = hand_dataset(tmp_path, [0, 1])
    rewrite(
        data / "dipole" / "correct.jsonl",
        lambda rows: rows[1]["candidate_completed_smiles"].__setitem__(2, candidate),
    )
    view = load_view(data, "dipole", "correct")
    with pytest.raises(InputFileError, match=message) as err:
        check_view(view)
    assert "line 2" in str(err.value)


def test_property_formats() -> None:
    ok = {"unit": "ppm", "peaks": [{"shift": 7.2, "integration": 5}]}
    assert validate_property_value("proton_nmr_integration", ok) is None
    assert "exactly shift" in (validate_property_value("proton_nmr_peaks", ok) or "")
    degenerate = {"unit": "ppm", "peaks": [{"shift": 128.0, "degeneracy": 0}]}
    assert "degeneracy" in (validate_property_value("carbon_nmr_degeneracy", degenerate) or "")
    atoms = {"unit": "ppm", "peaks": [{"shift": 128.0, "atoms": [1, 2]}]}
    assert validate_property_value("carbon_nmr_atom", atoms) is None
    ir = {"unit": "cm-1", "peaks": [{"position": 1700, "intensity": -1}]}
    assert "intensity" in (validate_property_value("infrared", ir) or "")
    assert "finite" in (validate_property_value("gap", {"value": True, "unit": "eV"}) or "")


def seed_format(data: Path) -> None:
    """Strip counterfactual label lines to the seed's two fields, record_id and label."""
    rewrite(
        data / "dipole" / "counterfactual.labels.jsonl",
        lambda rows: [row.pop(k) for row in rows for k in ("base_record_id", "source_label")],
    )


def test_seed_format_counterfactual_labels_load_with_their_base_found(tmp_path: Path) -> None:
    from chemgauge.families.p2s.viewindex import index_directory

    data = hand_dataset(tmp_path, [0, 1, 2])
    full = load_directory(data, "dipole")["counterfactual"].labels
    # the hand dataset shares one candidate list, so give each record its own masked graph
    for cond in ("correct", "shuffled", "counterfactual"):
        rewrite(
            data / "dipole" / f"{cond}.jsonl",
            lambda rows: [
                row.update(masked_smiles=f"{'C' * (i + 1)}Oc1ccc([*:1])cc1")
                for i, row in enumerate(rows)
            ],
        )
    seed_format(data)
    loaded = load_directory(data, "dipole")["counterfactual"].labels
    assert loaded == full
    indexed = index_directory(data, "dipole")["counterfactual"]
    assert indexed.labels == full
    assert [label for _, label in indexed.iter_pairs()] == [
        full[r] for r in ("r0-cf", "r1-cf", "r2-cf")
    ]


def test_seed_format_counterfactual_without_a_unique_base_is_an_error(tmp_path: Path) -> None:
    from chemgauge.families.p2s.viewindex import index_directory

    data = hand_dataset(tmp_path, [0, 1, 2])  # all three records share masked graph and list
    seed_format(data)
    for load in (load_directory, index_directory):
        with pytest.raises(InputFileError, match="matches several records") as err:
            load(data, "dipole")
        assert "counterfactual.jsonl, line 1" in str(err.value)


def test_a_bom_does_not_cost_the_first_line(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [0, 1, 2])
    for path in (data / "dipole").iterdir():
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    views = load_directory(data, "dipole")
    assert len(views["correct"].tasks) == 3 and len(views["correct"].labels) == 3
