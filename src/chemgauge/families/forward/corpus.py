"""Forward-benchmark corpus (schema version 1): loading, identity, group keys, splits.

One JSON object per line: ``schema_version`` (must be 1), ``reaction_id``, ``reactants``
(non-empty list of SMILES), ``accepted_products`` (non-empty list of non-empty lists of
SMILES); optional ``reaction_class``, ``group_key`` and ``mapped_reaction`` (an atom-mapped
reaction SMILES, read only by template extraction, never by the benchmark). Blank lines are
skipped silently; every other problem is counted in :class:`CorpusLoadStats` with a bounded
list of warnings, and every rejected line that has a ``reaction_id`` becomes an
``input_invalid`` row (:class:`InvalidRecord`) whose reason is the counter's name, except
the two conflicts, which name what is wrong with the row in the singular
(``conflicting_reaction_id``, ``conflicting_group_key``). ``strict`` turns the first problem
into a :class:`~chemgauge.errors.DataQualityError` naming file, line and value. Lines are read
by :mod:`chemgauge.eval.lines` (a leading BOM stripped); a line that is not UTF-8 is counted as
``malformed_json`` with its own line number, like any other line that is not a JSON object.

Two keys, never used for each other's purpose:

* reaction identity (dedup): SHA-256 of domain-separated canonical JSON of the sorted
  canonical reactants and the sorted canonical accepted-product multisets;
* group key (split): the corpus's ``group_key``, else SHA-256 of domain-separated sorted
  canonical reactants alone, so two outcomes of the same reactants share a split.

The split is always computed here (:func:`~chemgauge.eval.splits.assign_split`), never read.

:class:`CorpusStream` reads a corpus line by line holding only compact dedup state (the
benchmark runner uses it, so memory does not grow with the corpus); :func:`load_corpus` and
:func:`build_corpus` materialize the same entries for callers that want them all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from chemgauge.chem import Canonicalizer
from chemgauge.errors import DataQualityError, Reject, excerpt
from chemgauge.eval.jsonl import json_object
from chemgauge.eval.lines import Line, read_lines
from chemgauge.eval.provenance import sha256_file, sha256_json
from chemgauge.eval.splits import assign_split
from chemgauge.families.forward.dedup import Conflict, Duplicate, IdentityLedger, ReusedId
from chemgauge.families.forward.record import (
    CORPUS_SCHEMA_VERSION,
    EXCERPT,
    ParsedRecord,
    components,
    parse_record,
)

__all__ = [
    "CORPUS_COUNTERS",
    "CORPUS_SCHEMA_VERSION",
    "BenchReaction",
    "Corpus",
    "CorpusLoadStats",
    "CorpusStream",
    "CorpusWarning",
    "InvalidRecord",
    "build_corpus",
    "demo_corpus_path",
    "group_key_of",
    "has_stereo_marks",
    "load_corpus",
    "open_corpus",
    "reaction_identity",
]

IDENTITY_DOMAIN = "chemgauge-forward-reaction-identity-v1"
GROUP_KEY_DOMAIN = "chemgauge-forward-group-key-v1"
MAX_WARNINGS = 50

CORPUS_COUNTERS = (
    "malformed_json",
    "wrong_schema_version",
    "empty_reactants_or_products",
    "unparseable_smiles",
    "record_too_large",
    "duplicate_records_merged",
    "conflicting_reaction_ids",
    "conflicting_group_keys",
)
# Every counter except duplicate merging is a data-quality problem --strict refuses.
STRICT_COUNTERS = frozenset(CORPUS_COUNTERS) - {"duplicate_records_merged"}
_CONFLICT_DETAIL = "copies of this reaction supply different explicit group_key values"
_REJECTED = "conflicting group_key values"
# Canonical-SMILES memo bound: shared reagents hit it; a generation is cleared when full.
_MEMO_ENTRIES = 50_000


@dataclass(frozen=True, slots=True)
class CorpusWarning:
    """One counted corpus problem: which counter, where, and the offending value."""

    code: str
    line: int
    reaction_id: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for the report."""
        return {
            "code": self.code,
            "line": self.line,
            "reaction_id": self.reaction_id,
            "message": self.message,
        }


@dataclass
class CorpusLoadStats:
    """Exact counters plus the first :data:`MAX_WARNINGS` warnings."""

    lines_read: int = 0
    blank_lines: int = 0
    records_accepted: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    warnings: list[CorpusWarning] = field(default_factory=list)
    max_warnings: int = MAX_WARNINGS

    def count(self, code: str, line: int, reaction_id: str | None, message: str) -> None:
        """Increment ``code`` and keep the warning if there is room."""
        self.counts[code] += 1
        if len(self.warnings) < self.max_warnings:
            self.warnings.append(CorpusWarning(code, line, reaction_id, excerpt(message)))

    def counters(self) -> dict[str, int]:
        """Every counter, zeros included, in the protocol's order."""
        return {code: self.counts.get(code, 0) for code in CORPUS_COUNTERS}

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for the report."""
        return {
            "lines_read": self.lines_read,
            "blank_lines": self.blank_lines,
            "records_accepted": self.records_accepted,
            **self.counters(),
        }


@dataclass(frozen=True, slots=True)
class BenchReaction:
    """A valid, deduplicated reaction, ready to be predicted.

    ``reactants_original`` is the corpus's own text in its own order: that, never the
    canonical rewrite, is what the engine receives. Everything reported is canonical.
    ``group_key_source`` says where ``group_key`` came from: ``explicit`` (the corpus's
    ``group_key``) or ``fallback`` (the hash of the sorted canonical reactants).
    """

    source_line: int
    reaction_id: str
    reactants_original: tuple[str, ...]
    reactants_canonical: tuple[str, ...]
    accepted_products_canonical: tuple[tuple[str, ...], ...]
    reaction_class: str | None
    group_key: str
    split: str
    identity: str
    mapped_reaction: str | None = None
    group_key_source: str = "fallback"

    @property
    def has_stereochemistry(self) -> bool:
        """Whether any canonical reactant or accepted product carries a stereo mark."""
        return has_stereo_marks(self.reactants_canonical) or any(
            has_stereo_marks(p) for p in self.accepted_products_canonical
        )


@dataclass(frozen=True, slots=True)
class InvalidRecord:
    """A rejected line that has a ``reaction_id``: it becomes an ``input_invalid`` row."""

    source_line: int
    reaction_id: str
    reason: str
    detail: str
    reaction_class: str | None = None


@dataclass
class Corpus:
    """Everything one corpus file produced, in source-line order."""

    path: str
    sha256: str
    entries: list[BenchReaction | InvalidRecord]
    stats: CorpusLoadStats

    @property
    def reactions(self) -> list[BenchReaction]:
        """The valid reactions only."""
        return [e for e in self.entries if isinstance(e, BenchReaction)]


def has_stereo_marks(smiles: Iterable[str]) -> bool:
    """True if a canonical SMILES holds '@', '/' or '\\' (canonical text only carries real ones)."""
    return any(c in s for s in smiles for c in "@/\\")


def reaction_identity(reactants: tuple[str, ...], accepted: tuple[tuple[str, ...], ...]) -> str:
    """Dedup key: SHA-256 over the domain-separated sorted canonical sides."""
    return sha256_json(
        {
            "domain": IDENTITY_DOMAIN,
            "reactants": sorted(reactants),
            "accepted_products": sorted(sorted(p) for p in accepted),
        }
    )


def group_key_of(explicit: str | None, reactants: tuple[str, ...]) -> str:
    """The corpus's own group key, else SHA-256 of the sorted canonical reactants alone."""
    if explicit:
        return explicit
    return sha256_json({"domain": GROUP_KEY_DOMAIN, "reactants": sorted(reactants)})


class CorpusStream:
    """A corpus read line by line: entries come out in source-line order as they are read.

    Only compact state is held: the dedup records live in disk-backed stores
    (:class:`~chemgauge.families.forward.dedup.IdentityLedger`), so memory does not grow
    with the corpus. One rule needs hindsight: when a later copy's explicit group key
    conflicts with an earlier copy's, the *first* occurrence (already yielded as a reaction)
    is rejected too, and the warnings of duplicates merged into it say so. Those lines
    are collected in :attr:`overrides` (line -> the :class:`InvalidRecord` that replaces it);
    a consumer applies them once the stream is exhausted, when :attr:`stats` is final too.
    Iterate once; :meth:`close` (or exhausting the stream) releases the stores.
    """

    def __init__(
        self,
        records: Iterable[Line | tuple[int, str]],
        *,
        path: str,
        sha256: str,
        strict: bool = False,
    ) -> None:
        self.path = path
        self.sha256 = sha256
        self.strict = strict
        self.stats = CorpusLoadStats()
        self.overrides: dict[int, InvalidRecord] = {}
        self.entries = 0
        self.exhausted = False
        self._records = records
        self._started = False
        self._ledger = IdentityLedger()
        # Warnings of duplicates merged into a first line, rewritten if that line is rejected.
        self._merged_warnings: dict[int, list[int]] = {}

    def close(self) -> None:
        """Release the dedup stores (stats and overrides stay readable)."""
        self._ledger.close()

    def __enter__(self) -> CorpusStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[BenchReaction | InvalidRecord]:
        if self._started:
            raise RuntimeError("a corpus stream can be iterated once")
        self._started = True
        try:
            for entry in self._read():
                self.entries += 1
                yield entry
            # A first occurrence rejected in hindsight was counted when it was accepted.
            self.stats.records_accepted -= len(self.overrides)
            self.exhausted = True
            stats = self.stats
            data_lines = stats.lines_read - stats.blank_lines
            if self.entries == 0 and data_lines > 0:
                counted = ", ".join(f"{k} {v:,}" for k, v in stats.counters().items() if v)
                raise DataQualityError(
                    f"no record could be read from {data_lines:,} non-blank lines ({counted}); "
                    "is this a forward corpus (one JSON object a line)?",
                    path=self.path,
                )
        finally:
            self.close()

    def _reject(
        self, line: int, exc: Reject, text: str, reaction_class: str | None = None
    ) -> InvalidRecord | None:
        if self.strict:
            raise DataQualityError(exc.message, path=self.path, line=line, value=text[:EXCERPT])
        self.stats.count(exc.code, line, exc.reaction_id, exc.message)
        if exc.reaction_id is None:
            return None
        return InvalidRecord(line, exc.reaction_id, exc.reason, exc.message, reaction_class)

    def _merged(self, line: int, reaction_id: str, verdict: Duplicate) -> None:
        """Count a duplicate; its warning is rewritten if its reaction is rejected later."""
        first = verdict.first_line
        if verdict.rejected:
            message = f"same reaction as line {first}, which is rejected ({_REJECTED})"
        else:
            message = f"same reaction as line {first}; merged into it"
            if len(self.stats.warnings) < self.stats.max_warnings:
                self._merged_warnings.setdefault(first, []).append(len(self.stats.warnings))
        self.stats.count("duplicate_records_merged", line, reaction_id, message)

    def _conflict(
        self, line: int, text: str, parsed: ParsedRecord, verdict: Conflict
    ) -> InvalidRecord:
        """Reject a copy whose explicit group key conflicts (and its first copy in hindsight)."""
        key, known = parsed.group_key, verdict.known_key
        where = f"line {verdict.known_key_line}"
        if verdict.known_key_line != verdict.first_line:
            where += f", a copy of the reaction first seen on line {verdict.first_line}"
        if self.strict:
            raise DataQualityError(
                f"conflicting group_key for one reaction: {known!r} ({where}) vs {key!r}",
                path=self.path,
                line=line,
                value=text[:EXCERPT],
            )
        self.stats.count(
            "conflicting_group_keys",
            line,
            parsed.reaction_id,
            f"group_key {key!r} conflicts with {known!r} from {where} for the same reaction",
        )
        if verdict.newly_rejected:
            first = verdict.first_line
            # the first copy, accepted when read, is rejected now: counted here too, so every
            # line is accepted, merged or counted once under its reason
            self.stats.count(
                "conflicting_group_keys",
                first,
                verdict.first_reaction_id,
                f"group_key {known!r} conflicts with {key!r} from line {line} for the same "
                "reaction (rejected in hindsight)",
            )
            self.overrides[first] = InvalidRecord(
                first,
                verdict.first_reaction_id,
                "conflicting_group_key",
                _CONFLICT_DETAIL,
                verdict.first_reaction_class,
            )
            for index in self._merged_warnings.pop(first, ()):
                old = self.stats.warnings[index]
                self.stats.warnings[index] = CorpusWarning(
                    old.code,
                    old.line,
                    old.reaction_id,
                    f"same reaction as line {first}, which is rejected ({_REJECTED}, line {line})",
                )
        return InvalidRecord(
            line,
            parsed.reaction_id,
            "conflicting_group_key",
            _CONFLICT_DETAIL,
            parsed.reaction_class,
        )

    def _read(self) -> Iterator[BenchReaction | InvalidRecord]:
        stats = self.stats
        canon = Canonicalizer("exact", max_entries=_MEMO_ENTRIES)
        for record in self._records:
            line, text = record[0], record[1]
            stats.lines_read += 1
            if isinstance(record, Line) and record.problem is not None:
                # not text: counted like any line that is not a JSON object (no row: no id)
                self._reject(line, Reject("malformed_json", record.problem), text)
                continue
            if not text.strip():
                stats.blank_lines += 1
                continue
            obj = json_object(text)
            if isinstance(obj, str):
                detail = obj if obj.startswith(("key ", "line is")) else f"invalid JSON ({obj})"
                invalid = self._reject(line, Reject("malformed_json", detail), text)
                if invalid is not None:
                    yield invalid
                continue
            try:
                parsed = parse_record(obj)
            except Reject as exc:
                cls = obj.get("reaction_class") if isinstance(obj, dict) else None
                invalid = self._reject(line, exc, text, cls if isinstance(cls, str) else None)
                if invalid is not None:
                    yield invalid
                continue
            rid = parsed.reaction_id
            try:
                reactants = tuple(
                    sorted(c for s in parsed.reactants for c in components(s, canon, rid))
                )
                multisets = {
                    tuple(sorted(c for s in entry for c in components(s, canon, rid)))
                    for entry in parsed.accepted
                }
            except Reject as exc:
                invalid = self._reject(line, exc, text, parsed.reaction_class)
                if invalid is not None:
                    yield invalid
                continue
            accepted = tuple(sorted(multisets))  # outer-list dedup; inner multiplicity kept
            identity = reaction_identity(reactants, accepted)
            verdict = self._ledger.see(
                line, identity, rid, parsed.group_key or None, parsed.reaction_class
            )
            if isinstance(verdict, ReusedId):
                conflict = Reject(
                    "conflicting_reaction_ids",
                    f"reaction_id {rid!r} was already used for another reaction",
                    rid,
                    reason="conflicting_reaction_id",
                )
                invalid = self._reject(line, conflict, text, parsed.reaction_class)
                if invalid is not None:
                    yield invalid
                continue
            if isinstance(verdict, Duplicate):
                self._merged(line, rid, verdict)
                continue
            if isinstance(verdict, Conflict):
                yield self._conflict(line, text, parsed, verdict)
                continue
            group_key = group_key_of(parsed.group_key, reactants)
            stats.records_accepted += 1
            yield BenchReaction(
                source_line=line,
                reaction_id=rid,
                reactants_original=parsed.reactants,
                reactants_canonical=reactants,
                accepted_products_canonical=accepted,
                reaction_class=parsed.reaction_class,
                group_key=group_key,
                split=assign_split(group_key),
                identity=identity,
                mapped_reaction=parsed.mapped_reaction,
                group_key_source="explicit" if parsed.group_key else "fallback",
            )


def build_corpus(
    records: Iterable[Line | tuple[int, str]],
    *,
    path: str,
    sha256: str,
    strict: bool = False,
) -> Corpus:
    """Build a whole corpus in memory from lines or ``(line number, text)`` pairs (see the module
    docstring); :class:`CorpusStream` is the same reading without holding the entries."""
    stream = CorpusStream(records, path=path, sha256=sha256, strict=strict)
    entries = list(stream)
    ordered = [stream.overrides.get(e.source_line, e) for e in entries]
    return Corpus(path=path, sha256=sha256, entries=ordered, stats=stream.stats)


def open_corpus(path: str | Path, *, strict: bool = False) -> CorpusStream:
    """Stream a schema-1 JSONL corpus file (hashed first); a missing file is an error naming it."""
    digest = sha256_file(path)
    return CorpusStream(
        read_lines(path, keep_undecodable=True), path=str(path), sha256=digest, strict=strict
    )


def load_corpus(path: str | Path, *, strict: bool = False) -> Corpus:
    """Read a schema-1 JSONL corpus file; a missing file is an error naming it."""
    digest = sha256_file(path)
    return build_corpus(
        read_lines(path, keep_undecodable=True), path=str(path), sha256=digest, strict=strict
    )


def iter_records(corpus: Corpus) -> Iterator[BenchReaction]:
    """Valid reactions in source-line order."""
    for entry in corpus.entries:
        if isinstance(entry, BenchReaction):
            yield entry


def demo_corpus_path() -> Path:
    """The small demo corpus shipped inside the package (the default of every forward run)."""
    resource = resources.files("chemgauge.families.forward").joinpath("data/demo_corpus.jsonl")
    return Path(str(resource))
