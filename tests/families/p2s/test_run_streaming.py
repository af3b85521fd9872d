"""Streaming runs: prediction files and rows in task order, whatever order the journal holds."""

from __future__ import annotations

from pathlib import Path

import orjson

from chemgauge.families.p2s.config import RunConfig
from chemgauge.families.p2s.engine.models import ModelOptions, P2SModel
from chemgauge.families.p2s.engine.registry import get_model
from chemgauge.families.p2s.runner import run_model


class Counting:
    """Builds seeded random baselines and counts the tasks they are asked."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, directory: str) -> P2SModel:
        model = get_model("random", ModelOptions(seed=3))
        real = model.predict

        def predict(tasks):  # type: ignore[no-untyped-def]
            self.asked += len(tasks)
            return real(tasks)

        model.predict = predict  # type: ignore[method-assign]
        return model


def _finals(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*.jsonl"))
        if not p.name.endswith(".journal.jsonl")
    }


def test_resumed_scrambled_journals_give_the_uninterrupted_files(
    built: dict[str, Path], tmp_path: Path
) -> None:
    config = RunConfig(property=("dipole", "gap"), batch_size=2)
    whole = Counting()
    run_model(built["data"], tmp_path / "whole", whole, config)
    expected = _finals(tmp_path / "whole" / "random")
    # An interrupted run: every journal keeps a third of its rows, in reverse order, and the
    # final files are gone.
    folder = tmp_path / "again" / "random"
    run_model(built["data"], tmp_path / "again", Counting(), config)
    kept = 0
    for journal in folder.rglob("*.journal.jsonl"):
        lines = journal.read_bytes().splitlines(keepends=True)
        rows = lines[1:][::3][::-1]
        kept += len(rows)
        journal.write_bytes(lines[0] + b"".join(rows))
        journal.with_name(journal.name.replace(".journal", "")).unlink()
    (folder / "rows.jsonl").unlink()
    resumed = Counting()
    run_model(built["data"], tmp_path / "again", resumed, config)
    assert resumed.asked == whole.asked - kept  # nothing asked twice, nothing lost
    assert _finals(folder) == expected
    rows = [orjson.loads(line) for line in expected["rows.jsonl"].splitlines()]
    tasks = (built["data"] / "dipole" / "correct.jsonl").read_bytes().splitlines()
    in_file = [orjson.loads(line)["record_id"] for line in tasks]
    first_view = [r["record_id"] for r in rows if r["property"] == "dipole"][: len(in_file)]
    assert first_view == in_file  # rows follow the task file
