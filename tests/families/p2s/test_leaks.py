"""Each leak the issue-34 audit found, planted in a small build: the build must refuse it.

The leaks: a source list beside the tasks, donors after the answer (so the counterfactual
label is the answer plus one plus the ordinal), a counterfactual ordinal rebuilt from the
published seed, and view-specific ids. Planted by replacing one function of the views module
(the injected boundary); everything else is the real build with the table provider.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chemgauge.errors import AuditError
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.p2s import build as build_module
from chemgauge.families.p2s import publicattack, views
from chemgauge.families.p2s.audit import audit_dataset
from chemgauge.families.p2s.build import (
    RECORDS,
    BuildConfig,
    build_benchmark,
    read_sources,
    select_records,
)
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.publicattack import chi_square_sf
from chemgauge.families.p2s.release import private_dir
from chemgauge.families.p2s.selection import Record, counterfactual_id, seeded_hash

from .conftest import SECRET, write_table

CONFIG = BuildConfig(directories=("dipole",), draw_sources=True)


@pytest.fixture(scope="module")
def nci_build(tmp_path_factory: pytest.TempPathFactory, nci_smiles: list[str]) -> dict[str, Path]:
    """Sources (300 NCI molecules) and a table covering every candidate."""
    root = tmp_path_factory.mktemp("p2s_leaks")
    sources = root / "sources.smi"
    sources.write_text("\n".join(nci_smiles[:300]) + "\n")
    table = root / "table.jsonl"
    write_table(sources, table, CONFIG)
    return {"root": root, "sources": sources, "table": table}


def build(nci_build: dict[str, Path], name: str) -> Path:
    out = nci_build["root"] / name
    build_benchmark(
        nci_build["sources"], out, TableProvider(nci_build["table"]), CONFIG, secret=SECRET
    )
    return out


def after_the_answer(secret: str, directory: str, record: Record) -> list[int]:
    """Id scheme 2's donor rule: the candidates after the answer, cyclically."""
    k = len(record.candidates)
    return [(record.answer + step) % k for step in range(1, k)]


def public_seed_id(secret: str, directory: str, base: str, ordinal: int) -> str:
    """A counterfactual id from what the manifest publishes (the seed, 0)."""
    return counterfactual_id("0", directory, base, ordinal)


def view_marked_id(secret: str, directory: str, base: str, ordinal: int) -> str:
    return "p2s-cf-" + seeded_hash(secret, base, ordinal)[:12]


def record_order(
    secret: str, directory: str, condition: str, tasks: list[Any], labels: list[Any]
) -> tuple[list[Any], list[Any]]:
    """The file order of id scheme 2: record order, a record's counterfactuals adjacent."""
    return tasks, labels


def no_files_written(out: Path) -> bool:
    return not (out / "dipole").exists() and not (out / "build_manifest.json").exists()


def test_honest_build_passes_with_uniform_offsets(nci_build: dict[str, Path]) -> None:
    out = build(nci_build, "honest")
    report = audit_dataset(out)
    assert report["passed"], report["failures"]
    uniform = report["public_knowledge"]["directories"]["dipole"]["offset_uniformity"]
    assert uniform["tasks"] >= 100 and uniform["p_value"] > 0.001
    assert report["public_knowledge"]["claim_attacks_with_unadjusted_use_claim"] == []


def test_a_source_list_beside_the_tasks_is_refused(nci_build: dict[str, Path]) -> None:
    out = nci_build["root"] / "with_sources"
    out.mkdir()
    stats = RejectionStats()
    records = select_records(read_sources(nci_build["sources"], stats), CONFIG, Counter())
    (out / "sources.smi").write_text("".join(f"{r.source} src\n" for r in records))
    with pytest.raises(AuditError, match=r"sources\.smi holds candidate"):
        build_benchmark(
            nci_build["sources"], out, TableProvider(nci_build["table"]), CONFIG, secret=SECRET
        )
    assert no_files_written(out)


def test_another_spelling_of_a_source_is_found(nci_build: dict[str, Path]) -> None:
    out = nci_build["root"] / "with_kekule"
    out.mkdir()
    records = select_records(
        read_sources(nci_build["sources"], RejectionStats()), CONFIG, Counter()
    )
    from rdkit import Chem

    kekule = Chem.MolToSmiles(Chem.MolFromSmiles(records[0].source), kekuleSmiles=True)
    assert kekule != records[0].source
    (out / "notes.txt").write_text(f"the first source was {kekule} , keep it private\n")
    with pytest.raises(AuditError, match=r"notes\.txt holds candidate"):
        build_benchmark(
            nci_build["sources"], out, TableProvider(nci_build["table"]), CONFIG, secret=SECRET
        )


PLANTS: dict[str, tuple[str, Callable[..., Any], str]] = {
    "donors after the answer": ("donor_order", after_the_answer, "offset uniformity"),
    "ordinal from the id": ("counterfactual_id", public_seed_id, "rebuilt from the published"),
    "view-specific ids": ("counterfactual_id", view_marked_id, "not in the p2s-<16 hex>"),
}


@pytest.mark.parametrize("leak", sorted(PLANTS))
def test_each_planted_leak_is_refused(
    nci_build: dict[str, Path], monkeypatch: pytest.MonkeyPatch, leak: str
) -> None:
    name, plant, message = PLANTS[leak]
    monkeypatch.setattr(views, name, plant)
    out = nci_build["root"] / leak.replace(" ", "_")
    with pytest.raises(AuditError, match=message):
        build(nci_build, out.name)
    assert no_files_written(out)


def test_the_old_release_rule_earns_a_claim_the_audit_catches(
    nci_build: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Id scheme 2 in full (donors after the answer, ids from the seed, record file order),
    attacked with a prior that knows the sources (the old release shipped them): the public
    rule earns a use claim, and the audit fails the release on the rule itself."""
    monkeypatch.setattr(views, "donor_order", after_the_answer)
    monkeypatch.setattr(views, "counterfactual_id", public_seed_id)
    monkeypatch.setattr(views, "file_order", record_order)
    monkeypatch.setattr(build_module, "merge_release_attacks", lambda report, extra: report)
    out = build(nci_build, "old_rule")
    records = (private_dir(out) / RECORDS).read_text().splitlines()
    sources = {json.loads(line)["source_smiles"] for line in records}

    def source_list_prior(tasks: Any) -> dict[Any, int | None]:
        return {
            (t.masked_smiles, t.candidates): next(
                (i for i, c in enumerate(t.candidates) if c in sources), None
            )
            for t in tasks
        }

    monkeypatch.setattr(publicattack, "_prior", source_list_prior)
    report = audit_dataset(out)
    assert not report["passed"]
    earned = report["public_knowledge"]["claim_attacks_with_unadjusted_use_claim"]
    assert "dipole: prior+1+id_replay" in earned and "dipole: prior+1+file" in earned
    rules = report["public_knowledge"]["directories"]["dipole"]["answer_rules"]
    assert rules["answer+1+id_replay"]["hits"] > 0.8 * rules["answer+1+id_replay"]["tasks"]
    assert any("answer+1+file" in f for f in report["failures"])
    assert any("rebuilt from the published seed" in f for f in report["failures"])


def test_chi_square_tail_matches_known_values() -> None:
    # chi2.sf(x, k) from tables: (3.841, 1) -> 0.05, (5.991, 2) -> 0.05, (7.815, 3) -> 0.05
    for x, dof in ((3.841, 1), (5.991, 2), (7.815, 3), (11.070, 5)):
        assert abs(chi_square_sf(x, dof) - 0.05) < 2e-4
    assert chi_square_sf(0.0, 2) == 1.0


def test_manifest_publishes_a_commitment_not_the_secret(nci_build: dict[str, Path]) -> None:
    out = nci_build["root"] / "honest"
    if not out.exists():
        out = build(nci_build, "honest")
    text = (out / "build_manifest.json").read_text()
    assert SECRET not in text
    manifest = json.loads(text)
    assert manifest["secret_sha256"] == build_module.secret_commitment(SECRET)
    assert sorted(p.name for p in out.iterdir()) == ["build_manifest.json", "dipole"]
