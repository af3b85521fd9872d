"""Ranks read back from disk are checked before ``verify`` or ``report`` uses them.

Slips considered: a hand-edited rank of -2 read as "rank < k" counts as a hit in every top-k;
a rank stored as a string or a float compares in surprising ways; ``True`` is an ``int`` in
Python; a rank list (``correct_ranks_top10``) holding a negative slot.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import InputFileError
from chemgauge.report.loading import load_run
from chemgauge.report.verify import verify_run

Edit = Callable[[dict[str, Any]], None]


def _edited(run: Path, tmp_path: Path, edit: Edit) -> Path:
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    rows = copy / "rows.jsonl"
    lines = rows.read_bytes().splitlines()
    first = orjson.loads(lines[0])
    edit(first)
    rows.write_bytes(b"\n".join([orjson.dumps(first), *lines[1:]]) + b"\n")
    return copy


def _set_forward_rank(value: Any) -> Edit:
    def edit(row: dict[str, Any]) -> None:
        row["best_correct_rank"] = value

    return edit


def _set_retro_hit(row: dict[str, Any]) -> None:
    row["hits"]["syntheseus"]["exact"] = -2


def _negative_in_list(row: dict[str, Any]) -> None:
    row["correct_ranks_top10"] = [-1]


@pytest.mark.parametrize(
    ("family", "edit", "field", "value"),
    [
        ("forward", _set_forward_rank(-2), "best_correct_rank", "-2"),
        ("forward", _set_forward_rank("0"), "best_correct_rank", "'0'"),
        ("forward", _set_forward_rank(True), "best_correct_rank", "True"),
        ("forward", _set_forward_rank(0.0), "best_correct_rank", "0.0"),
        ("forward", _negative_in_list, "correct_ranks_top10[0]", "-1"),
        ("retro", _set_retro_hit, "hits.syntheseus.exact", "-2"),
    ],
)
def test_a_hand_edited_rank_is_an_error_naming_the_row(
    family_runs: dict[str, Path], tmp_path: Path, family: str, edit: Edit, field: str, value: str
) -> None:
    run_dir = _edited(family_runs[family], tmp_path, edit)
    run = load_run(run_dir)
    result = verify_run(run)
    assert not result.ok
    where = [d for d in result.differences if d.where.endswith("rows.jsonl, line 1")]
    assert where, [d.describe() for d in result.differences]
    assert f"{field} is {value}" in where[0].describe()
    with pytest.raises(InputFileError, match="line 1"):
        run.require_clean_rows()

    runner = CliRunner()
    checked = runner.invoke(app, ["verify", str(run_dir)])
    assert checked.exit_code == 1
    assert "line 1" in checked.output and field in checked.output
    page = runner.invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "page.html")])
    assert page.exit_code != 0
    assert "line 1" in page.output + str(page.exception)
    assert not (tmp_path / "page.html").exists()


def test_clean_ranks_load_without_complaint(family_runs: dict[str, Path]) -> None:
    for family in ("forward", "retro"):
        assert load_run(family_runs[family]).bad_lines == []
