"""The run envelope: the one top-level block every family's ``report.json`` is made of.

Every run folder, whatever the family, has the same top level (inspect_ai gives every task one
log schema for the same reason: one reader, one viewer, one checker for any run):
``format``, ``schema_version``, ``family``, ``family_schema_version``, ``chemgauge_version``,
``created``, ``config`` and ``config_sha256``, ``inputs``, ``provenance``, ``rows_file``,
``reproducibility_sha256`` and its excludes, ``timing``, ``counts``, then the family's own
results under ``metrics``. The model below is the contract; the JSON Schema shipped beside it
(:data:`SCHEMA_PATH`) is generated from it, and a test keeps the two equal.

Hash rules: ``config_sha256`` is the SHA-256 of ``config``'s canonical JSON, for every family;
``reproducibility_sha256`` covers the rows only. ``created`` and ``timing`` (wall-clock times
and how the run was executed: executor, workers, resumed items, strict mode) are the only
fields that differ between two runs over the same inputs and config.
"""

from __future__ import annotations

import os
import platform
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import chemgauge
from chemgauge.chem.limits import structure_limits
from chemgauge.errors import InputFileError
from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.eval.provenance import (
    HASH_SCHEME_VERSION,
    sha256_file,
    sha256_json,
    source_tree_sha256,
)

__all__ = [
    "ENVELOPE_FORMAT",
    "ENVELOPE_SCHEMA_VERSION",
    "SCHEMA_PATH",
    "TIMING_FIELDS",
    "Counts",
    "CountsTally",
    "EnvelopeParts",
    "InputRecord",
    "Provenance",
    "RunEnvelope",
    "base_provenance",
    "build_envelope",
    "envelope_bytes",
    "envelope_json_schema",
    "is_envelope",
    "parse_envelope",
    "record_input",
    "without_timing",
    "write_envelope",
]

ENVELOPE_FORMAT: Final = "chemgauge-run"
ENVELOPE_SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "run-envelope.v1.schema.json"
#: Top-level fields that may differ between two runs over the same inputs and config.
TIMING_FIELDS = ("created", "timing")
_JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class InputRecord(BaseModel):
    """One input file of a run: its role, the path as given, and its content hash and size.

    ``base`` says where a relative ``path`` is found: ``given`` (the working directory of the
    run, or else the report's folder) or ``run_folder`` (the report's folder only, for files a
    run keeps inside its own folder).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str = Field(description="What the file is to the run (corpus, data, tasks:<view>...).")
    path: str = Field(description="The path as the run was given it (relative paths stay so).")
    base: Literal["given", "run_folder"] = Field(
        default="given", description="Where a relative path is looked up."
    )
    sha256: str = Field(description="SHA-256 of the file's bytes when the run read it.")
    size: int | None = Field(description="Size in bytes (null when the run did not record it).")


class Counts(BaseModel):
    """How many items the rows hold, how many input records were refused, rows by status."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: int = Field(description="Rows in the rows file: one per scored item.")
    rejected: int = Field(description="Input records refused without a row.")
    rejected_by_reason: dict[str, int] = Field(description="The refused records by reason.")
    status_field: str = Field(description="The row field whose values by_status counts.")
    by_status: dict[str, int] = Field(description="Rows per value of status_field.")


class Provenance(BaseModel):
    """What produced the run besides its config and inputs; families add their own fields."""

    model_config = ConfigDict(extra="allow", frozen=True)

    rdkit_version: str
    python_version: str
    hash_scheme_version: int = Field(description="Version of chemgauge's hashing of JSON.")
    source_tree_sha256: str | None = Field(
        description="Hash of the installed chemgauge sources (excluded from every result hash)."
    )
    backends: dict[str, Any] = Field(
        description="The systems under test or external programs the run drove, with versions."
    )


class RunEnvelope(BaseModel):
    """The top level of every family's ``report.json`` (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: Literal["chemgauge-run"] = Field(description="Marks a chemgauge run report.")
    schema_version: int = Field(ge=1, description="Version of this envelope's layout.")
    family: str = Field(description="The benchmark family that wrote the run.")
    family_schema_version: int = Field(
        ge=1, description="Version of the family's rows and metrics layout."
    )
    chemgauge_version: str
    created: str | None = Field(description="When the report was written (UTC, ISO 8601).")
    config: dict[str, Any] = Field(description="Every option that can change a result.")
    config_sha256: str = Field(description="SHA-256 of config's canonical JSON.")
    inputs: list[InputRecord]
    provenance: Provenance
    rows_file: str = Field(description="The rows file, relative to the report's folder.")
    reproducibility_sha256: str = Field(description="SHA-256 over the rows, in file order.")
    reproducibility_excludes: list[str] = Field(
        description="Row fields left out of reproducibility_sha256 (timing fields)."
    )
    timing: dict[str, Any] = Field(
        description="Wall-clock times and how the run was executed; never part of a hash."
    )
    counts: Counts
    metrics: dict[str, Any] = Field(description="The family's results (see its docs page).")


def envelope_json_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`RunEnvelope`, as shipped in :data:`SCHEMA_PATH`."""
    schema = RunEnvelope.model_json_schema()
    return {"$schema": _JSON_SCHEMA_DIALECT, **schema}


def without_timing(report: Mapping[str, Any]) -> dict[str, Any]:
    """A report without the fields that differ between identical runs (:data:`TIMING_FIELDS`)."""
    return {k: v for k, v in report.items() if k not in TIMING_FIELDS}


def is_envelope(report: Mapping[str, Any]) -> bool:
    """True if a parsed report is written in the run envelope (any schema version)."""
    return report.get("format") == ENVELOPE_FORMAT


def parse_envelope(report: Mapping[str, Any], path: str | Path | None = None) -> RunEnvelope:
    """Validate a parsed report as a run envelope; errors name the file and the first field."""
    version = report.get("schema_version")
    if isinstance(version, int) and version > ENVELOPE_SCHEMA_VERSION:
        raise InputFileError(
            f"run envelope schema_version {version} is newer than this chemgauge reads "
            f"({ENVELOPE_SCHEMA_VERSION}); upgrade chemgauge",
            path=path,
        )
    try:
        return RunEnvelope.model_validate(report)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InputFileError(
            f"not a valid run envelope: {where}: {first['msg']}{more}", path=path
        ) from None


def record_input(
    role: str, path: str | Path, *, base: Literal["given", "run_folder"] = "given"
) -> InputRecord:
    """Hash an input file now and describe it under ``role`` (path kept as given)."""
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise InputFileError(f"cannot read file ({exc.strerror})", path=path) from exc
    return InputRecord(role=role, path=str(path), base=base, sha256=sha256_file(path), size=size)


def base_provenance(backends: Mapping[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """The provenance every family records: RDKit and Python versions, the hash scheme, the
    source tree, the ``backends`` the run drove, and the family's ``extra`` fields."""
    from rdkit import rdBase

    try:
        tree: str | None = source_tree_sha256()
    except OSError:
        tree = None
    return {
        "rdkit_version": rdBase.rdkitVersion,
        "python_version": platform.python_version(),
        "hash_scheme_version": HASH_SCHEME_VERSION,
        "source_tree_sha256": tree,
        "backends": dict(backends or {}),
        "structure_limits": structure_limits().to_dict(),
        **extra,
    }


class CountsTally:
    """Rows per status, folded in as rows stream past (:meth:`feed`)."""

    def __init__(self, status_field: str) -> None:
        self.status_field = status_field
        self.items = 0
        self.by_status: Counter[str] = Counter()

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one row."""
        self.items += 1
        self.by_status[str(row.get(self.status_field))] += 1

    def feed(self, rows: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
        """Yield ``rows`` unchanged, counting each on the way past."""
        for row in rows:
            self.add(row)
            yield row

    def result(self, rejected_by_reason: Mapping[str, int] | None = None) -> Counts:
        """The counts block; ``rejected_by_reason`` are the input records refused without a row."""
        rejected = {k: int(v) for k, v in sorted((rejected_by_reason or {}).items()) if v}
        return Counts(
            items=self.items,
            rejected=sum(rejected.values()),
            rejected_by_reason=rejected,
            status_field=self.status_field,
            by_status=dict(sorted(self.by_status.items())),
        )


@dataclass(frozen=True)
class EnvelopeParts:
    """What a family hands over to be wrapped in the envelope (see :func:`build_envelope`)."""

    family: str
    family_schema_version: int
    config: Mapping[str, Any]
    inputs: Sequence[InputRecord]
    provenance: Mapping[str, Any]
    rows_path: Path
    reproducibility_sha256: str
    counts: Counts
    metrics: Mapping[str, Any]
    reproducibility_excludes: Sequence[str] = ()
    timing: Mapping[str, Any] = field(default_factory=dict)


def _created() -> str:
    """Now in UTC, or ``SOURCE_DATE_EPOCH`` when set (reproducible-build convention)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (
        datetime.fromtimestamp(int(epoch), UTC) if epoch and epoch.isdigit() else datetime.now(UTC)
    )
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _relative_to_report(rows_path: Path, report_path: Path) -> str:
    rows, folder = Path(os.path.abspath(rows_path)), Path(os.path.abspath(report_path)).parent
    try:
        return Path(os.path.relpath(rows, folder)).as_posix()
    except ValueError:  # another drive: no relative path exists
        return str(rows)


def build_envelope(parts: EnvelopeParts, report_path: str | Path) -> RunEnvelope:
    """The validated envelope of a finished run whose report will be written at ``report_path``."""
    config = orjson.loads(orjson.dumps(dict(parts.config), option=orjson.OPT_SORT_KEYS))
    return RunEnvelope(
        format=ENVELOPE_FORMAT,
        schema_version=ENVELOPE_SCHEMA_VERSION,
        family=parts.family,
        family_schema_version=parts.family_schema_version,
        chemgauge_version=chemgauge.__version__,
        created=_created(),
        config=config,
        config_sha256=sha256_json(config),
        inputs=list(parts.inputs),
        provenance=Provenance.model_validate(dict(parts.provenance)),
        rows_file=_relative_to_report(parts.rows_path, Path(report_path)),
        reproducibility_sha256=parts.reproducibility_sha256,
        reproducibility_excludes=list(parts.reproducibility_excludes),
        timing=dict(parts.timing),
        counts=parts.counts,
        metrics=dict(parts.metrics),
    )


def envelope_bytes(envelope: RunEnvelope | Mapping[str, Any]) -> bytes:
    """The report file's bytes: top-level fields in the envelope's order, everything inside
    them with sorted keys, indented, with a trailing newline."""
    data = envelope.model_dump(mode="json") if isinstance(envelope, RunEnvelope) else envelope
    ordered = {
        key: orjson.loads(orjson.dumps(data[key], option=orjson.OPT_SORT_KEYS))
        for key in RunEnvelope.model_fields
        if key in data
    }
    return orjson.dumps(ordered, option=orjson.OPT_INDENT_2) + b"\n"


def write_envelope(path: str | Path, envelope: RunEnvelope | Mapping[str, Any]) -> Path:
    """Write a report atomically (see :func:`envelope_bytes`)."""
    return atomic_write_bytes(path, envelope_bytes(envelope))


if __name__ == "__main__":  # python -m chemgauge.eval.envelope > .../run-envelope.v1.schema.json
    import sys

    sys.stdout.write(
        orjson.dumps(envelope_json_schema(), option=orjson.OPT_INDENT_2).decode() + "\n"
    )
