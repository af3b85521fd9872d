"""Leakage audit: reactant sets and accepted products that occur in more than one split,
exactly or as near-duplicates.

A fallback group key is the hash of the sorted canonical reactants, so two reactions with the
same reactants always share a split. An explicit ``group_key`` (a patent family, a date)
overrides it, and identical reactant sets can then land in train and test: a system trained
on train has seen a test reaction's reactants. The audit counts, for every pair of splits,
the reactant sets (sorted canonical reactants) and the accepted product multisets found in
both, with the reactions involved by the source of their group key (``explicit`` or
``fallback``), and lists the first few with their corpus lines.

Exact copies are not the only leak: a train copy of a held-out reaction with water added to
both sides, or a salt or solvent added to its reactants, has other reactant and product
strings. ``near_duplicates`` compares the same two kinds after removing spectators and
ignoring stereo (:mod:`~chemgauge.families.forward.spectators`, the threshold stated in the
block), counting only keys shared across splits by reactions whose exact keys differ, so the
exact and near-duplicate counts are apart. A reactant set shared across splits, exactly or as
a near-duplicate, is warned of and refused by ``--strict``; shared products are reported.

It is a pure function of rows (``split``, ``group_key_source``, ``reactants_canonical``,
``accepted_products_canonical``, ``source_line``, ``reaction_id``), so ``chemgauge verify``
recomputes it, and it holds no rows: keys go to a private temporary SQLite database (deleted
on close), so memory stays flat whatever the corpus size.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from chemgauge.errors import DataQualityError
from chemgauge.eval.keystore import temporary_database
from chemgauge.families.forward.corpus import BenchReaction
from chemgauge.families.forward.spectators import Spectators, molecules_of

__all__ = ["AUDIT_SCHEME", "SPLIT_PAIRS", "LeakageAudit", "audit_rows", "strict_leakage_error"]

AUDIT_SCHEME = "forward-leakage-audit-v2"
SPLITS = ("train", "val", "test")
SPLIT_PAIRS = (("train", "val"), ("train", "test"), ("val", "test"))
SOURCES = ("explicit", "fallback")
KINDS = ("reactant_sets", "products")
MAX_EXAMPLES = 20
MAX_LINES_PER_SPLIT = 5
_BATCH = 4096


def _pair(a: str, b: str) -> str:
    return f"{a}/{b}"


class LeakageAudit:
    """Fold valid reactions (or rows) in, then :meth:`result` (see the module docstring)."""

    def __init__(self, *, max_examples: int = MAX_EXAMPLES) -> None:
        self._db: sqlite3.Connection | None = temporary_database()
        self._db.execute(
            "CREATE TABLE seen (kind INTEGER, key TEXT, split INTEGER, explicit INTEGER, "
            "line INTEGER, reaction_id TEXT)"
        )
        self._db.execute(
            "CREATE TABLE reaction (split INTEGER, explicit INTEGER, line INTEGER, "
            "reaction_id TEXT, body TEXT)"
        )
        self._db.execute(
            "CREATE TABLE near (kind INTEGER, key TEXT, exact TEXT, split INTEGER, "
            "explicit INTEGER, line INTEGER, reaction_id TEXT)"
        )
        self._pending: list[tuple[int, str, int, int, int, str]] = []
        self._reactions: list[tuple[int, int, int, str, str]] = []
        self.max_examples = max_examples

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise ValueError("the leakage audit is closed")
        return self._db

    def close(self) -> None:
        """Drop the database (its temporary file goes with it)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> LeakageAudit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _add(
        self,
        line: int,
        reaction_id: str,
        split: str,
        source: str,
        reactants: Iterable[str],
        accepted: Iterable[Iterable[str]],
    ) -> None:
        if split not in SPLITS:
            return
        where = (SPLITS.index(split), int(source == "explicit"), line, reaction_id)
        reactants = sorted(reactants)
        accepted = [sorted(products) for products in accepted]
        self._pending.append((0, ".".join(reactants), *where))
        for products in accepted:
            self._pending.append((1, ".".join(products), *where))
        self._reactions.append((*where, orjson.dumps([reactants, accepted]).decode()))
        if len(self._pending) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        db = self._conn()
        db.executemany("INSERT INTO seen VALUES (?, ?, ?, ?, ?, ?)", self._pending)
        db.executemany("INSERT INTO reaction VALUES (?, ?, ?, ?, ?)", self._reactions)
        self._pending.clear()
        self._reactions.clear()

    def add_reaction(self, reaction: BenchReaction) -> None:
        """Fold in one valid corpus reaction."""
        self._add(
            reaction.source_line,
            reaction.reaction_id,
            reaction.split,
            reaction.group_key_source,
            reaction.reactants_canonical,
            reaction.accepted_products_canonical,
        )

    def add_row(self, row: Mapping[str, Any]) -> None:
        """Fold in one benchmark row; invalid rows (split ``unknown``) take part in nothing."""
        if row["input_status"] != "valid":
            return
        self._add(
            row["source_line"],
            row["reaction_id"],
            row["split"],
            row.get("group_key_source") or "fallback",
            row["reactants_canonical"],
            row["accepted_products_canonical"],
        )

    def _shared(self, kind: int, table: str) -> list[str]:
        """Keys of this kind found in two or more splits, by their first line."""
        rows = self._conn().execute(
            f"SELECT key FROM {table} WHERE kind = ? GROUP BY key "
            "HAVING COUNT(DISTINCT split) > 1 ORDER BY MIN(line)",
            (kind,),
        )
        return [key for (key,) in rows]

    def _block(self, kind: int, table: str = "seen") -> dict[str, Any]:
        """One kind's counts; in ``near``, a pair of splits shares a key only through two
        reactions whose exact keys differ (exact sharing is the exact block's)."""
        db = self._conn()
        near = table == "near"
        exact_col = "exact" if near else "key"
        (distinct,) = db.execute(
            f"SELECT COUNT(DISTINCT key) FROM {table} WHERE kind = ?", (kind,)
        ).fetchone()
        shared_in = dict.fromkeys((_pair(a, b) for a, b in SPLIT_PAIRS), 0)
        reactions_in = {_pair(a, b): dict.fromkeys(SOURCES, 0) for a, b in SPLIT_PAIRS}
        examples: list[dict[str, Any]] = []
        shared = []
        for key in self._shared(kind, table):
            found = db.execute(
                f"SELECT split, explicit, line, reaction_id, {exact_col} FROM {table} "
                "WHERE kind = ? AND key = ? ORDER BY line",
                (kind, key),
            ).fetchall()
            by_split: dict[str, list[tuple[int, str, str]]] = {}
            exacts: dict[str, set[str]] = {}
            for split, explicit, line, reaction_id, exact in found:
                source = SOURCES[0] if explicit else SOURCES[1]
                by_split.setdefault(SPLITS[split], []).append((line, reaction_id, source))
                exacts.setdefault(SPLITS[split], set()).add(exact)
            pairs = [
                (a, b)
                for a, b in SPLIT_PAIRS
                if a in by_split and b in by_split and (not near or len(exacts[a] | exacts[b]) > 1)
            ]
            if not pairs:
                continue
            shared.append(key)
            for a, b in SPLIT_PAIRS:
                if (a, b) in pairs:
                    shared_in[_pair(a, b)] += 1
                    for _, _, source in by_split[a] + by_split[b]:
                        reactions_in[_pair(a, b)][source] += 1
            if len(examples) < self.max_examples:
                examples.append(
                    {
                        "smiles": key,
                        "splits": {
                            split: [
                                {"line": line, "reaction_id": rid, "group_key_source": source}
                                for line, rid, source in by_split[split][:MAX_LINES_PER_SPLIT]
                            ]
                            for split in SPLITS
                            if split in by_split
                        },
                    }
                )
        return {
            "distinct": distinct,
            "shared_across_splits": len(shared),
            "by_split_pair": {
                pair: {"shared": shared_in[pair], "reactions": reactions_in[pair]}
                for pair in shared_in
            },
            "examples": examples,
            "examples_truncated": len(shared) > len(examples),
        }

    def _spectators(self) -> Spectators:
        counts: Counter[str] = Counter()
        n = 0
        for (body,) in self._conn().execute("SELECT body FROM reaction"):
            reactants, accepted = orjson.loads(body)
            counts.update(molecules_of(reactants, accepted))
            n += 1
        return Spectators.of_counts(counts, n)

    def _near_keys(self, spectators: Spectators) -> None:
        db = self._conn()
        batch: list[tuple[int, str, str, int, int, int, str]] = []
        rows = db.execute("SELECT split, explicit, line, reaction_id, body FROM reaction")
        for split, explicit, line, reaction_id, body in rows.fetchall():
            reactants, accepted = orjson.loads(body)
            where = (split, explicit, line, reaction_id)
            key = spectators.reactant_key(reactants, accepted)
            if key is not None:
                batch.append((0, key, ".".join(reactants), *where))
            exact = {".".join(p) for p in accepted}
            for product_key in spectators.product_keys(reactants, accepted):
                # a product multiset's exact strings, joined: differs whenever the multisets do
                batch.append((1, product_key, "|".join(sorted(exact)), *where))
        db.executemany("INSERT INTO near VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
        db.execute("CREATE INDEX IF NOT EXISTS near_by_key ON near (kind, key)")

    def result(self) -> dict[str, Any]:
        """The audit: both kinds exactly and as near-duplicates, per pair of splits, plus
        warnings for reactant-set overlaps."""
        self._flush()
        self._conn().execute("CREATE INDEX IF NOT EXISTS by_key ON seen (kind, key)")
        out: dict[str, Any] = {"scheme": AUDIT_SCHEME}
        for index, kind in enumerate(KINDS):
            out[kind] = self._block(index)
        spectators = self._spectators()
        self._near_keys(spectators)
        out["near_duplicates"] = {
            "spectators": spectators.to_dict(),
            **{kind: self._block(index, "near") for index, kind in enumerate(KINDS)},
        }
        out["warnings"] = _warnings(out["reactant_sets"]) + _near_warnings(
            out["near_duplicates"]["reactant_sets"]
        )
        return out


def _warnings(block: Mapping[str, Any]) -> list[str]:
    """One line per pair of splits that share a reactant set (only explicit group keys can
    put identical reactants in two splits: fallback keys are the reactant hash)."""
    out = []
    for pair, counts in block["by_split_pair"].items():
        if counts["shared"]:
            reactions = counts["reactions"]
            out.append(
                f"{counts['shared']} reactant set(s) occur in both {pair.replace('/', ' and ')} "
                f"({reactions['explicit']} reactions with an explicit group_key, "
                f"{reactions['fallback']} with the reactant-hash fallback): an explicit "
                "group_key overrides the reactant hash, so a system can see these reactants "
                "in one split and be scored on them in the other"
            )
    return out


def _near_warnings(block: Mapping[str, Any]) -> list[str]:
    """One line per pair of splits that share a reactant set up to spectators and stereo."""
    out = []
    for pair, counts in block["by_split_pair"].items():
        if counts["shared"]:
            out.append(
                f"{counts['shared']} reactant set(s) occur in both {pair.replace('/', ' and ')} "
                "as near-duplicates (the same reactants once spectators such as water, salts "
                "or solvents are removed and stereo is ignored): a system can see these "
                "reactions in one split and be scored on them in the other"
            )
    return out


def audit_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The leakage audit of a sequence of rows."""
    with LeakageAudit() as audit:
        for row in rows:
            audit.add_row(row)
        return audit.result()


def strict_leakage_error(result: Mapping[str, Any], path: str) -> DataQualityError | None:
    """The ``--strict`` refusal of any cross-split reactant-set overlap, exact or
    near-duplicate, naming the first."""
    block = result["reactant_sets"]
    kind = "reactant set(s) occur"
    if not block["shared_across_splits"]:
        block = result["near_duplicates"]["reactant_sets"]
        kind = "near-duplicate reactant set(s) (spectators removed, stereo ignored) occur"
        if not block["shared_across_splits"]:
            return None
    first = block["examples"][0]
    where = "; ".join(
        f"{split}: line {', '.join(str(e['line']) for e in entries)}"
        for split, entries in first["splits"].items()
    )
    line = min(e["line"] for entries in first["splits"].values() for e in entries)
    return DataQualityError(
        f"--strict: {block['shared_across_splits']} {kind} in more than one split; the "
        f"first, {first['smiles']!r}, in {where} (an explicit group_key overrides the "
        "reactant hash)",
        path=path,
        line=line,
    )
