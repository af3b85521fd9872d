"""The use claim on hand-built prediction patterns whose statistics can be checked by hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from chemgauge.benchmarks.p2s.claim import claim_report, format_claim, prediction_paths
from chemgauge.benchmarks.p2s.taskfile import load_directory
from chemgauge.errors import InputFileError

from .test_scoring import hand_dataset, write_jsonl

LABELS = [0, 1, 2, 1, 0, 2, 1, 0, 2, 1]  # 10 records, K = 3 (chance 1/3)
Picker = Callable[[str, str, int, int], int | None]  # (condition, record id, label, cf label)


def write_run(tmp_path: Path, pick: Picker) -> tuple[Path, Path]:
    data = hand_dataset(tmp_path, LABELS)
    views = load_directory(data, "dipole")
    run = tmp_path / "run"
    for condition, view in views.items():
        rows = []
        for task in view.tasks:
            label = view.labels[task.record_id]
            source = label.source_label if label.source_label is not None else label.label
            index = pick(condition, task.record_id, source, label.label)
            if index is not None:
                rows.append({"record_id": task.record_id, "selected_candidate_index": index})
        write_jsonl(run / "dipole" / f"{condition}.jsonl", rows)
    return data, run


def report_for(tmp_path: Path, pick: Picker) -> dict[str, object]:
    data, run = write_run(tmp_path, pick)
    return claim_report(data, "dipole", prediction_paths(run, "dipole"), model="m")


def user(condition: str, rid: str, source: int, label: int) -> int:
    """Follows the evidence: right with its own property, wrong with another's, moves to j."""
    if condition == "correct":
        return source
    if condition == "shuffled":
        return (source + 2) % 3  # never the answer, never the counterfactual donor (+1)
    return label


def test_a_model_that_uses_the_property_earns_the_claim(tmp_path: Path) -> None:
    report = report_for(tmp_path, user)
    drop, flip = report["shuffle_drop"], report["counterfactual_flip"]
    assert isinstance(drop, dict) and isinstance(flip, dict)
    assert drop["difference"]["estimate"] == 1.0
    # 10 discordant pairs all one way: p = 2 * 0.5**10
    assert drop["mcnemar"] == {"only_a": 10, "only_b": 0, "p_value": 2 / 1024}
    assert flip["flip_rate"]["estimate"] == 1.0
    assert flip["donor_pick_rate_under_correct"]["estimate"] == 0.0
    assert flip["mcnemar"]["p_value"] == 2 / 1024
    assert drop["holds"] and flip["holds"] and report["use_claim"] is True
    assert report["chance"] == pytest.approx(1 / 3)
    assert "use claim: YES" in format_claim(report)


def test_a_model_that_ignores_the_property_gets_no_claim(tmp_path: Path) -> None:
    report = report_for(tmp_path, lambda condition, rid, source, label: 0)
    drop, flip = report["shuffle_drop"], report["counterfactual_flip"]
    assert isinstance(drop, dict) and isinstance(flip, dict)
    assert drop["difference"]["estimate"] == 0.0 and drop["mcnemar"]["p_value"] == 1.0
    # picking 0 hits the donor exactly as often with and without the counterfactual property
    assert flip["flip_rate"]["estimate"] == flip["donor_pick_rate_under_correct"]["estimate"]
    assert flip["mcnemar"]["p_value"] == 1.0
    assert report["use_claim"] is False


def test_a_shuffle_drop_alone_is_not_a_use_claim(tmp_path: Path) -> None:
    def drop_only(condition: str, rid: str, source: int, label: int) -> int:
        return (source + 2) % 3 if condition == "shuffled" else source

    report = report_for(tmp_path, drop_only)
    drop, flip = report["shuffle_drop"], report["counterfactual_flip"]
    assert isinstance(drop, dict) and isinstance(flip, dict)
    assert drop["holds"] and not flip["holds"]
    assert flip["flip_rate"]["estimate"] == 0.0
    assert report["use_claim"] is False


def test_weak_evidence_is_not_significant(tmp_path: Path) -> None:
    """Only the first 5 records react to the shuffle: 5 discordant pairs, p = 2/32 > 0.05."""

    def weak(condition: str, rid: str, source: int, label: int) -> int:
        if condition == "shuffled" and rid in {"r0", "r1", "r2", "r3", "r4"}:
            return (source + 2) % 3
        return label if condition == "counterfactual" else source

    report = report_for(tmp_path, weak)
    drop = report["shuffle_drop"]
    assert isinstance(drop, dict)
    assert drop["difference"]["estimate"] == 0.5
    assert drop["mcnemar"]["p_value"] == 2 / 32
    assert not drop["holds"] and report["use_claim"] is False


def test_missing_answers_are_wrong_in_every_view(tmp_path: Path) -> None:
    def silent_when_shuffled(condition: str, rid: str, source: int, label: int) -> int | None:
        return None if condition == "shuffled" else user(condition, rid, source, label)

    report = report_for(tmp_path, silent_when_shuffled)
    views = report["views"]
    assert isinstance(views, dict)
    assert views["shuffled"]["missing"] == 10
    assert report["use_claim"] is True  # silence under the shuffle is still a drop


def test_claim_is_deterministic_and_needs_all_three_files(tmp_path: Path) -> None:
    data, run = write_run(tmp_path, user)
    paths = prediction_paths(run, "dipole")
    first = claim_report(data, "dipole", paths, model="m")
    assert claim_report(data, "dipole", paths, model="m") == first
    paths["counterfactual"].unlink()
    with pytest.raises(InputFileError, match=r"counterfactual\.jsonl: file not found"):
        claim_report(data, "dipole", paths, model="m")
