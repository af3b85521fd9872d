"""Reading a retro report's structured blocks in tests: a top-k rate is found by its ``k``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def top_rate(block: Mapping[str, Any], k: int) -> Mapping[str, Any]:
    """The top-k rate of an accuracy block (``{n, top_k: [RateAtK...], ...}``) for ``k``."""
    (rate,) = [r for r in block["top_k"] if r["k"] == k]
    return rate


def top_hits(block: Mapping[str, Any], k: int) -> int:
    """Targets hit within the first ``k`` outputs (the rate's count)."""
    return int(top_rate(block, k)["count"])
