"""Run the coverage instrument: one OPSIN call per distinct emitted name, rows and a report.

The run streams: pairs are scored a block at a time (:func:`score_pairs` for one block, and
:func:`~chemgauge.families.names.pipeline.score_blocks` for a run, which reads the next block
back while the workers match the current one; names, and (input, read-back) matches, are
deduplicated within the block), each block's rows are journaled as it finishes, and the
report is folded from the rows as they are read back from the journal in input order
(:class:`RowSummary`: per-lens counts and the first ``MAX_WRONG_LISTED`` wrong rows and
OPSIN errors). What grows with the corpus is a short key
or an int per pair, never a row: the ids seen (to reject a repeat) and the ids in input
order, and one journal offset per row while the rows file is written (:func:`journal_rows`).
A run's :class:`RunMemo` (bounded) carries OPSIN's answers and the lens classes of each
matched (input, read-back) pair from block to block, so a name or a pair repeated far apart is
read back and matched once, by one worker, not once a block by whichever worker draws it.
Matching runs in size-balanced groups on the executor; each worker keys a structure once for
every pair and lens it appears in (:func:`~chemgauge.families.names.metrics.keyed`).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemgauge.eval.envelope import (
    CountsTally,
    EnvelopeParts,
    base_provenance,
    build_envelope,
    record_input,
)
from chemgauge.eval.executors import Executor, ItemFailure, SerialExecutor
from chemgauge.eval.journal import iter_journal_by_keys
from chemgauge.eval.provenance import reproducibility_sha256
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.family import FAMILY
from chemgauge.families.names.inputs import NamePair
from chemgauge.families.names.metrics import (
    NOT_INTERPRETABLE,
    OWN_LENSES,
    CoverageTally,
    RowClass,
    RowResult,
    classify_parsed,
    completeness,
    is_abstention,
)
from chemgauge.families.names.metrics_model import NamesMetrics
from chemgauge.families.names.reference import difference_class
from chemgauge.families.names.refusals import name_refusal

__all__ = [
    "GROUP_WEIGHT",
    "MAX_WRONG_LISTED",
    "OPSIN_ERROR_STATUSES",
    "ClassifyGroup",
    "Match",
    "ReadBack",
    "ResolveBatch",
    "RowSummary",
    "RunMemo",
    "balanced_groups",
    "build_report",
    "build_rows",
    "confidently_wrong_rows",
    "journal_rows",
    "listings_of",
    "match_groups",
    "pairs_to_match",
    "read_back",
    "score_pairs",
]

#: The row field the envelope's ``counts.by_status`` counts (the seed's house lens).
STATUS_FIELD = "strict"
MAX_WRONG_LISTED = 200
# OPSIN statuses that mean OPSIN (or its driver) failed on a well-formed name rather than
# reading it: the pair is ``opsin_error`` (inside ``total``, never credited). ``failure``
# (OPSIN read the name and could not interpret it) and ``refused`` (the name itself cannot be
# sent: :mod:`~chemgauge.families.names.refusals`) are the namer's ``unparseable``.
OPSIN_ERROR_STATUSES = frozenset({"exception", "timeout", "crashed", "skipped"})

# Matching work per group, in SMILES characters (a proxy for atoms): groups are filled
# heaviest pair first, so one large peptide does not hold a worker while the others idle,
# and small, because a tautomer search's cost varies far more than its SMILES' length: many
# groups leave a short tail on the last worker.
GROUP_WEIGHT = 500
_CLASSIFY_FAILED = "classification_failed"
# Where the complete lists are (the envelope's ``rows_file`` names the file).
COMPLETE_LISTS = (
    "the rows file holds every row: a confidently wrong one has confidently_wrong under a "
    "lens, an OPSIN error has opsin_error"
)


@dataclass(frozen=True, slots=True)
class ReadBack:
    """What the round trip returned for one name: a SMILES or a reason."""

    smiles: str | None
    status: str
    error: str | None = None
    refusal: str | None = None  # the refusal's code when the name itself was refused

    @property
    def opsin_failed(self) -> bool:
        """True when OPSIN failed on the name (no verdict on the name itself)."""
        return self.status in OPSIN_ERROR_STATUSES


ResolveBatch = Callable[[Sequence[str]], Sequence[ReadBack]]


# lens -> class, lens -> why unscorable, and why parity and reference_parity differ (or None)
Match = tuple[dict[str, str], dict[str, str], str | None]


def _difference(
    smiles: str, parsed: str, classes: dict[str, str], reasons: dict[str, str]
) -> str | None:
    """Why ``parity`` and ``reference_parity`` differ on a pair, or ``None`` when they agree
    (judged where the pair is matched, beside the keys it needs)."""
    parity, reference = classes.get("parity"), classes.get("reference_parity")
    if parity is None or reference is None or parity == reference:
        return None
    return difference_class(smiles, parsed, parity, reasons.get("parity"))


@dataclass(frozen=True, slots=True)
class ClassifyGroup:
    """Picklable chunk function: classes under ``lenses`` for groups of (input, read-back)
    pairs."""

    lenses: tuple[str, ...]

    def __call__(self, groups: list[list[tuple[str, str]]]) -> list[list[Match]]:
        out = []
        for group in groups:
            matches = []
            for smiles, parsed in group:
                classes, reasons = classify_parsed(smiles, parsed, self.lenses)
                values = {k: v.value for k, v in classes.items()}
                matches.append((values, reasons, _difference(smiles, parsed, values, reasons)))
            out.append(matches)
        return out


class RunMemo:
    """OPSIN answers and matched pairs kept across a run's blocks, each bounded by ``limit``
    entries (full: forgotten, then refilled). Both are pure functions of their key (an
    OPSIN error is never kept: the name is sent again), so a run's rows are the same bytes
    with or without it, whatever ``--jobs``."""

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self.answers: dict[str, ReadBack] = {}
        self.matches: dict[tuple[str, str], Match] = {}

    def keep_answers(self, answers: dict[str, ReadBack]) -> None:
        """Keep the answers that are OPSIN's reading of a name (not its failures)."""
        for name, answer in answers.items():
            if not answer.opsin_failed:
                if len(self.answers) >= self.limit:
                    self.answers.clear()
                self.answers[name] = answer

    def keep_matches(self, matches: dict[tuple[str, str], Match]) -> None:
        """Keep the lens classes of matched pairs."""
        for pair, match in matches.items():
            if len(self.matches) >= self.limit:
                self.matches.clear()
            self.matches[pair] = match


def _clusters(pairs: Sequence[tuple[str, str]], sizes: list[int], weight: int) -> list[list[int]]:
    """Positions of the pairs, those with one input structure together (a worker then keys
    it once for all of them), a cluster split where it would outweigh ``weight``."""
    by_input: dict[str, list[int]] = {}
    for position, (smiles, _) in enumerate(pairs):
        by_input.setdefault(smiles, []).append(position)
    clusters: list[list[int]] = []
    for members in by_input.values():
        current: list[int] = []
        load = 0
        for position in members:
            if current and load + sizes[position] > weight:
                clusters.append(current)
                current, load = [], 0
            current.append(position)
            load += sizes[position]
        clusters.append(current)
    return clusters


def balanced_groups(pairs: Sequence[tuple[str, str]], weight: int) -> list[list[tuple[str, str]]]:
    """Split pairs into groups of similar total size (pairs of one input structure together,
    heaviest cluster first into the lightest group); deterministic, and each pair lands in
    exactly one group."""
    sizes = [len(a) + len(b) for a, b in pairs]
    count = max(1, min(len(pairs), math.ceil(sum(sizes) / weight)))
    heap = [(0, index) for index in range(count)]
    groups: list[list[tuple[str, str]]] = [[] for _ in range(count)]
    clusters = _clusters(pairs, sizes, weight)
    loads = [sum(sizes[position] for position in cluster) for cluster in clusters]
    for number in sorted(range(len(clusters)), key=lambda i: (-loads[i], clusters[i][0])):
        load, index = heapq.heappop(heap)
        groups[index].extend(pairs[position] for position in clusters[number])
        heapq.heappush(heap, (load + loads[number], index))
    return [group for group in groups if group]


def match_groups(
    groups: list[list[tuple[str, str]]],
    results: Iterable[list[Match] | ItemFailure],
    runner: Executor,
    lenses: tuple[str, ...],
) -> dict[tuple[str, str], Match]:
    """The classes of the pairs of ``groups`` from their ``results``; the pairs of a group
    that failed are matched again one by one, and a pair whose matching fails even on its
    own is unscorable under every lens (never credited, never charged)."""
    matched: dict[tuple[str, str], Match] = {}
    retry: list[tuple[str, str]] = []
    for group, result in zip(groups, results, strict=True):
        if isinstance(result, ItemFailure):
            retry.extend(group)
        else:
            matched.update(zip(group, result, strict=True))
    singles = [[pair] for pair in retry]
    retried = runner.map(ClassifyGroup(lenses), singles, chunk_size=1)
    for single, result in zip(singles, retried, strict=True):
        if isinstance(result, ItemFailure):
            unscorable = dict.fromkeys(lenses, RowClass.UNSCORABLE.value)
            matched[single[0]] = (unscorable, dict.fromkeys(lenses, _CLASSIFY_FAILED), None)
        else:
            matched[single[0]] = result[0]
    return matched


def match_pairs(
    pairs: list[tuple[str, str]], runner: Executor, lenses: tuple[str, ...]
) -> dict[tuple[str, str], Match]:
    """Classes of every distinct (input, read-back) pair, in size-balanced groups."""
    groups = balanced_groups(pairs, GROUP_WEIGHT) if pairs else []
    results = runner.map(ClassifyGroup(lenses), groups, chunk_size=1)
    return match_groups(groups, results, runner, lenses)


def read_back(
    pairs: Sequence[NamePair],
    resolve: ResolveBatch,
    config: CoverageConfig,
    memo: RunMemo | None = None,
) -> dict[str, ReadBack]:
    """What the round trip returned for each distinct emitted name of ``pairs``: refused
    names are never sent, names ``memo`` knows are not sent again, the others go to
    ``resolve`` in one batch (and their answers into ``memo``)."""
    emitted = [
        p.name
        for p in pairs
        if p.name is not None and not is_abstention(p.name, config.abstain_marker)
    ]
    names = list(dict.fromkeys(emitted))
    lookup: dict[str, ReadBack] = {}
    if memo is not None:  # OPSIN's answers to names an earlier block sent (never refused)
        lookup.update((n, memo.answers[n]) for n in names if n in memo.answers)
    for name in names:
        refusal = None if name in lookup else name_refusal(name)
        if refusal is not None:  # the namer's failure: never sent to OPSIN
            lookup[name] = ReadBack(None, "refused", refusal.message, refusal.code)
    distinct = [name for name in names if name not in lookup]
    answers = list(resolve(distinct))
    if len(answers) != len(distinct):
        raise RuntimeError(f"round trip returned {len(answers)} answers for {len(distinct)} names")
    fresh = dict(zip(distinct, answers, strict=True))
    lookup.update(fresh)
    if memo is not None:
        memo.keep_answers(fresh)
    return lookup


def pairs_to_match(pairs: Sequence[NamePair], lookup: dict[str, ReadBack]) -> list[tuple[str, str]]:
    """The distinct (input, read-back) pairs of the names OPSIN read, in first-seen order."""
    return list(
        dict.fromkeys(
            (p.smiles, smiles)
            for p in pairs
            if p.name in lookup and (smiles := lookup[p.name].smiles)
        )
    )


def score_pairs(
    pairs: Sequence[NamePair],
    resolve: ResolveBatch,
    config: CoverageConfig,
    executor: Executor | None = None,
    memo: RunMemo | None = None,
) -> list[dict[str, Any]]:
    """Classify every pair; names are read back in one batch of distinct emitted names.

    Distinct (input, read-back) pairs are matched once, on ``executor`` when given; with
    ``memo``, names and pairs an earlier block answered or matched are taken from it.
    Each row has a column per lens of ``config.lenses`` (and, with the reference lenses,
    ``parity_reference_difference``).
    """
    lookup = read_back(pairs, resolve, config, memo)
    to_match = pairs_to_match(pairs, lookup)
    known: dict[tuple[str, str], Match] = {}
    if memo is not None:
        known = {pair: memo.matches[pair] for pair in to_match if pair in memo.matches}
        to_match = [pair for pair in to_match if pair not in known]
    matched = match_pairs(to_match, executor or SerialExecutor(), config.lenses)
    if memo is not None:
        memo.keep_matches(matched)
        matched.update(known)
    return build_rows(pairs, lookup, matched, config.lenses)


def build_rows(
    pairs: Sequence[NamePair],
    lookup: dict[str, ReadBack],
    matched: dict[tuple[str, str], Match],
    lenses: tuple[str, ...],
) -> list[dict[str, Any]]:
    """The rows of ``pairs``, in their order, from the read-backs and the matched pairs."""
    reference = "reference_parity" in lenses
    rows: list[dict[str, Any]] = []
    for pair in pairs:
        answer = lookup.get(pair.name) if pair.name is not None else None
        reasons: dict[str, str] = {}
        difference: str | None = None
        parsed: bool | None = None
        unparseable: str | None = None
        if answer is None:
            classes = dict.fromkeys(lenses, RowClass.ABSTAINED.value)
        elif answer.smiles:
            classes, reasons, difference = matched[(pair.smiles, answer.smiles)]
            parsed = True
        elif answer.opsin_failed:
            classes = dict.fromkeys(lenses, RowClass.OPSIN_ERROR.value)
        else:
            classes, parsed = dict.fromkeys(lenses, RowClass.UNPARSEABLE.value), False
            unparseable = answer.refusal or (
                "refused" if answer.status == "refused" else NOT_INTERPRETABLE
            )
        row = {
            "id": pair.item_id,
            "line": pair.line,
            "smiles": pair.smiles,
            "name": pair.name,
            "emitted": answer is not None,
            "opsin_parsed": parsed,
            "opsin_smiles": answer.smiles if answer is not None and answer.smiles else None,
            "opsin_status": None if answer is None else answer.status,
            "opsin_error": None if answer is None else answer.error,
            "unparseable_reason": unparseable,
            "namer_status": pair.namer_status,
            **{lens: classes[lens] for lens in lenses},
            "unscorable_reasons": reasons,
        }
        if reference:
            row["parity_reference_difference"] = difference
        rows.append(row)
    return rows


def _wrong_entry(row: dict[str, Any], lenses: Sequence[str]) -> dict[str, Any] | None:
    """A row's listing as confidently wrong (both structures and the lenses), or ``None``."""
    wrong_under = [lens for lens in lenses if row[lens] == RowClass.CONFIDENTLY_WRONG]
    if not wrong_under:
        return None
    return {
        "id": row["id"],
        "smiles": row["smiles"],
        "name": row["name"],
        "opsin_smiles": row["opsin_smiles"],
        "wrong_under": wrong_under,
    }


def _opsin_error_entry(row: dict[str, Any], lenses: Sequence[str]) -> dict[str, Any] | None:
    """A row's listing as an OPSIN error (the name, OPSIN's status and message), or ``None``."""
    if not lenses or row[lenses[0]] != RowClass.OPSIN_ERROR:
        return None
    return {
        "id": row["id"],
        "name": row["name"],
        "opsin_status": row.get("opsin_status"),
        "opsin_error": row.get("opsin_error"),
    }


def _difference_entry(row: dict[str, Any]) -> dict[str, Any] | None:
    """A row's listing as a parity / reference_parity difference (with its class), or
    ``None`` when the two lenses agree."""
    parity, reference = row.get("parity"), row.get("reference_parity")
    if reference is None or parity is None or parity == reference:
        return None
    difference = row.get("parity_reference_difference")
    if difference is None:  # a row written without the field
        reason = row["unscorable_reasons"].get("parity")
        difference = difference_class(row["smiles"], row["opsin_smiles"], parity, reason)
    return {
        "id": row["id"],
        "smiles": row["smiles"],
        "name": row["name"],
        "opsin_smiles": row["opsin_smiles"],
        "parity": parity,
        "reference_parity": reference,
        "difference": difference,
    }


def confidently_wrong_rows(
    rows: Iterable[dict[str, Any]], lenses: Sequence[str]
) -> list[dict[str, Any]]:
    """Every row wrong under at least one lens, with both structures and the lenses."""
    return [entry for r in rows if (entry := _wrong_entry(r, lenses)) is not None]


class _Listing:
    """The first ``MAX_WRONG_LISTED`` entries of a kind, how many there were, and how many of
    each value of ``count_by`` (a field of the entry) among all of them."""

    def __init__(self, count_by: str | None = None) -> None:
        self.entries: list[dict[str, Any]] = []
        self.total = 0
        self.count_by = count_by
        self.counts: Counter[str] = Counter()

    def add(self, entry: dict[str, Any] | None) -> None:
        if entry is not None:
            self.total += 1
            if self.count_by is not None:
                self.counts[str(entry[self.count_by])] += 1
            if len(self.entries) < MAX_WRONG_LISTED:
                self.entries.append(entry)


class RowSummary:
    """What the report needs from the rows, folded in one row at a time.

    Per-lens counts (:class:`CoverageTally`), the first ``MAX_WRONG_LISTED`` confidently
    wrong rows and OPSIN errors, and how many of each there were: bounded whatever the
    number of rows.
    """

    def __init__(self, lenses: Sequence[str] = OWN_LENSES) -> None:
        self.lenses = tuple(lenses)
        self.tally = CoverageTally(self.lenses)
        self._wrong = _Listing()
        self._errors = _Listing("opsin_status")
        self._differences = _Listing("difference")

    @property
    def wrong(self) -> list[dict[str, Any]]:
        """The listed confidently wrong rows (the first ``MAX_WRONG_LISTED``)."""
        return self._wrong.entries

    @property
    def wrong_total(self) -> int:
        """How many rows are confidently wrong under at least one lens."""
        return self._wrong.total

    def add(self, row: dict[str, Any]) -> None:
        """Count one row (a rows-file row, as journaled)."""
        self.tally.add(RowResult.from_row(row, self.lenses))
        self._wrong.add(_wrong_entry(row, self.lenses))
        self._errors.add(_opsin_error_entry(row, self.lenses))
        self._differences.add(_difference_entry(row))

    def fold(self, rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Pass rows through unchanged, adding each on the way (one pass for several uses)."""
        for row in rows:
            self.add(row)
            yield row

    def listings(self) -> dict[str, Any]:
        """The report's bounded row listings and their totals."""
        return _listing_fields(self._wrong, self._errors, self._differences, self.lenses)


def _listing_fields(
    wrong: _Listing, errors: _Listing, differences: _Listing, lenses: Sequence[str]
) -> dict[str, Any]:
    """The listing fields of the metrics block; the parity / reference_parity ones are
    ``None`` when the run did not compute the reference lenses."""
    computed = "reference_parity" in lenses
    return {
        "parity_reference_differences": differences.entries if computed else None,
        "parity_reference_by_class": dict(sorted(differences.counts.items())) if computed else None,
        "parity_reference_listed_truncated": differences.total > len(differences.entries)
        if computed
        else None,
        "confidently_wrong_rows": wrong.entries,
        "confidently_wrong_total": wrong.total,
        "confidently_wrong_listed_truncated": wrong.total > len(wrong.entries),
        "opsin_error_rows": errors.entries,
        "opsin_error_by_status": dict(sorted(errors.counts.items())),
        "opsin_error_listed_truncated": errors.total > len(errors.entries),
    }


def listings_of(rows: Iterable[dict[str, Any]], lenses: Sequence[str]) -> dict[str, Any]:
    """The report's row listings (bounded) and totals, computed from rows."""
    wrong, errors, differences = _Listing(), _Listing("opsin_status"), _Listing("difference")
    for row in rows:
        wrong.add(_wrong_entry(row, lenses))
        errors.add(_opsin_error_entry(row, lenses))
        differences.add(_difference_entry(row))
    return _listing_fields(wrong, errors, differences, lenses)


def journal_rows(path: str | Path, keys: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Rows of a closed journal in the order of ``keys`` (input order), whatever the order
    they were journaled in; a key without a row is an error, never a gap."""
    for key, row in zip(keys, iter_journal_by_keys(path, "id", keys), strict=True):
        if row is None:
            raise RuntimeError(f"{path}: no row was journaled for id {key!r}")
        yield row


def _checked_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """The metrics block as the published model has it (validated: a block the schema
    refuses is never written)."""
    return NamesMetrics.model_validate(metrics).model_dump(mode="json")


def _backends(
    engine: dict[str, Any], config: CoverageConfig, namer_provenance: dict[str, Any] | None
) -> dict[str, Any]:
    """What the run drove: OPSIN, and the namer that named the structures (when one did)."""
    backends: dict[str, Any] = {"opsin": engine}
    if config.namer is not None:
        namer: dict[str, Any] = {"model": config.namer, **(namer_provenance or {})}
        if config.namer_cmd is not None:
            namer["namer_cmd"] = config.namer_cmd
        backends["namer"] = namer
    return backends


def build_report(
    rows: Iterable[dict[str, Any]],
    *,
    config: CoverageConfig,
    input_path: str | Path,
    input_stats: RejectionStats,
    engine: dict[str, Any],
    timing: dict[str, float],
    rows_path: str | Path,
    report_path: str | Path | None = None,
    engine_config: dict[str, Any] | None = None,
    namer_provenance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Aggregate rows into the report (a run envelope) in one pass (``rows`` may be a stream,
    read once); every number is a pure function of the rows.

    ``engine_config`` holds the OPSIN options that can change a read-back (part of the
    config); ``report_path`` is where the report will be written (default: beside the rows).
    The listings of confidently wrong rows and OPSIN errors are bounded; ``complete_lists``
    says that the rows file holds every one.
    """
    summary = RowSummary(config.lenses)
    counts = CountsTally(STATUS_FIELD)
    digest = reproducibility_sha256(counts.feed(summary.fold(rows)), ())
    rows_file = Path(rows_path)
    envelope = build_envelope(
        EnvelopeParts(
            family="names",
            family_schema_version=FAMILY.schema_version,
            config={"coverage": config.describe(), "engine": dict(engine_config or {})},
            inputs=[record_input("input", input_path)],
            provenance=base_provenance(_backends(engine, config, namer_provenance)),
            rows_path=rows_file,
            reproducibility_sha256=digest,
            timing=timing,
            counts=counts.result(input_stats.counts),
            metrics=_checked_metrics(
                {
                    **summary.tally.result(config.pin_pct),
                    **completeness(
                        summary.tally.opsin_errors, summary.tally.emitted, config.max_opsin_errors
                    ),
                    "input_stats": input_stats.to_dict(),
                    **summary.listings(),
                    "complete_lists": COMPLETE_LISTS,
                }
            ),
        ),
        report_path if report_path is not None else rows_file.with_name("report.json"),
    )
    return envelope.model_dump(mode="json")
