"""The disk-backed first-seen store behind streaming deduplication."""

from __future__ import annotations

import pytest

from chemgauge.eval.keystore import FirstSeenStore


def test_first_value_wins_and_later_values_are_returned_not_stored() -> None:
    with FirstSeenStore() as store:
        assert store.first("a", (1, None, "x")) is None
        assert store.first(b"\x00\xff", (2,)) is None
        assert store.first("a", (9, "other", "y")) == (1, None, "x")
        assert store.get("a") == (1, None, "x") and store.get("missing") is None
        assert store.get(b"\x00\xff") == (2,)
        assert len(store) == 2


def test_many_keys_round_trip_and_a_closed_store_refuses_work() -> None:
    store = FirstSeenStore(cache_kib=64)  # a tiny cache: pages spill to the temporary file
    for i in range(20_000):
        assert store.first(f"key-{i}", (i,)) is None
    assert all(store.first(f"key-{i}", (-1,)) == (i,) for i in range(0, 20_000, 997))
    store.close()
    with pytest.raises(ValueError, match="closed"):
        store.get("key-1")


def test_replace_updates_a_known_key_only() -> None:
    with FirstSeenStore() as store:
        store.first("a", (1, None))
        store.replace("a", (1, "famA"))
        assert store.first("a", (2, "famB")) == (1, "famA")
        with pytest.raises(KeyError):
            store.replace("missing", (0,))
        assert len(store) == 1
