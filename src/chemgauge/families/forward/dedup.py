"""Reaction identity while a corpus streams: duplicates, reused ids and group-key conflicts.

Every copy of one reaction identity is compared with what the copies before it said, and
nothing more is held than one small record per identity and per reaction id (in disk-backed
:class:`~chemgauge.eval.keystore.FirstSeenStore` s, so memory stays flat):

* a ``reaction_id`` names the first identity it was used for; a later use for another
  identity is ``conflicting_reaction_ids``;
* a later copy of an identity is a duplicate, merged into the first copy, unless its explicit
  ``group_key`` differs from the first explicit key any earlier copy supplied (wherever that
  copy was: the first one may have had no key at all). Then the keys conflict and the whole
  reaction is rejected: this copy now, the first copy in hindsight (``conflicting_group_keys``).
"""

from __future__ import annotations

from dataclasses import dataclass

from chemgauge.eval.keystore import FirstSeenStore

__all__ = ["Conflict", "Duplicate", "IdentityLedger", "New", "ReusedId", "Verdict"]


@dataclass(frozen=True, slots=True)
class New:
    """The first copy of an identity: a reaction."""


@dataclass(frozen=True, slots=True)
class ReusedId:
    """The reaction id was used before for another identity."""


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A later copy that agrees with the earlier ones; ``rejected`` if the reaction already is."""

    first_line: int
    rejected: bool


@dataclass(frozen=True, slots=True)
class Conflict:
    """A later copy whose explicit group key differs from an earlier copy's.

    ``newly_rejected``: this copy is the one that rejects the reaction (its first copy, read as
    a reaction, must become invalid in hindsight); otherwise the reaction already was.
    """

    first_line: int
    first_reaction_id: str
    first_reaction_class: str | None
    known_key: str
    known_key_line: int
    newly_rejected: bool


Verdict = New | ReusedId | Duplicate | Conflict


class IdentityLedger:
    """One record per identity (first line, id, class, first explicit key and its line, whether
    rejected) and per reaction id (its identity); see the module docstring for the rules."""

    def __init__(self) -> None:
        self._by_identity = FirstSeenStore()
        self._by_reaction_id = FirstSeenStore()

    def close(self) -> None:
        """Release both stores."""
        self._by_identity.close()
        self._by_reaction_id.close()

    def see(
        self,
        line: int,
        identity: str,
        reaction_id: str,
        group_key: str | None,
        reaction_class: str | None,
    ) -> Verdict:
        """Record one valid corpus line and say what it is."""
        # An unseen id is bound to this identity now: every verdict but ReusedId keeps the
        # binding (the first identity an id names is the one kept).
        seen = self._by_reaction_id.first(reaction_id, (identity,))
        if seen is not None and seen[0] != identity:
            return ReusedId()
        key = bytes.fromhex(identity)
        record = (line, reaction_id, reaction_class, group_key, line if group_key else None, False)
        first = self._by_identity.first(key, record)
        if first is None:
            return New()
        first_line, first_rid, first_class, known_key, known_line, rejected = first
        if not group_key or group_key == known_key:
            return Duplicate(first_line, rejected)
        if known_key is None:
            # The first explicit key among the copies: later keys are checked against it.
            self._by_identity.replace(
                key, (first_line, first_rid, first_class, group_key, line, rejected)
            )
            return Duplicate(first_line, rejected)
        if not rejected:
            self._by_identity.replace(
                key, (first_line, first_rid, first_class, known_key, known_line, True)
            )
        return Conflict(first_line, first_rid, first_class, known_key, known_line, not rejected)
