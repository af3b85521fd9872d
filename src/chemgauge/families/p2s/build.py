"""Build p2s task directories from source molecules and a property provider.

For each source molecule one terminal functional group from the library is masked and the
candidates are drawn from the group's pool (:mod:`.selection`: same size, same attachment
class, ids and order that carry no answer); the three views of every requested directory are
then built (:mod:`.views`). Before anything is written, two checks: every requested directory
must hold tasks (an empty one is an error naming what the provider cannot compute), and the
release must pass the shortcut audit (:mod:`.audit`): no leak and no single-feature tell may
beat chance, no public-knowledge rule may earn a use claim, and no file beside the release
may hold a candidate SMILES. The manifest records the audit, every skip by reason and every
re-drawn value.

What must not ship lives in the build's private folder (``<out>.private`` unless told): the
build secret (the counterfactual donors, counterfactual ids, shuffled ring and file orders
are drawn from it; the manifest holds only its SHA-256 commitment), the answer-bearing build
records and the property journal. Rebuilding with the same private folder gives the same
bytes; without it, a rebuild draws a fresh secret.

Everything seeded is drawn from SHA-256 of the seed and stable identities (never an RNG
stream), so a record's site, candidates and order do not move when other sources are added.
Records are grouped by their masked scaffold: ``split_bucket`` of that key assigns a release,
so one scaffold never straddles two releases.
"""

from __future__ import annotations

import dataclasses
import secrets as secrets_module
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.chem import describe_parse_failure, try_canonical_smiles
from chemgauge.errors import AuditError, ConfigError
from chemgauge.eval.atomic import atomic_write_bytes, atomic_write_json
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.lines import read_lines
from chemgauge.eval.provenance import run_provenance
from chemgauge.eval.rejections import RejectionStats
from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION
from chemgauge.families.p2s import release, selection
from chemgauge.families.p2s.audit import (
    Attack,
    attack_views,
    merge_release_attacks,
    release_attacks,
    score_attack,
)
from chemgauge.families.p2s.compute import PROPERTY_JOURNAL, ComputeExecution, compute_properties
from chemgauge.families.p2s.config import BuildConfig
from chemgauge.families.p2s.engine.properties import PropertyProvider
from chemgauge.families.p2s.library import LIBRARY_VERSION
from chemgauge.families.p2s.publicattack import LabelFacts
from chemgauge.families.p2s.release import SECRET_FILE, private_dir
from chemgauge.families.p2s.selection import ID_SCHEME_VERSION, Record, SelectionConfig
from chemgauge.families.p2s.spec import CONDITIONS, PROPERTY_DIRECTORIES, components_of
from chemgauge.families.p2s.taskfile import Task, labels_path, tasks_path
from chemgauge.families.p2s.views import ViewCounts, Views, directory_views

__all__ = [
    "BuildResult",
    "Record",
    "build_benchmark",
    "check_provider",
    "read_sources",
    "select_records",
]

#: Draws of the build secret the shortcut audit may take: a refused draw (at the audit's
#: family-wise alpha, a uniformly drawn secret is refused now and then by chance) is drawn
#: again from the secret; five refusals in a row mean the leak is not chance.
AUDIT_DRAWS = 5
BUILD_SCHEME_VERSION = 3  # 3: secret donors, ids and file order; private folder
MANIFEST = release.MANIFEST
RECORDS = "build_records.jsonl"


@dataclass
class BuildResult:
    """Counts of a build (also written to the manifest)."""

    records: int = 0
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    redrawn: Counter[str] = field(default_factory=Counter)
    ties: Counter[str] = field(default_factory=Counter)
    audit: dict[str, Any] = field(default_factory=dict)
    #: the secret's draws the audit took (a refused draw is redrawn, at most AUDIT_DRAWS)
    audit_draws: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, Any] = field(default_factory=dict)
    split_counts: Counter[str] = field(default_factory=Counter)
    provider_seconds: float = 0.0
    provider_molecules: int = 0
    resumed_molecules: int = 0
    seconds: float = 0.0


def read_sources(path: str | Path, stats: RejectionStats) -> list[tuple[int, str, str]]:
    """(line, canonical SMILES, name) of each distinct valid source; the rest are counted."""
    out: list[tuple[int, str, str]] = []
    seen: set[str] = set()
    for number, text, *_ in read_lines(path, stats):
        tokens = text.split(maxsplit=1)
        if not tokens or tokens[0].startswith("#"):
            continue
        smiles = tokens[0]
        key = try_canonical_smiles(smiles)
        if key is None:
            stats.reject(number, "invalid_smiles", text, describe_parse_failure(smiles))
            continue
        if "." in key:
            stats.reject(number, "multi_component", text, "sources must be one molecule")
            continue
        if key in seen:
            stats.reject(number, "duplicate", text, key)
            continue
        seen.add(key)
        stats.accepted += 1
        out.append((number, key, tokens[1].strip() if len(tokens) > 1 else ""))
    return out


def select_records(
    sources: Sequence[tuple[int, str, str]], config: BuildConfig, skipped: Counter[str]
) -> list[Record]:
    """Mask one site per source and keep the requested release (see :mod:`.selection`)."""
    return selection.select_records(sources, config.selection(), skipped)


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


def check_provider(provider: PropertyProvider, directories: Sequence[str]) -> None:
    """Every requested directory's properties must be ones the provider can compute."""
    for directory in directories:
        missing = [c for c in components_of(directory) if c not in provider.properties]
        if missing:
            raise ConfigError(
                f"property directory {directory!r} needs {', '.join(missing)}, which the "
                f"{provider.name!r} provider cannot compute (it gives "
                f"{', '.join(provider.properties) or 'nothing'})"
            )


def _check_not_empty(
    built: dict[str, Views], skipped: Counter[str], failures: Counter[str]
) -> None:
    """A requested directory that ends up without a task is an error that says why."""
    for directory, views in built.items():
        if views["correct"][0]:
            continue
        own = f"{directory}:"
        reasons = {k[len(own) :]: v for k, v in skipped.items() if k.startswith(own) and v}
        raise ConfigError(
            f"property directory {directory!r} would be empty (needs "
            f"{', '.join(components_of(directory))}); records skipped: "
            f"{reasons or dict(skipped) or 'none selected'}; provider failures: "
            f"{dict(failures) or 'none'}"
        )


# Views of one directory (their names last); the counterfactual view comes with the correct
# one, whose ids link each counterfactual task to its base record.
_AttackUnit = tuple[str, dict[str, list[Task]], SelectionConfig, tuple[str, ...]]

# Rough relative cost of attacking one candidate of a view, for scheduling only: the id-hash
# strategy dominates, hashing 7 texts a candidate (10 with a base id in the counterfactual
# view); the shuffled view shares the correct view's ids, tasks and caches.
_VIEW_COST = {"correct": 7, "shuffled": 1, "counterfactual": 10}


def _attack_units(units: list[_AttackUnit]) -> list[list[Attack]]:
    """Every strategy on each unit's views: the executor's chunk function, so units are
    attacked side by side."""
    return [
        attack_views(directory, tasks, chosen, only=views)
        for directory, tasks, chosen, views in units
    ]


def _unit_cost(unit: _AttackUnit) -> int:
    _, tasks, _, views = unit
    return sum(_VIEW_COST[v] * sum(len(t.candidates) for t in tasks[v]) for v in views)


def _attack(units: list[_AttackUnit], executor: ExecutorConfig) -> list[Attack]:
    """The attacks of every directory (in the units' order), on the build's local workers
    when it has several: costliest unit first, so the last to finish is a small one (a pool
    forked now inherits this process's memo of the selection, which the replay strategy
    reuses); otherwise here. A unit whose worker failed is attacked again here, so a real
    error surfaces with its own message."""
    results: dict[int, list[Attack] | ItemFailure] = {}
    if executor.kind == "local" and executor.workers() > 1 and len(units) > 1:
        order = sorted(range(len(units)), key=lambda i: (-_unit_cost(units[i]), i))
        runner = make_executor(executor)
        try:
            found = runner.map(_attack_units, [units[i] for i in order], chunk_size=1)
            results.update(zip(order, found, strict=True))
        finally:
            runner.close()
    attacks: list[Attack] = []
    for index, unit in enumerate(units):
        outcome = results.get(index)
        if outcome is None or isinstance(outcome, ItemFailure):
            outcome = _attack_units([unit])[0]
        attacks.extend(outcome)
    return attacks


def _audit(
    built: dict[str, Views],
    alpha: float,
    selection: SelectionConfig,
    executor: ExecutorConfig,
    out: Path,
) -> dict[str, Any]:
    """The shortcut audit of the views about to be written (and of what already sits in
    ``out``); refuses a release that fails."""
    units: list[_AttackUnit] = []
    labels: dict[str, dict[str, int]] = {}
    all_tasks: dict[str, dict[str, list[Task]]] = {}
    facts: dict[str, dict[str, dict[str, LabelFacts]]] = {}
    for directory, views in built.items():
        tasks = {
            condition: [
                Task(
                    t["record_id"],
                    t["masked_smiles"],
                    t["mask"],
                    t["properties"],
                    tuple(t["candidate_completed_smiles"]),
                    line,
                )
                for line, t in enumerate(rows, start=1)
            ]
            for condition, (rows, _) in views.items()
        }
        # Two units a directory, so two workers share even a one-directory audit: the views
        # that share ids (correct, shuffled) and the counterfactual one.
        for attacked in (("correct", "shuffled"), ("counterfactual",)):
            present = tuple(v for v in CONDITIONS if v in attacked and v in tasks)
            if not present:
                continue
            needed = {v: tasks[v] for v in present}
            if "counterfactual" in present and "correct" in tasks:
                needed["correct"] = tasks["correct"]
            units.append((directory, needed, selection, present))
        for condition, (_, rows) in views.items():
            labels[f"{directory}/{condition}"] = {r["record_id"]: r["label"] for r in rows}
        all_tasks[directory] = tasks
        facts[directory] = {
            condition: {
                r["record_id"]: LabelFacts(
                    r["label"], r.get("base_record_id"), r.get("source_label")
                )
                for r in rows
            }
            for condition, (_, rows) in views.items()
        }
    attacks = _attack(units, executor)
    report = score_attack(attacks, labels, alpha)
    extra = release_attacks(all_tasks, facts, selection.seed, alpha, out, PROPERTY_DIRECTORIES)
    report = merge_release_attacks(report, extra)
    if not report["passed"]:
        raise AuditError(
            "refusing to write a release that can be answered without its evidence: "
            + "; ".join(report["failures"][:5])
            + (f" (and {len(report['failures']) - 5} more)" if len(report["failures"]) > 5 else "")
        )
    return report


def secret_commitment(secret: str) -> str:
    """The SHA-256 a manifest publishes for its build secret (proves which one was used)."""
    return selection.seeded_hash("chemgauge-p2s-build-secret", 1, secret)


def load_secret(path: Path) -> str:
    """The build secret kept at ``path``, drawn (256 random bits) and written if absent."""
    if path.is_file():
        text = path.read_text(encoding="utf-8").strip()
        if not text:
            raise ConfigError(f"{path}: the build secret file is empty")
        return text
    path.parent.mkdir(parents=True, exist_ok=True)
    text = secrets_module.token_hex(32)
    atomic_write_bytes(path, (text + "\n").encode())
    return text


def draw_secret(secret: str, draw: int) -> str:
    """The secret of a build's ``draw``-th try: the secret itself first, then one derived
    from it, so a rebuild with the same secret takes the same draws to the same bytes."""
    return secret if draw == 1 else selection.seeded_hash(secret, "audit-draw", draw)


def drawn_source(record: Record, secret: str) -> Record:
    """The record with its source drawn by the secret among its candidates (uniformly): the
    given molecule then only supplies the scaffold and block, so a public list of the given
    molecules (the NCI set of the embedded release) does not tell the answer."""
    k = len(record.candidates)
    index = int(selection.seeded_hash(secret, "source", record.record_id), 16) % k
    return dataclasses.replace(record, source=record.candidates[index], answer=index)


def build_benchmark(
    sources_path: str | Path,
    out_dir: str | Path,
    provider: PropertyProvider,
    config: BuildConfig,
    *,
    strict: bool = False,
    progress: Callable[[int], None] | None = None,
    execution: ComputeExecution | None = None,
    private: str | Path | None = None,
    secret: str | None = None,
) -> BuildResult:
    """Build the requested property directories under ``out_dir`` (files written atomically).

    Property values are computed by :func:`compute_properties` (journaled in the private
    folder, ``<out>.private`` unless ``private`` is given, resumed when the build is run
    again, run where ``execution`` says). ``secret`` (default: the private folder's
    ``build_secret``, drawn on first use) decides donors, counterfactual ids, the shuffled
    ring and file orders; only its commitment is published. Raises
    :class:`ConfigError` when a directory needs a property the provider cannot compute or
    ends up empty, and :class:`AuditError` when every one of :data:`AUDIT_DRAWS` draws of the
    secret fails the audit (the manifest's ``audit_draws`` lists refused draws); in both cases
    no task file is written.
    """
    check_provider(provider, config.directories)
    start = time.perf_counter()
    out = Path(out_dir)
    hidden = private_dir(out) if private is None else Path(private)
    if hidden.resolve() == out.resolve() or out.resolve() in hidden.resolve().parents:
        raise ConfigError(f"the private folder {hidden} must be outside the release {out}")
    result = BuildResult()
    stats = RejectionStats(path=str(sources_path), strict=strict)
    sources = read_sources(sources_path, stats)
    chosen: list[Record] = []  # as selected, before any draw of their sources
    out.mkdir(parents=True, exist_ok=True)
    hidden.mkdir(parents=True, exist_ok=True)
    key = load_secret(hidden / SECRET_FILE) if secret is None else secret

    def candidates() -> Iterator[str]:
        # selection streams into the property stage: workers compute while records are chosen
        for record in selection.iter_records(sources, config.selection(), result.skipped):
            chosen.append(record)
            yield from record.candidates

    execution = execution or ComputeExecution()
    values, computed = compute_properties(
        candidates(), provider, hidden, execution, progress=progress
    )
    result.provider_molecules = computed.molecules
    result.provider_seconds = computed.provider_seconds
    result.resumed_molecules = computed.resumed
    selected_skips = Counter(result.skipped)
    refused: list[dict[str, Any]] = []
    with values:
        for draw in range(1, AUDIT_DRAWS + 1):
            draw_key = draw_secret(key, draw)
            records = [drawn_source(r, draw_key) if config.draw_sources else r for r in chosen]
            counts = ViewCounts(Counter(selected_skips), Counter(), Counter())
            built = {
                directory: directory_views(
                    directory,
                    records,
                    values,
                    secret=draw_key,
                    counterfactuals=config.counterfactuals_per_record,
                    counts=counts,
                    records_wanted=config.records,
                )
                for directory in config.directories
            }
            _check_not_empty(built, counts.skipped, computed.failures)
            try:
                result.audit = _audit(
                    built, config.audit_alpha, config.selection(), execution.executor, out
                )
                break
            except AuditError as exc:
                refused.append({"draw": draw, "failure": str(exc)})
        else:
            raise AuditError(
                f"every one of {AUDIT_DRAWS} draws of the build secret was refused by the "
                f"shortcut audit, so the leak is not chance; the last: {refused[-1]['failure']}"
            )
    result.skipped, result.redrawn, result.ties = counts.skipped, counts.redrawn, counts.ties
    result.audit_draws = {"used": len(refused) + 1, "at_most": AUDIT_DRAWS, "refused": refused}
    for directory, views in built.items():
        result.counts[directory] = {}
        for condition, (tasks, labels) in views.items():
            atomic_write_bytes(
                tasks_path(out, directory, condition), b"".join(_line(t) for t in tasks)
            )
            atomic_write_bytes(
                labels_path(out, directory, condition), b"".join(_line(lab) for lab in labels)
            )
            result.counts[directory][condition] = len(tasks)
    result.records = len(records)
    result.split_counts = Counter(r.split for r in records)
    result.sources = stats.to_dict()
    audit = [
        {
            "record_id": r.record_id,
            "source_smiles": r.source,
            "source_name": r.name,
            "source_line": r.line,
            "masked_smiles": r.masked_smiles,
            "masked_group": r.group,
            "masked_atoms": list(r.masked_atoms),
            "answer": r.answer,
            "scaffold_group_key": r.masked_smiles,
            "split_bucket": r.bucket,
            "split": r.split,
        }
        for r in records
    ]
    atomic_write_bytes(hidden / RECORDS, b"".join(_line(a) for a in audit))
    result.seconds = time.perf_counter() - start
    inputs: dict[str, str | Path] = {"sources": sources_path}
    table = getattr(provider, "path", None)
    if isinstance(table, Path):
        inputs["property_table"] = table
    config_dict = {
        **asdict(config),
        "provider": provider.describe(),
        "limits": execution.limits.describe(),
        "library_version": LIBRARY_VERSION,
        "build_scheme_version": BUILD_SCHEME_VERSION,
        "id_scheme_version": ID_SCHEME_VERSION,
        "split_protocol_version": SPLIT_PROTOCOL_VERSION,
    }
    manifest = {
        "config": config_dict,
        "provenance": run_provenance(config_dict, inputs).to_dict(),
        "sources": result.sources,
        "records": result.records,
        "records_by_split": dict(sorted(result.split_counts.items())),
        "tasks": result.counts,
        "skipped": dict(sorted(result.skipped.items())),
        "shuffled_redrawn": dict(sorted(result.redrawn.items())),
        "records_with_tied_candidate_values": dict(sorted(result.ties.items())),
        "property_failures": dict(sorted(computed.failures.items())),
        "molecules_computed": result.provider_molecules,
        "timing": {
            "build_seconds": round(result.seconds, 3),
            "provider_seconds": round(result.provider_seconds, 3),
            "seconds_per_molecule": round(
                result.provider_seconds / max(1, result.provider_molecules), 5
            ),
            # How this run went (not what it built): a resumed or parallel build writes the
            # same files, and only this block says how it got there.
            "molecules_from_journal": result.resumed_molecules,
            "execution": execution.executor.describe(),
        },
        "secret_sha256": secret_commitment(key),
        "counterfactual_counts": {
            d: {
                "tasks": result.counts[d]["counterfactual"],
                "per_record_at_most": config.counterfactuals_per_record,
                "records": result.counts[d]["correct"],
            }
            for d in result.counts
        },
        "seed_sizes_note": (
            "The seed's release has 136 records per correct/shuffled file and 240 or 258 "
            "counterfactual tasks. A build holds --records N records per directory when the "
            "sources allow (fewer: the skips above say why) and at most "
            f"{config.counterfactuals_per_record} counterfactuals per record, one per donor "
            "candidate whose value differs from the source's; the seed's counterfactual "
            "counts come from its own donor rule and are not reproduced."
        ),
        "audit": result.audit,
        "audit_draws": result.audit_draws,
        "note": (
            "A release is this manifest and the task and label files; hand a system only "
            "the task files (p2s run presents them blind). The build secret, the "
            f"answer-bearing {RECORDS} and the property journal {PROPERTY_JOURNAL} are in the "
            "private folder, which never ships."
        ),
    }
    atomic_write_json(out / MANIFEST, manifest)
    return result
