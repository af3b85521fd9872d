"""How far apart two values of the same property are (used by the property oracle).

Scalars compare by absolute difference. Peak lists (spectra, NMR) are broadened into Gaussian
profiles on a shared grid and compared by cosine distance, so a shifted band counts as a
small miss rather than a total one; peak weights are intensity, integration, degeneracy or
the number of assigned atoms, whichever the format carries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["combined_distances", "property_distance"]

# Gaussian half-width per property family, in the property's unit.
_WIDTHS = {
    "infrared": 20.0,
    "raman": 20.0,
    "ultraviolet_visible": 10.0,
    "proton_nmr": 0.05,
    "carbon_nmr": 1.0,
}
_GRID_POINTS = 2048


def _width(name: str) -> float:
    for prefix, width in _WIDTHS.items():
        if name.startswith(prefix):
            return width
    return 1.0


def _peaks(value: Mapping[str, Any]) -> list[tuple[float, float]]:
    out = []
    for peak in value.get("peaks", []):
        position = float(peak.get("position", peak.get("shift", 0.0)))
        if "intensity" in peak:
            weight = float(peak["intensity"])
        elif "integration" in peak:
            weight = float(peak["integration"])
        elif "degeneracy" in peak:
            weight = float(peak["degeneracy"])
        elif "atoms" in peak:
            weight = float(len(peak["atoms"]))
        else:
            weight = 1.0
        out.append((position, weight))
    return out


def _profile_distance(
    a: list[tuple[float, float]], b: list[tuple[float, float]], w: float
) -> float:
    if not a or not b:
        return 1.0
    positions = [p for p, _ in a + b]
    grid = np.linspace(min(positions) - 4 * w, max(positions) + 4 * w, _GRID_POINTS)

    def profile(peaks: list[tuple[float, float]]) -> np.ndarray[Any, np.dtype[np.float64]]:
        centres = np.array([p for p, _ in peaks])[:, None]
        weights = np.array([q for _, q in peaks])[:, None]
        return np.asarray((weights * np.exp(-(((grid - centres) / w) ** 2))).sum(axis=0))

    pa, pb = profile(a), profile(b)
    norm = float(np.linalg.norm(pa) * np.linalg.norm(pb))
    if norm == 0:
        return 1.0
    return max(0.0, 1.0 - float(pa @ pb) / norm)


def property_distance(name: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """Distance between two values of property ``name`` (0 when equal)."""
    if "value" in a and "value" in b:
        return abs(float(a["value"]) - float(b["value"]))
    return _profile_distance(_peaks(a), _peaks(b), _width(name))


def combined_distances(
    supplied: Mapping[str, Any], candidates: Sequence[Mapping[str, Any] | None]
) -> list[float]:
    """Distance of each candidate's properties to the supplied ones, summed over properties.

    Each property's distances are divided by their largest value over the candidates, so a
    bundle weighs its members equally whatever their units. A candidate without a value for
    some property is infinitely far.
    """
    totals = [0.0] * len(candidates)
    for name in sorted(supplied):
        row = [
            math.inf
            if cand is None or name not in cand
            else property_distance(name, supplied[name], cand[name])
            for cand in candidates
        ]
        finite = [d for d in row if math.isfinite(d)]
        scale = max(finite, default=0.0) or 1.0
        totals = [t + d / scale for t, d in zip(totals, row, strict=True)]
    return totals
