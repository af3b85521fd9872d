"""GFN2-xTB properties through ``tblite``: dipole norm, HOMO-LUMO gap, optionally infrared.

The geometry is RDKit's ETKDGv3 embedding relaxed with MMFF94 (UFF as fallback), not an xTB
minimum: cheap, deterministic for a seed, and the same for every candidate, which is what a
relative comparison between completions needs. Values are rounded (3 decimals) so thread-level
floating-point noise in the SCF does not change the bytes of a built benchmark.

The infrared spectrum comes from a central-difference Hessian of xTB gradients (6N single
points) and dipole derivatives; because the geometry is not an xTB minimum, modes with
imaginary frequencies are dropped and only bands at or above 400 cm-1 are reported, with
intensities relative to the strongest band.
"""

from __future__ import annotations

import importlib
import math
import os
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemgauge.chem.properties import Geometry, embed_geometry
from chemgauge.engines.p2s.properties import PropertyProvider, PropertyResult
from chemgauge.errors import ChemgaugeError, MissingDependencyError

__all__ = ["XtbProvider", "load_tblite"]

BOHR_PER_ANGSTROM = 1.0 / 0.529177210903
DEBYE_PER_AU = 2.541746473
EV_PER_HARTREE = 27.211386245988
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
_DECIMALS = 3
_STEP_BOHR = 0.005
_MIN_BAND = 400.0


def load_tblite() -> ModuleType:
    """Import ``tblite.interface`` or say exactly what to install.

    tblite's OpenMP threads oversubscribe a busy machine (measured 5x slower on 2 shared
    cores), so one thread is the default unless ``OMP_NUM_THREADS`` is already set.
    """
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        return importlib.import_module("tblite.interface")
    except ImportError:
        raise MissingDependencyError(
            "the xtb property provider needs tblite: pip install chemgauge[xtb]"
        ) from None


class XtbProvider(PropertyProvider):
    """GFN2-xTB single points on force-field geometries."""

    name = "xtb"
    isolated = True

    def __init__(self, *, seed: int = 0xC0FFEE, infrared: bool = False) -> None:
        super().__init__()
        self._tblite = load_tblite()
        self.seed = seed
        self.infrared = infrared
        try:
            self.tblite_version = version("tblite")
        except PackageNotFoundError:  # pragma: no cover - imported but not installed as a dist
            self.tblite_version = "unknown"

    def arguments(self) -> dict[str, Any]:
        """Rebuilt from its settings in a worker (the tblite module does not travel)."""
        return {"seed": self.seed, "infrared": self.infrared}

    @property
    def properties(self) -> tuple[str, ...]:
        """Dipole and gap, plus infrared when enabled."""
        return ("dipole", "gap", "infrared") if self.infrared else ("dipole", "gap")

    def describe(self) -> dict[str, Any]:
        """Method, tblite version, seed and whether infrared is computed."""
        return {
            "name": self.name,
            "method": "GFN2-xTB",
            "tblite": self.tblite_version,
            "seed": self.seed,
            "infrared": self.infrared,
        }

    def _calculator(self, geometry: Geometry, positions: NDArray[np.float64]) -> Any:
        calc = self._tblite.Calculator(
            "GFN2-xTB",
            np.asarray(geometry.atomic_numbers),
            positions,
            charge=float(geometry.charge),
            uhf=geometry.unpaired_electrons,
        )
        calc.set("verbosity", 0)
        return calc

    def _one(self, smiles: str) -> PropertyResult:
        geometry = embed_geometry(smiles, seed=self.seed)
        if geometry.unpaired_electrons:
            return PropertyResult({}, "", "open-shell molecules are not supported")
        missing = sorted({z for z in geometry.atomic_numbers if z not in AMU})
        if self.infrared and missing:
            return PropertyResult({}, "", f"no atomic mass for elements {missing}")
        positions = np.asarray(geometry.positions, dtype=np.float64) * BOHR_PER_ANGSTROM
        calc = self._calculator(geometry, positions)
        result = calc.singlepoint()
        # The geometry method (MMFF94 or UFF) is left out of the value: it differs between
        # candidates by element coverage and would hint at the answer without any physics.
        method = "GFN2-xTB"
        dipole = float(np.linalg.norm(result.get("dipole"))) * DEBYE_PER_AU
        energies = np.asarray(result.get("orbital-energies"), dtype=np.float64)
        occupations = np.asarray(result.get("orbital-occupations"), dtype=np.float64)
        electrons = round(float(occupations.sum()))
        homo = electrons // 2 - 1
        if electrons % 2 or homo < 0 or homo + 1 >= len(energies):
            return PropertyResult({}, "", f"cannot locate the frontier orbitals ({electrons} e)")
        gap = float(energies[homo + 1] - energies[homo]) * EV_PER_HARTREE
        values: dict[str, Any] = {
            "dipole": {"value": round(dipole, _DECIMALS), "unit": "D", "method": method},
            "gap": {"value": round(gap, _DECIMALS), "unit": "eV", "method": method},
        }
        if self.infrared:
            peaks = self._infrared(calc, geometry, positions)
            if peaks:
                values["infrared"] = {"unit": "cm-1", "peaks": peaks, "method": method}
        return PropertyResult(values, method)

    def _infrared(
        self, calc: Any, geometry: Geometry, positions: NDArray[np.float64]
    ) -> list[dict[str, float]]:
        n = len(geometry.atomic_numbers)
        hessian = np.zeros((3 * n, 3 * n))
        dipole_derivative = np.zeros((3, 3 * n))
        for k in range(3 * n):
            grads, dipoles = [], []
            for sign in (1.0, -1.0):
                moved = positions.copy()
                moved.flat[k] += sign * _STEP_BOHR
                calc.update(positions=moved)
                res = calc.singlepoint()
                grads.append(np.asarray(res.get("gradient")).ravel())
                dipoles.append(np.asarray(res.get("dipole")))
            hessian[k] = (grads[0] - grads[1]) / (2 * _STEP_BOHR)
            dipole_derivative[:, k] = (dipoles[0] - dipoles[1]) / (2 * _STEP_BOHR)
        calc.update(positions=positions)
        hessian = (hessian + hessian.T) / 2
        inv_sqrt_mass = np.repeat([1 / math.sqrt(AMU[z]) for z in geometry.atomic_numbers], 3)
        eigenvalues, modes = np.linalg.eigh(hessian * np.outer(inv_sqrt_mass, inv_sqrt_mass))
        cartesian_modes = modes * inv_sqrt_mass[:, None]
        intensities = ((dipole_derivative @ cartesian_modes) ** 2).sum(axis=0)
        bands = []
        for value, intensity in zip(eigenvalues, intensities, strict=True):
            if value <= 0:
                continue
            wavenumber = math.sqrt(value) * WAVENUMBER_PER_AU
            if wavenumber >= _MIN_BAND:
                bands.append((wavenumber, float(intensity)))
        strongest = max((i for _, i in bands), default=0.0)
        if strongest <= 0:
            return []
        return [
            {"position": round(w, 1), "intensity": round(i / strongest, _DECIMALS)}
            for w, i in sorted(bands)
        ]

    def _compute(self, batch: list[str]) -> list[PropertyResult]:
        out = []
        for smiles in batch:
            try:
                out.append(self._one(smiles))
            except ChemgaugeError as exc:
                out.append(PropertyResult({}, "", str(exc)))
            except Exception as exc:  # tblite raises its own error types for SCF failures
                out.append(PropertyResult({}, "", f"xTB failed: {type(exc).__name__}: {exc}"))
        return out
