"""Run provenance for the forward benchmark, duplicated onto every row.

``source_tree_sha256`` (the installed package's bytes) stands where a compiled harness would
put its binary hash; like it, it is excluded from ``reproducibility_sha256``, so two
checkouts that differ only in, say, a docstring still agree on the rows.
``dependency_lock_sha256`` hashes the exact installed versions of chemgauge's runtime
dependencies (Python's nearest equivalent of a lock file an installed tool can read).
"""

from __future__ import annotations

import functools
import platform
import re
from collections.abc import Iterable, Mapping
from importlib import metadata
from typing import Any

from rdkit import rdBase

import chemgauge
from chemgauge.eval.provenance import HASH_SCHEME_VERSION, reproducibility_sha256, sha256_json

__all__ = [
    "REPRODUCIBILITY_EXCLUDES",
    "ROW_HASH_EXCLUDES",
    "dependency_versions",
    "rows_reproducibility_sha256",
]

# The published "reproducible modulo what" contract. Only the row-level fields in
# ROW_HASH_EXCLUDES are stripped by the hash itself; latency_ms and corpus_path never occur
# inside a row.
REPRODUCIBILITY_EXCLUDES = ("elapsed_ms", "latency_ms", "source_tree_sha256", "corpus_path")
ROW_HASH_EXCLUDES = (
    "elapsed_ms",
    "provenance.source_tree_sha256",
    "provenance.reproducibility_sha256",
)
_FALLBACK_DEPENDENCIES = ("rdkit", "numpy", "typer", "rich", "pydantic", "orjson", "rdchiral")


@functools.cache
def dependency_versions() -> dict[str, str | None]:
    """Installed version of each runtime dependency chemgauge declares (None if absent)."""
    try:
        requirements = metadata.requires("chemgauge") or []
    except metadata.PackageNotFoundError:
        requirements = list(_FALLBACK_DEPENDENCIES)
    names = set()
    for requirement in requirements:
        if "extra ==" in requirement:
            continue
        match = re.match(r"[A-Za-z0-9_.\-]+", requirement)
        if match:
            names.add(match.group(0).lower())
    versions: dict[str, str | None] = {}
    for name in sorted(names):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def dependency_lock_sha256() -> str | None:
    """Hash of :func:`dependency_versions`; ``None`` if any dependency's version is unknown."""
    versions = dependency_versions()
    if not versions or any(v is None for v in versions.values()):
        return None
    return sha256_json(versions)


def base_provenance(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Versions plus the run-specific ``fields``; the reproducibility hash is filled in later."""
    from chemgauge.chem.limits import structure_limits
    from chemgauge.eval.provenance import source_tree_sha256

    try:
        tree: str | None = source_tree_sha256()
    except OSError:
        tree = None
    return {
        "chemgauge_version": chemgauge.__version__,
        "rdkit_version": rdBase.rdkitVersion,
        "python_version": platform.python_version(),
        "hash_scheme_version": HASH_SCHEME_VERSION,
        "structure_limits": structure_limits().to_dict(),
        **fields,
        "source_tree_sha256": tree,
        "dependency_lock_sha256": dependency_lock_sha256(),
        "reproducibility_sha256": None,
        "reproducibility_excludes": list(REPRODUCIBILITY_EXCLUDES),
    }


def rows_reproducibility_sha256(rows: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 over rows in source-line order, minus the excluded timing and binary fields."""
    return reproducibility_sha256(rows, ROW_HASH_EXCLUDES)
