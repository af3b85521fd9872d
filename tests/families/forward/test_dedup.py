"""The identity ledger's verdicts, copy by copy."""

from __future__ import annotations

from chemgauge.families.forward.dedup import Conflict, Duplicate, IdentityLedger, New, ReusedId

A, B = "aa" * 32, "bb" * 32


def test_verdicts_follow_the_first_explicit_key_among_earlier_copies() -> None:
    ledger = IdentityLedger()
    try:
        assert ledger.see(1, A, "r1", None, "c") == New()
        assert ledger.see(2, A, "r2", "famA", None) == Duplicate(1, rejected=False)
        assert ledger.see(3, A, "r3", None, None) == Duplicate(1, rejected=False)
        assert ledger.see(4, A, "r4", "famA", None) == Duplicate(1, rejected=False)
        assert ledger.see(5, A, "r5", "famB", None) == Conflict(1, "r1", "c", "famA", 2, True)
        assert ledger.see(6, A, "r6", "famC", None) == Conflict(1, "r1", "c", "famA", 2, False)
        assert ledger.see(7, A, "r7", None, None) == Duplicate(1, rejected=True)
        assert ledger.see(8, B, "r1", None, None) == ReusedId()
        assert ledger.see(9, B, "r9", "famB", None) == New()
    finally:
        ledger.close()
