"""Build p2s task directories from source molecules and a property provider.

For each source molecule one terminal functional group from the library is masked; the other
groups of the same size class that attach validly give the alternative completions. The
three views of every requested property directory are then written:

* ``correct``: the source molecule's property, label = the source's index;
* ``shuffled``: the same property taken from another record's source, label unchanged;
* ``counterfactual``: the property of another completion on the same scaffold, label = that
  completion's index (``base_record_id`` and ``source_label`` ride along in the label file).

Everything seeded is drawn from SHA-256 of the seed and stable identities (never an RNG
stream), so a record's site, candidates and order do not move when other sources are added.
Records are grouped by their masked scaffold: ``split_bucket`` of that key assigns a release,
so one scaffold never straddles two releases.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.benchmarks.p2s.compute import PROPERTY_JOURNAL, ComputeExecution, compute_properties
from chemgauge.benchmarks.p2s.library import LIBRARY_VERSION, canonical_library, size_classes
from chemgauge.benchmarks.p2s.spec import (
    CONDITIONS,
    PROPERTY_DIRECTORIES,
    components_of,
    validate_property_value,
)
from chemgauge.benchmarks.p2s.taskfile import labels_path, tasks_path
from chemgauge.chem import describe_parse_failure, try_canonical_smiles
from chemgauge.chem.fragments import MASK_TOKEN, attach_group, attachment_element, find_mask_sites
from chemgauge.engines.p2s.properties import PropertyProvider, PropertyResult
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.provenance import run_provenance
from chemgauge.eval.records import (
    RejectionStats,
    atomic_write_bytes,
    atomic_write_json,
    iter_lines,
)
from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION, assign_split, split_bucket

__all__ = [
    "BuildConfig",
    "BuildResult",
    "Record",
    "build_benchmark",
    "read_sources",
    "select_records",
]

BUILD_SCHEME_VERSION = 1
MANIFEST = "build_manifest.json"
RECORDS = "build_records.jsonl"


@dataclass(frozen=True)
class BuildConfig:
    """What to build: directories, candidates per task, counterfactuals per record, release."""

    directories: tuple[str, ...]
    candidates: int = 4
    counterfactuals_per_record: int = 2
    seed: int = 0
    split: str | None = None
    max_records: int | None = None
    min_scaffold_heavy_atoms: int = 4

    def __post_init__(self) -> None:
        unknown = [d for d in self.directories if d not in PROPERTY_DIRECTORIES]
        if unknown or not self.directories:
            raise ConfigError(
                f"unknown property directory {unknown[0] if unknown else '(none)'!r}; "
                f"choose from {', '.join(PROPERTY_DIRECTORIES)}"
            )
        if self.candidates < 2:
            raise ConfigError(f"need at least 2 candidates per task, got {self.candidates}")
        if self.counterfactuals_per_record < 1:
            raise ConfigError("need at least 1 counterfactual per record")
        if self.split not in (None, "train", "val", "test"):
            raise ConfigError(f"split must be train, val or test, got {self.split!r}")


@dataclass(frozen=True, slots=True)
class Record:
    """One masked scaffold with its candidates (answer-bearing: never written to a task file)."""

    record_id: str
    source: str
    name: str
    line: int
    masked_smiles: str
    group: str
    masked_atoms: tuple[int, ...]
    masked_heavy_atoms: int
    scaffold_attachment_element: str
    candidates: tuple[str, ...]
    answer: int
    split: str
    bucket: int

    def mask(self) -> dict[str, Any]:
        """The mask metadata a task shows (true of every candidate, so it reveals no answer)."""
        return {
            "token": MASK_TOKEN,
            "masked_heavy_atoms": self.masked_heavy_atoms,
            "attachment_points": [
                {"label": 1, "bond": "single", "scaffold_element": self.scaffold_attachment_element}
            ],
        }


@dataclass
class BuildResult:
    """Counts of a build (also written to the manifest)."""

    records: int = 0
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    ties: Counter[str] = field(default_factory=Counter)
    sources: dict[str, Any] = field(default_factory=dict)
    split_counts: Counter[str] = field(default_factory=Counter)
    provider_seconds: float = 0.0
    provider_molecules: int = 0
    resumed_molecules: int = 0
    seconds: float = 0.0


def _hash(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def read_sources(path: str | Path, stats: RejectionStats) -> list[tuple[int, str, str]]:
    """(line, canonical SMILES, name) of each distinct valid source; the rest are counted."""
    out: list[tuple[int, str, str]] = []
    seen: set[str] = set()
    for number, text in iter_lines(path):
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


def _alternatives(site_masked: str, site_group: str, scaffold_element: str, size: int) -> list[str]:
    """Completions from the group's size class other than the source's own group."""
    out: list[str] = []
    for group in size_classes().get(size, ()):
        if group == site_group:
            continue
        # A heteroatom on a heteroatom (N-I, O-O, ...) is valid but not a plausible completion.
        if scaffold_element != "C" and attachment_element(group) != "C":
            continue
        completed = attach_group(site_masked, group)
        if completed is not None and completed not in out:
            out.append(completed)
    return out


def _make_record(
    line: int, source: str, name: str, config: BuildConfig, skipped: Counter[str]
) -> Record | None:
    groups = {key for key, _ in canonical_library()}
    sites = find_mask_sites(
        source, groups, min_scaffold_heavy_atoms=config.min_scaffold_heavy_atoms
    )
    if not sites:
        skipped["no_maskable_group"] += 1
        return None
    sites.sort(key=lambda s: _hash(config.seed, "site", source, s.masked_smiles, s.group))
    for site in sites:
        alternatives = [
            c
            for c in _alternatives(
                site.masked_smiles,
                site.group,
                site.scaffold_attachment_element,
                site.group_heavy_atoms,
            )
            if c != source
        ]
        if len(alternatives) < config.candidates - 1:
            continue
        record_id = "p2s-" + _hash("record", source, site.masked_smiles)[:16]
        chosen = sorted(alternatives, key=lambda c: _hash(config.seed, "alt", record_id, c))
        pool = [source, *chosen[: config.candidates - 1]]
        ordered = tuple(sorted(pool, key=lambda c: _hash(config.seed, "order", record_id, c)))
        return Record(
            record_id=record_id,
            source=source,
            name=name,
            line=line,
            masked_smiles=site.masked_smiles,
            group=site.group,
            masked_atoms=site.masked_atoms,
            masked_heavy_atoms=site.group_heavy_atoms,
            scaffold_attachment_element=site.scaffold_attachment_element,
            candidates=ordered,
            answer=ordered.index(source),
            split=assign_split(site.masked_smiles),
            bucket=split_bucket(site.masked_smiles),
        )
    skipped["too_few_alternatives"] += 1
    return None


def select_records(
    sources: Sequence[tuple[int, str, str]], config: BuildConfig, skipped: Counter[str]
) -> list[Record]:
    """Mask one site per source and keep the requested release (source order is kept)."""
    records: list[Record] = []
    for line, source, name in sources:
        if config.max_records is not None and len(records) >= config.max_records:
            break
        record = _make_record(line, source, name, config, skipped)
        if record is None:
            continue
        if config.split is not None and record.split != config.split:
            skipped["other_split"] += 1
            continue
        records.append(record)
    return records


def _values(
    result: PropertyResult, components: tuple[str, ...], origin: str
) -> dict[str, Any] | None:
    """The components of one provider result, validated; ``None`` if any is absent."""
    if result.error is not None or any(c not in result.values for c in components):
        return None
    out = {}
    for name in components:
        problem = validate_property_value(name, result.values[name])
        if problem:
            raise InputFileError(f"bad property value: {problem}", path=result.origin or origin)
        out[name] = result.values[name]
    return out


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


def _task(record: Record, properties: dict[str, Any], record_id: str) -> dict[str, Any]:
    return {
        "record_id": record_id,
        "masked_smiles": record.masked_smiles,
        "mask": record.mask(),
        "properties": properties,
        "candidate_completed_smiles": list(record.candidates),
    }


def _directory_views(
    directory: str,
    records: list[Record],
    values: Mapping[str, PropertyResult],
    config: BuildConfig,
    skipped: Counter[str],
    ties: Counter[str],
) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    components = components_of(directory)
    own = {}
    for record in records:
        found = _values(values[record.source], components, record.source)
        if found is None:
            skipped[f"{directory}:source_without_property"] += 1
        else:
            own[record.record_id] = found
    kept = [r for r in records if r.record_id in own]
    views: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
        c: ([], []) for c in CONDITIONS
    }
    if len(kept) < 2:
        skipped[f"{directory}:too_few_records_to_shuffle"] += 1
        return views
    ring = sorted(kept, key=lambda r: _hash(config.seed, "shuffle", directory, r.record_id))
    position = {r.record_id: i for i, r in enumerate(ring)}
    for record in kept:
        rid = record.record_id
        views["correct"][0].append(_task(record, own[rid], rid))
        views["correct"][1].append({"record_id": rid, "label": record.answer})
        start = position[rid]
        donors = [ring[(start + k) % len(ring)] for k in range(1, len(ring))]
        donor = next((d for d in donors if own[d.record_id] != own[rid]), donors[0])
        views["shuffled"][0].append(_task(record, own[donor.record_id], rid))
        views["shuffled"][1].append({"record_id": rid, "label": record.answer})
        options = []
        tied = False
        for index, smiles in enumerate(record.candidates):
            if index == record.answer:
                continue
            found = _values(values[smiles], components, smiles)
            tied = tied or found == own[rid]
            if found is not None and found != own[rid]:
                options.append((_hash(config.seed, "counterfactual", rid, smiles), index, found))
        if tied:
            # Kept, not hidden: the evidence cannot separate the answer from another candidate
            # (e.g. equal rounded dipoles), so even a perfect property reader may miss it.
            ties[directory] += 1
        if not options:
            skipped[f"{directory}:no_counterfactual_donor"] += 1
        for _, index, found in sorted(options)[: config.counterfactuals_per_record]:
            cf_id = "p2s-" + _hash("counterfactual", rid, record.candidates[index])[:16]
            views["counterfactual"][0].append(_task(record, found, cf_id))
            views["counterfactual"][1].append(
                {
                    "record_id": cf_id,
                    "label": index,
                    "base_record_id": rid,
                    "source_label": record.answer,
                }
            )
    return views


def _write_views(
    out: Path,
    records: list[Record],
    values: Mapping[str, PropertyResult],
    config: BuildConfig,
    result: BuildResult,
) -> None:
    """Write the three views of every requested directory (each file atomically)."""
    for directory in config.directories:
        views = _directory_views(directory, records, values, config, result.skipped, result.ties)
        result.counts[directory] = {}
        for condition, (tasks, labels) in views.items():
            atomic_write_bytes(
                tasks_path(out, directory, condition), b"".join(_line(t) for t in tasks)
            )
            atomic_write_bytes(
                labels_path(out, directory, condition), b"".join(_line(lab) for lab in labels)
            )
            result.counts[directory][condition] = len(tasks)


def build_benchmark(
    sources_path: str | Path,
    out_dir: str | Path,
    provider: PropertyProvider,
    config: BuildConfig,
    *,
    strict: bool = False,
    progress: Callable[[int], None] | None = None,
    execution: ComputeExecution | None = None,
) -> BuildResult:
    """Build the requested property directories under ``out_dir`` (files written atomically).

    Property values are computed by :func:`compute_properties` (journaled in ``out_dir``,
    resumed when the build is run again, run where ``execution`` says).
    """
    start = time.perf_counter()
    out = Path(out_dir)
    result = BuildResult()
    stats = RejectionStats(path=str(sources_path), strict=strict)
    sources = read_sources(sources_path, stats)
    records = select_records(sources, config, result.skipped)
    molecules = list(dict.fromkeys(c for r in records for c in r.candidates))
    execution = execution or ComputeExecution()
    out.mkdir(parents=True, exist_ok=True)
    values, computed = compute_properties(molecules, provider, out, execution, progress=progress)
    with values:
        _write_views(out, records, values, config, result)
    result.provider_molecules = len(molecules)
    result.provider_seconds = computed.provider_seconds
    result.resumed_molecules = computed.resumed
    failures = computed.failures
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
    atomic_write_bytes(out / RECORDS, b"".join(_line(a) for a in audit))
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
        "records_with_tied_candidate_values": dict(sorted(result.ties.items())),
        "property_failures": dict(sorted(failures.items())),
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
        "note": (
            f"{RECORDS} holds the answers; never hand it to a system under test. "
            f"{PROPERTY_JOURNAL} is the build's resumable property cache (every candidate's "
            "values): not a release file either."
        ),
    }
    atomic_write_json(out / MANIFEST, manifest)
    return result
