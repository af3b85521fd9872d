"""Compact letter display: which systems are not significantly different, at a glance.

Two systems share a letter exactly when their difference is not significant. The letters
come from Piepho's insert-and-absorb algorithm (Piepho 2004, *J. Comput. Graph. Stat.* 13,
456-466; the algorithm of R's ``multcompView``): start with one column holding every system;
for each significant pair, split every column holding both into a copy without the one and a
copy without the other, then drop any column contained in another (absorb). The columns are
then the maximal groups of mutually tied systems. A sweep removes letters that no tie needs
(a system keeps at least one), and the columns are lettered in the order of their best
system, so the best system always has ``a``. Non-transitive ties come out as overlapping
letters: A~B, B~C, A!=C gives ``a``, ``ab``, ``b``.
"""

from __future__ import annotations

import string
from collections.abc import Collection, Hashable, Sequence
from typing import TypeVar

__all__ = ["compact_letters", "letter_names"]

T = TypeVar("T", bound=Hashable)
_ALPHABET = string.ascii_lowercase + string.ascii_uppercase


def letter_names(count: int) -> list[str]:
    """``a``..``z``, ``A``..``Z``, then ``a2``, ``b2``...: one name per column, all distinct."""
    names = []
    for i in range(count):
        cycle, position = divmod(i, len(_ALPHABET))
        names.append(_ALPHABET[position] + (str(cycle + 1) if cycle else ""))
    return names


def _absorb(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """The columns without duplicates and without any column contained in another one."""
    kept: list[frozenset[int]] = []
    for column in sorted(set(columns), key=lambda c: (-len(c), sorted(c))):
        if column and not any(column <= other for other in kept):
            kept.append(column)
    return kept


def _insert(columns: list[frozenset[int]], i: int, j: int) -> list[frozenset[int]]:
    out: list[frozenset[int]] = []
    for column in columns:
        if i in column and j in column:
            out += [column - {i}, column - {j}]
        else:
            out.append(column)
    return _absorb(out)


def _sweep(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """Drop each system's letter that no tie needs: every system it shares that column with
    also shares another column with it, and the system keeps another letter."""
    current = [set(c) for c in sorted(columns, key=sorted)]
    for k, column in enumerate(current):
        for t in sorted(column):
            others = [c for m, c in enumerate(current) if m != k and t in c]
            if not others:
                continue
            if all(any(u in c for c in others) for u in column if u != t):
                column.discard(t)
    return _absorb([frozenset(c) for c in current])


def compact_letters(order: Sequence[T], different: Collection[tuple[T, T]]) -> dict[T, str]:
    """Letters for each system in ``order`` (best first) given the significantly different
    pairs: two systems share a letter if and only if their pair is not in ``different``."""
    index = {item: i for i, item in enumerate(order)}
    if len(index) != len(order):
        raise ValueError("systems in a letter display must be distinct")
    pairs = set()
    for a, b in different:
        if a not in index or b not in index:
            raise ValueError(f"pair ({a!r}, {b!r}) names a system that is not ranked")
        if a != b:
            pairs.add((min(index[a], index[b]), max(index[a], index[b])))
    columns = [frozenset(range(len(order)))] if order else []
    for i, j in sorted(pairs):
        columns = _insert(columns, i, j)
    columns = sorted(_sweep(columns), key=sorted)  # lettered by their best member
    names = letter_names(len(columns))
    separator = "" if all(len(n) == 1 for n in names) else ","
    return {
        item: separator.join(n for n, c in zip(names, columns, strict=True) if i in c)
        for item, i in index.items()
    }
