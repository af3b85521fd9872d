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

Rows stream: each view's tasks are read again from its task file one at a time (the data
folder is checked into a compact :mod:`~chemgauge.families.p2s.viewindex`), joined with
the view's predictions (one small entry per prediction line, a view at a time), written to
``rows.jsonl`` and folded into :class:`~chemgauge.families.p2s.metrics.MetricsTally`; the
row hash is taken by reading ``rows.jsonl`` back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from chemgauge.errors import InputFileError
from chemgauge.eval.atomic import atomic_write_rows
from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    InputRecord,
    base_provenance,
    build_envelope,
    record_input,
    write_envelope,
)
from chemgauge.eval.provenance import reproducibility_sha256, sha256_json
from chemgauge.families.p2s.config import ClaimConfig
from chemgauge.families.p2s.family import FAMILY
from chemgauge.families.p2s.metrics import STATUSES, MetricsTally, aggregate
from chemgauge.families.p2s.metrics_model import P2SMetrics
from chemgauge.families.p2s.scoring import (
    PredictionFile,
    ScoreResult,
    outcome_of,
    read_predictions,
)
from chemgauge.families.p2s.spec import CONDITIONS
from chemgauge.families.p2s.taskfile import Label, Task, ViewData
from chemgauge.families.p2s.viewindex import ViewIndex, index_dataset

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "STATUSES",
    "RunReport",
    "aggregate",
    "item_key",
    "iter_rows_file",
    "view_rows",
    "write_run_report",
]

#: ``family_schema_version`` of the reports written here (the family's one version).
REPORT_SCHEMA_VERSION = FAMILY.schema_version

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


def _row(
    directory: str,
    condition: str,
    task: Task,
    label: Label,
    outcome: tuple[Any, str],
    omitted: bool = False,
) -> dict[str, Any]:
    """One row; a structure-only run's row shows no evidence, since the model saw none."""
    selected, status = outcome
    return {
        "property": directory,
        "condition": condition,
        "record_id": task.record_id,
        "masked_smiles": task.masked_smiles,
        "candidates": list(task.candidates),
        "properties": {} if omitted else task.properties,
        "properties_omitted": omitted,
        "label": label.label,
        "selected": selected,
        "status": status,
        "base_record_id": label.base_record_id,
        "source_label": label.source_label,
    }


def view_rows(view: ViewData, score: ScoreResult, *, omitted: bool = False) -> list[dict[str, Any]]:
    """One row per task of a loaded view, in task-file order, from its scored outcomes."""
    outcomes = {o.record_id: o for o in score.outcomes}
    rows = []
    for task in view.tasks:
        outcome = outcomes[task.record_id]
        label = view.labels[task.record_id]
        rows.append(
            _row(
                view.directory,
                view.condition,
                task,
                label,
                (outcome.selected, outcome.status),
                omitted,
            )
        )
    return rows


def _iter_view_rows(
    view: ViewIndex, predictions: PredictionFile, answered: list[int], omitted: bool
) -> Iterator[dict[str, Any]]:
    """One row per task of a view, in task-file order, tasks read one at a time;
    ``answered[0]`` counts the tasks that have a prediction."""
    for task, label in view.iter_pairs():
        prediction = predictions.by_record.get(task.record_id)
        answered[0] += prediction is not None
        outcome = outcome_of(task, label.label, prediction)
        pair = (outcome.selected, outcome.status)
        yield _row(view.directory, view.condition, task, label, pair, omitted)


def iter_rows_file(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a rows file one at a time."""
    with open(path, "rb") as handle:
        for line in handle:
            yield orjson.loads(line)


def _prediction_files(
    run_dir: Path, dataset: Mapping[str, Mapping[str, ViewIndex]]
) -> list[ViewIndex]:
    """The views a run folder holds predictions for. A view the run manifest lists, or one of
    a property's three views when the others are there, must have its file: a missing one
    would silently take that property's use claim off the report."""
    config = _manifest_config(run_dir)
    listed = config.get("directories"), config.get("conditions")
    expected: set[tuple[str, str]] = set()
    if all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in listed):
        expected = {(d, c) for d in listed[0] or () for c in listed[1] or ()}
    found: list[ViewIndex] = []
    for directory, views in dataset.items():
        present = [c for c in CONDITIONS if (run_dir / directory / f"{c}.jsonl").is_file()]
        wanted = {c for d, c in expected if d == directory} or (
            set(CONDITIONS) if present else set()
        )
        for condition in CONDITIONS:
            if condition in wanted and condition not in present:
                raise InputFileError(
                    f"no prediction file for the {condition} view of {directory!r} (the "
                    + ("run manifest lists it" if expected else "property's other views are here")
                    + "; a property's use claim needs all its views)",
                    path=run_dir / directory / f"{condition}.jsonl",
                )
        found.extend(views[c] for c in present)
    return found


def write_run_report(
    data_dir: str | Path,
    run_dir: str | Path,
    *,
    model: Mapping[str, Any] | None = None,
    claim: ClaimConfig | None = None,
    strict: bool = False,
    checked: Mapping[str, Mapping[str, ViewIndex]] | None = None,
    omit_properties: bool | None = None,
) -> RunReport:
    """Score every prediction file in ``run_dir`` and write ``rows.jsonl`` and ``report.json``.

    ``model`` describes the system (default: the run manifest's, else the folder's name);
    ``strict`` makes an unattributable prediction line an error, as in the scorer.
    ``checked`` is the data folder already checked by the caller (the run), else it is
    checked here. ``omit_properties`` says the model saw no property (default: what the
    run manifest says): rows then carry no evidence and the report config says so.
    """
    folder = Path(run_dir)
    omitted = _omitted(folder) if omit_properties is None else omit_properties
    config = claim or ClaimConfig()
    dataset = checked if checked is not None else index_dataset(data_dir)
    views = _prediction_files(folder, dataset)
    del dataset  # only the views with a prediction file are needed
    if not views:
        raise InputFileError(
            "no prediction files (<property>/<condition>.jsonl) for a property directory of "
            f"{data_dir}",
            path=folder,
        )
    predictions: dict[str, Any] = {}
    data_views: dict[str, Any] = {}
    inputs: list[InputRecord] = []
    tally = MetricsTally()
    counts = CountsTally("status")

    def rows() -> Iterator[Row]:
        for view in views:
            name = f"{view.directory}/{view.condition}"
            path = folder / view.directory / f"{view.condition}.jsonl"
            read = read_predictions(path, strict=strict)
            answered = [0]
            yield from counts.feed(tally.feed(_iter_view_rows(view, read, answered, omitted)))
            tasks = record_input(f"tasks:{name}", view.task_path)
            labels = record_input(f"labels:{name}", view.label_path)
            prediction = record_input(f"predictions:{name}", path)
            beside = {"path": f"{name}.jsonl", "base": "run_folder"}  # the run's own file
            inputs.extend([tasks, labels, prediction.model_copy(update=beside)])
            predictions[name] = {
                "path": f"{name}.jsonl",
                "sha256": prediction.sha256,
                "unknown_records": len(read.by_record) - answered[0],
                "unattributable_lines": read.unattributable,
            }
            data_views[name] = {"tasks_sha256": tasks.sha256, "labels_sha256": labels.sha256}

    rows_path = atomic_write_rows(folder / "rows.jsonl", rows())
    described = dict(model) if model is not None else _model_of(folder)
    run_config = {
        "claim": asdict(config),
        "model": described,
        "omit_properties": omitted,
        "presentation": _presentation(folder),
    }
    unattributable = sum(int(p["unattributable_lines"]) for p in predictions.values())
    metrics = {
        **tally.result(config),
        "model": described,
        "data": {
            "path": str(Path(data_dir).resolve()),
            "sha256": sha256_json(data_views),
            "views": data_views,
        },
        "predictions": predictions,
    }
    P2SMetrics.model_validate(metrics)  # the block as its published schema says
    envelope = build_envelope(
        EnvelopeParts(
            family="p2s",
            family_schema_version=REPORT_SCHEMA_VERSION,
            config=run_config,
            inputs=inputs,
            provenance=base_provenance({"model": described}),
            rows_path=rows_path,
            reproducibility_sha256=reproducibility_sha256(iter_rows_file(rows_path), ()),
            counts=counts.result({"unattributable_prediction_line": unattributable}),
            metrics=metrics,
        ),
        folder / "report.json",
    )
    report = envelope.model_dump(mode="json")
    report_path = write_envelope(folder / "report.json", envelope)
    return RunReport(rows_path, report_path, report)


def _manifest_config(folder: Path) -> dict[str, Any]:
    """The config block of a run folder's manifest ({} when there is none or it is unreadable)."""
    manifest = folder / "run_manifest.json"
    if manifest.is_file():
        try:
            config = orjson.loads(manifest.read_bytes()).get("config", {})
        except (orjson.JSONDecodeError, AttributeError):
            config = None
        if isinstance(config, dict):
            return config
    return {}


def _model_of(folder: Path) -> dict[str, Any]:
    """The model a run manifest describes, else one named after the folder."""
    described = _manifest_config(folder).get("model")
    return described if isinstance(described, dict) else {"name": folder.name}


def _presentation(folder: Path) -> str:
    """``blind`` or ``per_view`` as the run manifest says (prediction files scored without a
    manifest were per-view files)."""
    found = _manifest_config(folder).get("presentation")
    return found if found in ("blind", "per_view") else "per_view"


def _omitted(folder: Path) -> bool:
    """Whether the run manifest says the model was given no property."""
    return _manifest_config(folder).get("omit_properties") is True
