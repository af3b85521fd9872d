"""Boards: many runs of one family over the same items, ranked with honest statistics.

Runs are grouped by family and by item set: the family's comparison protocol (the hash of the
data, corpus or task files, the fold...) and the hash of the runs' item keys. Runs over other
items go to a separate board with a line saying why, unless forced (then they are ranked on
the items all of them have, and the board says so). A run whose report does not record its
protocol is ranked alone. On each board, for each metric: each run's value with its interval,
every pair tested on the shared items, Holm over all pairs of the board, ranks and a compact
letter display (:mod:`chemgauge.report.standings`); then the same for each bucket of each
breakdown the family defines (each bucket's pairs are their own Holm family). Runs and items
are put in a fixed order (labels, item keys), so the board does not depend on the order the
runs were given in.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from chemgauge.errors import ConfigError
from chemgauge.eval.provenance import sha256_json
from chemgauge.report.adapter import FamilyAdapter
from chemgauge.report.buckets import ordered_buckets
from chemgauge.report.entrants import Entrant, Entry, Refusal
from chemgauge.report.registry import get_adapter
from chemgauge.report.standings import Column, Kind, Standings, StatSettings, rank_systems

__all__ = [
    "Board",
    "BoardConfig",
    "BucketRanking",
    "Leaderboard",
    "MetricSpec",
    "Ranking",
    "build_leaderboard",
]

Row = Mapping[str, Any]
#: A breakdown with more buckets than this is not boarded (it is not a breakdown any more).
MAX_BUCKETS = 40


@dataclass(frozen=True)
class BoardConfig:
    """What to rank by and how: metrics (empty: each family's default), the statistics,
    ``force`` (rank runs over different items together) and whether to board breakdowns."""

    metrics: tuple[str, ...] = ()
    stats: StatSettings = field(default_factory=StatSettings)
    force: bool = False
    breakdowns: bool = True


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric a board ranks by: its name, its kind and what it measures."""

    name: str
    kind: Kind
    description: str


@dataclass(frozen=True)
class Ranking:
    """One metric over a set of items (``items``: how many take part for at least one run):
    the standings of a board's runs."""

    metric: MetricSpec
    items: int
    standings: Standings

    @classmethod
    def of(
        cls, spec: MetricSpec, columns: Sequence[Column], labels: Sequence[str], stats: StatSettings
    ) -> Ranking:
        """Rank the runs' columns of one metric."""
        taking_part = np.logical_or.reduce([c.present for c in columns])
        standings = rank_systems(columns, spec.kind, labels, stats)
        return cls(spec, int(np.count_nonzero(taking_part)), standings)


@dataclass(frozen=True)
class BucketRanking:
    """A ranking restricted to one bucket of a breakdown dimension."""

    dimension: str
    bucket: str
    ranking: Ranking


@dataclass(frozen=True)
class Board:
    """Runs of one family over one item set (``entrants`` in label order: the standings'
    indexes point into it)."""

    number: int
    family: str
    entrants: tuple[Entrant, ...]
    protocol: Mapping[str, Any]
    items: int
    items_sha256: str
    notes: tuple[str, ...]
    rankings: tuple[Ranking, ...]
    breakdowns: tuple[BucketRanking, ...]
    left_off: tuple[Refusal, ...] = ()


@dataclass(frozen=True)
class Leaderboard:
    """Every board, and every run left off one (refused on entry or lacking a metric)."""

    boards: tuple[Board, ...]
    refusals: tuple[Refusal, ...]
    config: BoardConfig
    verified: bool = True


@dataclass
class _Candidate:
    """An entrant with its rows by item key and its item set's signature."""

    entrant: Entrant
    rows: dict[str, Row]
    protocol: dict[str, Any]
    items_sha256: str

    @property
    def signature(self) -> tuple[str, str]:
        unknown = self.unknown
        alone = self.entrant.label if unknown else ""
        return orjson.dumps(self.protocol, option=orjson.OPT_SORT_KEYS).decode() + alone, (
            self.items_sha256
        )

    @property
    def unknown(self) -> list[str]:
        return sorted(k for k, v in self.protocol.items() if v is None)


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", text) if t)


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] + "..." if re.fullmatch(r"[0-9a-f]{40,}", text) else text


def _candidate(entrant: Entrant, adapter: FamilyAdapter) -> _Candidate:
    rows: dict[str, Row] = {}
    run = entrant.run
    for row in run.rows:
        try:
            key = adapter.item_key(row)
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"a row lacks the {run.family} item key ({exc})") from None
        if key in rows:
            raise ConfigError(f"item {key!r} appears twice in its rows")
        rows[key] = row
    protocol = dict(adapter.comparison_protocol(run))
    return _Candidate(entrant, rows, protocol, sha256_json(sorted(rows)))


def _difference(a: _Candidate, b: _Candidate) -> str:
    fields = sorted(
        k for k in set(a.protocol) | set(b.protocol) if a.protocol.get(k) != b.protocol.get(k)
    )
    if fields:
        return "; ".join(
            f"{k} {_short(a.protocol.get(k))} vs {_short(b.protocol.get(k))}" for k in fields
        )
    if a.unknown:
        return f"its report does not record {', '.join(a.unknown)}"
    shared = len(a.rows.keys() & b.rows.keys())
    return f"{len(a.rows):,} items vs {len(b.rows):,}, {shared:,} shared"


def _groups(candidates: list[_Candidate], force: bool) -> list[tuple[list[_Candidate], list[str]]]:
    """The runs of one family in boards (largest first), each with its notes."""
    if force:
        first = candidates[0]
        apart = [c for c in candidates[1:] if c.signature != first.signature]
        if not apart:
            return [(candidates, [])]
        shared = set(first.rows).intersection(*(c.rows for c in candidates[1:]))
        notes = [
            f"Forced (--force): not every run is over the same items "
            f"({'; '.join(f'{c.entrant.label}: {_difference(c, first)}' for c in apart)}); "
            f"ranked on the {len(shared):,} items all {len(candidates)} runs have."
        ]
        notes += [
            f"{c.entrant.label}: {len(c.rows) - len(shared):,} of its {len(c.rows):,} items "
            "left out."
            for c in candidates
            if len(c.rows) > len(shared)
        ]
        return [(candidates, notes)]
    grouped: dict[tuple[str, str], list[_Candidate]] = {}
    for candidate in candidates:
        grouped.setdefault(candidate.signature, []).append(candidate)
    ordered = sorted(grouped.values(), key=lambda g: (-len(g), g[0].entrant.label))
    return [(group, []) for group in ordered]


def _specs(adapter: FamilyAdapter, entrant: Entrant) -> dict[str, MetricSpec]:
    run = entrant.run
    specs = {
        name: MetricSpec(
            name, "hit", adapter.hit_description(run, name) or "share of items with a hit"
        )
        for name in adapter.hit_metrics(run)
    }
    for score in adapter.score_metrics(run):
        specs[score.name] = MetricSpec(score.name, score.kind, score.description)
    return specs


def _choose_metrics(
    adapter: FamilyAdapter, group: list[_Candidate], requested: Sequence[str]
) -> tuple[list[MetricSpec], list[_Candidate], list[Refusal]]:
    """The board's metrics, the runs that have them all, and the runs that do not."""
    available = [_specs(adapter, c.entrant) for c in group]
    names = list(requested) or [adapter.board_metric(group[0].entrant.run)]
    known = {name for specs in available for name in specs}
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise ConfigError(
                f"the {group[0].entrant.run.family} runs have no metric {name!r}.{hint} "
                f"Their metrics: {', '.join(sorted(known, key=_natural))}"
            )
    kept, left = [], []
    for candidate, specs in zip(group, available, strict=True):
        missing = [n for n in names if n not in specs]
        if missing:
            reason = f"has no metric {', '.join(missing)} (its config differs)"
            left.append(Refusal(str(candidate.entrant.run.report_path), reason))
        else:
            kept.append(candidate)
    chosen = next(specs for specs in available if all(n in specs for n in names)) if kept else {}
    return [chosen[n] for n in names] if kept else [], kept, left


def _columns(
    adapter: FamilyAdapter, candidate: _Candidate, keys: Sequence[str], specs: Sequence[MetricSpec]
) -> list[Column]:
    run = candidate.entrant.run
    try:
        values = adapter.measures(run, [candidate.rows[k] for k in keys], [s.name for s in specs])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"{run.rows_path}: rows do not have the {run.family} row shape "
            f"({type(exc).__name__}: {exc})"
        ) from None
    return [Column.of(values[s.name]) for s in specs]


def _breakdown_masks(
    adapter: FamilyAdapter, candidate: _Candidate, keys: Sequence[str]
) -> dict[str, dict[str, list[bool]]]:
    """Per dimension and bucket, which of the keys fall in it (the first run's buckets: the
    families' breakdowns are facts of the item, the same in every run)."""
    buckets: dict[str, dict[str, list[bool]]] = {}
    for position, key in enumerate(keys):
        for dimension, bucket in adapter.breakdowns(candidate.rows[key]).items():
            per = buckets.setdefault(dimension, {})
            per.setdefault(bucket, [False] * len(keys))[position] = True
    return buckets


def _breakdown_rankings(
    adapter: FamilyAdapter,
    first: _Candidate,
    keys: Sequence[str],
    specs: Sequence[MetricSpec],
    columns: Sequence[Sequence[Column]],
    labels: Sequence[str],
    config: BoardConfig,
) -> tuple[list[BucketRanking], list[str]]:
    """Rankings per bucket of each dimension with at least two buckets (one bucket is the
    board itself), and notes on dimensions left out."""
    out: list[BucketRanking] = []
    notes: list[str] = []
    for dimension, buckets in sorted(_breakdown_masks(adapter, first, keys).items()):
        if len(buckets) > MAX_BUCKETS:
            notes.append(f"Breakdown {dimension!r} has {len(buckets)} buckets: not boarded.")
            continue
        if len(buckets) < 2:
            continue
        for bucket in ordered_buckets(buckets):
            mask = np.array(buckets[bucket], dtype=np.bool_)
            for m, spec in enumerate(specs):
                sub = [c[m].take(mask) for c in columns]
                if not any(c.present.any() for c in sub):
                    continue  # no run has a value here (invalid inputs, say)
                ranking = Ranking.of(spec, sub, labels, config.stats)
                out.append(BucketRanking(dimension, bucket, ranking))
    return out, notes


def _warnings(
    adapter: FamilyAdapter,
    kept: Sequence[_Candidate],
    specs: Sequence[MetricSpec],
    config: BoardConfig,
) -> list[str]:
    """What a reader must know before trusting the order: identical runs, tests that cannot
    reach significance, and the family's caveats."""
    notes = []
    by_rows: dict[str, list[str]] = {}
    for c in kept:
        envelope = c.entrant.run.envelope
        by_rows.setdefault(envelope.reproducibility_sha256, []).append(c.entrant.label)
    notes += [
        f"{', '.join(same)} have identical rows (the same reproducibility_sha256): one run "
        "entered more than once?"
        for same in by_rows.values()
        if len(same) > 1
    ]
    pairs = len(kept) * (len(kept) - 1) // 2
    stats = config.stats
    floor = pairs / (stats.resamples + 1)
    for spec in specs:
        if spec.kind != "hit" and pairs and floor > stats.alpha:
            notes.append(
                f"{spec.name}: with {pairs} pairs and {stats.resamples} resamples the smallest "
                f"Holm-adjusted bootstrap p-value is {floor:.3g} > alpha {stats.alpha:g}, so no "
                "difference can be significant: raise --resamples."
            )
        notes += adapter.board_caveats([c.entrant.run for c in kept], spec.name)
    return notes


def _board(
    number: int,
    adapter: FamilyAdapter,
    group: list[_Candidate],
    notes: list[str],
    config: BoardConfig,
) -> Board | list[Refusal]:
    specs, kept, left = _choose_metrics(adapter, group, config.metrics)
    if not kept:
        return left
    kept.sort(key=lambda c: c.entrant.label)
    labels = [c.entrant.label for c in kept]
    keys = sorted(set(kept[0].rows).intersection(*(c.rows for c in kept[1:])))
    if not keys:
        raise ConfigError(f"the {adapter.family} runs {', '.join(labels)} share no items")
    columns = [_columns(adapter, c, keys, specs) for c in kept]
    rankings = tuple(
        Ranking.of(spec, [c[m] for c in columns], labels, config.stats)
        for m, spec in enumerate(specs)
    )
    breakdowns: list[BucketRanking] = []
    if config.breakdowns:
        breakdowns, left_out = _breakdown_rankings(
            adapter, kept[0], keys, specs, columns, labels, config
        )
        notes += left_out
    notes += _warnings(adapter, kept, specs, config)
    if len(kept) == 1:
        notes.append("One run: nothing to compare it with.")
    return Board(
        number,
        adapter.family,
        tuple(c.entrant for c in kept),
        kept[0].protocol,
        len(keys),
        sha256_json(keys),
        tuple(notes),
        rankings,
        tuple(breakdowns),
        tuple(left),
    )


def build_leaderboard(entry: Entry, config: BoardConfig | None = None) -> Leaderboard:
    """Every board of the entered runs (see the module doc)."""
    config = config or BoardConfig()
    refusals = list(entry.refusals)
    by_family: dict[str, list[_Candidate]] = {}
    for entrant in sorted(entry.entrants, key=lambda e: e.label):
        adapter = get_adapter(entrant.run.family)
        try:
            candidate = _candidate(entrant, adapter)
        except ConfigError as exc:
            refusals.append(Refusal(str(entrant.run.report_path), str(exc)))
            continue
        by_family.setdefault(entrant.run.family, []).append(candidate)
    boards: list[Board] = []
    for family in sorted(by_family):
        adapter = get_adapter(family)
        groups = _groups(by_family[family], config.force)
        first_board: Board | None = None
        reference: _Candidate | None = None
        for group, notes in groups:
            if first_board is not None and reference is not None:
                notes.insert(
                    0,
                    f"Not ranked with board {first_board.number}: not over the same items "
                    f"({_difference(group[0], reference)}). Pass --force to rank them together "
                    "on the items they share.",
                )
            made = _board(len(boards) + 1, adapter, group, notes, config)
            if isinstance(made, list):
                refusals.extend(made)
                continue
            refusals.extend(made.left_off)
            boards.append(made)
            if first_board is None:
                first_board, reference = made, group[0]
    verified = all(e.verification is not None for e in entry.entrants)
    return Leaderboard(tuple(boards), tuple(refusals), config, verified)
