"""Record selection carries no answer: ids, candidate sets and order are the same whichever
candidate is the source; counterfactual donors and ids name no donor; views skip ties."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_module

from chemgauge.errors import ConfigError
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.p2s.build import (
    BuildConfig,
    build_benchmark,
    read_sources,
    select_records,
)
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.selection import (
    choose_site,
    counterfactual_id,
    record_id,
    replayed_record_id,
)
from chemgauge.families.p2s.views import same_evidence

from .conftest import SECRET, SOURCES, fake_properties, write_table


def nci_records(nci_smiles: list[str], tmp_path: Path, n: int = 250) -> list[Any]:
    sources = tmp_path / "nci.smi"
    sources.write_text("\n".join(nci_smiles[:n]) + "\n")
    config = BuildConfig(directories=("dipole",))
    return select_records(read_sources(sources, RejectionStats()), config, Counter())


def test_any_candidate_as_source_gives_the_same_task(nci_smiles: list[str], tmp_path: Path) -> None:
    """Replaying the selection with each candidate as the source (the seed is published):
    same site, same candidate set, same id, so the replay cannot single out the source."""
    records = nci_records(nci_smiles, tmp_path)
    assert len(records) > 40
    config = BuildConfig(directories=("dipole",)).selection()
    for record in records[:40]:
        for other in record.candidates:
            chosen = choose_site(other, config, Counter())
            assert chosen is not None and chosen[0].masked_smiles == record.masked_smiles
            assert set(chosen[1]) == set(record.candidates)
            assert replayed_record_id(other, config) == record.record_id


def test_answer_positions_are_uniform(nci_smiles: list[str], tmp_path: Path) -> None:
    records = nci_records(nci_smiles, tmp_path, 600)
    positions = Counter(r.answer for r in records)
    # 4 positions: no position holds more than a third of the answers on 150+ records
    assert len(records) > 150 and max(positions.values()) < len(records) / 3


def test_counterfactual_donors_and_ids_come_from_the_secret(built: dict[str, Path]) -> None:
    """Ids rebuild only with the secret (never from the published seed), and the donor is not
    the candidate after the answer (id scheme 2's rule)."""
    data = built["data"] / "dipole"
    labels = [json.loads(x) for x in (data / "counterfactual.labels.jsonl").read_text().split()]
    assert len(labels) >= 16
    after = 0
    for label in labels:
        base = label["base_record_id"]
        secret_ids = {counterfactual_id(SECRET, "dipole", base, j) for j in range(4)}
        public_ids = {counterfactual_id("0", "dipole", base, j) for j in range(4)}
        assert label["record_id"] in secret_ids and label["record_id"] not in public_ids
        after += label["label"] == (label["source_label"] + 1) % 4
    assert after < len(labels)


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_same_evidence_within_rounding() -> None:
    assert same_evidence(
        {"dipole": {"value": 1.2344, "unit": "D"}},
        {"dipole": {"value": 1.2341, "unit": "D", "method": "x"}},
    )
    assert not same_evidence(
        {"dipole": {"value": 1.234, "unit": "D"}}, {"dipole": {"value": 1.236, "unit": "D"}}
    )


def test_a_shuffled_value_equal_to_the_own_one_is_redrawn(tmp_path: Path) -> None:
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES[:6]) + "\n")
    config = BuildConfig(directories=("dipole",), seed=3)
    table = tmp_path / "t.jsonl"
    write_table(sources, table, config)
    records = select_records(read_sources(sources, RejectionStats()), config, Counter())
    rows = rows_of(table)
    by = {r["smiles"]: r for r in rows}
    # every source but the first carries the same dipole: only the first can be a donor that
    # differs for them, and the first's donor is re-drawn past its equals.
    same = {"value": 2.5, "unit": "D"}
    for record in records[1:]:
        by[record.source]["properties"]["dipole"] = same
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = tmp_path / "d"
    build_benchmark(sources, data, TableProvider(table), config)
    manifest = json.loads((data / "build_manifest.json").read_text())
    correct = {t["record_id"]: t for t in rows_of(data / "dipole" / "correct.jsonl")}
    shuffled = rows_of(data / "dipole" / "shuffled.jsonl")
    for task in shuffled:
        assert not same_evidence(task["properties"], correct[task["record_id"]]["properties"])
    assert manifest["shuffled_redrawn"].get("dipole:shuffled_value_equal_to_own", 0) >= 1


def test_a_directory_the_provider_cannot_fill_is_an_error(tmp_path: Path) -> None:
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    table = tmp_path / "t.jsonl"
    config = BuildConfig(directories=("dipole", "electronic"))
    write_table(sources, table, config)
    rows = rows_of(table)
    for row in rows:
        row["properties"].pop("ultraviolet_visible")
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError, match=r"'electronic' needs ultraviolet_visible, which the"):
        build_benchmark(sources, tmp_path / "d", TableProvider(table), config)
    assert not list((tmp_path / "d").glob("*/*.jsonl"))
    # the provider knows the property but no source has it: empty, and the error says why
    rows[0]["properties"]["ultraviolet_visible"] = fake_properties("C")["ultraviolet_visible"]
    table.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError, match=r"'electronic' would be empty.*source_without_property"):
        build_benchmark(sources, tmp_path / "d", TableProvider(table), config)
    assert not list((tmp_path / "d").glob("*/*.jsonl"))


def test_a_record_id_is_a_function_of_what_the_task_shows(built: dict[str, Path]) -> None:
    """Anyone can recompute the id from seed, scaffold and the candidate set: it holds nothing
    that tells one candidate from another."""
    for task in rows_of(built["data"] / "dipole" / "correct.jsonl"):
        cands = task["candidate_completed_smiles"]
        assert task["record_id"] == record_id(0, task["masked_smiles"], cands)
        assert record_id(0, task["masked_smiles"], cands[::-1]) == task["record_id"]


def test_electronic_with_xtb_is_refused_naming_what_xtb_cannot_compute(tmp_path: Path) -> None:
    require_module("tblite.interface")
    from typer.testing import CliRunner

    from chemgauge.cli import app

    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    out = tmp_path / "d"
    result = CliRunner().invoke(
        app, ["p2s", "build", str(sources), "-o", str(out), "-p", "electronic", "-q"]
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError)
    assert "'electronic' needs ultraviolet_visible" in str(result.exception)
    assert not list(out.glob("*/*.jsonl"))


def test_a_replayed_choice_counts_the_same_reasons(nci_smiles: list[str]) -> None:
    """choose_site is memoized: a second call (the closure check, the audit's replay) gives
    the same site and adds the same skip reasons as the first."""
    from chemgauge.families.p2s.selection import SelectionConfig, choose_site

    config = SelectionConfig(candidates=4, seed=7)
    for source in nci_smiles[:40]:
        first: Counter[str] = Counter()
        second: Counter[str] = Counter()
        assert choose_site(source, config, first) == choose_site(source, config, second)
        assert first == second
    unmaskable: Counter[str] = Counter()
    assert choose_site("C", config, unmaskable) is None
    assert choose_site("C", config, unmaskable) is None
    assert unmaskable == Counter({"no_maskable_group": 2})
