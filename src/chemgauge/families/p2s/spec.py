"""The p2s data contract: property directories, views, task keys and property value formats.

Standard library only: loading and scoring must run with a bare Python, as the benchmark
promises its users, so this module and everything it imports stay free of third-party code.

Property value formats (one JSON object per property, under the task's ``properties``):

* ``dipole``: ``{"value": 1.85, "unit": "D"}`` (Euclidean norm of the dipole moment)
* ``gap``: ``{"value": 7.4, "unit": "eV"}`` (HOMO-LUMO gap)
* ``infrared`` / ``raman``: ``{"unit": "cm-1", "peaks": [{"position": 1715.0,
  "intensity": 1.0}, ...]}``; intensities are non-negative, any consistent scale
* ``ultraviolet_visible``: ``{"unit": "nm", "peaks": [{"position": 254.0, "intensity":
  0.12}, ...]}`` (excitation wavelength and oscillator strength)
* ``proton_nmr_peaks`` / ``carbon_nmr_peaks``: ``{"unit": "ppm", "peaks": [{"shift": 7.26},
  ...]}``
* ``proton_nmr_integration``: peaks also carry ``"integration"`` (number of protons, > 0)
* ``carbon_nmr_degeneracy``: peaks also carry ``"degeneracy"`` (integer >= 1)
* ``proton_nmr_atom`` / ``carbon_nmr_atom``: peaks also carry ``"atoms"``, a non-empty list
  of 0-based atom indices as the property source supplied them (chemgauge's ``nmr`` provider:
  positions in the completed SMILES; a proton peak lists the heavy atoms carrying its protons)

Any value may add ``"method"`` (a string such as ``"GFN2-xTB//MMFF94"``); other keys are errors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "BUNDLES",
    "CONDITIONS",
    "FORBIDDEN_TASK_KEYS",
    "PROPERTY_DIRECTORIES",
    "PROPERTY_KINDS",
    "TASK_KEYS",
    "components_of",
    "validate_property_value",
]

CONDITIONS: tuple[str, ...] = ("correct", "shuffled", "counterfactual")

# Single properties: name -> (kind, unit, one-line description).
PROPERTY_KINDS: dict[str, tuple[str, str, str]] = {
    "dipole": ("scalar", "D", "Dipole moment, Euclidean norm"),
    "gap": ("scalar", "eV", "Gap between the highest occupied and lowest unoccupied orbitals"),
    "infrared": ("spectrum", "cm-1", "Infrared spectrum"),
    "raman": ("spectrum", "cm-1", "Raman spectrum"),
    "ultraviolet_visible": ("spectrum", "nm", "Ultraviolet-visible excitations"),
    "proton_nmr_peaks": ("nmr", "ppm", "Proton NMR, peaks only"),
    "proton_nmr_integration": ("nmr_integration", "ppm", "Proton NMR, peaks with integration"),
    "proton_nmr_atom": ("nmr_atom", "ppm", "Proton NMR, atom-wise"),
    "carbon_nmr_peaks": ("nmr", "ppm", "Carbon NMR, peaks only"),
    "carbon_nmr_degeneracy": ("nmr_degeneracy", "ppm", "Carbon NMR, peaks with degeneracy"),
    "carbon_nmr_atom": ("nmr_atom", "ppm", "Carbon NMR, atom-wise"),
}

BUNDLES: dict[str, tuple[str, ...]] = {
    "electronic": ("dipole", "gap", "ultraviolet_visible"),
    "magnetic_resonance": ("proton_nmr_integration", "carbon_nmr_degeneracy"),
    "vibrational": ("infrared", "raman"),
    "all_properties": (
        "dipole",
        "gap",
        "infrared",
        "raman",
        "ultraviolet_visible",
        "proton_nmr_integration",
        "carbon_nmr_degeneracy",
    ),
}

# The 15 directories, in the order the benchmark lists them.
PROPERTY_DIRECTORIES: tuple[str, ...] = (*PROPERTY_KINDS, *BUNDLES)

TASK_KEYS: frozenset[str] = frozenset(
    {"record_id", "masked_smiles", "mask", "properties", "candidate_completed_smiles"}
)
# Named only to give a sharper message; any key outside TASK_KEYS is rejected anyway.
FORBIDDEN_TASK_KEYS: frozenset[str] = frozenset(
    {"label", "answer", "target", "selected_candidate_index", "source_smiles", "completed_smiles"}
)

_PEAK_EXTRA = {
    "nmr": frozenset(),
    "nmr_integration": frozenset({"integration"}),
    "nmr_degeneracy": frozenset({"degeneracy"}),
    "nmr_atom": frozenset({"atoms"}),
}


def components_of(directory: str) -> tuple[str, ...]:
    """The single properties a directory's tasks carry (itself, or a bundle's members)."""
    if directory in PROPERTY_KINDS:
        return (directory,)
    if directory in BUNDLES:
        return BUNDLES[directory]
    raise KeyError(directory)


def _number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _check_keys(obj: Mapping[str, Any], required: set[str], where: str) -> str | None:
    missing = sorted(required - set(obj))
    if missing:
        return f"{where}: missing {', '.join(missing)}"
    extra = sorted(set(obj) - required - {"method"})
    if extra:
        return f"{where}: unexpected key {', '.join(extra)}"
    if "method" in obj and not isinstance(obj["method"], str):
        return f"{where}: method must be a string"
    return None


def _check_peak(kind: str, peak: Any, where: str) -> str | None:
    if not isinstance(peak, dict):
        return f"{where}: a peak must be an object"
    if kind == "spectrum":
        if set(peak) != {"position", "intensity"}:
            return f"{where}: a peak needs exactly position and intensity"
        if not _number(peak["position"]) or peak["position"] <= 0:
            return f"{where}: position must be a positive number"
        if not _number(peak["intensity"]) or peak["intensity"] < 0:
            return f"{where}: intensity must be a non-negative number"
        return None
    expected = {"shift"} | _PEAK_EXTRA[kind]
    if set(peak) != expected:
        return f"{where}: a peak needs exactly {', '.join(sorted(expected))}"
    if not _number(peak["shift"]):
        return f"{where}: shift must be a number"
    if "integration" in peak and (not _number(peak["integration"]) or peak["integration"] <= 0):
        return f"{where}: integration must be a positive number"
    if "degeneracy" in peak and (
        not isinstance(peak["degeneracy"], int)
        or isinstance(peak["degeneracy"], bool)
        or peak["degeneracy"] < 1
    ):
        return f"{where}: degeneracy must be an integer >= 1"
    if "atoms" in peak:
        atoms = peak["atoms"]
        if (
            not isinstance(atoms, list)
            or not atoms
            or any(not isinstance(a, int) or isinstance(a, bool) or a < 0 for a in atoms)
        ):
            return f"{where}: atoms must be a non-empty list of atom indices"
    return None


def validate_property_value(name: str, value: Any) -> str | None:
    """Why ``value`` is not a valid value of property ``name``, or ``None`` if it is."""
    if name not in PROPERTY_KINDS:
        return f"unknown property {name!r}"
    kind, unit, _ = PROPERTY_KINDS[name]
    if not isinstance(value, dict):
        return f"{name}: value must be an object"
    required = {"value", "unit"} if kind == "scalar" else {"unit", "peaks"}
    problem = _check_keys(value, required, name)
    if problem:
        return problem
    if value["unit"] != unit:
        return f"{name}: unit must be {unit!r}, got {value['unit']!r}"
    if kind == "scalar":
        return None if _number(value["value"]) else f"{name}: value must be a finite number"
    peaks = value["peaks"]
    if not isinstance(peaks, list) or not peaks:
        return f"{name}: peaks must be a non-empty list"
    for i, peak in enumerate(peaks):
        problem = _check_peak(kind, peak, f"{name}: peak {i}")
        if problem:
            return problem
    return None
