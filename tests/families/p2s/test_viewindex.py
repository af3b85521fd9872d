"""The compact view index: the same checks as loading the views, tasks read back in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from chemgauge.errors import InputFileError
from chemgauge.families.p2s.taskfile import load_dataset, load_view
from chemgauge.families.p2s.viewindex import index_dataset, index_view


def test_index_agrees_with_the_loaded_views(built: dict[str, Path]) -> None:
    loaded = load_dataset(built["data"])
    indexed = index_dataset(built["data"])
    assert list(indexed) == list(loaded)
    for directory, views in loaded.items():
        for condition, view in views.items():
            index = indexed[directory][condition]
            assert index.labels is None  # the builder writes labels in task order
            assert len(index) == len(view.tasks)
            pairs = list(index.iter_pairs())
            assert [task for task, _ in pairs] == view.tasks
            assert {label.record_id: label for _, label in pairs} == view.labels


def test_labels_in_another_order_are_kept_by_id(built: dict[str, Path]) -> None:
    labels = built["data"] / "gap" / "counterfactual.labels.jsonl"
    labels.write_text("\n".join(labels.read_text().splitlines()[::-1]) + "\n")
    view = load_view(built["data"], "gap", "counterfactual")
    index = index_dataset(built["data"])["gap"]["counterfactual"]
    assert index.labels == view.labels
    assert [task for task, _ in index.iter_pairs()] == view.tasks


def _first_error(call: object) -> str:
    with pytest.raises(InputFileError) as caught:
        call()  # type: ignore[operator]
    return str(caught.value)


def test_errors_match_loading_first_malformed_line_first(built: dict[str, Path]) -> None:
    data = built["data"]
    tasks = data / "dipole" / "correct.jsonl"
    lines = tasks.read_text().splitlines()
    # Line 1 repeats line 2's record id (a task problem), line 4 is not JSON: as when the
    # file is loaded whole, the malformed line is reported.
    broken = [lines[1], *lines[1:3], "{not json", *lines[3:]]
    tasks.write_text("\n".join(broken) + "\n")
    expected = _first_error(lambda: load_view(data, "dipole", "correct"))
    assert "malformed JSON" in expected
    assert _first_error(lambda: index_view(data, "dipole", "correct")) == expected
    tasks.write_text("\n".join([lines[1], *lines[1:]]) + "\n")
    expected = _first_error(lambda: load_view(data, "dipole", "correct"))
    assert "duplicate record_id" in expected
    assert _first_error(lambda: index_view(data, "dipole", "correct")) == expected


def test_cross_view_errors_match(built: dict[str, Path]) -> None:
    data = built["data"]
    shuffled = data / "gap" / "shuffled.jsonl"
    shuffled.write_text(shuffled.read_text().replace('"Oc1ccc', '"Sc1ccc', 1))
    expected = _first_error(lambda: load_dataset(data))
    assert _first_error(lambda: index_dataset(data)) == expected


def test_a_task_file_changed_after_indexing_is_an_error(built: dict[str, Path]) -> None:
    index = index_view(built["data"], "dipole", "correct")
    index.task_path.write_text("\n".join(index.task_path.read_text().splitlines()[1:]) + "\n")
    with pytest.raises(InputFileError, match="changed since it was checked"):
        list(index.iter_tasks())
