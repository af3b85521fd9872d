"""Build a manifest for an existing image set (for example the review's JPO images).

Images and reference molfiles are paired by file stem. A reference that does not read as a
valid graph, or carries a feature no identity policy is certified for, makes the case a
``no_reference_reason`` case with that reason instead of a silently dropped or mis-scored one.
An image is sized from its header only (:func:`~chemgauge.eval.images.read_image_header`):
one that is not an image, cannot be read, or declares more pixels than the limit stops the
import with an error naming it, before anything decodes it.
"""

from __future__ import annotations

import os
from pathlib import Path

from chemgauge.benchmarks.ocsr.manifest import (
    Case,
    Manifest,
    Reference,
    Transformation,
    read_reference_text,
)
from chemgauge.benchmarks.ocsr.manifest import write_manifest as _write
from chemgauge.chem import mol_to_canonical
from chemgauge.chem.molfile import read_molfile, reference_checks, unsupported_features
from chemgauge.errors import InputFileError
from chemgauge.eval.images import ImageLimits, read_image_header
from chemgauge.eval.provenance import sha256_file

__all__ = ["import_image_set"]

_IMAGE_SUFFIXES = (".png",)
_REFERENCE_SUFFIXES = (".mol", ".sdf")


def _listing(folder: str | Path) -> list[Path]:
    try:
        return list(Path(folder).iterdir())
    except NotADirectoryError:
        raise InputFileError("expected a folder, found a file", path=folder) from None
    except OSError as exc:
        raise InputFileError(f"cannot list folder ({exc.strerror})", path=folder) from None


def import_image_set(
    image_dir: str | Path,
    reference_dir: str | Path,
    manifest_path: str | Path,
    *,
    name: str,
    attribution: str,
    licence: str,
    image_limits: ImageLimits | None = None,
) -> Manifest:
    """Pair images with references by stem and write a manifest next to them."""
    images = sorted(p for p in _listing(image_dir) if p.suffix.lower() in _IMAGE_SUFFIXES)
    if not images:
        raise InputFileError("no PNG images found", path=image_dir)
    references = {
        p.stem: p for p in _listing(reference_dir) if p.suffix.lower() in _REFERENCE_SUFFIXES
    }
    root = Path(manifest_path).resolve().parent
    cases: list[Case] = []
    for image in images:
        header = read_image_header(image, image_limits)
        width, height = header.width, header.height
        reference: Reference | None = None
        reason: str | None = None
        ref_path = references.get(image.stem)
        if ref_path is None:
            reason = "no reference file"
        else:
            reading = read_molfile(read_reference_text(ref_path))
            if reading.mol is None:
                reason = f"reference is not a valid graph: {reading.reason}"
            elif unsupported := unsupported_features(reading.mol):
                reason = "reference has unsupported features: " + "; ".join(unsupported)
            else:
                reference = Reference(
                    molfile=os.path.relpath(ref_path.resolve(), root),
                    smiles=mol_to_canonical(reading.mol),
                    checks=reference_checks(reading.mol),
                )
        cases.append(
            Case(
                id=image.stem,
                image=os.path.relpath(image.resolve(), root),
                sha256=sha256_file(image),
                width=width,
                height=height,
                transformation=Transformation(kind="original"),
                attribution=attribution,
                licence=licence,
                reference=reference,
                no_reference_reason=reason,
            )
        )
    manifest = Manifest(name=name, cases=cases, root=root)
    _write(manifest, manifest_path)
    return manifest
