"""GFN2-xTB properties through ``tblite``: dipole norm, HOMO-LUMO gap, infrared and Raman.

Dipole and gap are single points on RDKit's ETKDGv3 embedding relaxed with MMFF94 (UFF as
fallback): cheap, deterministic for a seed, and the same for every candidate, which is what a
relative comparison between completions needs. Values are rounded (3 decimals) so thread-level
floating-point noise in the SCF does not change the bytes of a built benchmark.

Vibrational spectra need a stationary point (MMFF94 puts CO2's C=O at 1.40 A), so the force-
field geometry is first relaxed with GFN2-xTB gradients (BFGS, deterministic), then the
Hessian and dipole derivatives come from central differences of gradients (6N single points).
Raman activities need the polarizability derivative d alpha / d R = -d2 g / dF dF, taken from
gradients under 18 uniform electric fields (a finite-field derivative, no extra Hessian).
Modes with imaginary frequencies are dropped and bands at or above 400 cm-1 are reported, with
intensities relative to the strongest band.
"""

from __future__ import annotations

import importlib
import os
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from chemgauge.chem.properties import Geometry, embed_geometry
from chemgauge.errors import MissingDependencyError
from chemgauge.families.p2s.engine.properties import MoleculeProvider, PropertyResult
from chemgauge.families.p2s.engine.vibrations import AMU, normal_modes

__all__ = ["XtbProvider", "load_tblite"]

BOHR_PER_ANGSTROM = 1.0 / 0.529177210903
DEBYE_PER_AU = 2.541746473
EV_PER_HARTREE = 27.211386245988
_DECIMALS = 3
_STEP_BOHR = 0.005
_FIELD_AU = 0.002
_RELAX_STEPS = 300
_RELAX_GRADIENT = 2e-4  # hartree/bohr, largest component
_MAX_STEP_BOHR = 0.3


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


class XtbProvider(MoleculeProvider):
    """GFN2-xTB single points on force-field geometries."""

    name = "xtb"
    isolated = True
    failure_label = "xTB failed"

    def __init__(
        self, *, seed: int = 0xC0FFEE, infrared: bool = False, raman: bool = False
    ) -> None:
        super().__init__()
        self._tblite = load_tblite()
        self._ffi = importlib.import_module("tblite.library").ffi
        self.seed = seed
        self.infrared = infrared
        self.raman = raman
        try:
            self.tblite_version = version("tblite")
        except PackageNotFoundError:  # pragma: no cover - imported but not installed as a dist
            self.tblite_version = "unknown"

    def arguments(self) -> dict[str, Any]:
        """Rebuilt from its settings in a worker (the tblite module does not travel)."""
        return {"seed": self.seed, "infrared": self.infrared, "raman": self.raman}

    @property
    def properties(self) -> tuple[str, ...]:
        """Dipole and gap, plus infrared and Raman when enabled."""
        extra = (("infrared",) if self.infrared else ()) + (("raman",) if self.raman else ())
        return ("dipole", "gap", *extra)

    def describe(self) -> dict[str, Any]:
        """Method, tblite version, seed and which spectra are computed."""
        return {
            "name": self.name,
            "method": "GFN2-xTB",
            "tblite": self.tblite_version,
            "seed": self.seed,
            "infrared": self.infrared,
            "raman": self.raman,
        }

    def _calculator(
        self,
        geometry: Geometry,
        positions: NDArray[np.float64],
        field: NDArray[np.float64] | None = None,
    ) -> Any:
        calc = self._tblite.Calculator(
            "GFN2-xTB",
            np.asarray(geometry.atomic_numbers),
            positions,
            charge=float(geometry.charge),
            uhf=geometry.unpaired_electrons,
        )
        calc.set("verbosity", 0)
        if field is not None:
            vector = np.ascontiguousarray(field, dtype=np.float64)
            calc.add("electric-field", self._ffi.cast("double*", vector.ctypes.data))
        return calc

    def _one(self, smiles: str) -> PropertyResult:
        geometry = embed_geometry(smiles, seed=self.seed)
        if geometry.unpaired_electrons:
            return PropertyResult({}, "", "open-shell molecules are not supported")
        missing = sorted({z for z in geometry.atomic_numbers if z not in AMU})
        if (self.infrared or self.raman) and missing:
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
        if self.infrared or self.raman:
            values.update(self._vibrational(geometry, positions, method))
        return PropertyResult(values, method)

    def _vibrational(
        self, geometry: Geometry, start: NDArray[np.float64], method: str
    ) -> dict[str, Any]:
        """IR and/or Raman bands at the GFN2-xTB minimum nearest the force-field geometry."""
        positions = self._relax(geometry, start)
        calc = self._calculator(geometry, positions)
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
        modes = normal_modes(hessian, geometry.atomic_numbers)
        out: dict[str, Any] = {}
        if self.infrared:
            peaks = modes.infrared(dipole_derivative)
            if peaks:
                out["infrared"] = {"unit": "cm-1", "peaks": peaks, "method": method}
        if self.raman:
            peaks = modes.raman(self._polarizability_derivative(geometry, positions))
            if peaks:
                out["raman"] = {"unit": "cm-1", "peaks": peaks, "method": method}
        return out

    def _gradient(
        self, geometry: Geometry, positions: NDArray[np.float64], field: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        res = self._calculator(geometry, positions, field).singlepoint()
        return np.asarray(res.get("gradient"), dtype=np.float64).ravel()

    def _polarizability_derivative(
        self, geometry: Geometry, positions: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """d alpha_ij / d R_k = -d2 g_k / dF_i dF_j by central differences in the field."""
        n3 = 3 * len(geometry.atomic_numbers)
        h = _FIELD_AU
        unit = np.eye(3) * h
        g0 = self._gradient(geometry, positions, np.zeros(3))
        out = np.zeros((3, 3, n3))
        for i in range(3):
            plus = self._gradient(geometry, positions, unit[i])
            minus = self._gradient(geometry, positions, -unit[i])
            out[i, i] = -(plus - 2 * g0 + minus) / h**2
            for j in range(i):
                pp = self._gradient(geometry, positions, unit[i] + unit[j])
                pm = self._gradient(geometry, positions, unit[i] - unit[j])
                mp = self._gradient(geometry, positions, unit[j] - unit[i])
                mm = self._gradient(geometry, positions, -unit[i] - unit[j])
                out[i, j] = out[j, i] = -(pp - pm - mp + mm) / (4 * h * h)
        return out

    def _relax(self, geometry: Geometry, start: NDArray[np.float64]) -> NDArray[np.float64]:
        """BFGS on Cartesian coordinates with a backtracking line search (deterministic)."""
        calc = self._calculator(geometry, start)

        def energy_gradient(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            calc.update(positions=x.reshape(-1, 3))
            res = calc.singlepoint()
            return float(res.get("energy")), np.asarray(res.get("gradient")).ravel()

        x = start.ravel().copy()
        energy, gradient = energy_gradient(x)
        inverse = np.eye(x.size)
        for _ in range(_RELAX_STEPS):
            if np.abs(gradient).max() < _RELAX_GRADIENT:
                break
            direction = -inverse @ gradient
            if direction @ gradient >= 0:  # not a descent direction: restart from steepest
                inverse = np.eye(x.size)
                direction = -gradient
            largest = np.abs(direction).max()
            if largest > _MAX_STEP_BOHR:
                direction *= _MAX_STEP_BOHR / largest
            step = 1.0
            while True:
                trial_energy, trial_gradient = energy_gradient(x + step * direction)
                if trial_energy <= energy + 1e-4 * step * (direction @ gradient) or step < 1e-3:
                    break
                step /= 2
            s, y = step * direction, trial_gradient - gradient
            sy = float(s @ y)
            if sy > 1e-12:
                rho = 1.0 / sy
                left = np.eye(x.size) - rho * np.outer(s, y)
                inverse = left @ inverse @ left.T + rho * np.outer(s, s)
            x, energy, gradient = x + s, trial_energy, trial_gradient
        return x.reshape(-1, 3)
