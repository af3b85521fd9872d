"""Proton and carbon NMR from GIAO shieldings (PySCF), grouped by RDKit symmetry classes.

Shieldings are GIAO-HF/6-31G (STO-3G on atoms past zinc, where PySCF has no 6-31G) on the
seeded force-field geometry the other providers use,
referenced to tetramethylsilane computed the same way (shift = sigma_TMS - sigma). Atoms the
molecular graph makes equivalent (RDKit canonical ranks without tie breaking, hydrogens
explicit) are averaged into one peak, as fast rotation and exchange do in solution: that
gives the degeneracy of a carbon peak, the integration of a proton peak (its number of
protons) and the atom-wise assignment. No maintained empirical predictor installs from PyPI
without torch, so the shifts come from quantum chemistry: slower (seconds to a minute a
molecule, so a provider ceiling of 16 heavy atoms) but a real calculation.

Atom indices in ``*_nmr_atom`` are 0-based positions in the completed SMILES as written in
the task (hydrogens are listed under the heavy atom that carries them).
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections import defaultdict
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rdkit import Chem

from chemgauge.chem.properties import Geometry, embed_geometry
from chemgauge.chem.smiles import parse_smiles
from chemgauge.errors import ChemgaugeError, MissingDependencyError
from chemgauge.families.p2s.engine.properties import MoleculeProvider, PropertyResult

__all__ = ["NMR_PROPERTIES", "NmrProvider", "load_pyscf"]

NMR_PROPERTIES = (
    "proton_nmr_peaks",
    "proton_nmr_integration",
    "proton_nmr_atom",
    "carbon_nmr_peaks",
    "carbon_nmr_degeneracy",
    "carbon_nmr_atom",
)
_BASIS = "6-31g"
# PySCF's 6-31G stops at zinc: bromine and iodine get STO-3G (the same for every candidate).
_HEAVY_BASIS = "sto-3g"
_METHOD = "GIAO-HF/6-31G"
_REFERENCE = "C[Si](C)(C)C"
_DIGITS = {1: 2, 6: 1}


def load_pyscf() -> tuple[Any, Any, Any]:
    """``pyscf.gto``, ``pyscf.scf`` and the GIAO module, or say exactly what to install."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        gto = importlib.import_module("pyscf.gto")
        scf = importlib.import_module("pyscf.scf")
        with warnings.catch_warnings():  # the properties package warns about other modules
            warnings.simplefilter("ignore")
            giao = importlib.import_module("pyscf.prop.nmr.rhf")
    except ImportError:
        raise MissingDependencyError(
            "the nmr property provider needs PySCF and its properties package: "
            "pip install chemgauge[nmr]"
        ) from None
    return gto, scf, giao


def _induced_potential(mf: Any) -> Callable[[NDArray[Any]], NDArray[Any]]:
    """The CPHF induced potential for any number of trial vectors.

    The properties package's own version reshapes to exactly three vectors, which PySCF 2.14's
    Krylov solver does not always pass (it drops converged ones), so it fails on some
    molecules (acetone); the algebra here is the same, vector by vector.
    """
    mo_coeff, mo_occ = mf.mo_coeff, mf.mo_occ
    response = mf.gen_response(singlet=True, hermi=2)
    occupied = mo_coeff[:, mo_occ > 0]
    nmo, nocc = mo_coeff.shape[1], occupied.shape[1]

    def vind(mo1: NDArray[Any]) -> NDArray[Any]:
        vectors = mo1.reshape(-1, nmo, nocc)
        dm1 = np.asarray([mo_coeff @ (x * 2) @ occupied.conj().T for x in vectors])
        dm1 = dm1 - dm1.conj().transpose(0, 2, 1)
        v1 = np.einsum("xpq,pi,qj->xij", response(dm1), mo_coeff.conj(), occupied)
        return np.asarray(v1).ravel()

    return vind


class NmrProvider(MoleculeProvider):
    """GIAO-HF proton and carbon shifts with symmetry-derived degeneracy and assignment."""

    name = "nmr"
    isolated = True
    failure_label = "PySCF failed"
    max_heavy_atoms = 16

    def __init__(self, *, seed: int = 0xC0FFEE) -> None:
        super().__init__()
        self._gto, self._scf, self._giao = load_pyscf()
        self.seed = seed
        self._reference: dict[int, float] | None = None
        try:
            self.pyscf_version = version("pyscf")
        except PackageNotFoundError:  # pragma: no cover - imported but not installed as a dist
            self.pyscf_version = "unknown"

    def arguments(self) -> dict[str, Any]:
        """Rebuilt from its seed in a worker (PySCF modules do not travel)."""
        return {"seed": self.seed}

    @property
    def properties(self) -> tuple[str, ...]:
        """The six proton and carbon NMR representations."""
        return NMR_PROPERTIES

    def describe(self) -> dict[str, Any]:
        """Method, PySCF version, reference and seed."""
        return {
            "name": self.name,
            "method": _METHOD,
            "basis_beyond_zinc": _HEAVY_BASIS.upper(),
            "pyscf": self.pyscf_version,
            "reference": "TMS, same method and geometry protocol",
            "seed": self.seed,
        }

    def _shieldings(self, geometry: Geometry) -> NDArray[np.float64]:
        """Isotropic shielding (ppm) of every atom."""
        table = Chem.GetPeriodicTable()
        mol = self._gto.M(
            atom=[
                (table.GetElementSymbol(z), position)
                for z, position in zip(geometry.atomic_numbers, geometry.positions, strict=True)
            ],
            basis={
                table.GetElementSymbol(z): _BASIS if z <= 30 else _HEAVY_BASIS
                for z in set(geometry.atomic_numbers)
            },
            charge=geometry.charge,
            verbose=0,
        )
        mf = self._scf.RHF(mol)
        mf.conv_tol = 1e-10
        mf.kernel()
        if not mf.converged:
            raise ChemgaugeError("SCF did not converge")
        nmr = self._giao.NMR(mf)
        nmr.cphf = _induced_potential(mf)
        tensors = np.asarray(nmr.kernel())
        return np.asarray(np.trace(tensors, axis1=1, axis2=2) / 3, dtype=np.float64)

    def reference(self) -> dict[int, float]:
        """Mean proton and carbon shielding of TMS (computed once per process)."""
        if self._reference is None:
            geometry = embed_geometry(_REFERENCE, seed=self.seed)
            sigma = self._shieldings(geometry)
            numbers = np.asarray(geometry.atomic_numbers)
            self._reference = {z: float(sigma[numbers == z].mean()) for z in (1, 6)}
        return self._reference

    def _one(self, smiles: str) -> PropertyResult:
        mol = Chem.AddHs(parse_smiles(smiles))
        geometry = embed_geometry(smiles, seed=self.seed)
        if geometry.unpaired_electrons:
            return PropertyResult({}, "", "open-shell molecules are not supported")
        if tuple(a.GetAtomicNum() for a in mol.GetAtoms()) != geometry.atomic_numbers:
            return PropertyResult({}, "", "geometry atoms do not match the molecule")
        reference = self.reference()
        sigma = self._shieldings(geometry)
        ranks = list(Chem.CanonicalRankAtoms(mol, breakTies=False))
        values: dict[str, Any] = {}
        for z, prefix in ((1, "proton"), (6, "carbon")):
            peaks = self._peaks(mol, ranks, sigma, z, reference[z])
            if not peaks:
                continue
            shift = [{"shift": s} for s, _, _ in peaks]
            values[f"{prefix}_nmr_peaks"] = {"unit": "ppm", "peaks": shift}
            counted = "integration" if z == 1 else "degeneracy"
            values[f"{prefix}_nmr_{'integration' if z == 1 else 'degeneracy'}"] = {
                "unit": "ppm",
                "peaks": [{"shift": s, counted: n} for s, n, _ in peaks],
            }
            values[f"{prefix}_nmr_atom"] = {
                "unit": "ppm",
                "peaks": [{"shift": s, "atoms": atoms} for s, _, atoms in peaks],
            }
        for value in values.values():
            value["method"] = _METHOD
        return PropertyResult(values, _METHOD)

    @staticmethod
    def _peaks(
        mol: Chem.Mol, ranks: list[int], sigma: NDArray[np.float64], z: int, reference: float
    ) -> list[tuple[float, int, list[int]]]:
        """(shift, atom count, assigned atom indices) per symmetry class, highest shift first."""
        classes: dict[int, list[int]] = defaultdict(list)
        for atom in mol.GetAtoms():
            if atom.GetAtomicNum() == z:
                classes[ranks[atom.GetIdx()]].append(atom.GetIdx())
        out = []
        for members in classes.values():
            shift = round(reference - float(np.mean(sigma[members])), _DIGITS[z])
            if z == 1:
                carriers = {mol.GetAtomWithIdx(i).GetNeighbors()[0].GetIdx() for i in members}
                atoms = sorted(carriers)
            else:
                atoms = sorted(members)
            out.append((shift, len(members), atoms))
        return sorted(out, key=lambda peak: (-peak[0], peak[2]))
