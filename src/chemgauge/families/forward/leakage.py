"""Leakage audit: reactant sets and accepted products that occur in more than one split.

A fallback group key is the hash of the sorted canonical reactants, so two reactions with the
same reactants always share a split. An explicit ``group_key`` (a patent family, a date)
overrides it, and identical reactant sets can then land in train and test: a system trained
on train has seen a test reaction's reactants. The audit counts, for every pair of splits,
the reactant sets (sorted canonical reactants) and the accepted product multisets found in
both, with the reactions involved by the source of their group key (``explicit`` or
``fallback``), and lists the first few with their corpus lines.

It is a pure function of rows (``split``, ``group_key_source``, ``reactants_canonical``,
``accepted_products_canonical``, ``source_line``, ``reaction_id``), so ``chemgauge verify``
recomputes it, and it holds no rows: keys go to a private temporary SQLite database (deleted
on close), so memory stays flat whatever the corpus size.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from chemgauge.errors import DataQualityError
from chemgauge.eval.keystore import temporary_database
from chemgauge.families.forward.corpus import BenchReaction

__all__ = ["AUDIT_SCHEME", "SPLIT_PAIRS", "LeakageAudit", "audit_rows", "strict_leakage_error"]

AUDIT_SCHEME = "forward-leakage-audit-v1"
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
        self._pending: list[tuple[int, str, int, int, int, str]] = []
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
        self._pending.append((0, ".".join(sorted(reactants)), *where))
        for products in accepted:
            self._pending.append((1, ".".join(sorted(products)), *where))
        if len(self._pending) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        self._conn().executemany("INSERT INTO seen VALUES (?, ?, ?, ?, ?, ?)", self._pending)
        self._pending.clear()

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

    def _shared(self, kind: int) -> list[str]:
        """Keys of this kind found in two or more splits, by their first line."""
        rows = self._conn().execute(
            "SELECT key FROM seen WHERE kind = ? GROUP BY key "
            "HAVING COUNT(DISTINCT split) > 1 ORDER BY MIN(line)",
            (kind,),
        )
        return [key for (key,) in rows]

    def _block(self, kind: int) -> dict[str, Any]:
        db = self._conn()
        (distinct,) = db.execute(
            "SELECT COUNT(DISTINCT key) FROM seen WHERE kind = ?", (kind,)
        ).fetchone()
        shared_in = dict.fromkeys((_pair(a, b) for a, b in SPLIT_PAIRS), 0)
        reactions_in = {_pair(a, b): dict.fromkeys(SOURCES, 0) for a, b in SPLIT_PAIRS}
        examples: list[dict[str, Any]] = []
        shared = self._shared(kind)
        for key in shared:
            found = db.execute(
                "SELECT split, explicit, line, reaction_id FROM seen WHERE kind = ? AND key = ? "
                "ORDER BY line",
                (kind, key),
            ).fetchall()
            by_split: dict[str, list[tuple[int, str, str]]] = {}
            for split, explicit, line, reaction_id in found:
                source = SOURCES[0] if explicit else SOURCES[1]
                by_split.setdefault(SPLITS[split], []).append((line, reaction_id, source))
            for a, b in SPLIT_PAIRS:
                if a in by_split and b in by_split:
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

    def result(self) -> dict[str, Any]:
        """The audit: both kinds, per pair of splits, plus warnings for reactant overlaps."""
        self._flush()
        self._conn().execute("CREATE INDEX IF NOT EXISTS by_key ON seen (kind, key)")
        out: dict[str, Any] = {"scheme": AUDIT_SCHEME}
        for index, kind in enumerate(KINDS):
            out[kind] = self._block(index)
        out["warnings"] = _warnings(out["reactant_sets"])
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


def audit_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The leakage audit of a sequence of rows."""
    with LeakageAudit() as audit:
        for row in rows:
            audit.add_row(row)
        return audit.result()


def strict_leakage_error(result: Mapping[str, Any], path: str) -> DataQualityError | None:
    """The ``--strict`` refusal of any cross-split reactant-set overlap, naming the first."""
    block = result["reactant_sets"]
    if not block["shared_across_splits"]:
        return None
    first = block["examples"][0]
    where = "; ".join(
        f"{split}: line {', '.join(str(e['line']) for e in entries)}"
        for split, entries in first["splits"].items()
    )
    line = min(e["line"] for entries in first["splits"].values() for e in entries)
    return DataQualityError(
        f"--strict: {block['shared_across_splits']} reactant set(s) occur in more than one "
        f"split; the first, {first['smiles']!r}, in {where} (an explicit group_key overrides "
        "the reactant hash)",
        path=path,
        line=line,
    )
