"""The Wilson score interval and the report's rate mapping, in the standard library alone.

One home for the arithmetic every rate shares: :func:`chemgauge.eval.stats.wilson_interval`
and :func:`chemgauge.eval.metrics.rate` are built on it, and the p2s scorer, which runs on a
bare Python 3.9 without chemgauge's dependencies, writes its accuracy with :func:`rate` in
the very shape of :class:`chemgauge.eval.metrics.Rate` (``count``, ``n``, ``value``,
``interval``, ``method``).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["interval_method", "rate", "wilson_bounds"]


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return float(math.sqrt(2) * _erfinv(confidence))


def _erfinv(y: float) -> float:
    """Inverse error function by Newton iteration on math.erf (exact to double precision)."""
    x = 0.0
    for _ in range(100):
        err = math.erf(x) - y
        if abs(err) < 1e-15:
            break
        x -= err / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def wilson_bounds(
    successes: int, n: int, confidence: float = 0.95
) -> tuple[float | None, float | None, float | None]:
    """``(successes / n, low, high)`` of the Wilson score interval; ``None`` thrice if n == 0."""
    if successes < 0 or n < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return None, None, None
    z = _z(confidence)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return p, max(0.0, centre - half), min(1.0, centre + half)


def interval_method(kind: str, confidence: float) -> str:
    """``wilson95`` for a 95% Wilson interval; ``bootstrap90`` for a 90% bootstrap."""
    percent = round(confidence * 100, 6)
    return f"{kind}{int(percent) if percent == int(percent) else percent}"


def rate(count: int, n: int, *, confidence: float = 0.95, k: int | None = None) -> dict[str, Any]:
    """A Wilson-interval rate as its JSON mapping (with ``k`` for a rank cut-off)."""
    value, low, high = wilson_bounds(count, n, confidence)
    block: dict[str, Any] = {
        "count": count,
        "n": n,
        "value": value,
        "interval": [low, high],
        "method": interval_method("wilson", confidence),
    }
    if k is not None:
        block["k"] = k
    return block
