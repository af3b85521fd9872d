"""The run envelope: its model, the shipped JSON Schema, the file layout, the counts tally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from chemgauge.errors import InputFileError
from chemgauge.eval.envelope import (
    SCHEMA_PATH,
    CountsTally,
    EnvelopeParts,
    InputRecord,
    RunEnvelope,
    base_provenance,
    build_envelope,
    envelope_bytes,
    envelope_json_schema,
    parse_envelope,
    record_input,
    without_timing,
    write_envelope,
)
from chemgauge.eval.provenance import sha256_bytes, sha256_json

ROWS = [{"id": "a", "status": "hit"}, {"id": "b", "status": "miss"}, {"id": "c", "status": "hit"}]


def _envelope(tmp_path: Path, **changes: Any) -> RunEnvelope:
    source = tmp_path / "input.txt"
    source.write_text("CCO\n")
    counts = CountsTally("status")
    for row in ROWS:
        counts.add(row)
    parts = EnvelopeParts(
        family="demo",
        family_schema_version=1,
        config={"k": [1, 3], "policy": "exact"},
        inputs=[record_input("input", source)],
        provenance=base_provenance({"engine": {"name": "demo", "version": "1"}}),
        rows_path=tmp_path / "out" / "rows.jsonl",
        reproducibility_sha256="0" * 64,
        counts=counts.result({"unparsable": 2, "empty": 0}),
        metrics={"hits": 2, "n": 3},
        timing={"seconds": 0.5},
    )
    envelope = build_envelope(parts, tmp_path / "out" / "report.json")
    return envelope.model_copy(update=changes) if changes else envelope


def test_shipped_schema_is_the_models_schema() -> None:
    shipped = json.loads(SCHEMA_PATH.read_text())
    assert shipped == envelope_json_schema(), (
        "regenerate: python -m chemgauge.eval.envelope > " + str(SCHEMA_PATH)
    )
    assert shipped["properties"]["format"]["const"] == "chemgauge-run"
    assert shipped["additionalProperties"] is False


def test_built_envelope_hashes_its_config_and_counts_its_rows(tmp_path: Path) -> None:
    envelope = _envelope(tmp_path)
    assert envelope.config_sha256 == sha256_json({"k": [1, 3], "policy": "exact"})
    assert envelope.rows_file == "rows.jsonl"
    assert envelope.counts.model_dump() == {
        "items": 3,
        "rejected": 2,
        "rejected_by_reason": {"unparsable": 2},  # a zero count is not a reason
        "status_field": "status",
        "by_status": {"hit": 2, "miss": 1},
    }
    [source] = envelope.inputs
    assert (source.role, source.path, source.size, source.base) == (
        "input",
        str(tmp_path / "input.txt"),
        4,
        "given",
    )
    assert source.sha256 == sha256_bytes(b"CCO\n")
    assert envelope.provenance.backends == {"engine": {"name": "demo", "version": "1"}}


def test_rows_file_is_recorded_relative_to_the_report(tmp_path: Path) -> None:
    parts = EnvelopeParts(
        family="demo",
        family_schema_version=1,
        config={},
        inputs=[],
        provenance=base_provenance(),
        rows_path=tmp_path / "rows" / "r.jsonl",
        reproducibility_sha256="0" * 64,
        counts=CountsTally("status").result(),
        metrics={},
    )
    assert (
        build_envelope(parts, tmp_path / "reports" / "report.json").rows_file == "../rows/r.jsonl"
    )


def test_file_layout_is_the_envelope_first_then_metrics(tmp_path: Path) -> None:
    envelope = _envelope(tmp_path)
    path = write_envelope(tmp_path / "report.json", envelope)
    data = orjson.loads(path.read_bytes())
    assert list(data) == list(RunEnvelope.model_fields)
    assert (next(iter(data)), list(data)[-1]) == ("format", "metrics")
    assert list(data["config"]) == ["k", "policy"]  # sorted inside each field
    assert path.read_bytes() == envelope_bytes(envelope) == envelope_bytes(data)
    assert path.read_bytes().endswith(b"}\n")
    assert parse_envelope(data) == envelope


def test_every_written_report_validates_against_the_shipped_schema(tmp_path: Path) -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    data = orjson.loads(envelope_bytes(_envelope(tmp_path)))
    jsonschema.validate(data, schema)
    for broken in (
        {k: v for k, v in data.items() if k != "counts"},
        {**data, "format": "something-else"},
        {**data, "extra_field": 1},
        {**data, "inputs": [{"role": "x", "path": "p"}]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)
        with pytest.raises(InputFileError, match="not a valid run envelope"):
            parse_envelope(broken, "r.json")


def test_parse_names_the_first_bad_field_and_refuses_newer_versions(tmp_path: Path) -> None:
    data = orjson.loads(envelope_bytes(_envelope(tmp_path)))
    with pytest.raises(InputFileError, match=r"r\.json: not a valid run envelope: counts: Field"):
        parse_envelope({k: v for k, v in data.items() if k != "counts"}, "r.json")
    with pytest.raises(InputFileError, match="schema_version 99 is newer"):
        parse_envelope({**data, "schema_version": 99})


def test_created_follows_source_date_epoch_and_is_a_timing_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    first = _envelope(tmp_path)
    assert first.created == "1970-01-01T00:00:00Z"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    second = _envelope(tmp_path).model_copy(update={"timing": {"seconds": 9.0}})
    assert second.created != first.created
    assert without_timing(first.model_dump()) == without_timing(second.model_dump())


def test_record_input_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"nowhere\.txt: cannot read file"):
        record_input("input", tmp_path / "nowhere.txt")
    record = InputRecord(role="x", path="p", sha256="0" * 64, size=None)
    assert record.base == "given"


def test_counts_tally_feeds_rows_through_unchanged() -> None:
    tally = CountsTally("status")
    assert list(tally.feed(iter(ROWS))) == ROWS
    counts = tally.result()
    assert (counts.items, counts.by_status, counts.rejected) == (3, {"hit": 2, "miss": 1}, 0)
    missing = CountsTally("other")
    missing.add(ROWS[0])
    assert missing.result().by_status == {"None": 1}  # a row without the field is counted
