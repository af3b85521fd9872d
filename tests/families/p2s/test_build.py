"""The builder: views that mean what they say, determinism, grouping, counted skips."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from chemgauge.chem import canonical_smiles
from chemgauge.chem.fragments import (
    attach_group,
    canonical_fragment,
    completes_scaffold,
    find_mask_sites,
)
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.rejections import RejectionStats
from chemgauge.eval.splits import assign_split
from chemgauge.families.p2s.build import (
    MANIFEST,
    RECORDS,
    BuildConfig,
    build_benchmark,
    read_sources,
    select_records,
)
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.library import size_classes
from chemgauge.families.p2s.release import private_dir
from chemgauge.families.p2s.taskfile import load_directory
from chemgauge.families.p2s.validate import check_view

from .conftest import DIRECTORIES, SECRET, SOURCES, fake_properties, write_table


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_fragments_mask_and_reattach() -> None:
    groups = {canonical_fragment(g) for g in ("[*:1]O", "[*:1][N+](=O)[O-]")}
    sites = find_mask_sites("Oc1ccc(cc1)[N+](=O)[O-]", groups)
    by_group = {s.group: s for s in sites}
    nitro = by_group["O=[N+]([O-])[*:1]"]
    assert nitro.masked_smiles == "Oc1ccc([*:1])cc1"
    assert nitro.group_heavy_atoms == 3 and len(nitro.masked_atoms) == 3
    assert by_group["O[*:1]"].masked_smiles == "O=[N+]([O-])c1ccc([*:1])cc1"
    assert attach_group("Oc1ccc([*:1])cc1", "F[*:1]") == "Oc1ccc(F)cc1"
    assert attach_group("CC(C)(C)C[*:1]", "F[*:1]") == "CC(C)(C)CF"
    assert attach_group("CC(C)(C)[*:1]", "O=C(O)[*:1]") == "CC(C)(C)C(=O)O"
    assert attach_group("C=[N+](C)[*:1]", "FC(F)(F)[*:1]") is not None
    # a double bond to a carbon that already has three neighbours is over-valent
    assert attach_group("CC(C)(C)[*:1]", "O=[*:1]") is None
    assert attach_group("CC(C)[*:1]", "O=[*:1]") == "CC(C)=O"
    assert completes_scaffold("Oc1ccc([*:1])cc1", "Nc1ccc(O)cc1")
    assert not completes_scaffold("Oc1ccc([*:1])cc1", "Nc1ccccc1")


def test_stereo_survives_masking() -> None:
    groups = {canonical_fragment("[*:1]C")}
    sites = find_mask_sites("C[C@H](N)C(=O)O", groups, min_scaffold_heavy_atoms=3)
    assert sites and all(attach_group(s.masked_smiles, s.group) == "C[C@H](N)C(=O)O" for s in sites)


def test_views_mean_what_they_say(built: dict[str, Path]) -> None:
    data = built["data"]
    audit = {r["record_id"]: r for r in jsonl(private_dir(data) / RECORDS)}
    table = {canonical_smiles(r["smiles"]): r["properties"] for r in jsonl(built["table"])}
    for directory in DIRECTORIES:
        views = load_directory(data, directory)
        checked: set[tuple[str, tuple[str, ...]]] = set()
        for view in views.values():
            check_view(view, checked)
        correct, shuffled, cf = views["correct"], views["shuffled"], views["counterfactual"]
        assert len(correct.tasks) == len(audit) >= 8
        components = (
            ["dipole", "gap", "ultraviolet_visible"] if directory == "electronic" else [directory]
        )
        for task in correct.tasks:
            record = audit[task.record_id]
            answer = correct.labels[task.record_id].label
            assert task.candidates[answer] == record["source_smiles"]
            assert task.properties == {c: table[record["source_smiles"]][c] for c in components}
            group_size = size_classes()
            assert task.mask["masked_heavy_atoms"] in group_size
        donors = set()
        for task in shuffled.tasks:
            own = correct.task_by_id()[task.record_id].properties
            assert task.properties != own
            donor = [
                r
                for r, a in audit.items()
                if {c: table[a["source_smiles"]][c] for c in components} == task.properties
            ]
            assert len(donor) == 1 and donor[0] != task.record_id
            donors.add(donor[0])
        assert len(donors) == len(shuffled.tasks)  # a derangement: every donor used once
        assert len(cf.tasks) == 2 * len(correct.tasks)
        for task in cf.tasks:
            label = cf.labels[task.record_id]
            donor_smiles = task.candidates[label.label]
            assert donor_smiles != audit[label.base_record_id or ""]["source_smiles"]
            assert task.properties == {c: table[donor_smiles][c] for c in components}


def test_task_files_hold_no_answer(built: dict[str, Path]) -> None:
    for path in (built["data"] / "dipole").glob("*.jsonl"):
        if path.name.endswith(".labels.jsonl"):
            continue
        for row in jsonl(path):
            assert set(row) == {
                "record_id",
                "masked_smiles",
                "mask",
                "properties",
                "candidate_completed_smiles",
            }
            assert "p2s-" in row["record_id"] and "cf" not in row["record_id"][4:].split("-")


def test_build_is_deterministic_and_stable_under_added_sources(built: dict[str, Path]) -> None:
    config = BuildConfig(directories=DIRECTORIES, candidates=4, counterfactuals_per_record=2)
    again = built["root"] / "again"
    build_benchmark(built["sources"], again, TableProvider(built["table"]), config, secret=SECRET)
    for directory in DIRECTORIES:
        for path in sorted((built["data"] / directory).iterdir()):
            assert path.read_bytes() == (again / directory / path.name).read_bytes(), path
    first = json.loads((built["data"] / MANIFEST).read_text())
    second = json.loads((again / MANIFEST).read_text())
    first.pop("timing"), second.pop("timing")
    assert first == second
    # One more source first in the file: old records keep ids, candidates and order.
    old = {
        r.record_id: r
        for r in select_records(read_sources(built["sources"], RejectionStats()), config, Counter())
    }
    more = built["root"] / "more.smi"
    more.write_text("Brc1ccc2ccccc2c1\n" + built["sources"].read_text())
    new = {
        r.record_id: r
        for r in select_records(read_sources(more, RejectionStats()), config, Counter())
    }
    assert set(old) < set(new)
    for rid, record in old.items():
        assert (new[rid].candidates, new[rid].answer) == (record.candidates, record.answer)


def test_counts_and_rejections_in_manifest(built: dict[str, Path]) -> None:
    manifest = json.loads((built["data"] / MANIFEST).read_text())
    assert manifest["sources"]["rejections_by_reason"] == {"duplicate": 1, "invalid_smiles": 1}
    assert manifest["sources"]["accepted"] == len(SOURCES) - 2
    assert manifest["tasks"]["dipole"]["counterfactual"] == 2 * manifest["records"]
    assert sum(manifest["records_by_split"].values()) == manifest["records"]
    assert manifest["provenance"]["input_sha256"]["property_table"]


def test_split_groups_by_masked_scaffold(built: dict[str, Path]) -> None:
    audit = jsonl(private_dir(built["data"]) / RECORDS)
    for row in audit:
        assert row["split"] == assign_split(row["masked_smiles"])
    split, _ = Counter(r["split"] for r in audit).most_common(1)[0]
    wanted = {r["record_id"] for r in audit if r["split"] == split}
    assert 2 <= len(wanted) < len(audit)
    one = built["root"] / "one_split"
    config = BuildConfig(directories=("dipole",), split=split)
    result = build_benchmark(built["sources"], one, TableProvider(built["table"]), config)
    assert {r["record_id"] for r in jsonl(private_dir(one) / RECORDS)} == wanted
    assert result.skipped["other_split"] == len(audit) - len(wanted)


def test_missing_source_property_is_counted(tmp_path: Path) -> None:
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES[:6]) + "\n")
    config = BuildConfig(directories=("dipole",))
    table = tmp_path / "t.jsonl"
    write_table(sources, table, config, drop={"Oc1ccc(Cl)cc1"})
    result = build_benchmark(sources, tmp_path / "d", TableProvider(table), config)
    assert result.skipped["dipole:source_without_property"] == 1
    assert result.counts["dipole"]["correct"] == result.records - 1


def test_bad_table_value_names_the_table_line(tmp_path: Path) -> None:
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES[:4]) + "\n")
    config = BuildConfig(directories=("dipole",))
    table = tmp_path / "t.jsonl"
    write_table(sources, table, config)
    lines = table.read_text().splitlines()
    bad = json.loads(lines[0])
    bad["properties"]["dipole"]["unit"] = "debye"
    lines[0] = json.dumps(bad)
    table.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputFileError, match=r"t\.jsonl:1: bad property value: dipole: unit"):
        build_benchmark(sources, tmp_path / "d", TableProvider(table), config)


def test_table_errors_and_config_errors(tmp_path: Path) -> None:
    table = tmp_path / "t.jsonl"
    table.write_text(
        json.dumps({"smiles": "CCO", "properties": fake_properties("CCO")})
        + "\n"
        + json.dumps({"smiles": "OCC", "properties": {"dipole": {"value": 9, "unit": "D"}}})
        + "\n"
    )
    with pytest.raises(InputFileError, match=r"line 2: molecule already has other values"):
        TableProvider(table)
    table.write_text(json.dumps({"smiles": "C1CC", "properties": {}}) + "\n")
    with pytest.raises(InputFileError, match="line 1"):
        TableProvider(table)
    with pytest.raises(ConfigError, match="unknown property directory 'dipol'"):
        BuildConfig(directories=("dipol",))


def test_tied_candidate_values_are_counted(tmp_path: Path) -> None:
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES[:6]) + "\n")
    config = BuildConfig(directories=("dipole", "gap"))
    table = tmp_path / "t.jsonl"
    write_table(sources, table, config)
    record = select_records(read_sources(sources, RejectionStats()), config, Counter())[0]
    twin = next(c for c in record.candidates if c != record.source)
    rows = jsonl(table)
    source_dipole = next(r for r in rows if r["smiles"] == record.source)["properties"]["dipole"]
    for row in rows:
        if row["smiles"] == twin:
            row["properties"]["dipole"] = source_dipole
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    build_benchmark(sources, tmp_path / "d", TableProvider(table), config)
    manifest = json.loads((tmp_path / "d" / MANIFEST).read_text())
    assert manifest["records_with_tied_candidate_values"] == {"dipole": 1}
    # a twin with the same value cannot serve as the dipole counterfactual donor
    cf = {
        r["label"]
        for r in jsonl(tmp_path / "d" / "dipole" / "counterfactual.labels.jsonl")
        if r["base_record_id"] == record.record_id
    }
    assert record.candidates.index(twin) not in cf


def _refusing(times: int) -> Any:
    """The real audit, refusing its first ``times`` calls (a draw that looks leaky by chance)."""
    from chemgauge.errors import AuditError
    from chemgauge.families.p2s import build

    real = build._audit
    calls = {"n": 0}

    def audit(*args: Any) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] <= times:
            raise AuditError(f"refusing: rule answer+{calls['n']} ordinal (Holm p 0.02)")
        return real(*args)

    return audit


def _drawn_build(tmp_path: Path, out: str) -> tuple[Path, Path, BuildConfig]:
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    config = BuildConfig(directories=("dipole",), candidates=4, draw_sources=True)
    table = tmp_path / "t.jsonl"
    if not table.exists():
        write_table(sources, table, config)
    return sources, table, config


def test_a_draw_the_audit_refuses_is_redrawn_from_the_secret_and_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemgauge.families.p2s import build

    sources, table, config = _drawn_build(tmp_path, "d")
    monkeypatch.setattr(build, "_audit", _refusing(1))
    result = build_benchmark(sources, tmp_path / "d", TableProvider(table), config, secret=SECRET)
    manifest = json.loads((tmp_path / "d" / MANIFEST).read_text())
    draws = manifest["audit_draws"]
    assert draws["used"] == 2 and draws["at_most"] == build.AUDIT_DRAWS
    assert draws["refused"] == [
        {"draw": 1, "failure": "refusing: rule answer+1 ordinal (Holm p 0.02)"}
    ]
    assert result.audit["passed"] is True
    # the second draw is derived from the secret: the same secret rebuilds the same bytes
    monkeypatch.setattr(build, "_audit", _refusing(1))
    build_benchmark(sources, tmp_path / "again", TableProvider(table), config, secret=SECRET)
    for path in sorted((tmp_path / "d" / "dipole").iterdir()):
        assert path.read_bytes() == (tmp_path / "again" / "dipole" / path.name).read_bytes()
    # and it is another draw than the first: the answers moved
    monkeypatch.setattr(build, "_audit", _refusing(0))
    build_benchmark(sources, tmp_path / "first", TableProvider(table), config, secret=SECRET)
    first = json.loads((tmp_path / "first" / MANIFEST).read_text())["audit_draws"]
    assert first == {"used": 1, "at_most": build.AUDIT_DRAWS, "refused": []}
    answers = [
        [r["answer"] for r in jsonl(private_dir(tmp_path / name) / RECORDS)]
        for name in ("d", "first")
    ]
    assert answers[0] != answers[1]


def test_a_release_every_draw_of_which_is_refused_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemgauge.errors import AuditError
    from chemgauge.families.p2s import build

    sources, table, config = _drawn_build(tmp_path, "d")
    monkeypatch.setattr(build, "_audit", _refusing(build.AUDIT_DRAWS))
    with pytest.raises(AuditError, match=rf"every one of {build.AUDIT_DRAWS} draws.*answer\+5"):
        build_benchmark(sources, tmp_path / "d", TableProvider(table), config, secret=SECRET)
    assert not (tmp_path / "d" / MANIFEST).exists()
    assert not (tmp_path / "d" / "dipole").exists()
