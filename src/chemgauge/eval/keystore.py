"""A disk-backed "first value seen under this key" store, so deduplication scales.

Streaming a corpus still has to remember every identity it has seen (to merge duplicates and
catch conflicting ids). A Python dict of hashes costs about 300 bytes an item, which at
millions of items dominates peak memory; this store keeps keys and small values in a private
SQLite temporary database (deleted on close) behind a bounded page cache, so memory stays flat
whatever the corpus size, at a few microseconds a lookup.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import orjson

__all__ = ["FirstSeenStore", "temporary_database"]

DEFAULT_CACHE_KIB = 4096


def temporary_database(cache_kib: int = DEFAULT_CACHE_KIB) -> sqlite3.Connection:
    """A private SQLite database on a temporary file, with a bounded page cache.

    "" is SQLite's private temporary on-disk database: pages beyond the cache spill to a
    temporary file that SQLite removes itself, even if this process is killed.
    """
    db = sqlite3.connect("")
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute(f"PRAGMA cache_size=-{int(cache_kib)}")
    return db


class FirstSeenStore:
    """Maps each key to the first value stored under it; :meth:`first` never replaces it.

    Values are small JSON-ready tuples (ints, strings, ``None``); they come back as tuples.
    One process, one thread: the store is not shared with workers.
    """

    def __init__(self, *, cache_kib: int = DEFAULT_CACHE_KIB) -> None:
        self._db: sqlite3.Connection | None = temporary_database(cache_kib)
        self._db.execute("CREATE TABLE seen (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        self.size = 0

    @staticmethod
    def _key(key: str | bytes) -> bytes:
        return key.encode("utf-8") if isinstance(key, str) else key

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise ValueError("store is closed")
        return self._db

    def first(self, key: str | bytes, value: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """Store ``value`` under ``key`` unless the key is known; return the earlier value.

        ``None`` means the key was new (and ``value`` is now its first value).
        """
        db = self._conn()
        raw = self._key(key)
        cursor = db.execute("INSERT OR IGNORE INTO seen VALUES (?, ?)", (raw, orjson.dumps(value)))
        if cursor.rowcount == 1:
            self.size += 1
            return None
        return self.get(raw)

    def replace(self, key: str | bytes, value: tuple[Any, ...]) -> None:
        """Overwrite the value of a known key (state that grows with later sightings)."""
        cursor = self._conn().execute(
            "UPDATE seen SET v = ? WHERE k = ?", (orjson.dumps(value), self._key(key))
        )
        if cursor.rowcount != 1:
            raise KeyError(key)

    def get(self, key: str | bytes) -> tuple[Any, ...] | None:
        """The first value stored under ``key``, or ``None``."""
        found = self._conn().execute("SELECT v FROM seen WHERE k = ?", (self._key(key),)).fetchone()
        return None if found is None else tuple(orjson.loads(found[0]))

    def __len__(self) -> int:
        return self.size

    def close(self) -> None:
        """Drop the database (its temporary file goes with it)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> FirstSeenStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
