"""Leakage-safe, hash-based splits: adding data never moves an existing item.

The harness always computes the split itself; a corpus can supply a group key (patent family,
date bucket), never the split.
"""

from __future__ import annotations

import hashlib
from typing import Literal

__all__ = [
    "SPLIT_PROTOCOL_VERSION",
    "TRAIN_MAX_BUCKET",
    "VAL_MAX_BUCKET",
    "Split",
    "assign_split",
    "split_bucket",
]

SPLIT_PROTOCOL_VERSION = 1
TRAIN_MAX_BUCKET = 70
VAL_MAX_BUCKET = 85

Split = Literal["train", "val", "test"]


def split_bucket(group_key: str) -> int:
    """First four bytes of SHA-256(group_key, UTF-8) as a big-endian u32, mod 100."""
    digest = hashlib.sha256(group_key.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % 100


def assign_split(group_key: str) -> Split:
    """[0, 70) train, [70, 85) val, [85, 100) test."""
    bucket = split_bucket(group_key)
    if bucket < TRAIN_MAX_BUCKET:
        return "train"
    if bucket < VAL_MAX_BUCKET:
        return "val"
    return "test"
