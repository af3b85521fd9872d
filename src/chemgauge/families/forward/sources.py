"""Template source modes and the attested template manifest.

* ``embedded`` (default): the package's rule set only; a stray ``--templates`` or
  ``--template-manifest`` is a hard error, never silently ignored.
* ``file``: only the rules of ``--templates`` (strict loader), never merged with the embedded
  set (the opposite of predict/enumerate, where ``--templates`` extends it).
* ``train-extracted``: like ``file``, but ``--template-manifest`` must attest, before the
  rules load, that the file's SHA-256, the source corpus's SHA-256 (this very corpus), the
  split protocol version and ``included_split: "train"`` all hold. Any mismatch is a hard
  error: a label that cannot be checked is never trusted. Holding is not enough: the
  benchmark then re-derives every template from its sources
  (:mod:`~chemgauge.families.forward.preflight`). Given neither file, the runner extracts
  the templates from the corpus's own train split into the run folder first.
* ``scorer-conditioned``: named so the mode space is complete, rejected (no scorer exists).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chemgauge.errors import ConfigError, InputFileError, ManifestError
from chemgauge.eval.provenance import sha256_file
from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION, TRAIN_MAX_BUCKET, VAL_MAX_BUCKET
from chemgauge.families.forward.engine.rules import RuleSet, load_embedded_rules, load_rule_file

__all__ = [
    "MANIFEST_SCHEMA_VERSION",
    "TEMPLATE_SOURCES",
    "LoadedRules",
    "ManifestError",
    "build_manifest",
    "load_rules_for_source",
    "validate_manifest",
]

TEMPLATE_SOURCES = ("embedded", "file", "train-extracted", "scorer-conditioned")
MANIFEST_SCHEMA_VERSION = 1
MANIFEST_REQUIRED = (
    "templates_sha256",
    "source_corpus_sha256",
    "split_protocol_version",
    "included_split",
)


@dataclass(frozen=True)
class LoadedRules:
    """The rule set a run uses, the provenance of where it came from, and the SHA-256 of the
    corpus it was checked against (a run refuses a corpus that changed since)."""

    rules: RuleSet
    template_source: str
    rules_file: str | None
    rules_file_sha256: str | None
    manifest_file: str | None
    manifest_sha256: str | None
    corpus_sha256: str


def build_manifest(
    *,
    templates_sha256: str,
    source_corpus_sha256: str,
    included_split: str,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """The manifest ``extract-templates`` writes next to its rule file."""
    return {
        "manifest_schema_version": MANIFEST_SCHEMA_VERSION,
        "templates_sha256": templates_sha256,
        "source_corpus_sha256": source_corpus_sha256,
        "split_protocol_version": SPLIT_PROTOCOL_VERSION,
        "train_max_bucket": TRAIN_MAX_BUCKET,
        "val_max_bucket": VAL_MAX_BUCKET,
        "included_split": included_split,
        **extra,
    }


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read template manifest ({exc.strerror})") from None
    try:
        manifest = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ManifestError(f"{path}: template manifest is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise ManifestError(f"{path}: template manifest must be a JSON object")
    return manifest


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _check_types(manifest: dict[str, Any], path: Path) -> None:
    """Each attested field has its type before its value is compared (so a wrong type is
    named as one, never explained as a changed corpus or split algorithm)."""
    for key in ("templates_sha256", "source_corpus_sha256"):
        value = manifest[key]
        if not isinstance(value, str) or not _SHA256.fullmatch(value):
            raise ManifestError(
                f"{path}: {key} must be a SHA-256 hex digest (64 lowercase hex digits), "
                f"got {value!r}"
            )
    version = manifest["split_protocol_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise ManifestError(f"{path}: split_protocol_version must be an integer, got {version!r}")
    if not isinstance(manifest["included_split"], str):
        raise ManifestError(
            f"{path}: included_split must be a string, got {manifest['included_split']!r}"
        )


def validate_manifest(manifest_path: Path, templates_path: Path, corpus_sha256: str) -> str:
    """Check every attested field before the rules load; returns the manifest's SHA-256."""
    manifest = _read_manifest(manifest_path)
    missing = [k for k in MANIFEST_REQUIRED if k not in manifest]
    if missing:
        raise ManifestError(f"{manifest_path}: manifest lacks {', '.join(missing)}")
    _check_types(manifest, manifest_path)
    expected = {
        "templates_sha256": sha256_file(templates_path),
        "source_corpus_sha256": corpus_sha256,
        "split_protocol_version": SPLIT_PROTOCOL_VERSION,
        "included_split": "train",
    }
    why = {
        "templates_sha256": f"the manifest describes another rule file than {templates_path}",
        "source_corpus_sha256": "the templates were extracted from another corpus than this one",
        "split_protocol_version": "the split algorithm changed since extraction",
        "included_split": "train-extracted templates must come from the train split only",
    }
    for key, value in expected.items():
        if manifest[key] != value:
            raise ManifestError(
                f"{manifest_path}: {key} is {manifest[key]!r}, expected {value!r}: {why[key]}"
            )
    return sha256_file(manifest_path)


def _runnable(rules: RuleSet, path: Path) -> RuleSet:
    """The rules of a file, refused when not one of them can run (every one a graph rule)."""
    if len(rules) == 0:
        raise ConfigError(
            f"{path}: no runnable rule: all {rules.graph_rules_skipped} graph rules have an "
            "empty smirks; every reaction would be a miss"
        )
    return rules


def _check_file(path: Path) -> None:
    if not path.is_file():
        reason = "expected a file, found a directory" if path.is_dir() else "file not found"
        raise InputFileError(reason, path=path)


def load_rules_for_source(
    source: str,
    templates: Path | None,
    manifest: Path | None,
    corpus_sha256: str,
) -> LoadedRules:
    """Load the rule set a template source names; every misuse is a hard error."""
    if source not in TEMPLATE_SOURCES:
        close = difflib.get_close_matches(source, TEMPLATE_SOURCES, n=2)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(
            f"unknown template source {source!r}.{hint} Known: {', '.join(TEMPLATE_SOURCES)}"
        )
    if source == "scorer-conditioned":
        raise ConfigError(
            "template source 'scorer-conditioned' needs a learned scorer to condition templates "
            "on, which chemgauge does not have yet; use embedded, file or train-extracted"
        )
    if source == "embedded":
        if templates is not None or manifest is not None:
            raise ConfigError(
                "--templates/--template-manifest given with --template-source embedded; the "
                "embedded set is never mixed with a file: pass --template-source file or "
                "train-extracted, or drop the flag"
            )
        return LoadedRules(load_embedded_rules(), source, None, None, None, None, corpus_sha256)
    if templates is None:
        raise ConfigError(f"--template-source {source} needs --templates FILE")
    if source == "file":
        if manifest is not None:
            raise ConfigError(
                "--template-manifest is only checked under --template-source train-extracted"
            )
        _check_file(templates)
        rules = _runnable(load_rule_file(templates), templates)
        return LoadedRules(
            rules, source, str(templates), sha256_file(templates), None, None, corpus_sha256
        )
    if manifest is None:
        raise ConfigError(
            "--template-source train-extracted needs --template-manifest (written by "
            "'chemgauge forward extract-templates --split train')"
        )
    _check_file(templates)
    manifest_sha = validate_manifest(manifest, templates, corpus_sha256)
    rules = _runnable(load_rule_file(templates), templates)
    return LoadedRules(
        rules,
        source,
        str(templates),
        sha256_file(templates),
        str(manifest),
        manifest_sha,
        corpus_sha256,
    )
