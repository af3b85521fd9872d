"""Ultraviolet-visible excitations from INDO/S configuration interaction, run by MOPAC.

INDO/S (Zerner's spectroscopic parametrization) with single-excitation CI is the classic
semi-empirical method for organic UV-vis spectra: it costs about 0.1 s a small molecule
where TD-DFT costs minutes, and orders bands correctly (benzene's allowed band near 183 nm
against hexatriene's near 256 nm). MOPAC 22 (``apt-get install mopac``) implements it. The
geometry is the same seeded force-field embedding the other providers use; the lowest ten
singlet excitations are reported as wavelength (nm) and oscillator strength, degenerate
states merged.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from rdkit import Chem

from chemgauge.chem.properties import Geometry, embed_geometry
from chemgauge.errors import MissingDependencyError
from chemgauge.eval.lifeline import set_parent_death_signal
from chemgauge.families.p2s.engine.properties import MoleculeProvider, PropertyResult

__all__ = ["MopacProvider", "parse_excitations"]

_VERSION = re.compile(r"MOPAC v?(\d[\w.]*)")
_ACTIVE = 10  # occupied and virtual orbitals in the CI each (at most)
_STATES = 10
# A stuck MOPAC is killed by the build's time limit; this only bounds a direct call.
_PROGRAM_TIMEOUT = 3600.0


def parse_excitations(text: str) -> list[tuple[float, float]]:
    """(wavelength nm, oscillator strength) of each excited state in a MOPAC CI output."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if "CI trans." in line), None)
    if start is None:
        return []
    out: list[tuple[float, float]] = []
    for line in lines[start + 2 :]:
        tokens = line.split()
        if not tokens:
            if out:
                break
            continue
        if not tokens[0].isdigit() or len(tokens) < 5:
            break
        out.append((float(tokens[3]), float(tokens[4])))
    return out


def _problem(text: str) -> str:
    """The first message of MOPAC's error box (e.g. missing element parameters)."""
    lines = [line.strip(" *") for line in text.splitlines()]
    for i, line in enumerate(lines):
        if line.startswith("Error and normal termination messages"):
            message = next((m for m in lines[i + 1 :] if m), "")
            if message:
                return message
    return "no excited states in the output"


def _valence_orbitals(atomic_number: int) -> int:
    return 1 if atomic_number <= 2 else 4


class MopacProvider(MoleculeProvider):
    """INDO/S-CIS excitation wavelengths and oscillator strengths through MOPAC."""

    name = "mopac"
    isolated = True
    failure_label = "MOPAC failed"

    def __init__(self, *, seed: int = 0xC0FFEE, program: str = "mopac") -> None:
        super().__init__()
        found = shutil.which(program)
        if found is None:
            raise MissingDependencyError(
                f"the mopac provider needs the MOPAC program ({program!r} not found): "
                "apt-get install mopac (make setup installs it)"
            )
        self.program = program
        self.executable = found
        self.seed = seed
        self.version = self._version()

    def arguments(self) -> dict[str, Any]:
        """Rebuilt from its settings in a worker."""
        return {"seed": self.seed, "program": self.program}

    @property
    def properties(self) -> tuple[str, ...]:
        """Ultraviolet-visible excitations only."""
        return ("ultraviolet_visible",)

    def describe(self) -> dict[str, Any]:
        """Method, MOPAC version, seed and the CI settings."""
        return {
            "name": self.name,
            "method": "INDO/S-CIS",
            "mopac": self.version,
            "seed": self.seed,
            "active_orbitals": _ACTIVE,
            "states": _STATES,
        }

    def _run(self, deck: str) -> str:
        with tempfile.TemporaryDirectory(prefix="chemgauge-mopac-") as tmp:
            (Path(tmp) / "job.mop").write_text(deck)
            subprocess.run(
                [self.executable, "job.mop"],
                cwd=tmp,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=_PROGRAM_TIMEOUT,
                preexec_fn=set_parent_death_signal,
                env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
                check=False,
            )
            out = Path(tmp) / "job.out"
            return out.read_text(errors="replace") if out.exists() else ""

    def _version(self) -> str:
        text = self._run("1SCF INDO\nversion check\n\nH 0 0 0\nH 0.74 0 0\n")
        match = _VERSION.search(text)
        if match is None:
            raise MissingDependencyError(f"{self.executable} did not run as MOPAC")
        return match.group(1)

    def _deck(self, geometry: Geometry) -> str:
        table = Chem.GetPeriodicTable()
        electrons = sum(table.GetNOuterElecs(z) for z in geometry.atomic_numbers)
        occupied = (electrons - geometry.charge) // 2
        orbitals = sum(_valence_orbitals(z) for z in geometry.atomic_numbers)
        active_occupied = min(_ACTIVE, occupied)
        active_virtual = min(_ACTIVE, orbitals - occupied)
        configurations = active_occupied * active_virtual + 1
        keywords = (
            f"INDO CIS C.I.=({active_occupied + active_virtual},{active_occupied}) "
            f"MAXCI={configurations} WRTCI={configurations} 1SCF GEO-OK "
            f"CHARGE={geometry.charge}"
        )
        atoms = [
            f"{table.GetElementSymbol(z)} {x:.6f} 0 {y:.6f} 0 {w:.6f} 0"
            for z, (x, y, w) in zip(geometry.atomic_numbers, geometry.positions, strict=True)
        ]
        return "\n".join([keywords, "chemgauge", "", *atoms]) + "\n"

    def _one(self, smiles: str) -> PropertyResult:
        geometry = embed_geometry(smiles, seed=self.seed)
        if geometry.unpaired_electrons:
            return PropertyResult({}, "", "open-shell molecules are not supported")
        text = self._run(self._deck(geometry))
        states = parse_excitations(text)
        if not states:
            return PropertyResult({}, "", f"MOPAC failed: {_problem(text)}"[:300])
        merged: dict[float, float] = {}
        for wavelength, strength in states[:_STATES]:
            key = round(wavelength, 1)
            merged[key] = merged.get(key, 0.0) + strength
        peaks = [
            {"position": position, "intensity": round(strength, 3)}
            for position, strength in sorted(merged.items(), reverse=True)
            if position > 0
        ]
        method = "INDO/S-CIS"
        return PropertyResult(
            {"ultraviolet_visible": {"unit": "nm", "peaks": peaks, "method": method}}, method
        )
