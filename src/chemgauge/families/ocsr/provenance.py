"""What an OCSR report records about its run, and the checks ``ocsr score`` makes against it.

The report's ``config`` (hashed into ``config_sha256``) covers the run (back-end with its
program hashes, run policy, the journal's attempt hash) and the scoring (policies, their
claims, graph-diff bounds); its ``inputs`` hold the manifest's SHA-256 and its ``timing``
the attempts journal's SHA-256 and size (the journal's bytes follow completion order and hold
timings), taken when the report was written. Re-scoring reads all of that back: it
refuses a journal or manifest whose hash changed (an edited journal is never scored into a
report that verifies), keeps the run's part of the config as it was, so a finished run
re-scored with the same scoring keeps its ``config_sha256``, and says what changed when the
scoring did. A resumed run may only append to the journal: the bytes a report covered must
be unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from chemgauge.chem.graphdiff import DiffSettings
from chemgauge.errors import InputFileError
from chemgauge.eval.envelope import is_envelope, parse_envelope
from chemgauge.eval.provenance import sha256_file
from chemgauge.families.ocsr.attempts import JOURNAL_NAME
from chemgauge.families.ocsr.scoring import POLICIES, POLICY_CLAIMS

__all__ = [
    "RUN_FIELDS",
    "RecordedRun",
    "check_inputs",
    "check_resumable",
    "read_recorded_run",
    "scoring_changes",
    "scoring_config",
]

#: The run's part of an OCSR report's config (the rest is scoring).
RUN_FIELDS = ("backend", "run_config", "attempts_config_sha256")


def scoring_config(policies: tuple[str, ...] = POLICIES) -> dict[str, Any]:
    """How attempts are scored, beside the policy names: their claims, the graph-diff bounds."""
    return {
        "claims": {policy: POLICY_CLAIMS.get(policy, "") for policy in policies},
        "graph_diff": asdict(DiffSettings()),
    }


@dataclass(frozen=True)
class RecordedRun:
    """A finished run as its report recorded it."""

    run: dict[str, Any]
    policies: list[str]
    scoring: dict[str, Any]
    execution: dict[str, Any]
    attempts_sha256: str
    attempts_bytes: int | None
    manifest_sha256: str | None
    source_tree_sha256: str | None


def read_recorded_run(out_dir: Path) -> RecordedRun:
    """Read the run's record from ``out_dir/report.json``; a report without one (missing,
    unreadable, or written before journals were hashed) is an error saying what to do."""
    path = out_dir / "report.json"
    finish = "run `chemgauge ocsr run --run` with the run's options: it resumes the journal"
    try:
        report = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise InputFileError(
            f"no report records this run's attempts hash; {finish} and writes it", path=path
        ) from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputFileError(f"cannot read the run's report ({exc})", path=path) from None
    if not isinstance(report, dict) or not is_envelope(report):
        raise InputFileError(
            f"the report records no attempts hash (an older chemgauge wrote it); {finish}",
            path=path,
        )
    envelope = parse_envelope(report, path)
    journal: dict[str, Any] = envelope.timing.get("attempts_journal") or {}
    manifest = next((i for i in envelope.inputs if i.role == "manifest"), None)
    missing = [name for name in RUN_FIELDS if name not in envelope.config]
    if not isinstance(journal, dict) or not isinstance(journal.get("sha256"), str):
        missing.append("timing.attempts_journal")
    if missing:
        raise InputFileError(f"the report lacks {', '.join(missing)}; {finish}", path=path)
    size = journal.get("size")
    return RecordedRun(
        run={name: envelope.config[name] for name in RUN_FIELDS},
        policies=list(envelope.config.get("policies") or []),
        scoring=dict(envelope.config.get("scoring") or {}),
        execution=dict(envelope.timing.get("execution") or {}),
        attempts_sha256=str(journal["sha256"]),
        attempts_bytes=size if isinstance(size, int) else None,
        manifest_sha256=None if manifest is None else manifest.sha256,
        source_tree_sha256=envelope.provenance.source_tree_sha256,
    )


def _prefix_sha256(path: Path, size: int) -> str | None:
    """SHA-256 of the first ``size`` bytes (``None`` when the file is shorter)."""
    digest = hashlib.sha256()
    left = size
    with open(path, "rb") as handle:
        while left > 0:
            block = handle.read(min(left, 1 << 20))
            if not block:
                return None
            digest.update(block)
            left -= len(block)
    return digest.hexdigest()


def _covered_part_intact(recorded: RecordedRun, journal: Path) -> bool:
    """True when the journal still starts with the bytes the report hashed (rows were only
    appended since, by a resumed run)."""
    if recorded.attempts_bytes is None:
        return False
    return _prefix_sha256(journal, recorded.attempts_bytes) == recorded.attempts_sha256


def check_inputs(recorded: RecordedRun, out_dir: Path, manifest_path: Path) -> None:
    """Refuse a journal or manifest that changed since the report was written."""
    journal = out_dir / JOURNAL_NAME
    actual = sha256_file(journal)
    if actual != recorded.attempts_sha256:
        if _covered_part_intact(recorded, journal):
            raise InputFileError(
                "holds rows written after the run's report (an unfinished resumed run); "
                "finish it with `chemgauge ocsr run --run` and the same options",
                path=journal,
            )
        raise InputFileError(
            f"changed since the run recorded it (sha256 {actual}, recorded "
            f"{recorded.attempts_sha256}); an edited attempts journal is not re-scored",
            path=journal,
        )
    manifest = sha256_file(manifest_path)
    if recorded.manifest_sha256 is not None and manifest != recorded.manifest_sha256:
        raise InputFileError(
            f"is not the manifest the run used (sha256 {manifest}, recorded "
            f"{recorded.manifest_sha256})",
            path=manifest_path,
        )


def check_resumable(out_dir: Path) -> None:
    """Before a run resumes a journal: the part an earlier report covered must be unchanged
    (a resumed run only appends). Nothing to check without a journal or a report."""
    journal = out_dir / JOURNAL_NAME
    if not journal.is_file() or not (out_dir / "report.json").is_file():
        return
    try:
        recorded = read_recorded_run(out_dir)
    except InputFileError:
        return  # a report without a journal record: nothing it covered to compare
    if not _covered_part_intact(recorded, journal):
        raise InputFileError(
            "changed since the run that wrote report.json recorded it; an edited journal is "
            "not resumed (pass --restart to discard it and the report)",
            path=journal,
        )


def scoring_changes(
    recorded: RecordedRun, policies: list[str], current: Mapping[str, Any]
) -> list[str]:
    """What differs between the run's scoring and the scoring used now, one line each."""
    changes: list[str] = []
    before = recorded.scoring
    if recorded.policies != policies:
        changes.append(f"policies {recorded.policies} -> {policies}")
    old_claims = before.get("claims") or {}
    for policy, claim in (current.get("claims") or {}).items():
        if policy in old_claims and old_claims[policy] != claim:
            changes.append(f"claim of {policy!r}: {old_claims[policy]!r} -> {claim!r}")
    if before.get("graph_diff") != current.get("graph_diff"):
        changes.append(f"graph_diff {before.get('graph_diff')} -> {current.get('graph_diff')}")
    return changes
