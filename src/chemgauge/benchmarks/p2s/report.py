"""Rows and a report for a p2s run folder, in the shape every chemgauge family shares.

Why rows, not an adapter over the prediction files: a prediction line holds only a record id
and an index, so whether it was right lives in the label files of the data folder, which a
run folder does not contain and which may move. Scoring once into ``rows.jsonl`` (one row per
task and view: candidates, evidence shown, label, answer, status) makes the run
self-describing: ``chemgauge report``, ``verify`` and ``compare`` work from the folder alone,
every aggregate (accuracy per view, the use claim) is a pure function of the rows, and the
row hash pins the answers. The prediction, task and label files stay the inputs, recorded
with their SHA-256 so ``verify`` can check them when they are present.

``report.json`` covers every ``<property>/<condition>.jsonl`` found in the run folder whose
property directory is in the data folder, so views run at different times report together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from chemgauge.benchmarks.p2s.claim import ClaimConfig, claim_statistics
from chemgauge.benchmarks.p2s.scoring import ScoreResult, read_predictions, score_view
from chemgauge.benchmarks.p2s.spec import CONDITIONS
from chemgauge.benchmarks.p2s.taskfile import ViewData, load_dataset
from chemgauge.errors import InputFileError
from chemgauge.eval.provenance import (
    reproducibility_sha256,
    run_provenance,
    sha256_file,
    sha256_json,
)
from chemgauge.eval.records import atomic_write_json, atomic_write_rows
from chemgauge.eval.stats import wilson_interval

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "RunReport",
    "aggregate",
    "item_key",
    "view_rows",
    "write_run_report",
]

REPORT_SCHEMA_VERSION = 1
STATUSES = ("hit", "miss", "missing", "invalid", "out_of_range")

Row = Mapping[str, Any]


@dataclass(frozen=True)
class RunReport:
    """Where the rows and report of a run folder were written, and the report itself."""

    rows_path: Path
    report_path: Path
    report: dict[str, Any]


def item_key(row: Row) -> str:
    """``property/condition/record_id``: one task in one view (ids repeat across views)."""
    return f"{row['property']}/{row['condition']}/{row['record_id']}"


def view_rows(view: ViewData, score: ScoreResult) -> list[dict[str, Any]]:
    """One row per task of a view, in task-file order, from its scored outcomes."""
    outcomes = {o.record_id: o for o in score.outcomes}
    rows = []
    for task in view.tasks:
        label = view.labels[task.record_id]
        outcome = outcomes[task.record_id]
        rows.append(
            {
                "property": view.directory,
                "condition": view.condition,
                "record_id": task.record_id,
                "masked_smiles": task.masked_smiles,
                "candidates": list(task.candidates),
                "properties": task.properties,
                "label": label.label,
                "selected": outcome.selected,
                "status": outcome.status,
                "base_record_id": label.base_record_id,
                "source_label": label.source_label,
            }
        )
    return rows


def _view_block(rows: Sequence[Row], confidence: float) -> dict[str, Any]:
    hits = sum(1 for r in rows if r["status"] == "hit")
    chance = sum(1 / len(r["candidates"]) for r in rows) / len(rows) if rows else None
    return {
        "tasks": len(rows),
        "hits": hits,
        "accuracy": wilson_interval(hits, len(rows), confidence).to_dict(),
        "chance": chance,
        "statuses": {s: sum(1 for r in rows if r["status"] == s) for s in STATUSES},
    }


def _claim(views: Mapping[str, Sequence[Row]], config: ClaimConfig) -> dict[str, Any]:
    """The use claim from rows: records paired by id, counterfactuals with their base record."""
    correct = {r["record_id"]: r for r in views["correct"]}
    shuffled = {r["record_id"]: r for r in views["shuffled"]}
    paired = [rid for rid in correct if rid in shuffled]
    flips, base_picks = [], []
    for row in views["counterfactual"]:
        base = correct.get(row["base_record_id"])
        flips.append(row["status"] == "hit")
        # A base record without a row was not answered: it picked nothing, like a missing one.
        base_picks.append(
            base is not None
            and base["status"] in ("hit", "miss")
            and base["selected"] == row["label"]
        )
    return claim_statistics(
        [correct[r]["status"] == "hit" for r in paired],
        [shuffled[r]["status"] == "hit" for r in paired],
        flips,
        base_picks,
        config,
    )


def aggregate(rows: Iterable[Row], config: ClaimConfig) -> dict[str, Any]:
    """Accuracy per property and view, and the use claim where all three views are present.

    A pure function of the rows (and the claim's alpha, confidence, seed and resamples), so
    ``verify`` recomputes it exactly.
    """
    grouped: dict[str, dict[str, list[Row]]] = {}
    for row in rows:
        grouped.setdefault(row["property"], {}).setdefault(row["condition"], []).append(row)
    properties: dict[str, Any] = {}
    for directory, views in grouped.items():
        ordered = {c: views[c] for c in CONDITIONS if c in views}
        properties[directory] = {
            "views": {c: _view_block(v, config.confidence) for c, v in ordered.items()},
            "claim": _claim(ordered, config) if len(ordered) == len(CONDITIONS) else None,
        }
    return {
        "rows": sum(
            block["views"][c]["tasks"] for block in properties.values() for c in block["views"]
        ),
        "properties": properties,
    }


def _prediction_files(
    run_dir: Path, dataset: Mapping[str, Mapping[str, ViewData]]
) -> list[ViewData]:
    found = []
    for directory, views in dataset.items():
        for condition in CONDITIONS:
            if (run_dir / directory / f"{condition}.jsonl").is_file():
                found.append(views[condition])
    return found


def write_run_report(
    data_dir: str | Path,
    run_dir: str | Path,
    *,
    model: Mapping[str, Any] | None = None,
    claim: ClaimConfig | None = None,
    strict: bool = False,
) -> RunReport:
    """Score every prediction file in ``run_dir`` and write ``rows.jsonl`` and ``report.json``.

    ``model`` describes the system (default: the run manifest's, else the folder's name);
    ``strict`` makes an unattributable prediction line an error, as in the scorer.
    """
    folder = Path(run_dir)
    config = claim or ClaimConfig()
    dataset = load_dataset(data_dir)
    views = _prediction_files(folder, dataset)
    if not views:
        raise InputFileError(
            "no prediction files (<property>/<condition>.jsonl) for a property directory of "
            f"{data_dir}",
            path=folder,
        )
    rows: list[dict[str, Any]] = []
    predictions: dict[str, Any] = {}
    data_views: dict[str, Any] = {}
    for view in views:
        name = f"{view.directory}/{view.condition}"
        path = folder / view.directory / f"{view.condition}.jsonl"
        score = score_view(view, read_predictions(path, strict=strict))
        rows.extend(view_rows(view, score))
        predictions[name] = {
            "path": f"{name}.jsonl",
            "sha256": sha256_file(path),
            "unknown_records": score.unknown_records,
            "unattributable_lines": score.unattributable_lines,
        }
        data_views[name] = {
            "tasks_sha256": sha256_file(view.task_path),
            "labels_sha256": sha256_file(view.label_path),
        }
    described = dict(model) if model is not None else _model_of(folder)
    run_config = {"claim": asdict(config), "model": described}
    provenance = run_provenance(run_config).to_dict()
    report = {
        "family": "p2s",
        "schema_version": REPORT_SCHEMA_VERSION,
        "model": described,
        "config": run_config,
        "data": {
            "path": str(Path(data_dir).resolve()),
            "sha256": sha256_json(data_views),
            "views": data_views,
        },
        "predictions": predictions,
        "metrics": aggregate(rows, config),
        "provenance": {
            **provenance,
            "reproducibility_sha256": reproducibility_sha256(rows, ()),
            "reproducibility_excludes": [],
        },
    }
    rows_path = atomic_write_rows(folder / "rows.jsonl", rows)
    report_path = atomic_write_json(folder / "report.json", report)
    return RunReport(rows_path, report_path, report)


def _model_of(folder: Path) -> dict[str, Any]:
    """The model a run manifest describes, else one named after the folder."""
    manifest = folder / "run_manifest.json"
    if manifest.is_file():
        try:
            described = orjson.loads(manifest.read_bytes()).get("config", {}).get("model")
        except (orjson.JSONDecodeError, AttributeError):
            described = None
        if isinstance(described, dict):
            return described
    return {"name": folder.name}
