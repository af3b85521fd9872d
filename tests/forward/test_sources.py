"""Template source modes and the attested manifest of train-extracted templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chemgauge.benchmarks.forward.extraction import extract_split_templates
from chemgauge.benchmarks.forward.runner import BenchmarkConfig, run_benchmark
from chemgauge.benchmarks.forward.sources import ManifestError, load_rules_for_source
from chemgauge.engines.forward.rules import load_embedded_rules
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.eval.splits import assign_split

from .conftest import FIXTURE_CORPUS, corpus_line

SERIAL = ExecutorConfig(kind="serial", jobs=1)
AMIDE = "[CH3:1][C:2](=[O:3])[OH:4].[NH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:5][CH3:6]"
ESTER = "[CH3:1][C:2](=[O:3])[OH:4].[OH:5][CH2:6][CH3:7]>>[CH3:1][C:2](=[O:3])[O:5][CH2:6][CH3:7]"


def _key(split: str, n: int = 0) -> str:
    keys = (f"P{i}" for i in range(1000))
    return [k for k in keys if assign_split(k) == split][n]


@pytest.fixture
def mapped_corpus(tmp_path: Path) -> Path:
    lines = [
        corpus_line(
            "t1", ["CC(=O)O", "CN"], [["CNC(C)=O"]], group_key=_key("train"), mapped_reaction=AMIDE
        ),
        corpus_line(
            "t2",
            ["CC(=O)O", "CCO"],
            [["CCOC(C)=O"]],
            group_key=_key("train", 1),
            mapped_reaction=ESTER,
        ),
        corpus_line("t3", ["CC(=O)O", "CCCO"], [["CCCOC(C)=O"]], group_key=_key("train", 2)),
        corpus_line(
            "v1",
            ["OC(C)=O", "NC"],
            [["CC(=O)NC"], ["CCC"]],
            group_key=_key("val"),
            mapped_reaction=AMIDE,
        ),
        corpus_line(
            "x1",
            ["CC(=O)O", "OCC"],
            [["CCOC(C)=O", "O"]],
            group_key=_key("test"),
            mapped_reaction=ESTER,
        ),
    ]
    path = tmp_path / "mapped.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_unknown_and_scorer_conditioned_sources_are_rejected() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'embedded'"):
        load_rules_for_source("embeded", None, None, "x")
    with pytest.raises(ConfigError, match="learned scorer"):
        load_rules_for_source("scorer-conditioned", None, None, "x")


def test_embedded_refuses_a_stray_templates_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="never mixed"):
        load_rules_for_source("embedded", tmp_path / "t.jsonl", None, "x")
    loaded = load_rules_for_source("embedded", None, None, "x")
    assert loaded.rules is load_embedded_rules() and loaded.rules_file_sha256 is None


def test_file_source_is_only_that_file(tmp_path: Path) -> None:
    rules = tmp_path / "two.jsonl"
    embedded = list(load_embedded_rules())[:2]
    rules.write_text(
        "".join(
            json.dumps({"template_id": r.template_id, "smirks": r.smirks}) + "\n" for r in embedded
        )
    )
    loaded = load_rules_for_source("file", rules, None, "x")
    assert len(loaded.rules) == 2 and loaded.rules_file_sha256 is not None
    with pytest.raises(ConfigError, match="needs --templates"):
        load_rules_for_source("file", None, None, "x")
    with pytest.raises(InputFileError, match="file not found"):
        load_rules_for_source("file", tmp_path / "missing.jsonl", None, "x")
    result = run_benchmark(
        BenchmarkConfig(FIXTURE_CORPUS, tmp_path / "rows.jsonl", "file", rules), SERIAL
    )
    assert result.report["metrics"]["rules"]["rules_loaded"] == 2
    assert result.report["provenance"]["rules_file_sha256"] == loaded.rules_file_sha256


def test_extraction_reads_only_the_requested_split(mapped_corpus: Path, tmp_path: Path) -> None:
    run = extract_split_templates(mapped_corpus, "train", tmp_path / "train")
    manifest = run.manifest
    assert manifest["included_split"] == "train"
    assert manifest["reactions_in_split"] == 3 and manifest["reactions_without_mapping"] == 1
    assert manifest["extraction"]["extracted"] == 2
    on_disk = json.loads(run.manifest_path.read_text())
    assert on_disk == manifest
    every = extract_split_templates(mapped_corpus, "all", tmp_path / "all").manifest
    assert every["included_split"] == "all" and every["reactions_in_split"] == 5
    with pytest.raises(ConfigError, match="--split"):
        extract_split_templates(mapped_corpus, "dev", tmp_path / "dev")


def test_train_extracted_runs_with_a_valid_manifest(mapped_corpus: Path, tmp_path: Path) -> None:
    run = extract_split_templates(mapped_corpus, "train", tmp_path / "train")
    config = BenchmarkConfig(
        mapped_corpus,
        tmp_path / "rows.jsonl",
        "train-extracted",
        run.templates_path,
        run.manifest_path,
    )
    report = run_benchmark(config, SERIAL).report
    assert report["provenance"]["template_source"] == "train-extracted"
    assert report["provenance"]["template_manifest_sha256"] is not None
    by_split = report["metrics"]["by_split"]
    assert by_split["val"]["proposal_coverage"]["value"] == 1.0
    assert by_split["test"]["proposal_coverage"]["value"] == 0.0  # water not written
    assert by_split["val"]["end_to_end"]["ndcg_at_10"] < 1.0  # 1 of 2 accepted found
    assert [i["role"] for i in report["inputs"]] == ["corpus", "templates", "template_manifest"]


def _bad(tmp: Path, manifest: dict[str, Any]) -> Path:
    path = tmp / "bad_manifest.json"
    path.write_text(json.dumps(manifest))
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"split_protocol_version": 99}, "split algorithm changed"),
        ({"included_split": "all"}, "train split only"),
        ({"templates_sha256": "0" * 64}, "another rule file"),
        ({"source_corpus_sha256": "0" * 64}, "another corpus"),
    ],
)
def test_every_manifest_mismatch_is_a_hard_error(
    mapped_corpus: Path, tmp_path: Path, edit: dict[str, Any], message: str
) -> None:
    run = extract_split_templates(mapped_corpus, "train", tmp_path / "train")
    manifest = _bad(tmp_path, {**run.manifest, **edit})
    config = BenchmarkConfig(
        mapped_corpus, tmp_path / "rows.jsonl", "train-extracted", run.templates_path, manifest
    )
    with pytest.raises(ManifestError, match=message):
        run_benchmark(config, SERIAL)
    assert not (tmp_path / "rows.jsonl").exists()


def test_train_extracted_needs_a_manifest_for_this_corpus(
    mapped_corpus: Path, tmp_path: Path
) -> None:
    run = extract_split_templates(mapped_corpus, "train", tmp_path / "train")
    with pytest.raises(ConfigError, match="needs --template-manifest"):
        load_rules_for_source("train-extracted", run.templates_path, None, "x")
    edited = tmp_path / "edited.jsonl"
    edited.write_text(mapped_corpus.read_text() + corpus_line("n", ["C"], [["C"]]) + "\n")
    config = BenchmarkConfig(
        edited, tmp_path / "rows.jsonl", "train-extracted", run.templates_path, run.manifest_path
    )
    with pytest.raises(ManifestError, match="another corpus"):
        run_benchmark(config, SERIAL)
    with pytest.raises(ManifestError, match="not valid JSON"):
        load_rules_for_source("train-extracted", run.templates_path, _bad_text(tmp_path), "x")


def _bad_text(tmp: Path) -> Path:
    path = tmp / "broken.json"
    path.write_text("{")
    return path
