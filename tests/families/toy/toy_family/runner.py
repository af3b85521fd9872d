"""Run a toy system over a word list into a run folder: rows, then the report."""

from pathlib import Path
from typing import Any

from chemgauge.eval.atomic import atomic_write_rows
from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    base_provenance,
    build_envelope,
    record_input,
    write_envelope,
)
from chemgauge.eval.metrics import rate
from chemgauge.eval.provenance import reproducibility_sha256
from toy_family.engine import SYSTEMS, ToyOptions
from toy_family.family import FAMILY


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The metrics block: a pure function of the rows."""
    return {"accuracy": rate(sum(bool(r["hit"]) for r in rows), len(rows))}


def run(words: Path, model: str, out: Path) -> dict[str, Any]:
    """Score ``model`` on every word of ``words`` into ``out``; return the report."""
    answer = SYSTEMS.build(model, ToyOptions())
    items = [w for w in words.read_text().split() if w]
    rows = [
        {"id": i, "word": w, "answer": answer(w), "hit": answer(w) == w.upper(), "status": "ok"}
        for i, w in enumerate(items)
    ]
    rows_path, report_path = out / "rows.jsonl", out / "report.json"
    atomic_write_rows(rows_path, rows)
    tally = CountsTally("status")
    for row in rows:
        tally.add(row)
    envelope = build_envelope(
        EnvelopeParts(
            family=FAMILY.name,
            family_schema_version=FAMILY.schema_version,
            config={"model": model},
            inputs=[record_input("words", words)],
            provenance=base_provenance({"model": model}),
            rows_path=rows_path,
            reproducibility_sha256=reproducibility_sha256(rows, ()),
            counts=tally.result(),
            metrics=aggregate(rows),
        ),
        report_path,
    )
    write_envelope(report_path, envelope)
    return envelope.model_dump(mode="json")
