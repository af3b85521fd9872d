"""Which records a p2s build releases: masked site, candidate set, candidate order and ids.

Every choice that could reveal the answer is made so that, given what a task shows, each
candidate is equally consistent with being the source:

* The candidates of a record are one *block* of the masked group's pool (same heavy-atom
  count, same attachment class, valid on the scaffold): the pool's valid completions are
  ordered by a seeded hash of (scaffold, completion) and cut into consecutive blocks of K; the
  record takes the block holding its source. The block does not depend on which member is the
  source, so rebuilding the selection from the candidates (with the seed, which the manifest
  records) cannot tell the source apart. Completions left over after the last full block are
  skipped (counted), as is a pool smaller than K.
* The record id hashes the seed, the masked scaffold and the *sorted* candidate set, and the
  candidate order is a seeded hash sort keyed by that id: neither changes when another member
  of the block is the source.
* Counterfactual donors are drawn by the build secret (:mod:`.views`); their ids hash the
  secret, the base id, the directory and the donor's ordinal, never the donor, so neither the
  ordinal nor the view can be read from an id without the secret.
* The masked site: a source is masked at its first site with a full block, larger groups
  first, then a seeded order of attachment classes, then the masked SMILES. The
  manifest publishes the seed, so anyone can apply that rule to each candidate; a record is
  kept only when every candidate, taken as the source, would have chosen the same task
  (closure), so replaying the rule cannot tell them apart either.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from chemgauge.chem.fragments import MASK_TOKEN, MaskSite, attach_group, find_mask_sites
from chemgauge.eval.splits import assign_split, split_bucket
from chemgauge.families.p2s.library import attachment_class, canonical_library, pools

__all__ = [
    "ID_SCHEME_VERSION",
    "Record",
    "SelectionConfig",
    "candidate_block",
    "choose_site",
    "counterfactual_id",
    "iter_records",
    "record_id",
    "replayed_record_id",
    "seeded_hash",
    "select_records",
]

ID_SCHEME_VERSION = 3  # 3: counterfactual ids from the build secret


@dataclass(frozen=True)
class SelectionConfig:
    """The part of a build config that fixes the records: K, seed, release, size limits."""

    candidates: int = 4
    seed: int = 0
    split: str | None = None
    max_records: int | None = None
    min_scaffold_heavy_atoms: int = 4


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


def seeded_hash(*parts: object) -> str:
    """SHA-256 hex of the parts joined by a unit separator: every seeded choice of a build."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def record_id(seed: int, masked_smiles: str, candidates: Sequence[str]) -> str:
    """An id from what every candidate shares: seed, scaffold and the sorted candidate set."""
    return (
        "p2s-"
        + seeded_hash(ID_SCHEME_VERSION, seed, "record", masked_smiles, *sorted(candidates))[:16]
    )


def counterfactual_id(secret: str, directory: str, base_record_id: str, ordinal: int) -> str:
    """The id of a record's ``ordinal``-th counterfactual in one directory: opaque without the
    build secret, and in the record ids' format (names no donor, no ordinal, no view)."""
    return (
        "p2s-"
        + seeded_hash(
            ID_SCHEME_VERSION,
            "secret",
            secret,
            "counterfactual",
            directory,
            base_record_id,
            ordinal,
        )[:16]
    )


@functools.lru_cache(maxsize=1 << 14)
def _ordered_pool(seed: int, masked_smiles: str, pool_key: tuple[int, str]) -> tuple[str, ...]:
    """The pool's distinct valid completions of the scaffold in the seeded order. Memoized per
    process: every candidate of a block replays the same scaffold and pool."""
    pool = pools().get(pool_key, ())
    completions = [c for c in (attach_group(masked_smiles, g) for g in pool) if c]
    return tuple(
        sorted(
            dict.fromkeys(completions),
            key=lambda c: (seeded_hash(seed, "pool", masked_smiles, c), c),
        )
    )


def candidate_block(
    seed: int, site: MaskSite, candidates: int, skipped: Counter[str]
) -> tuple[str, ...] | None:
    """The block of the site's pool that holds the source, or ``None`` (reason counted)."""
    pool_key = (site.group_heavy_atoms, attachment_class(site.group))
    ordered = _ordered_pool(seed, site.masked_smiles, pool_key)
    if len(ordered) < candidates:
        skipped["pool_smaller_than_task"] += 1
        return None
    source = attach_group(site.masked_smiles, site.group)
    position = ordered.index(source) if source in ordered else -1
    usable = len(ordered) - len(ordered) % candidates
    if not 0 <= position < usable:
        skipped["pool_remainder"] += 1
        return None
    start = position - position % candidates
    return tuple(ordered[start : start + candidates])


def _site_key(seed: int, site: MaskSite) -> tuple[int, str]:
    """Larger groups first, then a seeded order of attachment classes: both the same for
    every candidate of a block at its masked site, and a cut inside a candidate's own group
    always gives a smaller group, so it never comes first."""
    return -site.group_heavy_atoms, seeded_hash(seed, "site-class", attachment_class(site.group))


def choose_site(
    source: str, config: SelectionConfig, reasons: Counter[str]
) -> tuple[MaskSite, tuple[str, ...]] | None:
    """The site a source is masked at and its candidate block (``None``: reason counted):
    the first site with a full block by :func:`_site_key`, then the masked SMILES.

    A rule of the source alone: anyone who knows the seed can apply it to any candidate.
    Memoized per process (a pure function of the source and the config), so the closure
    check and the audit's replay of the rule reuse the selection's work.
    """
    chosen, counted = _chosen_site(source, config)
    reasons.update(dict(counted))
    return chosen


@functools.lru_cache(maxsize=65536)
def _chosen_site(
    source: str, config: SelectionConfig
) -> tuple[tuple[MaskSite, tuple[str, ...]] | None, tuple[tuple[str, int], ...]]:
    """:func:`choose_site`'s answer and the reasons it counted, as immutable values."""
    reasons: Counter[str] = Counter()
    return _choose_site(source, config, reasons), tuple(sorted(reasons.items()))


def _choose_site(
    source: str, config: SelectionConfig, reasons: Counter[str]
) -> tuple[MaskSite, tuple[str, ...]] | None:
    groups = {key for key, _ in canonical_library()}
    sites = find_mask_sites(
        source, groups, min_scaffold_heavy_atoms=config.min_scaffold_heavy_atoms
    )
    if not sites:
        reasons["no_maskable_group"] += 1
        return None
    sites.sort(key=lambda s: (_site_key(config.seed, s), s.masked_smiles))
    for site in sites:
        block = candidate_block(config.seed, site, config.candidates, reasons)
        if block is not None:
            return site, block
    return None


def replayed_record_id(source: str, config: SelectionConfig) -> str | None:
    """The id of the task the selection rule makes of ``source`` (``None``: none)."""
    chosen = choose_site(source, config, Counter())
    return None if chosen is None else record_id(config.seed, chosen[0].masked_smiles, chosen[1])


def _make_record(
    line: int, source: str, name: str, config: SelectionConfig, skipped: Counter[str]
) -> Record | None:
    reasons: Counter[str] = Counter()
    chosen = choose_site(source, config, reasons)
    if chosen is None:
        # One count per source: the commonest reason over the sites tried.
        skipped[max(reasons, key=lambda r: (reasons[r], r))] += 1
        return None
    site, block = chosen
    rid = record_id(config.seed, site.masked_smiles, block)
    # Closure: every candidate, taken as the source, must choose this same task; otherwise
    # replaying the rule on each candidate (the seed is in the manifest) would tell the
    # source apart. Checked on the candidates, so it does not depend on which is the source.
    if any(replayed_record_id(other, config) != rid for other in block if other != source):
        skipped["site_choice_differs_between_candidates"] += 1
        return None
    ordered = tuple(sorted(block, key=lambda c: (seeded_hash(config.seed, "order", rid, c), c)))
    return Record(
        record_id=rid,
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


def iter_records(
    sources: Iterable[tuple[int, str, str]], config: SelectionConfig, skipped: Counter[str]
) -> Iterator[Record]:
    """Mask one site per source and yield the requested release's records in source order,
    as they are chosen (a build computes the first records' properties while it selects the
    rest). Two sources that give the same task (same scaffold, same block) keep the first.
    """
    kept = 0
    seen: set[str] = set()
    for line, source, name in sources:
        if config.max_records is not None and kept >= config.max_records:
            break
        record = _make_record(line, source, name, config, skipped)
        if record is None:
            continue
        if config.split is not None and record.split != config.split:
            skipped["other_split"] += 1
            continue
        if record.record_id in seen:
            skipped["same_task_as_an_earlier_source"] += 1
            continue
        seen.add(record.record_id)
        kept += 1
        yield record


def select_records(
    sources: Sequence[tuple[int, str, str]], config: SelectionConfig, skipped: Counter[str]
) -> list[Record]:
    """Every record of :func:`iter_records`, as a list."""
    return list(iter_records(sources, config, skipped))
