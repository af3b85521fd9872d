"""Which rows are in-sample: decided from the applied templates' own evidence, never the mode.

A row is in-sample when its reaction is named as a source of any template the run applied
(``template_source``), or when its reactant set is a near-duplicate of a source's
(``near_duplicate_of_source``: equal once spectators are removed and stereo is ignored, see
:mod:`~chemgauge.families.forward.spectators`). This holds in every template mode: a rule file
given with ``--template-source file`` whose sources name val and test reactions makes those rows
in-sample exactly as a train-extracted one makes train rows in-sample. Held-out figures are
over the val and test rows that are not in-sample.

It is a function of the final rows and the applied templates' source ids, so the runner marks
rows in one extra pass over its journal and ``chemgauge verify`` recomputes the marks from the
rows and the recorded rule file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chemgauge.families.forward.engine.rules import RuleSet
from chemgauge.families.forward.spectators import Spectators, molecules_of

__all__ = [
    "IN_SAMPLE_REASONS",
    "InSampleEvidence",
    "InSampleMarker",
    "applied_source_ids",
    "in_sample_reasons",
]

IN_SAMPLE_REASONS = ("template_source", "near_duplicate_of_source")
Row = Mapping[str, Any]


def applied_source_ids(rules: RuleSet) -> frozenset[str]:
    """Every reaction id any applied template names as a source."""
    return frozenset(rid for rule in rules for rid in rule.source_reaction_ids or ())


def _valid(row: Row) -> bool:
    return bool(row["input_status"] == "valid")


@dataclass(frozen=True)
class InSampleMarker:
    """Marks rows given the source ids, the near keys of the source rows and the spectators."""

    source_ids: frozenset[str]
    source_keys: frozenset[str]
    spectators: Spectators

    def reason(self, row: Row) -> str | None:
        """Why ``row`` is in-sample, or ``None``."""
        if not self.source_ids or not _valid(row):
            return None
        if row["reaction_id"] in self.source_ids:
            return IN_SAMPLE_REASONS[0]
        key = self.spectators.reactant_key(
            row["reactants_canonical"], row["accepted_products_canonical"]
        )
        return IN_SAMPLE_REASONS[1] if key is not None and key in self.source_keys else None

    def mark(self, row: dict[str, Any]) -> dict[str, Any]:
        """Set ``in_sample`` and ``in_sample_reason`` on a row (returned)."""
        reason = self.reason(row)
        row["in_sample"] = reason is not None
        row["in_sample_reason"] = reason
        return row


class InSampleEvidence:
    """The first pass: fold every final row in, then :meth:`marker`."""

    def __init__(self, source_ids: frozenset[str]) -> None:
        self.source_ids = source_ids
        self._counts: Counter[str] = Counter()
        self._reactions = 0
        self._sources: list[tuple[list[str], list[list[str]]]] = []

    def add(self, row: Row) -> None:
        """Fold one row in (invalid rows take part in nothing)."""
        if not _valid(row):
            return
        reactants, accepted = row["reactants_canonical"], row["accepted_products_canonical"]
        self._reactions += 1
        self._counts.update(molecules_of(reactants, accepted))
        if row["reaction_id"] in self.source_ids:
            self._sources.append((list(reactants), [list(p) for p in accepted]))

    def marker(self) -> InSampleMarker:
        """The marker these rows imply."""
        spectators = Spectators.of_counts(self._counts, self._reactions)
        keys = {spectators.reactant_key(r, a) for r, a in self._sources}
        return InSampleMarker(self.source_ids, frozenset(k for k in keys if k), spectators)


def in_sample_reasons(rows: Iterable[Row], source_ids: frozenset[str]) -> list[str | None]:
    """The in-sample reason of every row, recomputed (what ``verify`` compares)."""
    held = list(rows)
    evidence = InSampleEvidence(source_ids)
    for row in held:
        evidence.add(row)
    marker = evidence.marker()
    return [marker.reason(row) for row in held]
