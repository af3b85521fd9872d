"""The versioned OCSR manifest: every image with its hash, provenance and reference (or why none).

An image either has a reference (a molfile, where collapsed abbreviations are superatom
S-groups, plus its canonical SMILES and the checks it passed) or an explicit
``no_reference_reason``; such images are reported qualitatively, never scored as exact.
Loading verifies every image hash and re-derives every reference's canonical SMILES, so a
silently changed file is an error naming the manifest, the case and the value. Every image
and molfile path must stay inside the manifest's folder
(:func:`~chemgauge.eval.paths.confined_path`): ``..``, absolute paths and symlinks that lead
outside are refused with an error naming the manifest, the line and the case.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from rdkit import Chem

from chemgauge.chem import mol_to_canonical
from chemgauge.chem.molfile import read_molfile
from chemgauge.errors import InputFileError
from chemgauge.eval.atomic import atomic_write_json
from chemgauge.eval.lines import read_document
from chemgauge.eval.paths import confined_path
from chemgauge.eval.provenance import sha256_file

__all__ = [
    "MANIFEST_VERSION",
    "Case",
    "ImageMetadata",
    "Manifest",
    "Reference",
    "Transformation",
    "load_manifest",
    "read_reference_text",
    "write_manifest",
]

MANIFEST_VERSION = 1


class Transformation(BaseModel):
    """How an image was made from its parent (``render`` for an original drawing)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    params: dict[str, Any] = Field(default_factory=dict)


class Reference(BaseModel):
    """An independently authored reference graph."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    molfile: str
    smiles: str
    checks: dict[str, Any] = Field(default_factory=dict)
    abbreviations: list[str] = Field(default_factory=list)


class ImageMetadata(BaseModel):
    """Metadata ``ocsr import`` found in an image: the chunk or segment types (stripped from
    every copy a recognizer receives) and the molecule they decode to, if any (a leak)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stripped: list[str]
    molecule: str | None = None


class Case(BaseModel):
    """One image of the benchmark."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    image: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    #: Declared by the image header; ``None`` when the header cannot be read (such an image
    #: is recorded by ``ocsr import`` and refused, ``not_run``, by the run).
    width: int | None = Field(gt=0)
    height: int | None = Field(gt=0)
    parent: str | None = None
    transformation: Transformation
    attribution: str
    licence: str
    reference: Reference | None = None
    no_reference_reason: str | None = None
    tags: list[str] = Field(default_factory=list)
    #: Set by ``ocsr import`` when the image carries metadata (never sent to a recognizer).
    image_metadata: ImageMetadata | None = None

    @model_validator(mode="after")
    def _reference_or_reason(self) -> Case:
        if (self.reference is None) == (self.no_reference_reason is None):
            raise ValueError("give exactly one of 'reference' and 'no_reference_reason'")
        return self


class Manifest(BaseModel):
    """A named, versioned list of cases; paths are relative to the manifest's folder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    manifest_version: int = MANIFEST_VERSION
    name: str
    description: str = ""
    cases: list[Case]
    root: Path = Field(default=Path("."), exclude=True)

    @model_validator(mode="after")
    def _unique_ids(self) -> Manifest:
        seen: set[str] = set()
        for case in self.cases:
            if case.id in seen:
                raise ValueError(f"duplicate case id {case.id!r}")
            seen.add(case.id)
        ids = {case.id for case in self.cases}
        for case in self.cases:
            if case.parent is not None and case.parent not in ids:
                raise ValueError(f"case {case.id!r}: parent {case.parent!r} is not in the manifest")
        return self

    def dump(self) -> dict[str, Any]:
        """The manifest as written (root excluded; an absent ``image_metadata`` is left out,
        so a manifest without metadata keeps the bytes and hash it always had)."""
        data = self.model_dump(mode="json", exclude={"root"})
        for case in data["cases"]:
            if case.get("image_metadata") is None:
                case.pop("image_metadata", None)
        return data

    @cached_property
    def by_id(self) -> dict[str, Case]:
        """Cases keyed by id."""
        return {case.id: case for case in self.cases}

    def image_path(self, case: Case) -> Path:
        """Absolute path of a case's image (confined to the root; symlinks resolved)."""
        return confined_path(self.root, case.image)

    def reference_mol(self, case: Case) -> Chem.Mol | None:
        """The reference graph read from its molfile (``None`` for a no-reference case)."""
        if case.reference is None:
            return None
        path = confined_path(self.root, case.reference.molfile)
        reading = read_molfile(read_reference_text(path))
        if reading.mol is None:
            raise InputFileError(
                f"case {case.id!r}: reference molfile is not a valid graph ({reading.reason})",
                path=path,
            )
        return reading.mol


def read_reference_text(path: Path) -> str:
    """A reference molfile's text, decoded the one way both ``ocsr import`` and the scoring
    run use (an undecodable byte, typically a Latin-1 name in the title line, becomes
    U+FFFD), so a manifest that import wrote is always readable by the run that scores it."""
    return read_document(path).decode("utf-8", errors="replace")


def load_manifest(path: str | Path, *, verify: bool = True) -> Manifest:
    """Read and validate a manifest; with ``verify`` check image hashes and references."""
    path = Path(path)
    raw = read_document(path)  # exact causes (missing, a folder, a symlink loop); BOM dropped
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputFileError(f"manifest is not valid JSON ({exc})", path=path) from None
    if not isinstance(data, dict):
        raise InputFileError("manifest must be a JSON object", path=path)
    version = data.get("manifest_version")
    if version != MANIFEST_VERSION:
        raise InputFileError(
            f"unsupported manifest_version (this chemgauge reads {MANIFEST_VERSION})",
            path=path,
            value=repr(version),
        )
    try:
        manifest = Manifest.model_validate({**data, "root": path.parent.resolve()})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InputFileError(
            f"invalid manifest at {where}: {first['msg']}",
            path=path,
            value=repr(first["input"])[:200],
        ) from None
    _check_paths(manifest, path, raw)
    if verify:
        verify_manifest(manifest, path)
    return manifest


def _line_of(raw: bytes, value: str, after: bytes) -> int | None:
    """1-based line of ``value`` (as JSON) in the manifest, from ``after`` on (best effort)."""
    needle = orjson.dumps(value)
    start = raw.find(after)
    at = raw.find(needle, max(start, 0))
    if at < 0:
        at = raw.find(needle)
    return None if at < 0 else raw.count(b"\n", 0, at) + 1


def _check_paths(manifest: Manifest, path: Path, raw: bytes) -> None:
    """Refuse any image or molfile path that could leave the manifest's folder."""
    for case in manifest.cases:
        fields = [("image", case.image)]
        if case.reference is not None:
            fields.append(("reference molfile", case.reference.molfile))
        for name, value in fields:
            try:
                confined_path(manifest.root, value)
            except InputFileError as exc:
                line = _line_of(raw, value, orjson.dumps(case.id))
                raise InputFileError(
                    f"case {case.id!r}: {name} {exc}", path=path, line=line
                ) from None


def verify_manifest(manifest: Manifest, path: Path) -> None:
    """Check every image hash and that each reference molfile gives its recorded SMILES."""
    for case in manifest.cases:
        try:
            actual = sha256_file(manifest.image_path(case))
            mol = manifest.reference_mol(case)
        except InputFileError as exc:  # name the manifest and the case, not only the file
            raise InputFileError(f"case {case.id!r}: {exc}", path=path) from None
        if actual != case.sha256:
            raise InputFileError(
                f"case {case.id!r}: image {case.image} changed (sha256 {actual})",
                path=path,
                value=case.sha256,
            )
        if mol is not None and case.reference is not None:
            smiles = mol_to_canonical(mol)
            if smiles != case.reference.smiles:
                raise InputFileError(
                    f"case {case.id!r}: reference molfile gives {smiles!r}, manifest says",
                    path=path,
                    value=case.reference.smiles,
                )


def write_manifest(manifest: Manifest, path: str | Path) -> Path:
    """Write a manifest atomically (sorted keys, stable bytes)."""
    return atomic_write_json(path, manifest.dump())
