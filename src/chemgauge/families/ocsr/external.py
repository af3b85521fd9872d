"""Build a manifest for an existing image set (for example the review's JPO images).

Images and reference molfiles are paired by file stem, and every reference is checked: it
must read and sanitize as a graph (its formula, counts, CIP labels and fragments are
recorded), and its superatom (SUP) groups become the case's abbreviation labels. A missing
reference, an invalid one, one with a feature no identity policy is certified for, and one
that fails the authored expectations given for it make the case a ``no_reference_reason``
case with that reason, each counted apart (:class:`ImportSummary`), never silently dropped or
mis-scored. An image is sized from its header only
(:func:`~chemgauge.eval.images.read_image_header`); one the image limits refuse (too many
pixels or bytes, not an image) is recorded like any other, and ``ocsr run`` records it
``not_run`` with the reason. Only a path that is no regular file stops the import.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chemgauge.chem import mol_to_canonical
from chemgauge.chem.molfile import (
    abbreviation_groups,
    read_molfile,
    reference_checks,
    unsupported_features,
)
from chemgauge.errors import ImageRefusedError, InputFileError
from chemgauge.eval.images import ImageLimits, read_image_header
from chemgauge.eval.provenance import sha256_file
from chemgauge.families.ocsr.manifest import (
    Case,
    ImageMetadata,
    Manifest,
    Reference,
    Transformation,
    read_reference_text,
)
from chemgauge.families.ocsr.manifest import write_manifest as _write
from chemgauge.families.ocsr.pixels import pixels_only

__all__ = ["ImportSummary", "ImportedSet", "build_import", "import_image_set"]

_IMAGE_SUFFIXES = (".png",)
_REFERENCE_SUFFIXES = (".mol", ".sdf")
_NO_LIMITS = ImageLimits(max_pixels=sys.maxsize, max_bytes=sys.maxsize)
#: Facts an expectation may state, and the type each must have.
EXPECTATION_FIELDS: Mapping[str, type] = {
    "formula": str,
    "heavy_atoms": int,
    "bonds": int,
    "fragments": int,
    "cip": list,
}


@dataclass
class ImportSummary:
    """What the import found, each outcome apart (stems, with the reason where there is one)."""

    images: int = 0
    with_reference: int = 0
    missing_reference: list[str] = field(default_factory=list)
    invalid_reference: dict[str, str] = field(default_factory=dict)
    unsupported_reference: dict[str, str] = field(default_factory=dict)
    failed_expectations: dict[str, str] = field(default_factory=dict)
    refused_images: dict[str, str] = field(default_factory=dict)
    references_without_image: list[str] = field(default_factory=list)
    metadata_stripped: dict[str, str] = field(default_factory=dict)
    metadata_molecule: dict[str, str] = field(default_factory=dict)
    expectations_checked: int = 0
    expectations_unchecked: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ImportedSet:
    """The written manifest and what the import found."""

    manifest: Manifest
    summary: ImportSummary


def _listing(folder: str | Path) -> list[Path]:
    try:
        return list(Path(folder).iterdir())
    except NotADirectoryError:
        raise InputFileError("expected a folder, found a file", path=folder) from None
    except OSError as exc:
        raise InputFileError(f"cannot list folder ({exc.strerror})", path=folder) from None


def _image_facts(image: Path, limits: ImageLimits | None) -> tuple[int | None, int | None, str]:
    """Declared width and height (``None`` when unreadable) and why the limits refuse the
    image ("" when they do not); a path that is no regular file stops the import."""
    try:
        header = read_image_header(image, limits)
    except ImageRefusedError as exc:
        if not image.is_file():
            raise
        try:
            declared = read_image_header(image, _NO_LIMITS)
        except ImageRefusedError:
            return None, None, exc.reason
        return declared.width, declared.height, exc.reason
    return header.width, header.height, ""


def _metadata(image: Path, summary: ImportSummary) -> ImageMetadata | None:
    """The metadata an image carries (recorded; stripped from every copy a recognizer gets)
    and the molecule it decodes to (a leak, counted apart); ``None`` when it carries none."""
    try:
        copy = pixels_only(image.read_bytes(), image.suffix)
    except ImageRefusedError as exc:
        summary.refused_images[image.stem] = exc.reason
        return None
    if not copy.stripped:
        return None
    kinds = sorted(set(copy.stripped))
    summary.metadata_stripped[image.stem] = ", ".join(kinds)
    if copy.molecule is not None:
        summary.metadata_molecule[image.stem] = copy.molecule
    return ImageMetadata(stripped=kinds, molecule=copy.molecule)


def read_expectations(path: str | Path) -> dict[str, dict[str, Any]]:
    """Authored expectations: a JSON object of image stem -> {formula, heavy_atoms, bonds,
    fragments, cip}, any subset; a bad field is an error naming the file and the stem."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except FileNotFoundError:
        raise InputFileError("expectations file not found", path=path) from None
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputFileError(f"cannot read expectations ({exc})", path=path) from None
    if not isinstance(data, dict):
        raise InputFileError(
            "expectations must be a JSON object of image stem -> expected facts", path=path
        )
    for stem, facts in data.items():
        if not isinstance(facts, dict):
            raise InputFileError(f"expectations for {stem!r} must be an object", path=path)
        for name, value in facts.items():
            kind = EXPECTATION_FIELDS.get(name)
            if kind is None:
                known = ", ".join(EXPECTATION_FIELDS)
                raise InputFileError(
                    f"expectations for {stem!r}: unknown field {name!r} (known: {known})",
                    path=path,
                )
            if kind is list and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                raise InputFileError(
                    f"expectations for {stem!r}: cip must be a list of labels", path=path
                )
            if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
                raise InputFileError(
                    f"expectations for {stem!r}: {name} must be an integer", path=path
                )
            if kind is str and not isinstance(value, str):
                raise InputFileError(
                    f"expectations for {stem!r}: {name} must be a string", path=path
                )
    return data


def expectation_failures(expected: Mapping[str, Any], checks: Mapping[str, Any]) -> list[str]:
    """How the reference's recorded facts differ from the authored expectations."""
    failures: list[str] = []
    for name, value in expected.items():
        if name == "cip":
            actual: Any = sorted(str(label).rsplit(":", 1)[1] for label in checks["cip_labels"])
            value = sorted(value)
        else:
            actual = checks[name]
        if actual != value:
            failures.append(f"{name} expected {value!r}, molfile gives {actual!r}")
    return failures


def _reference(
    ref_path: Path, root: Path, expected: Mapping[str, Any] | None, summary: ImportSummary
) -> tuple[Reference | None, str]:
    """The checked reference of one image, or why there is none (counted in ``summary``)."""
    stem = ref_path.stem
    reading = read_molfile(read_reference_text(ref_path))
    if reading.mol is None:
        summary.invalid_reference[stem] = reading.reason
        return None, f"reference is not a valid graph: {reading.reason}"
    unsupported = unsupported_features(reading.mol)
    if unsupported:
        summary.unsupported_reference[stem] = "; ".join(unsupported)
        return None, "reference has unsupported features: " + "; ".join(unsupported)
    checks = reference_checks(reading.mol)
    if expected is not None:
        summary.expectations_checked += 1
        failures = expectation_failures(expected, checks)
        if failures:
            summary.failed_expectations[stem] = "; ".join(failures)
            return None, "reference fails its authored expectations: " + "; ".join(failures)
        checks["expectations"] = dict(expected)
    reference = Reference(
        molfile=os.path.relpath(ref_path.resolve(), root),
        smiles=mol_to_canonical(reading.mol),
        checks=checks,
        abbreviations=[group.label for group in abbreviation_groups(reading.mol)],
    )
    return reference, ""


def build_import(
    image_dir: str | Path,
    reference_dir: str | Path,
    manifest_path: str | Path,
    *,
    name: str,
    attribution: str,
    licence: str,
    image_limits: ImageLimits | None = None,
    expectations: str | Path | None = None,
) -> ImportedSet:
    """Pair images with references by stem, check each, and write a manifest next to them."""
    images = sorted(p for p in _listing(image_dir) if p.suffix.lower() in _IMAGE_SUFFIXES)
    if not images:
        raise InputFileError("no PNG images found", path=image_dir)
    references = {
        p.stem: p for p in _listing(reference_dir) if p.suffix.lower() in _REFERENCE_SUFFIXES
    }
    expected = {} if expectations is None else read_expectations(expectations)
    stems = {image.stem for image in images}
    for stem in expected:
        if stem not in stems:
            raise InputFileError(
                f"expectations for {stem!r}: no image with that stem", path=expectations
            )
    root = Path(manifest_path).resolve().parent
    summary = ImportSummary(images=len(images))
    summary.references_without_image = sorted(set(references) - stems)
    cases: list[Case] = []
    for image in images:
        width, height, refused = _image_facts(image, image_limits)
        if refused:
            summary.refused_images[image.stem] = refused
        reference: Reference | None = None
        ref_path = references.get(image.stem)
        if ref_path is None:
            summary.missing_reference.append(image.stem)
            reason = "no reference file"
        else:
            reference, reason = _reference(ref_path, root, expected.get(image.stem), summary)
        stem = image.stem  # expectations for a case with no usable reference went unchecked
        if reference is None and stem in expected and stem not in summary.failed_expectations:
            summary.expectations_unchecked.append(stem)
        summary.with_reference += reference is not None
        metadata = None if refused else _metadata(image, summary)
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
                no_reference_reason=None if reference is not None else reason,
                image_metadata=metadata,
            )
        )
    manifest = Manifest(name=name, cases=cases, root=root)
    _write(manifest, manifest_path)
    return ImportedSet(manifest, summary)


def import_image_set(
    image_dir: str | Path, reference_dir: str | Path, manifest_path: str | Path, **options: Any
) -> Manifest:
    """The manifest :func:`build_import` writes (without its summary); same options."""
    return build_import(image_dir, reference_dir, manifest_path, **options).manifest
