"""Template source modes and the attested manifest of train-extracted templates."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chemgauge.errors import ConfigError, InputFileError, ManifestError, TemplateProvenanceError
from chemgauge.eval.provenance import sha256_file
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.engine.rules import load_embedded_rules
from chemgauge.families.forward.extraction import extract_split_templates
from chemgauge.families.forward.runner import run_benchmark
from chemgauge.families.forward.sources import load_rules_for_source

from .conftest import FIXTURE_CORPUS, corpus_line, write_mapped_corpus


def _config(
    corpus: Path,
    out: Path,
    source: str = "embedded",
    templates: Path | None = None,
    manifest: Path | None = None,
    **kw: Any,
) -> BenchmarkConfig:
    """A serial benchmark of ``corpus`` into the run folder ``out``."""
    return BenchmarkConfig(
        corpus=corpus,
        out=out,
        template_source=source,
        templates=templates,
        template_manifest=manifest,
        executor="serial",
        **kw,
    )


@pytest.fixture
def mapped_corpus(tmp_path: Path) -> Path:
    return write_mapped_corpus(tmp_path / "mapped.jsonl")


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
    result = run_benchmark(_config(FIXTURE_CORPUS, tmp_path / "run", "file", rules))
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
    config = _config(
        mapped_corpus,
        tmp_path / "run",
        "train-extracted",
        run.templates_path,
        run.manifest_path,
    )
    report = run_benchmark(config).report
    assert report["provenance"]["template_source"] == "train-extracted"
    assert report["provenance"]["template_manifest_sha256"] is not None
    sources = report["metrics"]["rules"]["template_sources"]
    assert {k: sources[k] for k in ("verified", "method", "source_reactions", "templates")} == {
        "verified": True,
        "method": "rederived",
        "source_reactions": 2,
        "templates": 2,
    }
    assert sources["templates_accepted"] == 2 and sources["refused"] == []
    by_split = report["metrics"]["by_split"]
    assert by_split["val"]["proposal_coverage"]["value"] == 1.0
    assert by_split["test"]["proposal_coverage"]["value"] == 0.0  # water not written
    assert by_split["val"]["end_to_end"]["ndcg_at_10"]["value"] < 1.0  # 1 of 2 accepted found
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
    config = _config(
        mapped_corpus, tmp_path / "run", "train-extracted", run.templates_path, manifest
    )
    with pytest.raises(ManifestError, match=message):
        run_benchmark(config)
    assert not (tmp_path / "run" / "rows.jsonl").exists()


def test_train_extracted_needs_a_manifest_for_this_corpus(
    mapped_corpus: Path, tmp_path: Path
) -> None:
    run = extract_split_templates(mapped_corpus, "train", tmp_path / "train")
    with pytest.raises(ConfigError, match="needs --template-manifest"):
        load_rules_for_source("train-extracted", run.templates_path, None, "x")
    edited = tmp_path / "edited.jsonl"
    edited.write_text(mapped_corpus.read_text() + corpus_line("n", ["C"], [["C"]]) + "\n")
    config = _config(
        edited, tmp_path / "run", "train-extracted", run.templates_path, run.manifest_path
    )
    with pytest.raises(ManifestError, match="another corpus"):
        run_benchmark(config)
    with pytest.raises(ManifestError, match="not valid JSON"):
        load_rules_for_source("train-extracted", run.templates_path, _bad_text(tmp_path), "x")


def _bad_text(tmp: Path) -> Path:
    path = tmp / "broken.json"
    path.write_text("{")
    return path


def test_reproducibility_hash_does_not_depend_on_how_paths_are_spelled(
    mapped_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same corpus, rules and rows: one reproducibility_sha256, absolute or relative paths."""
    monkeypatch.chdir(tmp_path)
    absolute = extract_split_templates(mapped_corpus.resolve(), "train", tmp_path / "abs")
    relative = extract_split_templates(Path("./mapped.jsonl"), "train", Path("rel"))
    assert absolute.manifest_path.read_bytes() == relative.manifest_path.read_bytes()
    assert not any("mapped.jsonl" in str(v) for v in absolute.manifest.values())
    hashes = set()
    for corpus, run, rows in (
        (mapped_corpus.resolve(), absolute, tmp_path / "run_abs"),
        (Path("sub/../mapped.jsonl"), relative, Path("run_rel")),
    ):
        (tmp_path / "sub").mkdir(exist_ok=True)
        config = _config(corpus, rows, "train-extracted", run.templates_path, run.manifest_path)
        hashes.add(run_benchmark(config).report["reproducibility_sha256"])
    assert len(hashes) == 1


def _rule_lines(path: Path, rules: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(rule) + "\n" for rule in rules))
    return path


def test_a_rule_file_with_no_runnable_rule_is_refused(tmp_path: Path) -> None:
    """Every rule an empty (graph) rule: not a benchmark of anything, with or without --strict."""
    empty = _rule_lines(
        tmp_path / "graph.jsonl",
        [{"template_id": "g1", "smirks": ""}, {"template_id": "g2", "smirks": "  "}],
    )
    with pytest.raises(ConfigError, match=r"no runnable rule.*2 graph rules"):
        load_rules_for_source("file", empty, None, "x")
    for strict in (False, True):
        config = _config(FIXTURE_CORPUS, tmp_path / "run", "file", empty, strict=strict)
        with pytest.raises(ConfigError, match="no runnable rule"):
            run_benchmark(config)
    assert not (tmp_path / "run" / "rows.jsonl").exists()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"split_protocol_version": "1"}, "split_protocol_version must be an integer, got '1'"),
        ({"split_protocol_version": True}, "split_protocol_version must be an integer"),
        ({"templates_sha256": 7}, "templates_sha256 must be a SHA-256 hex digest"),
        ({"source_corpus_sha256": "abc"}, "source_corpus_sha256 must be a SHA-256 hex digest"),
        ({"included_split": ["train"]}, "included_split must be a string"),
    ],
)
def test_a_mistyped_manifest_field_is_named_as_mistyped(
    mapped_corpus: Path, tmp_path: Path, edit: dict[str, Any], message: str
) -> None:
    run = extract_split_templates(mapped_corpus, "train", tmp_path / "train")
    manifest = _bad(tmp_path, {**run.manifest, **edit})
    with pytest.raises(ManifestError) as info:
        load_rules_for_source("train-extracted", run.templates_path, manifest, "x")
    assert message in str(info.value) and "changed" not in str(info.value)


def _attest(tmp: Path, manifest: dict[str, Any], templates: Path, name: str) -> Path:
    """A manifest edited to claim the train split for ``templates`` (hashes made to match)."""
    edited = {**manifest, "included_split": "train", "templates_sha256": sha256_file(templates)}
    path = tmp / name
    path.write_text(json.dumps(edited))
    return path


def test_templates_from_outside_train_are_refused_whatever_the_manifest_says(
    mapped_corpus: Path, tmp_path: Path
) -> None:
    """Extracted from every split, manifest edited to say train: the sources say otherwise."""
    run = extract_split_templates(mapped_corpus, "all", tmp_path / "all")
    sources = [json.loads(line)["source_reaction_ids"] for line in run.templates_path.open()]
    # x1's mapped reaction (ethyl acetate) is not its accepted products (with water): excluded
    assert sorted(sources) == [["t1", "v1"], ["t2"]]
    assert run.manifest["mapping_mismatches_by_reason"]["mapped_products_differ"] == 1
    manifest = _attest(tmp_path, run.manifest, run.templates_path, "claims_train.json")
    config = _config(
        mapped_corpus, tmp_path / "strict", "train-extracted", run.templates_path, manifest
    )
    with pytest.raises(TemplateProvenanceError) as info:
        run_benchmark(replace(config, strict=True))
    message = str(info.value)
    assert "(source_not_train: 'v1', which is in split 'val')" in message
    assert "1 of 2 template(s) fail the recomputed checks" in message
    assert not (tmp_path / "strict" / "rows.jsonl").exists()
    # without --strict the template is refused, named and counted; the other one runs
    report = run_benchmark(config).report
    checked = report["metrics"]["rules"]["template_sources"]
    assert checked["verified"] is False and checked["templates_refused"] == 1
    assert checked["refused_by_reason"] == {"source_not_train": 1}
    assert report["metrics"]["rules"]["rules_loaded"] == 1


def test_templates_without_checkable_sources_are_refused(
    mapped_corpus: Path, tmp_path: Path
) -> None:
    run = extract_split_templates(mapped_corpus, "train", tmp_path / "train")
    rules = [json.loads(line) for line in run.templates_path.open()]
    cases = {
        "no_sources.jsonl": ([{**r, "source_reaction_ids": None} for r in rules], "records no"),
        "unknown.jsonl": (
            [{**r, "source_reaction_ids": ["nowhere"]} for r in rules],
            "'nowhere', which is not a valid reaction of this corpus",
        ),
    }
    for name, (lines, message) in cases.items():
        templates = _rule_lines(tmp_path / name, [{k: v for k, v in r.items() if v} for r in lines])
        manifest = _attest(tmp_path, run.manifest, templates, f"{name}.manifest.json")
        config = _config(mapped_corpus, tmp_path / "run", "train-extracted", templates, manifest)
        with pytest.raises(TemplateProvenanceError, match=message):
            run_benchmark(config)


def test_a_source_rejected_in_hindsight_is_not_a_train_reaction(
    mapped_corpus: Path, tmp_path: Path
) -> None:
    """t1 is train when extracted; a later copy with another group key rejects it."""
    run = extract_split_templates(mapped_corpus, "train", tmp_path / "train")
    grown = tmp_path / "grown.jsonl"
    lines = mapped_corpus.read_text().splitlines()
    first = json.loads(lines[0])
    copy = corpus_line("t1b", first["reactants"], first["accepted_products"], group_key="other")
    grown.write_text("\n".join([*lines, copy]) + "\n")
    again = extract_split_templates(grown, "all", tmp_path / "grown")
    templates = _rule_lines(
        tmp_path / "t.jsonl", [json.loads(line) for line in run.templates_path.open()]
    )
    manifest = _attest(tmp_path, again.manifest, templates, "grown_manifest.json")
    config = _config(grown, tmp_path / "run", "train-extracted", templates, manifest, strict=False)
    report = run_benchmark(config).report
    [refused] = report["metrics"]["rules"]["template_sources"]["refused"]
    assert refused["reason"] == "source_rejected"
    assert "'t1', which is rejected in hindsight" in refused["detail"]
