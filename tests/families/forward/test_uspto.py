"""Real data: USPTO-50k through corpus-from-uspto, extract-templates and train-extracted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import shared_file

from chemgauge.errors import InputFileError
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.corpus import load_corpus
from chemgauge.families.forward.extraction import extract_split_templates
from chemgauge.families.forward.runner import run_benchmark
from chemgauge.families.forward.uspto import write_uspto_corpus


@pytest.fixture(scope="module")
def uspto_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """250 val and 150 test reactions (the CSVs trimmed, file stems kept for reaction ids)."""
    tmp = tmp_path_factory.mktemp("uspto")
    trimmed = []
    for name, keep in (("val.csv", 250), ("test_with_class.csv", 150)):
        lines = shared_file(f"uspto50k/{name}").read_text().splitlines(keepends=True)
        assert len(lines) - 1 == {"val.csv": 5001, "test_with_class.csv": 5007}[name]
        folder = tmp / name.split(".")[0]
        folder.mkdir()
        (folder / name).write_text("".join(lines[: keep + 1]))
        trimmed.append(folder / name)
    sample = tmp / "sample.jsonl"
    assert write_uspto_corpus(trimmed, sample) == 400
    return sample


@pytest.mark.slow
def test_uspto_records_are_unmapped_and_grouped_by_patent(uspto_corpus: Path) -> None:
    first = json.loads(uspto_corpus.read_text().splitlines()[0])
    assert first["reaction_id"] == "val:2" and first["group_key"] == "US08329716B2"
    assert all(":" not in s for s in first["reactants"]) and first["reaction_class"] == "5"
    corpus = load_corpus(uspto_corpus)
    patents = {}
    for reaction in corpus.reactions:
        patents.setdefault(reaction.group_key, set()).add(reaction.split)
    assert all(len(splits) == 1 for splits in patents.values())  # a patent never straddles


@pytest.mark.slow
def test_train_extracted_benchmark_on_uspto_sample(uspto_corpus: Path, tmp_path: Path) -> None:
    run = extract_split_templates(
        uspto_corpus, "train", tmp_path / "t", ExecutorConfig(kind="local", jobs=2)
    )
    extraction = run.manifest["extraction"]
    assert extraction["extracted"] + extraction["failed"] == run.manifest["reactions_in_split"]
    assert extraction["extracted"] >= 0.9 * run.manifest["reactions_in_split"]
    config = BenchmarkConfig(
        corpus=uspto_corpus,
        out=tmp_path,
        template_source="train-extracted",
        templates=run.templates_path,
        template_manifest=run.manifest_path,
        executor="local",
        jobs=2,
        chunk_size=8,
    )
    run = run_benchmark(config)
    report = run.report["metrics"]
    assert (
        report["overall"]["n_rows"]
        == 400
        - report["corpus"]["stats"]["duplicate_records_merged"]
        - report["corpus"]["stats"]["malformed_json"]
    )
    held_out = [report["by_split"][s] for s in ("val", "test")]
    for block in held_out:
        coverage = block["proposal_coverage"]
        assert coverage["n"] > 0 and 0.0 <= coverage["value"] <= 1.0
        assert coverage["interval"][0] <= coverage["value"] <= coverage["interval"][1]
    # Templates seen in training reproduce training reactions: the train split is covered best.
    train = report["by_split"]["train"]["proposal_coverage"]["value"]
    assert train >= max(b["proposal_coverage"]["value"] for b in held_out)
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert {r["provenance"]["template_source"] for r in rows} == {"train-extracted"}
    assert sum(r["proposal_status"] == "error" for r in rows) == 0


def _mini_csv(path: Path, patent: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"id,class,reactants>reagents>production\n{patent},1,CCO.CC(=O)O>>CCOC(C)=O\n")
    return path


def test_two_csv_files_with_one_name_get_distinct_reaction_ids(tmp_path: Path) -> None:
    a = _mini_csv(tmp_path / "a" / "test.csv", "US1")
    b = _mini_csv(tmp_path / "b" / "test.csv", "US2")
    out = tmp_path / "corpus.jsonl"
    assert write_uspto_corpus([a, b], out) == 2
    ids = [json.loads(line)["reaction_id"] for line in out.read_text().splitlines()]
    assert ids == ["a/test:2", "b/test:2"]
    assert load_corpus(out).stats.counts["conflicting_reaction_ids"] == 0
    other = _mini_csv(tmp_path / "c" / "val.csv", "US3")
    write_uspto_corpus([a, other], out)
    ids = [json.loads(line)["reaction_id"] for line in out.read_text().splitlines()]
    assert ids == ["test:2", "val:2"]  # unique names keep the plain stem


def test_the_same_csv_twice_is_refused(tmp_path: Path) -> None:
    a = _mini_csv(tmp_path / "a" / "test.csv", "US1")
    with pytest.raises(InputFileError, match="given twice"):
        write_uspto_corpus([a, tmp_path / "a" / ".." / "a" / "test.csv"], tmp_path / "c.jsonl")
