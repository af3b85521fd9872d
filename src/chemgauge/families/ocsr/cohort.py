"""The default synthetic OCSR cohort: original RDKit drawings plus deterministic variants.

Every reference below was authored by hand (SMILES and the expected formula, heavy-atom and
bond counts, fragments and CIP labels) independently of any recognizer output; building the
cohort recomputes those facts from the written molfile and stops on any disagreement. The
readable resolution and contrast variants keep their parent's exact reference; the crop and
the 11x5-pixel image have no unique complete graph and are reported qualitatively.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.chem import mol_to_canonical, parse_smiles
from chemgauge.chem.molfile import (
    add_abbreviation,
    mol_to_molfile,
    read_molfile,
    reference_checks,
)
from chemgauge.chem.render import embedded_molecule, png_size, render_png, transform_png
from chemgauge.errors import ChemgaugeError, InputFileError
from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.eval.provenance import sha256_bytes
from chemgauge.families.ocsr.manifest import (
    Case,
    Manifest,
    Reference,
    Transformation,
    write_manifest,
)

__all__ = ["COHORT", "CohortEntry", "Variant", "build_cohort"]

ATTRIBUTION = "chemgauge authors; original drawing rendered with RDKit"
LICENCE = "MIT OR Apache-2.0"


@dataclass(frozen=True)
class Variant:
    """A pixel variant of a parent drawing; ``no_reference_reason`` when it loses the graph."""

    suffix: str
    kind: str
    params: dict[str, Any]
    no_reference_reason: str | None = None


@dataclass(frozen=True)
class CohortEntry:
    """One authored reference with the facts it must satisfy."""

    id: str
    smiles: str
    formula: str
    heavy_atoms: int
    bonds: int
    fragments: int
    cip: tuple[str, ...] = ()
    abbreviation: tuple[str, tuple[int, ...]] | None = None
    tags: tuple[str, ...] = ()
    variants: tuple[Variant, ...] = field(default_factory=tuple)


LOW_RES = Variant("lowres", "scale", {"factor": 0.5})
LOW_CONTRAST = Variant("lowcontrast", "contrast", {"factor": 0.25})

COHORT: tuple[CohortEntry, ...] = (
    CohortEntry(
        "ethanol",
        "CCO",
        "C2H6O",
        3,
        2,
        1,
        tags=("control",),
        variants=(
            Variant(
                "11x5",
                "resize",
                {"width": 11, "height": 5},
                "11x5 pixels: the drawing is not readable, no unique graph",
            ),
        ),
    ),
    CohortEntry(
        "gly_l_ala",
        "NCC(=O)N[C@@H](C)C(=O)O",
        "C5H10N2O3",
        10,
        9,
        1,
        cip=("S",),
        tags=("peptide", "tetrahedral stereo"),
        variants=(
            LOW_RES,
            LOW_CONTRAST,
            Variant(
                "crop",
                "crop",
                {"box": [0.0, 0.0, 0.55, 1.0]},
                "cropped: part of the molecule is outside the image",
            ),
        ),
    ),
    CohortEntry(
        "cyclo_gly4",
        "O=C1CNC(=O)CNC(=O)CNC(=O)CN1",
        "C8H12N4O4",
        16,
        16,
        1,
        tags=("peptide", "macrocycle"),
        variants=(LOW_RES, LOW_CONTRAST),
    ),
    CohortEntry(
        "boc_l_ala_sodium",
        "CC(C)(C)OC(=O)N[C@@H](C)C(=O)[O-].[Na+]",
        "C8H14NNaO4",
        14,
        12,
        2,
        cip=("S",),
        abbreviation=("Boc", (0, 1, 2, 3, 4, 5, 6)),
        tags=("abbreviation", "salt", "tetrahedral stereo"),
        variants=(LOW_RES,),
    ),
    CohortEntry("aspirin", "CC(=O)Oc1ccccc1C(=O)O", "C9H8O4", 13, 13, 1, tags=("drug-like",)),
    CohortEntry(
        "caffeine", "Cn1cnc2c1c(=O)n(C)c(=O)n2C", "C8H10N4O2", 14, 15, 1, tags=("drug-like",)
    ),
    CohortEntry(
        "ibuprofen", "CC(C)Cc1ccc(cc1)C(C)C(=O)O", "C13H18O2", 15, 15, 1, tags=("drug-like",)
    ),
    CohortEntry(
        "e_cinnamic_acid",
        "O=C(O)/C=C/c1ccccc1",
        "C9H8O2",
        11,
        11,
        1,
        cip=("E",),
        tags=("drug-like", "double-bond stereo"),
    ),
)


def _check(entry: CohortEntry, checks: dict[str, Any]) -> None:
    expected = {
        "formula": entry.formula,
        "heavy_atoms": entry.heavy_atoms,
        "bonds": entry.bonds,
        "fragments": entry.fragments,
        "cip": sorted(entry.cip),
    }
    actual = {**{k: checks[k] for k in expected if k != "cip"}}
    actual["cip"] = sorted(label.rsplit(":", 1)[1] for label in checks["cip_labels"])
    if actual != expected:
        raise ChemgaugeError(
            f"reference {entry.id!r} fails its authored checks: expected {expected}, got {actual}"
        )


def build_cohort(
    out_dir: str | Path,
    entries: Sequence[CohortEntry] = COHORT,
    *,
    width: int = 400,
    height: int = 300,
    name: str = "chemgauge-ocsr-synthetic-v1",
) -> Manifest:
    """Render the cohort into ``out_dir`` (images/, references/, manifest.json)."""
    out = Path(out_dir)
    cases: list[Case] = []
    files: dict[Path, bytes] = {}  # written only once the manifest is known to be safe
    for entry in entries:
        mol = parse_smiles(entry.smiles)
        labels: list[str] = []
        if entry.abbreviation is not None:
            label, members = entry.abbreviation
            mol = add_abbreviation(mol, label, members)
            labels.append(label)
        molfile = mol_to_molfile(mol)
        reading = read_molfile(molfile)
        if reading.mol is None:
            raise ChemgaugeError(f"reference {entry.id!r} does not read back: {reading.reason}")
        smiles = mol_to_canonical(reading.mol)
        if smiles != mol_to_canonical(parse_smiles(entry.smiles)):
            raise ChemgaugeError(f"reference {entry.id!r} changed on the molfile round trip")
        checks = reference_checks(reading.mol)
        _check(entry, checks)
        reference = Reference(
            molfile=f"references/{entry.id}.mol",
            smiles=smiles,
            checks=checks,
            abbreviations=labels,
        )
        files[out / reference.molfile] = molfile.encode()
        png = render_png(mol, width, height)
        if embedded_molecule(png) is not None:
            raise ChemgaugeError(f"image for {entry.id!r} embeds its molecule")
        cases.append(
            _case(
                files,
                out,
                entry.id,
                png,
                None,
                Transformation(
                    kind="render",
                    params={"width": width, "height": height, "drawer": "RDKit MolDraw2DCairo"},
                ),
                reference,
                None,
                entry.tags,
            )
        )
        for variant in entry.variants:
            data = transform_png(png, variant.kind, variant.params)
            keep = reference if variant.no_reference_reason is None else None
            cases.append(
                _case(
                    files,
                    out,
                    f"{entry.id}_{variant.suffix}",
                    data,
                    entry.id,
                    Transformation(kind=variant.kind, params=variant.params),
                    keep,
                    variant.no_reference_reason,
                    entry.tags,
                )
            )
    manifest = Manifest(
        name=name,
        description=(
            "Original synthetic drawings rendered by chemgauge with RDKit (no embedded "
            "molecule metadata) and deterministic resolution, contrast and crop variants. "
            "Results on these images do not establish accuracy on real scans."
        ),
        cases=cases,
        root=out.resolve(),
    )
    _refuse_edited_manifest(out / "manifest.json", manifest)
    for path, data in files.items():
        atomic_write_bytes(path, data)
    write_manifest(manifest, out / "manifest.json")
    return manifest


def _refuse_edited_manifest(path: Path, manifest: Manifest) -> None:
    """Refuse to replace a manifest that differs from the one this render writes (someone
    edited it, or it belongs to another cohort); an identical one is rewritten as it is."""
    if not path.exists():
        return
    try:
        existing = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        existing = None
    if existing != manifest.dump():
        raise InputFileError(
            "a manifest that differs from the one this render writes is already here; "
            "nothing was written (move it away or render into another --out)",
            path=path,
        )


def _case(
    files: dict[Path, bytes],
    out: Path,
    case_id: str,
    data: bytes,
    parent: str | None,
    transformation: Transformation,
    reference: Reference | None,
    no_reference_reason: str | None,
    tags: Sequence[str],
) -> Case:
    relative = f"images/{case_id}.png"
    files[out / relative] = data
    width, height = png_size(data)
    return Case(
        id=case_id,
        image=relative,
        sha256=sha256_bytes(data),
        width=width,
        height=height,
        parent=parent,
        transformation=transformation,
        attribution=ATTRIBUTION,
        licence=LICENCE,
        reference=reference,
        no_reference_reason=no_reference_reason,
        tags=list(tags),
    )
