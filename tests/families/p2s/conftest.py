"""Shared p2s fixtures: a small benchmark built with the table provider from made-up values.

The values are arbitrary but fixed functions of each molecule's canonical SMILES, so every
candidate has distinct properties and the expected answers of each view can be derived.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.p2s.build import (
    BuildConfig,
    build_benchmark,
    read_sources,
    select_records,
)
from chemgauge.families.p2s.claim import claim_report, prediction_paths
from chemgauge.families.p2s.config import RunConfig
from chemgauge.families.p2s.engine.models import ModelOptions
from chemgauge.families.p2s.engine.properties import PropertyProvider, TableProvider
from chemgauge.families.p2s.engine.registry import get_model, get_provider
from chemgauge.families.p2s.runner import run_model

SOURCES = [
    "Oc1ccc(Cl)cc1 chlorophenol",
    "Nc1ccc2ccccc2c1 naphthylamine",
    "CC(=O)c1ccc(Br)cc1 bromoacetophenone",
    "COc1ccc(C#N)cc1 anisonitrile",
    "O=[N+]([O-])c1ccc(F)cc1 fluoronitrobenzene",
    "CCOC(=O)c1ccccc1N benzocaine-isomer",
    "Cc1ccc(S(N)(=O)=O)cc1 toluenesulfonamide",
    "OCc1ccc(I)cc1 iodobenzyl-alcohol",
    "CN(C)c1ccc(C=O)cc1 dimethylaminobenzaldehyde",
    "Clc1ccc2[nH]ccc2c1 chloroindole",
    "OC(=O)c1ccc(O)cc1 hydroxybenzoic-acid",
    "CSc1ccc(N)cc1 methylthioaniline",
    "not_a_smiles broken",
    "Oc1ccc(Cl)cc1 duplicate",
]


def fake_value(smiles: str, salt: str, scale: float) -> float:
    digest = hashlib.sha256(f"{salt}:{smiles}".encode()).digest()
    return round(scale * (1 + int.from_bytes(digest[:4], "big") % 1_000_000 / 100_000), 5)


def fake_properties(smiles: str) -> dict[str, Any]:
    return {
        "dipole": {"value": fake_value(smiles, "dipole", 1.0), "unit": "D"},
        "gap": {"value": fake_value(smiles, "gap", 0.5), "unit": "eV"},
        "ultraviolet_visible": {
            "unit": "nm",
            "peaks": [
                {"position": 200 + fake_value(smiles, "uv1", 10.0), "intensity": 0.5},
                {"position": 300 + fake_value(smiles, "uv2", 10.0), "intensity": 0.1},
            ],
        },
    }


def write_table(
    sources: Path, table: Path, config: BuildConfig, drop: set[str] | None = None
) -> None:
    """A property table covering every candidate the builder will ask for."""
    records = select_records(read_sources(sources, RejectionStats()), config, Counter())
    molecules = sorted({c for r in records for c in r.candidates} - (drop or set()))
    table.write_bytes(
        b"".join(
            orjson.dumps({"smiles": m, "properties": fake_properties(m)}) + b"\n" for m in molecules
        )
    )


DIRECTORIES = ("dipole", "gap", "electronic")
#: The build secret of the fixtures (a fixed one, so rebuilds compare byte for byte).
SECRET = "p2s-test-secret"


@pytest.fixture
def built(tmp_path: Path) -> dict[str, Path]:
    """A built benchmark (dipole, gap, electronic) with its sources and table."""
    sources = tmp_path / "sources.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    config = BuildConfig(directories=DIRECTORIES, candidates=4, counterfactuals_per_record=2)
    table = tmp_path / "table.jsonl"
    write_table(sources, table, config)
    data = tmp_path / "data"
    build_benchmark(sources, data, TableProvider(table), config, secret=SECRET)
    return {"sources": sources, "table": table, "data": data, "root": tmp_path}


# Small real molecules for builds with a real calculator (one maskable group each, or more).
SMALL = [
    "Oc1ccc(Cl)cc1",
    "Nc1ccccc1C",
    "CC(=O)c1ccccc1",
    "COc1ccccc1",
    "N#Cc1ccc(C)cc1",
    "Fc1ccc(O)cc1",
    "OCc1ccccc1",
    "CCOc1ccccc1",
    "Brc1ccc(N)cc1",
    "CSc1ccccc1",
    "Oc1cccnc1",
    "Cc1ccc(Cl)nc1",
    "Nc1ccc(F)cc1",
    "OC(=O)c1ccccc1",
    "Clc1ccccc1C",
    "Cc1cccc(O)c1",
    "CNc1ccccc1",
    "O=Cc1ccccc1",
    "Ic1ccc(C)cc1",
    "Sc1ccccc1",
]


def small_build_claims(
    tmp_path: Path, provider: PropertyProvider, name: str, directory: str
) -> dict[str, Any]:
    """Build ``directory`` from SMALL with ``provider``, run the property oracle (a fresh
    provider of the same name, which recomputes) and structure_only, and return each claim."""
    sources = tmp_path / "small.smi"
    sources.write_text("\n".join(SMALL) + "\n")
    config = BuildConfig(directories=(directory,), min_scaffold_heavy_atoms=4)
    build_benchmark(sources, tmp_path / "data", provider, config, secret=SECRET)
    verdicts = {}
    for model in ("property_oracle", "structure_only"):
        options = ModelOptions(provider=get_provider(name))
        run_model(
            tmp_path / "data",
            tmp_path / "runs",
            lambda d, m=model, o=options: get_model(m, o),
            RunConfig(),
        )
        verdicts[model] = claim_report(
            tmp_path / "data",
            directory,
            prediction_paths(tmp_path / "runs" / model, directory),
            model=model,
        )
    return verdicts
