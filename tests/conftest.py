"""Shared fixtures: paths to the real public data in ../shared/data (never copied here)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))


def _expected_sha256(relative: str) -> str | None:
    sums = SHARED_DATA / "SHA256SUMS"
    if not sums.exists():
        return None
    for line in sums.read_text().splitlines():
        digest, _, name = line.partition("  ")
        if name.strip().removeprefix("./") == relative:
            return digest
    return None


def shared_file(relative: str) -> Path:
    """Path to a shared data file, skipping if absent and failing if its hash changed."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"shared data file not available: {path}")
    expected = _expected_sha256(relative)
    if expected is not None:
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        assert actual == expected, f"{path} changed: sha256 {actual} != {expected}"
    return path


@pytest.fixture(scope="session")
def nci_smiles() -> list[str]:
    """The NCI first-5K SMILES set shipped inside the rdkit wheel."""
    import rdkit

    path = Path(rdkit.__file__).parent / "Data" / "NCI" / "first_5K.smi"
    return [line.split()[0] for line in path.read_text().splitlines() if line.strip()]


def assert_valid_report(path: Path) -> dict[str, Any]:
    """A written ``report.json``, checked against the shipped run-envelope JSON Schema (and
    laid out with the envelope first, the family's metrics last); returns it parsed."""
    import json

    import jsonschema

    from chemgauge.eval.envelope import SCHEMA_PATH, RunEnvelope

    data = json.loads(path.read_text())
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text()))
    assert list(data) == list(RunEnvelope.model_fields), f"{path}: not in the envelope's order"
    return data  # type: ignore[no-any-return]
