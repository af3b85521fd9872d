"""``extract-templates``: forward templates from one leakage-safe split of a corpus, attested.

The corpus is read with the benchmark's own loader (same identity, dedup, group keys and
splits), so "the train split" means exactly the reactions the benchmark will call train.
Only reactions of the requested split are read (``all`` reads every reaction and the
manifest says so); reactions without a mapped reaction are counted, not guessed at, and so
are reactions whose mapped reaction is not the row's own reaction
(:mod:`~chemgauge.families.forward.mapping`): they are excluded, by reason. The
manifest attests ``{templates_sha256, source_corpus_sha256, split_protocol_version,
included_split}`` for the benchmark's ``train-extracted`` mode to validate. It holds no
path: the corpus is recorded by its content hash, since the manifest's own hash enters every
benchmark row's provenance and a path spelled another way must not change it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from rdkit import rdBase

import chemgauge
from chemgauge.errors import ConfigError
from chemgauge.eval.atomic import atomic_write_bytes, atomic_write_json
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.eval.lines import read_lines
from chemgauge.eval.provenance import sha256_bytes, sha256_file
from chemgauge.families.forward.corpus import Corpus, build_corpus
from chemgauge.families.forward.engine.extraction import (
    ExtractionSummary,
    extract_forward_templates,
)
from chemgauge.families.forward.mapping import (
    MAPPING_MISMATCH_REASONS,
    mapping_mismatch,
    mismatch_detail,
)
from chemgauge.families.forward.sources import build_manifest
from chemgauge.families.forward.uspto import uspto_lines

__all__ = ["EXTRACT_SPLITS", "ExtractionRun", "extract_split_templates", "read_any_corpus"]

EXTRACT_SPLITS = ("train", "val", "test", "all")
TEMPLATES_FILE = "templates.jsonl"
MANIFEST_FILE = "manifest.json"
MAX_MISMATCH_EXAMPLES = 20


@dataclass(frozen=True)
class ExtractionRun:
    """What an extraction wrote and its full accounting."""

    templates_path: Path
    manifest_path: Path
    manifest: dict[str, Any]
    summary: ExtractionSummary


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def read_any_corpus(path: Path, *, strict: bool = False) -> tuple[Corpus, str]:
    """A schema-1 JSONL corpus, or a USPTO CSV (``.csv``) read through the same loader."""
    digest = sha256_file(path)
    if path.suffix.lower() == ".csv":
        return build_corpus(uspto_lines(path), path=str(path), sha256=digest, strict=strict), "csv"
    corpus = build_corpus(
        read_lines(path, keep_undecodable=True), path=str(path), sha256=digest, strict=strict
    )
    return corpus, "jsonl"


def extract_split_templates(
    corpus_path: Path,
    split: str,
    out_dir: Path,
    executor: ExecutorConfig | None = None,
    *,
    strict: bool = False,
) -> ExtractionRun:
    """Extract forward templates from one split; write ``templates.jsonl`` + ``manifest.json``."""
    if split not in EXTRACT_SPLITS:
        raise ConfigError(f"--split must be one of {', '.join(EXTRACT_SPLITS)}, got {split!r}")
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"--out {out_dir} exists and is not a directory")
    corpus, fmt = read_any_corpus(corpus_path, strict=strict)
    reactions = corpus.reactions
    chosen = [r for r in reactions if split == "all" or r.split == split]
    mapped = [r for r in chosen if r.mapped_reaction]
    mismatched = Counter[str]()
    examples: list[dict[str, str]] = []
    consistent = []
    for reaction in mapped:
        reason = mapping_mismatch(reaction)
        if reason is None:
            consistent.append(reaction)
            continue
        mismatched[reason] += 1
        if len(examples) < MAX_MISMATCH_EXAMPLES:
            examples.append(
                {"reaction_id": reaction.reaction_id, "detail": mismatch_detail(reaction, reason)}
            )
    mapped = consistent
    summary = extract_forward_templates(
        ((r.reaction_id, r.mapped_reaction or "", r.reaction_class) for r in mapped),
        executor=executor,
    )
    data = summary.to_jsonl()
    templates_path = atomic_write_bytes(out_dir / TEMPLATES_FILE, data)
    manifest = build_manifest(
        templates_sha256=sha256_bytes(data),
        source_corpus_sha256=corpus.sha256,
        included_split=split,
        extra={
            "templates_file": TEMPLATES_FILE,
            "source_corpus_format": fmt,
            "corpus_stats": corpus.stats.to_dict(),
            "valid_reactions": len(reactions),
            "reactions_in_split": len(chosen),
            "reactions_without_mapping": len(chosen) - len(mapped) - sum(mismatched.values()),
            "reactions_with_mismatched_mapping": sum(mismatched.values()),
            "mapping_mismatches_by_reason": {
                r: mismatched.get(r, 0) for r in MAPPING_MISMATCH_REASONS
            },
            "mapping_mismatch_examples": examples,
            "extraction": summary.to_dict(),
            "chemgauge_version": chemgauge.__version__,
            "rdkit_version": rdBase.rdkitVersion,
            "rdchiral_version": _version("rdchiral"),
        },
    )
    manifest_path = atomic_write_json(out_dir / MANIFEST_FILE, manifest)
    return ExtractionRun(templates_path, manifest_path, manifest, summary)
