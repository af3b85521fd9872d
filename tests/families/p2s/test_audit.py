"""The shortcut audit: a clean build passes; each planted leak or tell is caught."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import AuditError
from chemgauge.families.p2s import build as build_module
from chemgauge.families.p2s import selection
from chemgauge.families.p2s.audit import attack_directory, audit_dataset
from chemgauge.families.p2s.build import build_benchmark
from chemgauge.families.p2s.config import BuildConfig
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.shortcuts import odd_one_out

from .conftest import DIRECTORIES, write_table
from .test_scoring import write_jsonl

runner = CliRunner()


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def old_id(*parts: str) -> str:
    """The id scheme chemgauge used to write: it hashed the answer."""
    return "p2s-" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def rewrite_release(data: Path, change: Callable[[str, str, list[Any], list[Any]], None]) -> None:
    """Apply ``change(directory, condition, tasks, labels)`` to every view, in place."""
    for directory in DIRECTORIES:
        for condition in ("correct", "shuffled", "counterfactual"):
            task_path = data / directory / f"{condition}.jsonl"
            label_path = data / directory / f"{condition}.labels.jsonl"
            tasks, labels = rows(task_path), rows(label_path)
            change(directory, condition, tasks, labels)
            write_jsonl(task_path, tasks)
            write_jsonl(label_path, labels)


def failing(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (view, name)
        for view, block in report["views"].items()
        for kind in ("leaks", "tells")
        for name, test in block[kind].items()
        if test["beats_chance"]
    }


def test_odd_one_out() -> None:
    assert odd_one_out(["C", "C", "N", "C"]) == 2
    assert odd_one_out(["C", "C", "N", "O"]) is None  # two unshared values
    assert odd_one_out(["C", "C", "N", "N"]) is None
    assert odd_one_out(["C", "N"]) is None  # with two, either is "odd"


def test_a_clean_build_passes_and_no_candidate_hashes_to_its_id(built: dict[str, Path]) -> None:
    report = audit_dataset(built["data"])
    assert report["passed"], report["failures"]
    assert not failing(report)
    for block in report["views"].values():
        assert block["leaks"]["id_hash"]["decided"] == 0
        # every candidate, taken as the source, replays to the same task
        assert block["leaks"]["selection_replay"]["decided"] == 0
        assert block["structural_prior"]["decided"] == block["tasks"]
    manifest = json.loads((built["data"] / build_module.MANIFEST).read_text())
    assert manifest["audit"]["passed"] and manifest["audit"]["tests"] > 0


def test_the_attack_reads_no_label_file(built: dict[str, Path]) -> None:
    for path in built["data"].glob("*/*.labels.jsonl"):
        path.unlink()
    attacks = attack_directory(built["data"], "dipole")
    assert [a.condition for a in attacks] == ["correct", "shuffled", "counterfactual"]
    assert all(len(p) == len(a.record_ids) for a in attacks for p in a.picks.values())


def test_the_old_id_scheme_is_caught(built: dict[str, Path]) -> None:
    """Plant the ids chemgauge used to write (SHA-256 of source and scaffold)."""
    renamed: dict[str, str] = {}

    def plant(directory: str, condition: str, tasks: list[Any], labels: list[Any]) -> None:
        for task, label in zip(tasks, labels, strict=True):
            chosen = task["candidate_completed_smiles"][label["label"]]
            if condition == "counterfactual":
                base = renamed[label["base_record_id"]]
                new = old_id("counterfactual", base, chosen)
                label["base_record_id"] = base
            else:
                new = old_id("record", chosen, task["masked_smiles"])
                renamed[task["record_id"]] = new
            task["record_id"] = label["record_id"] = new

    rewrite_release(built["data"], plant)
    report = audit_dataset(built["data"])
    assert not report["passed"]
    caught = failing(report)
    for directory in DIRECTORIES:
        for condition in ("correct", "shuffled", "counterfactual"):
            assert (f"{directory}/{condition}", "id_hash") in caught
    test = report["views"]["dipole/correct"]["leaks"]["id_hash"]
    assert test["accuracy"] == 1.0 and test["holm_p"] < 0.05


def test_a_position_leak_is_caught(built: dict[str, Path]) -> None:
    """Move every answer to candidate 0 (the same permutation in every view of a record)."""

    def plant(directory: str, condition: str, tasks: list[Any], labels: list[Any]) -> None:
        for task, label in zip(tasks, labels, strict=True):
            source = label.get("source_label", label["label"])
            cands = task["candidate_completed_smiles"]
            cands[0], cands[source] = cands[source], cands[0]
            for key in ("label", "source_label"):
                if key in label:
                    value = label[key]
                    label[key] = source if value == 0 else 0 if value == source else value

    rewrite_release(built["data"], plant)
    report = audit_dataset(built["data"])
    assert ("dipole/correct", "position_0") in failing(report)
    # In the counterfactual view the answer is a donor, never the moved source.
    assert ("dipole/counterfactual", "position_0") not in failing(report)


HETERO = ["CON(C)c1ccccc1", "CSSc1ccccc1", "COOC(C)(C)c1ccccc1", "CN(C)Nc1ccccc1"]


def hetero_task(rid: str, scaffold: str, true_group: str) -> tuple[dict[str, Any], int]:
    """The old builder's hetero-on-hetero task: the truth is the one heteroatom-bonded group."""
    cands = [scaffold.replace("[*:1]", g) for g in (true_group, "CC", "C=O", "C#N")]
    order = sorted(cands, key=lambda c: hashlib.sha256((rid + c).encode()).hexdigest())
    task = {
        "record_id": rid,
        "masked_smiles": scaffold,
        "mask": {
            "token": "[*:1]",
            "masked_heavy_atoms": 2,
            "attachment_points": [{"label": 1, "bond": "single", "scaffold_element": "N"}],
        },
        "properties": {"dipole": {"value": 1.0 + len(rid) / 10, "unit": "D"}},
        "candidate_completed_smiles": order,
    }
    return task, order.index(cands[0])


def test_the_hetero_bond_tell_is_caught(tmp_path: Path) -> None:
    rings = ["c1ccccc1", "c1ccncc1", "c1ccc(F)cc1", "c1ccc(Cl)cc1", "c1ccc(C)cc1", "c1cccs1"]
    tasks, labels = [], []
    for i, ring in enumerate(rings * 2):
        scaffold = f"C{'C' * (i // 6)}N({ring})[*:1]"
        task, label = hetero_task(f"r{i}", scaffold, "OC" if i % 2 else "SC")
        tasks.append(task)
        labels.append({"record_id": f"r{i}", "label": label})
    folder = tmp_path / "data" / "dipole"
    for condition in ("correct", "shuffled"):
        write_jsonl(folder / f"{condition}.jsonl", tasks)
        write_jsonl(folder / f"{condition}.labels.jsonl", labels)
    cf_tasks, cf_labels = [], []
    for task, label in zip(tasks, labels, strict=True):
        donor = (label["label"] + 1) % 4
        cf_tasks.append({**task, "record_id": task["record_id"] + "c"})
        cf_labels.append({"record_id": task["record_id"] + "c", "label": donor})
    write_jsonl(folder / "counterfactual.jsonl", cf_tasks)
    write_jsonl(folder / "counterfactual.labels.jsonl", cf_labels)
    report = audit_dataset(tmp_path / "data")
    caught = failing(report)
    assert ("dipole/correct", "attachment_element") in caught
    assert ("dipole/correct", "attachment_bond") in caught
    assert not report["passed"]


def test_the_builder_never_draws_a_hetero_bond_tell(nci_smiles: list[str], tmp_path: Path) -> None:
    """Sources bonded heteroatom-on-heteroatom get alternatives of their own class or none."""
    from collections import Counter

    from chemgauge.eval.rejections import RejectionStats
    from chemgauge.families.p2s.build import read_sources, select_records
    from chemgauge.families.p2s.shortcuts import group_features

    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(HETERO + nci_smiles[:300]) + "\n")
    skipped: Counter[str] = Counter()
    records = select_records(
        read_sources(sources, RejectionStats()), BuildConfig(directories=("dipole",)), skipped
    )
    assert len(records) > 50 and skipped["pool_smaller_than_task"] >= 4
    for record in records:
        features = [group_features(record.masked_smiles, c) for c in record.candidates]
        assert all(f is not None for f in features)
        bonds = {f.attachment_bond for f in features if f is not None}
        elements = {f.attachment_element for f in features if f is not None}
        assert len(bonds) == len(elements), record  # one scaffold element on every bond
        classes = {"halogen" if e in {"F", "Cl", "Br", "I"} else e for e in elements}
        assert len(classes) == 1, record


def test_build_refuses_a_release_with_a_leak(
    built: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A builder that put the source first would be stopped before writing anything."""
    original = selection._make_record

    def source_first(*args: Any, **kwargs: Any) -> selection.Record | None:
        record = original(*args, **kwargs)
        if record is None:
            return None
        rest = tuple(c for c in record.candidates if c != record.source)
        return dataclasses.replace(record, candidates=(record.source, *rest), answer=0)

    monkeypatch.setattr(selection, "_make_record", source_first)
    out = built["root"] / "leaky"
    config = BuildConfig(directories=DIRECTORIES)
    with pytest.raises(AuditError, match=r"dipole/correct: leak position_0 100\.0%"):
        build_benchmark(built["sources"], out, TableProvider(built["table"]), config)
    assert not list(out.glob("*/*.jsonl"))  # no view written (a property journal may be)


def test_cli_audit_passes_a_clean_build_and_fails_a_leaky_one(built: dict[str, Path]) -> None:
    result = runner.invoke(app, ["p2s", "audit", str(built["data"])])
    assert result.exit_code == 0, result.output
    assert "audit PASSED" in result.output and "structure_only" in result.output

    def plant(directory: str, condition: str, tasks: list[Any], labels: list[Any]) -> None:
        for task, label in zip(tasks, labels, strict=True):
            source = label.get("source_label", label["label"])
            task["candidate_completed_smiles"][source] += " "  # a spelling leak

    rewrite_release(built["data"], plant)
    out = built["root"] / "audit.json"
    result = runner.invoke(app, ["p2s", "audit", str(built["data"]), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "BEATS CHANCE" in result.output and "spelling" in result.output
    assert json.loads(out.read_text())["passed"] is False


def test_a_site_choice_of_the_source_alone_is_caught_by_the_replay(
    nci_smiles: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the closure check, a site chosen by a hash of the source's own group lets a
    reader with the published seed replay the rule on each candidate and find the source."""
    monkeypatch.setattr(
        selection, "_site_key", lambda seed, site: ("", selection.seeded_hash(seed, site.group))
    )

    def unchecked(line: int, source: str, name: str, config: Any, skipped: Any) -> Any:
        chosen = selection.choose_site(source, config, Counter())
        if chosen is None:
            return None
        site, block = chosen
        rid = selection.record_id(config.seed, site.masked_smiles, block)
        ordered = tuple(sorted(block, key=lambda c: selection.seeded_hash(rid, c)))
        return selection.Record(
            rid,
            source,
            name,
            line,
            site.masked_smiles,
            site.group,
            site.masked_atoms,
            site.group_heavy_atoms,
            site.scaffold_attachment_element,
            ordered,
            ordered.index(source),
            "test",
            0,
        )

    monkeypatch.setattr(selection, "_make_record", unchecked)
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(nci_smiles[:300]) + "\n")
    config = BuildConfig(directories=("dipole",))
    table = tmp_path / "t.jsonl"
    write_table(sources, table, config)
    with pytest.raises(AuditError, match=r"dipole/correct: leak selection_replay"):
        build_benchmark(sources, tmp_path / "d", TableProvider(table), config)
