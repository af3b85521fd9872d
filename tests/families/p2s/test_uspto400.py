"""A 400-source build from real molecules: no public rule and no property-blind system earns a
use claim on it, and the property oracle does on every directory.

Sources: the 400 smallest USPTO-50k training products in ``../shared/data`` (one component,
at least 6 heavy atoms; written in at most 16 characters, which keeps the canonicalisation
to a few hundred lines), each record's source drawn by the build secret among its candidates
(a public list names no answer). Dipole and gap by GFN2-xTB (tblite), the cheapest real
provider; the default build otherwise (4 candidates, 2 counterfactuals a record, no
``--records`` cap). The property oracle reads the build's journaled values, which is what
recomputing with the same deterministic provider gives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.conftest import require_module, shared_file
from typer.testing import CliRunner

from chemgauge.chem import try_canonical_smiles
from chemgauge.chem.properties import structure_counts
from chemgauge.cli import app
from chemgauge.eval.journal import iter_journal
from chemgauge.families.p2s.audit import audit_dataset
from chemgauge.families.p2s.build import MANIFEST, build_benchmark, secret_commitment
from chemgauge.families.p2s.claim import claim_report, prediction_paths
from chemgauge.families.p2s.compute import PROPERTY_JOURNAL
from chemgauge.families.p2s.config import BuildConfig, RunConfig
from chemgauge.families.p2s.engine.models import ModelOptions
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.engine.registry import get_model, get_provider
from chemgauge.families.p2s.release import private_dir, release_files
from chemgauge.families.p2s.runner import run_model

from .conftest import SECRET
from .test_blind import TrickServer, task_ids

pytestmark = pytest.mark.slow

runner = CliRunner()
DIRECTORIES = ("dipole", "gap")
SOURCES = 400


def uspto_sources(path: Path, limit: int = SOURCES) -> list[str]:
    """The ``limit`` smallest distinct one-component products (fewest heavy atoms, ties in
    file order) among those written in at most 16 characters, with at least 6 heavy atoms."""
    rows, seen = [], set()
    for index, line in enumerate(path.read_text().splitlines()):
        smiles = line.split()[0] if line.strip() else ""
        if not smiles or len(smiles) > 16:
            continue
        key = try_canonical_smiles(smiles)
        if key is None or "." in key or key in seen:
            continue
        seen.add(key)
        rows.append((structure_counts(key).heavy_atoms, index, key))
    rows.sort()
    return [key for heavy, _, key in rows if heavy >= 6][:limit]


@pytest.fixture(scope="module")
def uspto400(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    require_module("tblite.interface")
    root = tmp_path_factory.mktemp("p2s_uspto400")
    chosen = uspto_sources(shared_file("neuralsym/train_products.smi"))
    assert len(chosen) == SOURCES
    sources = root / "sources.smi"
    sources.write_text("".join(f"{s}\n" for s in chosen))
    data = root / "data"
    config = BuildConfig(directories=DIRECTORIES, draw_sources=True)
    result = build_benchmark(sources, data, get_provider("xtb"), config, secret=SECRET)
    table = root / "oracle_table.jsonl"
    table.write_bytes(
        b"".join(
            orjson.dumps({"smiles": row["smiles"], "properties": row["values"]}) + b"\n"
            for row in iter_journal(private_dir(data) / PROPERTY_JOURNAL)
            if row["error"] is None and row["values"]
        )
    )
    return {"root": root, "data": data, "result": result, "table": table}


def test_the_build_is_a_release_and_nothing_else(uspto400: dict[str, Any]) -> None:
    data: Path = uspto400["data"]
    shipped = sorted(p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file())
    assert shipped == sorted(release_files(DIRECTORIES))
    manifest_text = (data / MANIFEST).read_text()
    assert SECRET not in manifest_text
    assert json.loads(manifest_text)["secret_sha256"] == secret_commitment(SECRET)
    # enough records for the claim's tests to have power
    for directory in DIRECTORIES:
        assert uspto400["result"].counts[directory]["correct"] >= 100


def test_no_public_knowledge_attack_earns_a_claim(uspto400: dict[str, Any]) -> None:
    """structure_only with every public-knowledge shift, as the build and `p2s audit` run it."""
    for report in (uspto400["result"].audit, audit_dataset(uspto400["data"])):
        assert report["passed"], report["failures"]
        public = report["public_knowledge"]
        assert public["claim_attacks_with_unadjusted_use_claim"] == []
        for directory in DIRECTORIES:
            attacks = public["directories"][directory]["claim_attacks"]
            assert len(attacks) == 13
            assert not any(a["use_claim"] for a in attacks.values()), directory
            uniform = public["directories"][directory]["offset_uniformity"]
            assert uniform["p_value"] > 0.001, (directory, uniform)


def test_property_oracle_earns_and_structure_only_does_not(
    uspto400: dict[str, Any], tmp_path: Path
) -> None:
    """Run blind (the default) and per view: the same per-record answers either way."""
    options = ModelOptions(provider=TableProvider(uspto400["table"]))
    claims: dict[str, bool] = {}
    for model in ("property_oracle", "structure_only"):
        for per_view in (False, True):
            run_model(
                uspto400["data"],
                tmp_path / ("per_view" if per_view else "blind"),
                lambda d, m=model: get_model(m, options),
                RunConfig(per_view=per_view),
            )
        for directory in DIRECTORIES:
            blind = prediction_paths(tmp_path / "blind" / model, directory)
            per_view_paths = prediction_paths(tmp_path / "per_view" / model, directory)
            for condition, path in blind.items():
                assert path.read_bytes() == per_view_paths[condition].read_bytes()
            report = claim_report(uspto400["data"], directory, blind, model=model)
            claims[f"{model}/{directory}"] = report["use_claim"]
    assert claims == {
        "property_oracle/dipole": True,
        "property_oracle/gap": True,
        "structure_only/dipole": False,
        "structure_only/gap": False,
    }


@pytest.fixture
def trick_server(uspto400: dict[str, Any]) -> Iterator[TrickServer]:
    server = TrickServer(uspto400["data"], DIRECTORIES)
    server.thread.start()
    yield server
    server.http.shutdown()
    server.http.server_close()


@pytest.mark.parametrize("per_view", [False, True])
def test_a_property_blind_chat_endpoint_earns_no_claim(
    uspto400: dict[str, Any], trick_server: TrickServer, tmp_path: Path, per_view: bool
) -> None:
    """`p2s run -m chat` against a local fake endpoint that never reads the property but
    looks each id up in the release files and shifts its structural prior by the view."""
    data: Path = uspto400["data"]
    args = ["p2s", "run", str(data), "-m", "chat", "-o", str(tmp_path), "-q"]
    args += ["--batch-size", "32", "--base-url", trick_server.url, "--chat-model", "tricks"]
    args += ["--api-key-env", ""] + (["--per-view"] if per_view else [])
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    total = sum(len(ids) for d in DIRECTORIES for ids in task_ids(data, d).values())
    assert trick_server.requests == total
    assert trick_server.unknown == (total if not per_view else 0)
    for directory in DIRECTORIES:
        report = claim_report(
            data, directory, prediction_paths(tmp_path / "chat", directory), model="chat"
        )
        assert report["use_claim"] is False, (
            directory,
            report["shuffle_drop"],
            report["counterfactual_flip"],
        )
