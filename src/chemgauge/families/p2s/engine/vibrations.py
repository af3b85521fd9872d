"""Harmonic vibrational analysis: normal modes, infrared intensities and Raman activities.

Pure numpy on derivatives a calculator supplies (a Cartesian Hessian, dipole derivatives,
polarizability derivatives), all in atomic units. Bands are reported as the spec's spectrum
peaks: wavenumber (cm-1) and intensity relative to the strongest band.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["AMU", "WAVENUMBER_PER_AU", "NormalModes", "normal_modes", "raman_activities"]

# sqrt(hartree / (bohr^2 amu)) expressed as a wavenumber in cm-1
WAVENUMBER_PER_AU = 5140.487
AMU = {
    1: 1.008,
    5: 10.81,
    6: 12.011,
    7: 14.007,
    8: 15.999,
    9: 18.998,
    11: 22.990,
    14: 28.085,
    15: 30.974,
    16: 32.06,
    17: 35.45,
    19: 39.098,
    34: 78.971,
    35: 79.904,
    53: 126.90,
}
_MIN_BAND = 400.0
_DECIMALS = 3


@dataclass(frozen=True)
class NormalModes:
    """Real vibrational modes: wavenumbers (cm-1) and Cartesian displacement vectors."""

    wavenumbers: NDArray[np.float64]
    cartesian: NDArray[np.float64]  # (3N, modes), mass-weighted back to Cartesian

    def bands(self, intensities: NDArray[np.float64]) -> list[dict[str, float]]:
        """Peaks at or above 400 cm-1, intensities relative to the strongest (empty if none)."""
        keep = [
            (float(w), float(i))
            for w, i in zip(self.wavenumbers, intensities, strict=True)
            if w >= _MIN_BAND
        ]
        strongest = max((i for _, i in keep), default=0.0)
        if strongest <= 0:
            return []
        return [
            {"position": round(w, 1), "intensity": round(i / strongest, _DECIMALS)}
            for w, i in sorted(keep)
        ]

    def infrared(self, dipole_derivative: NDArray[np.float64]) -> list[dict[str, float]]:
        """IR bands from the dipole derivative (3, 3N): intensity ~ |d mu / d Q|^2."""
        return self.bands(((dipole_derivative @ self.cartesian) ** 2).sum(axis=0))

    def raman(self, polarizability_derivative: NDArray[np.float64]) -> list[dict[str, float]]:
        """Raman bands from d alpha / d R (3, 3, 3N): activity 45 a'^2 + 7 g'^2 per mode."""
        return self.bands(raman_activities(polarizability_derivative, self.cartesian))


def normal_modes(hessian: NDArray[np.float64], atomic_numbers: Sequence[int]) -> NormalModes:
    """Mass-weighted diagonalization; modes with imaginary or zero frequency are dropped."""
    symmetric = (hessian + hessian.T) / 2
    inv_sqrt_mass = np.repeat([1 / math.sqrt(AMU[z]) for z in atomic_numbers], 3)
    eigenvalues, modes = np.linalg.eigh(symmetric * np.outer(inv_sqrt_mass, inv_sqrt_mass))
    real = eigenvalues > 0
    wavenumbers = np.sqrt(eigenvalues[real]) * WAVENUMBER_PER_AU
    return NormalModes(wavenumbers, modes[:, real] * inv_sqrt_mass[:, None])


def raman_activities(
    polarizability_derivative: NDArray[np.float64], cartesian_modes: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Raman activity of each mode from the polarizability derivative tensor.

    With a' the mean and g' the anisotropy of d alpha / d Q, the activity is
    45 a'^2 + 7 g'^2 (the usual definition for linearly polarized light at 90 degrees).
    """
    dq = np.einsum("ijk,kq->qij", polarizability_derivative, cartesian_modes)
    mean = np.trace(dq, axis1=1, axis2=2) / 3
    xx, yy, zz = dq[:, 0, 0], dq[:, 1, 1], dq[:, 2, 2]
    anisotropy = 0.5 * ((xx - yy) ** 2 + (yy - zz) ** 2 + (zz - xx) ** 2) + 3 * (
        dq[:, 0, 1] ** 2 + dq[:, 1, 2] ** 2 + dq[:, 0, 2] ** 2
    )
    return np.asarray(45 * mean**2 + 7 * anisotropy, dtype=np.float64)
