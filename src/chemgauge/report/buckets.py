"""Display order of breakdown buckets: numbers by value, words by name, missing values last.

Bucket labels are text (``0``, ``2-5``, ``11-50``, ``51+``, ``mixed:1-2``, ``<missing>``); a
plain text sort puts ``11-50`` before ``2-5``. Each run of digits compares as a number, so a
range sorts by its lower bound, and the labels that stand for "no value" come after the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["NO_VALUE_LABELS", "bucket_key", "ordered_buckets"]

#: Labels a breakdown gives an item that has no value on that dimension.
NO_VALUE_LABELS = frozenset({"<missing>", "(none)", "none", "unknown"})


def bucket_key(label: str) -> tuple[int, tuple[tuple[int, int | str], ...]]:
    """Sort key of a bucket label: digit runs by value (``2-5`` before ``11-50``), no-value
    labels last."""
    parts = tuple(
        (0, int(part)) if part.isdigit() else (1, part)
        for part in re.split(r"(\d+)", label)
        if part
    )
    return (1 if label in NO_VALUE_LABELS else 0, parts)


def ordered_buckets(labels: Iterable[str]) -> list[str]:
    """The labels in display order (see :func:`bucket_key`)."""
    return sorted(labels, key=bucket_key)
