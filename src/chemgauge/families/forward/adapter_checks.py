"""What ``verify`` cross-checks in a forward run besides its aggregates and row hash.

Every row carries the run's provenance, so the report's config and provenance are checked
against the rows (an edited ``config.template_source`` or ``provenance.corpus_sha256`` shows
up there), the corpus hash against the recorded input, and the rule set's content hash is
recomputed from the rules themselves: the embedded set of this chemgauge (when its version is
the one recorded) or the recorded rule file (when it is found). The rows' in-sample marks are
recomputed from the same rules' source ids and the rows (their near-duplicate keys), so a row
whose mark was edited, or a rule file swapped for one naming other sources, shows up.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chemgauge.errors import ChemgaugeError
from chemgauge.families.forward.engine.rules import (
    EMBEDDED_RULES_VERSION,
    RuleSet,
    load_embedded_rules,
    load_rule_file,
)
from chemgauge.families.forward.insample import applied_source_ids, in_sample_reasons
from chemgauge.report.adapter import Mismatch, agree
from chemgauge.report.runs import Run

__all__ = ["forward_cross_checks"]

#: Row-provenance fields the envelope keeps at its top level (or that only rows carry).
_TOP_LEVEL = ("chemgauge_version", "reproducibility_sha256", "reproducibility_excludes")
#: Config fields the row provenance repeats.
_IN_PROVENANCE = ("template_source", "split_protocol_version", "score_scheme", "row_schema_version")


def _row_provenance(run: Run) -> tuple[dict[str, Any] | None, list[Mismatch]]:
    """The provenance every row carries (the first row's), and rows that carry another."""
    first: dict[str, Any] | None = None
    found: list[Mismatch] = []
    for row in run.rows:
        provenance = row.get("provenance")
        if first is None and isinstance(provenance, Mapping):
            first = dict(provenance)
        elif provenance != first and len(found) < 5:
            found.append(
                Mismatch(f"rows: line {row.get('source_line')} provenance", provenance, first)
            )
    return first, found


def _input_sha(run: Run, role: str) -> str | None:
    return next((i.sha256 for i in run.envelope.inputs if i.role == role), None)


def _applied_rules(run: Run, provenance: Mapping[str, Any]) -> tuple[str, RuleSet] | None:
    """The rule set the run applied, where it can be read, with where it came from."""
    if provenance.get("template_source") == "embedded":
        if provenance.get("embedded_rules_version") != EMBEDDED_RULES_VERSION:
            return None  # another version of the embedded set: nothing to recompute against
        return "embedded rules", load_embedded_rules()
    templates = next((i for i in run.envelope.inputs if i.role == "templates"), None)
    if templates is None:
        return None
    for path in run.input_candidates(templates):
        try:
            return str(path), load_rule_file(Path(path))
        except ChemgaugeError:
            continue  # an unreadable file is the input check's to report
    return None


def _rules_content(run: Run, provenance: Mapping[str, Any]) -> list[Mismatch]:
    """The rule set's content hash and the rows' in-sample marks recomputed from the rules,
    where they can be read."""
    applied = _applied_rules(run, provenance)
    if applied is None:
        return []
    where, rules = applied
    found = agree(
        f"provenance.rules_content_sha256 ({where})",
        provenance.get("rules_content_sha256"),
        rules.content_sha256,
    )
    reasons = in_sample_reasons(run.rows, applied_source_ids(rules))
    for row, reason in zip(run.rows, reasons, strict=True):
        if row.get("in_sample_reason") != reason or bool(row.get("in_sample")) != (
            reason is not None
        ):
            found.append(
                Mismatch(
                    f"rows: line {row.get('source_line')} in_sample_reason ({where})",
                    row.get("in_sample_reason"),
                    reason,
                )
            )
            if len(found) >= 5:
                break
    return found


def forward_cross_checks(run: Run) -> list[Mismatch]:
    """Every disagreement between the report, its rows and the rule set (see module doc)."""
    envelope = run.envelope
    provenance = envelope.provenance.model_dump()
    found: list[Mismatch] = []
    rows_provenance, differing = _row_provenance(run)
    found += differing
    if rows_provenance is not None:
        for key, value in rows_provenance.items():
            if key in _TOP_LEVEL:
                continue
            found += agree(f"provenance.{key} (rows: {value!r})", provenance.get(key), value)
        found += agree(
            "chemgauge_version (rows)",
            envelope.chemgauge_version,
            rows_provenance.get("chemgauge_version"),
        )
        found += agree(
            "reproducibility_sha256 (rows' provenance)",
            envelope.reproducibility_sha256,
            rows_provenance.get("reproducibility_sha256"),
        )
    found += agree(
        "provenance.config_sha256", provenance.get("config_sha256"), envelope.config_sha256
    )
    for key in _IN_PROVENANCE:
        found += agree(f"config.{key}", envelope.config.get(key), provenance.get(key))
    found += agree(
        "provenance.corpus_sha256", provenance.get("corpus_sha256"), _input_sha(run, "corpus")
    )
    rules = run.metrics.get("rules") or {}
    found += agree(
        "metrics.rules.rules_content_sha256",
        rules.get("rules_content_sha256"),
        provenance.get("rules_content_sha256"),
    )
    found += agree(
        "provenance.rules_file_sha256",
        provenance.get("rules_file_sha256"),
        _input_sha(run, "templates"),
    )
    found += agree(
        "metrics.rules.rules_file_sha256",
        rules.get("rules_file_sha256"),
        _input_sha(run, "templates"),
    )
    found += _rules_content(run, provenance)
    return found
