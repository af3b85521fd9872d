"""Memoized, batch-first canonicalization under a named policy.

Each distinct (string, policy) pair is computed once; batches are deduplicated before any
work is dispatched, processed in chunks on a process pool, and returned in input order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor

from chemgauge.chem.matchers import get_matcher

__all__ = ["Canonicalizer", "canonicalize_many"]

_DEFAULT_CHUNK = 2048


def _key_chunk(policy: str, chunk: list[str]) -> list[str | None]:
    """Worker entry point: keys for one chunk (module level so it pickles)."""
    key = get_matcher(policy).key
    return [key(s) for s in chunk]


class Canonicalizer:
    """Memo cache of policy keys; one instance per policy, per process."""

    def __init__(self, policy: str = "exact", *, max_entries: int | None = 1_000_000) -> None:
        self.policy = policy
        self._key: Callable[[str], str | None] = get_matcher(policy).key
        self._cache: dict[str, str | None] = {}
        self._max_entries = max_entries
        self.hits = 0
        self.misses = 0

    def __call__(self, smiles: str) -> str | None:
        """Key of one string under the policy; ``None`` if it has none (invalid or empty)."""
        try:
            result = self._cache[smiles]
        except KeyError:
            self.misses += 1
            result = self._key(smiles)
            if self._max_entries is None or len(self._cache) < self._max_entries:
                self._cache[smiles] = result
            return result
        self.hits += 1
        return result

    def many(
        self,
        strings: Sequence[str],
        *,
        jobs: int = 1,
        chunk_size: int = _DEFAULT_CHUNK,
        progress: Callable[[int], None] | None = None,
    ) -> list[str | None]:
        """Keys for a batch in input order; distinct uncached strings are computed once."""
        todo = [s for s in dict.fromkeys(strings) if s not in self._cache]
        self.misses += len(todo)
        self.hits += len(strings) - len(todo)
        computed: dict[str, str | None] = {}
        if jobs <= 1 or len(todo) <= chunk_size:
            for start in range(0, len(todo), chunk_size):
                chunk = todo[start : start + chunk_size]
                for s in chunk:
                    computed[s] = self._key(s)
                if progress is not None:
                    progress(len(chunk))
        else:
            chunks = [todo[i : i + chunk_size] for i in range(0, len(todo), chunk_size)]
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                for chunk, keys in zip(
                    chunks, pool.map(_key_chunk, [self.policy] * len(chunks), chunks), strict=True
                ):
                    computed.update(zip(chunk, keys, strict=True))
                    if progress is not None:
                        progress(len(chunk))
        cache = self._cache
        for s, k in computed.items():
            if self._max_entries is None or len(cache) < self._max_entries:
                cache[s] = k
        return [cache[s] if s in cache else computed[s] for s in strings]

    def cache_size(self) -> int:
        """Number of distinct strings held in the memo."""
        return len(self._cache)


def canonicalize_many(
    strings: Iterable[str], policy: str = "exact", *, jobs: int = 1
) -> list[str | None]:
    """One-shot batch canonicalization under ``policy``, results in input order."""
    return Canonicalizer(policy).many(list(strings), jobs=jobs)
