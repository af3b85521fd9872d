"""Memoized, batch-first canonicalization under a named policy.

Each distinct (string, policy) pair is computed once: batches are deduplicated before any
work is dispatched, chunks run on an executor (serial, process pool or Ray), and results come
back in input order. Each worker process keeps its own memo as well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from chemgauge.chem.matchers import get_matcher

__all__ = ["Canonicalizer", "KeyChunk", "canonicalize_many", "canonicalize_stream"]

_DEFAULT_CHUNK = 2048
_worker_memos: dict[str, dict[str, str | None]] = {}
_WORKER_MEMO_LIMIT = 100_000


@dataclass(frozen=True, slots=True)
class KeyChunk:
    """Picklable chunk function: policy keys for a list of strings, memoized per process."""

    policy: str

    def __call__(self, chunk: list[str]) -> list[str | None]:
        memo = _worker_memos.setdefault(self.policy, {})
        if len(memo) > _WORKER_MEMO_LIMIT:
            memo.clear()
        key = get_matcher(self.policy).key
        out: list[str | None] = []
        for s in chunk:
            try:
                out.append(memo[s])
            except KeyError:
                memo[s] = result = key(s)
                out.append(result)
        return out


class Canonicalizer:
    """Memo cache of policy keys; one instance per policy, per process.

    ``max_entries`` bounds memory on huge inputs: when the memo is full it is cleared and
    refilled (a generation), so peak memory tracks the limit, not the input size.
    """

    def __init__(self, policy: str = "exact", *, max_entries: int = 1_000_000) -> None:
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
            self._remember(smiles, result)
            return result
        self.hits += 1
        return result

    def known(self, smiles: str) -> bool:
        """True iff the key of this string is already in the memo."""
        return smiles in self._cache

    def remember(self, smiles: str, key: str | None) -> None:
        """Put a key the caller already knows into the memo (e.g. a canonical SMILES is its
        own ``exact`` key), so it is never computed."""
        self._remember(smiles, key)

    def _remember(self, smiles: str, key: str | None) -> None:
        if len(self._cache) >= self._max_entries:
            self._cache.clear()
        self._cache[smiles] = key

    def many(
        self,
        strings: Sequence[str],
        *,
        jobs: int = 1,
        chunk_size: int = _DEFAULT_CHUNK,
        progress: Callable[[int], None] | None = None,
        executor: object | None = None,
    ) -> list[str | None]:
        """Keys for a batch in input order; distinct uncached strings are computed once.

        ``executor`` (a :class:`chemgauge.eval.executors.Executor`) overrides ``jobs``.
        """
        if executor is None and (jobs <= 1 or len(strings) <= chunk_size):
            return self._many_serial(strings, chunk_size, progress)
        known: dict[str, str | None] = {}
        todo: list[str] = []
        for s in dict.fromkeys(strings):
            if s in self._cache:
                known[s] = self._cache[s]
            else:
                todo.append(s)
        self.misses += len(todo)
        self.hits += len(strings) - len(todo)
        computed: dict[str, str | None] = {}
        if executor is None and (jobs <= 1 or len(todo) <= chunk_size):
            key = self._key
            for start in range(0, len(todo), chunk_size):
                chunk = todo[start : start + chunk_size]
                for s in chunk:
                    computed[s] = key(s)
                if progress is not None:
                    progress(len(chunk))
        else:
            from chemgauge.eval.executors import (
                Executor,
                ExecutorConfig,
                ItemFailure,
                make_executor,
            )

            owned = executor is None
            runner: Executor = (
                make_executor(ExecutorConfig(kind="local", jobs=jobs, chunk_size=chunk_size))
                if executor is None
                else executor  # type: ignore[assignment]
            )
            try:
                done = 0
                results = runner.map(KeyChunk(self.policy), todo)
                for s, result in zip(todo, results, strict=True):
                    # A string whose worker failed twice has no key: same as invalid.
                    computed[s] = None if isinstance(result, ItemFailure) else result
                    done += 1
                    if progress is not None and done % chunk_size == 0:
                        progress(chunk_size)
                if progress is not None and done % chunk_size:
                    progress(done % chunk_size)
            finally:
                if owned:
                    runner.close()
        for s, k in computed.items():
            self._remember(s, k)
        known.update(computed)
        return [known[s] for s in strings]

    def _many_serial(
        self,
        strings: Sequence[str],
        chunk_size: int,
        progress: Callable[[int], None] | None,
    ) -> list[str | None]:
        """The in-process path: one memo lookup per string, no intermediate collections."""
        cache = self._cache
        key = self._key
        limit = self._max_entries
        out: list[str | None] = []
        append = out.append
        misses = 0
        for index, s in enumerate(strings, start=1):
            try:
                append(cache[s])
            except KeyError:
                misses += 1
                result = key(s)
                if len(cache) >= limit:
                    cache.clear()
                cache[s] = result
                append(result)
            if progress is not None and index % chunk_size == 0:
                progress(chunk_size)
        if progress is not None and len(strings) % chunk_size:
            progress(len(strings) % chunk_size)
        self.misses += misses
        self.hits += len(strings) - misses
        return out

    def cache_size(self) -> int:
        """Number of distinct strings held in the memo."""
        return len(self._cache)


def canonicalize_many(
    strings: Iterable[str], policy: str = "exact", *, jobs: int = 1
) -> list[str | None]:
    """One-shot batch canonicalization under ``policy``, results in input order."""
    return Canonicalizer(policy).many(list(strings), jobs=jobs)


def canonicalize_stream(
    strings: Iterable[str],
    canonicalizer: Canonicalizer,
    *,
    block_size: int = 50_000,
    executor: object | None = None,
    chunk_size: int = _DEFAULT_CHUNK,
) -> Iterator[str | None]:
    """Keys for an unbounded stream, block by block: memory tracks the block, not the input."""
    block: list[str] = []
    for s in strings:
        block.append(s)
        if len(block) >= block_size:
            yield from canonicalizer.many(block, executor=executor, chunk_size=chunk_size)
            block = []
    if block:
        yield from canonicalizer.many(block, executor=executor, chunk_size=chunk_size)
