"""Hashes and run provenance: canonical JSON, file digests, source-tree and row hashes.

Every hash scheme is versioned so a change in what is hashed is detectable on its own.
"""

from __future__ import annotations

import functools
import hashlib
import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

import chemgauge
from chemgauge.errors import InputFileError

__all__ = [
    "HASH_SCHEME_VERSION",
    "RowsDigest",
    "RunProvenance",
    "canonical_json",
    "reproducibility_sha256",
    "run_provenance",
    "sha256_bytes",
    "sha256_file",
    "sha256_json",
    "source_tree_sha256",
    "strip_fields",
]

HASH_SCHEME_VERSION = 1
_ROWS_DOMAIN = b"chemgauge-rows-v1\n"


def canonical_json(obj: Any) -> bytes:
    """Compact JSON with sorted keys: the only serialization chemgauge ever hashes."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_json(obj: Any) -> str:
    """Hex SHA-256 of an object's canonical JSON."""
    return sha256_bytes(canonical_json(obj))


def sha256_file(path: str | Path, *, chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, streamed; a missing file is an error naming it."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while block := handle.read(chunk_size):
                digest.update(block)
    except OSError as exc:
        raise InputFileError(f"cannot read file ({exc.strerror})", path=path) from exc
    return digest.hexdigest()


@functools.cache
def source_tree_sha256() -> str:
    """SHA-256 over the installed package's Python sources and data (relative path + bytes)."""
    root = Path(chemgauge.__file__).resolve().parent
    digest = hashlib.sha256(b"chemgauge-source-v1\n")
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        rel = path.relative_to(root).as_posix().encode()
        digest.update(len(rel).to_bytes(4, "big") + rel)
        data = path.read_bytes()
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def strip_fields(row: Mapping[str, Any], exclude: Sequence[str]) -> dict[str, Any]:
    """Copy of a row without the named fields; a dotted name reaches into nested mappings."""
    out = dict(row)
    for name in exclude:
        head, _, rest = name.partition(".")
        if not rest:
            out.pop(head, None)
        elif isinstance(out.get(head), Mapping):
            out[head] = strip_fields(out[head], [rest])
    return out


class RowsDigest:
    """:func:`reproducibility_sha256` fed one row at a time (for rows that stream past)."""

    def __init__(self, exclude: Sequence[str] = ()) -> None:
        self.exclude = tuple(exclude)
        self._digest = hashlib.sha256(_ROWS_DOMAIN)

    def update(self, row: Mapping[str, Any]) -> None:
        self._digest.update(canonical_json(strip_fields(row, self.exclude)))
        self._digest.update(b"\n")

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def reproducibility_sha256(rows: Iterable[Mapping[str, Any]], exclude: Sequence[str]) -> str:
    """SHA-256 over rows in their given order, each as canonical JSON minus ``exclude``."""
    digest = RowsDigest(exclude)
    for row in rows:
        digest.update(row)
    return digest.hexdigest()


@dataclass(frozen=True)
class RunProvenance:
    """What produced a result: versions, configuration and input hashes."""

    chemgauge_version: str
    rdkit_version: str
    python_version: str
    hash_scheme_version: int
    config_sha256: str
    input_sha256: Mapping[str, str]
    source_tree_sha256: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for reports."""
        return asdict(self)


def run_provenance(
    config: Mapping[str, Any],
    inputs: Mapping[str, str | Path] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> RunProvenance:
    """Build the provenance block: config hash over canonical JSON, and each input file hashed."""
    from rdkit import rdBase

    return RunProvenance(
        chemgauge_version=chemgauge.__version__,
        rdkit_version=rdBase.rdkitVersion,
        python_version=platform.python_version(),
        hash_scheme_version=HASH_SCHEME_VERSION,
        config_sha256=sha256_json(dict(config)),
        input_sha256={name: sha256_file(p) for name, p in sorted((inputs or {}).items())},
        source_tree_sha256=source_tree_sha256(),
        extra=dict(extra or {}),
    )
