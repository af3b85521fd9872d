"""The four ways an audit raised held-out coverage past every check, on USPTO-50k reactions.

D1 decoy mapped reactions, D2 forged template sources (manifest hash recomputed), D3
near-duplicates (water on both sides, a salt and a solvent added), D4 a rule file extracted
from every split given in file mode. Each run is refused, or the rows are marked in-sample with
a warning, and the honest held-out figures stay what an honest run gives.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import shared_file

from chemgauge.errors import DataQualityError, TemplateProvenanceError
from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.provenance import sha256_file
from chemgauge.eval.splits import assign_split
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.corpus import load_corpus
from chemgauge.families.forward.engine.extraction import extract_forward_templates
from chemgauge.families.forward.extraction import ExtractionRun, extract_split_templates
from chemgauge.families.forward.leakage import audit_rows
from chemgauge.families.forward.runner import run_benchmark
from chemgauge.families.forward.uspto import write_uspto_corpus
from chemgauge.report.loading import load_run
from chemgauge.report.verify import verify_run

pytestmark = pytest.mark.slow
LINES = 50  # the first 50 reactions of USPTO-50k's validation file


def _train_keys() -> list[str]:
    return [k for k in (f"attack-{i}" for i in range(2000)) if assign_split(k) == "train"]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("attacks")


@pytest.fixture(scope="module")
def honest(tmp: Path) -> Path:
    """USPTO-50k reactions through corpus-from-uspto (patent ids as group keys)."""
    lines = shared_file("uspto50k/val.csv").read_text().splitlines(keepends=True)
    (tmp / "val").mkdir()
    csv = tmp / "val" / "val.csv"
    csv.write_text("".join(lines[: LINES + 1]))
    converted = tmp / "converted.jsonl"
    assert write_uspto_corpus([csv], converted) == LINES
    # the reactions the benchmark keeps (one copy of a repeated reaction, whose two patents
    # conflict), so --strict reads the corpus cleanly and only the attacks are refused
    loaded = load_corpus(converted)
    valid = {r.reaction_id for r in loaded.reactions} - {
        r.reaction_id for r in loaded.entries if not hasattr(r, "split")
    }
    corpus = _write(
        tmp / "honest.jsonl", [r for r in _records(converted) if r["reaction_id"] in valid]
    )
    assert len(load_corpus(corpus, strict=True).reactions) == len(valid) >= LINES - 5
    return corpus


def _records(corpus: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in corpus.read_text().splitlines()]


def _held_out_records(corpus: Path) -> list[dict[str, Any]]:
    splits = {r.reaction_id: r.split for r in load_corpus(corpus).reactions}
    return [r for r in _records(corpus) if splits.get(r["reaction_id"]) in ("val", "test")]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _run(corpus: Path, out: Path, source: str, run: ExtractionRun | None, **kw: Any) -> Any:
    config = BenchmarkConfig(
        corpus=corpus,
        out=out,
        template_source=source,
        templates=None if run is None else run.templates_path,
        template_manifest=None if run is None or source == "file" else run.manifest_path,
        executor="serial",
        **kw,
    )
    return run_benchmark(config)


def _figures(metrics: dict[str, Any], block: str = "held_out") -> dict[str, Any]:
    found = metrics[block]
    e2e = found["end_to_end"]
    return {
        "n_valid": found["n_valid"],
        "coverage": found["proposal_coverage"]["count"],
        "top1": e2e["top1_hit_rate"]["count"],
        "top10": e2e["top10_hit_rate"]["count"],
        "mrr": e2e["mrr"]["value"],
    }


def _verifies(result: Any) -> None:
    """``chemgauge verify`` recomputes the run (marks, audit, refusals) and agrees."""
    out = result.rows_path.parent
    write_envelope(out / "report.json", result.envelope)
    verified = verify_run(load_run(out))
    assert verified.ok, [d.describe() for d in verified.differences[:5]]


def _named_sources(run: ExtractionRun) -> set[str]:
    """Every reaction id the rule file names as a source."""
    lines = run.templates_path.read_text().splitlines()
    return {rid for line in lines for rid in json.loads(line)["source_reaction_ids"]}


def _forge_manifest(run: ExtractionRun, templates: Path, name: str) -> Path:
    """The attacker's manifest: every attested field made to hold for ``templates``."""
    manifest = {
        **run.manifest,
        "included_split": "train",
        "templates_sha256": sha256_file(templates),
    }
    path = templates.parent / name
    path.write_text(json.dumps(manifest))
    return path


@pytest.fixture(scope="module")
def honest_run(honest: Path, tmp: Path) -> tuple[ExtractionRun, dict[str, Any]]:
    extracted = extract_split_templates(honest, "train", tmp / "honest_templates")
    report = _run(honest, tmp / "honest_run", "train-extracted", extracted).report
    return extracted, report["metrics"]


def test_the_honest_run_holds_out_every_val_and_test_row(
    honest: Path, honest_run: tuple[ExtractionRun, dict[str, Any]], tmp: Path
) -> None:
    extracted, metrics = honest_run
    assert extracted.manifest["reactions_with_mismatched_mapping"] == 0
    held = len(_held_out_records(honest))
    assert held >= 10 and metrics["held_out"]["n_valid"] == held  # nothing held out is in-sample
    headline = metrics["headline"]
    assert headline["in_sample_splits"] == ["train"] and headline["warnings"] == []
    assert (
        headline["in_sample_rows"]["train"]
        == metrics["rules"]["template_sources"]["source_reactions"]
    )
    assert metrics["rules"]["template_sources"]["verified"] is True
    # the simplest honest path: train-extracted with no file extracts in the run, same figures
    in_run = _run(honest, tmp / "in_run", "train-extracted", None).report["metrics"]
    assert in_run["rules"]["template_sources"]["method"] == "extracted_in_run"
    assert (tmp / "in_run" / "templates" / "templates.jsonl").read_bytes() == (
        extracted.templates_path.read_bytes()
    )
    assert _figures(in_run) == _figures(metrics)


def _decoys(honest: Path) -> list[dict[str, Any]]:
    """D1: one train-bucket row per held-out reaction, unrelated reactants and product, the
    held-out reaction's mapped_reaction."""
    keys = _train_keys()
    return [
        {
            "schema_version": 1,
            "reaction_id": f"decoy-{i}",
            "reactants": ["C" * (i + 3) + "O"],
            "accepted_products": [["C" * (i + 3) + "Cl"]],
            "group_key": keys[i],
            "mapped_reaction": record["mapped_reaction"],
        }
        for i, record in enumerate(_held_out_records(honest))
    ]


def test_d1_decoy_mapped_reactions_are_excluded_and_their_templates_refused(
    honest: Path, honest_run: tuple[ExtractionRun, dict[str, Any]], tmp: Path
) -> None:
    extracted, metrics = honest_run
    decoys = _decoys(honest)
    attacked = _write(tmp / "d1.jsonl", _records(honest) + decoys)
    # extract-templates checks every mapped reaction against its row: decoys are excluded
    run = extract_split_templates(attacked, "train", tmp / "d1_templates")
    assert run.manifest["reactions_with_mismatched_mapping"] == len(decoys)
    assert run.manifest["mapping_mismatches_by_reason"]["mapped_reactants_differ"] == len(decoys)
    assert run.templates_path.read_bytes() == extracted.templates_path.read_bytes()
    report = _run(attacked, tmp / "d1_run", "train-extracted", run).report["metrics"]
    assert _figures(report) == _figures(metrics)
    # a rule file that trusted the decoys (extracted without the check), manifest made to fit
    reactions = load_corpus(attacked).reactions
    trusting = extract_forward_templates(
        (r.reaction_id, r.mapped_reaction or "", r.reaction_class)
        for r in reactions
        if r.split == "train" and r.mapped_reaction
    )
    forged = tmp / "d1_forged" / "templates.jsonl"
    forged.parent.mkdir()
    forged.write_bytes(trusting.to_jsonl())
    manifest = _forge_manifest(run, forged, "manifest.json")
    config = BenchmarkConfig(
        corpus=attacked,
        out=tmp / "d1_forged_run",
        template_source="train-extracted",
        templates=forged,
        template_manifest=manifest,
        executor="serial",
    )
    with pytest.raises(TemplateProvenanceError, match="source_mapping_mismatch"):
        run_benchmark(replace(config, strict=True))
    checked = run_benchmark(config).report["metrics"]
    sources = checked["rules"]["template_sources"]
    assert sources["verified"] is False
    assert sources["refused_by_reason"]["source_mapping_mismatch"] == sources["templates_refused"]
    assert sources["templates_refused"] >= len(decoys) // 2
    assert "decoy-" in sources["refused"][0]["detail"]
    # what the refusal leaves can only score what honest templates score, never more
    assert _figures(checked)["coverage"] <= _figures(metrics)["coverage"]


def test_d2_forged_sources_are_refused_by_re_extraction(
    honest: Path, honest_run: tuple[ExtractionRun, dict[str, Any]], tmp: Path
) -> None:
    extracted, metrics = honest_run
    every = extract_split_templates(honest, "all", tmp / "d2_all")
    splits = {r.reaction_id: r.split for r in load_corpus(honest).reactions}
    a_train_id = min(rid for rid, split in splits.items() if split == "train")
    forged = tmp / "d2_all" / "forged.jsonl"
    lines = []
    for line in every.templates_path.read_text().splitlines():
        rule = json.loads(line)
        rule["source_reaction_ids"] = sorted(
            {rid if splits[rid] == "train" else a_train_id for rid in rule["source_reaction_ids"]}
        )
        lines.append(json.dumps(rule, sort_keys=True) + "\n")
    forged.write_text("".join(lines))
    manifest = _forge_manifest(every, forged, "forged_manifest.json")
    config = BenchmarkConfig(
        corpus=honest,
        out=tmp / "d2_run",
        template_source="train-extracted",
        templates=forged,
        template_manifest=manifest,
        executor="serial",
    )
    with pytest.raises(TemplateProvenanceError, match="not_rederived"):
        run_benchmark(replace(config, strict=True))
    assert not (tmp / "d2_run" / "rows.jsonl").exists()
    forged_run = run_benchmark(config)
    _verifies(forged_run)
    checked = forged_run.report["metrics"]
    assert (tmp / "d2_run" / "verified_templates.jsonl").is_file()  # the rules it applied
    sources = checked["rules"]["template_sources"]
    honest_count = len(extracted.templates_path.read_text().splitlines())
    assert sources["templates_accepted"] == honest_count
    assert sources["templates_refused"] == len(lines) - honest_count > 0
    assert sources["refused_by_reason"] == {"not_rederived": sources["templates_refused"]}
    assert checked["rules"]["rules_content_sha256"] == metrics["rules"]["rules_content_sha256"]
    assert _figures(checked) == _figures(metrics)


def _near_copies(honest: Path) -> list[dict[str, Any]]:
    """D3: a train copy of every held-out reaction with a salt and a solvent added to its
    reactants, and every other one water on both sides too, mapped to match."""
    keys = _train_keys()
    out = []
    for i, record in enumerate(_held_out_records(honest)):
        left, middle, right = record["mapped_reaction"].split(">")
        extra = ["CN(C)C=O", "[Na+].[Cl-]"]
        mapped = f"{left}.CN(C)C=O.[Na+].[Cl-]>{middle}>{right}"
        accepted = record["accepted_products"]
        if i % 2 == 0:
            extra, mapped = [*extra, "O"], f"{left}.O.CN(C)C=O.[Na+].[Cl-]>{middle}>{right}.O"
            accepted = [[*accepted[0], "O"]]
        out.append(
            {
                "schema_version": 1,
                "reaction_id": f"copy-{record['reaction_id']}",
                "reactants": [*record["reactants"], *extra],
                "accepted_products": accepted,
                "group_key": keys[i],
                "mapped_reaction": mapped,
            }
        )
    return out


def test_d3_near_duplicates_are_caught_by_the_audit_and_marked_in_sample(
    honest: Path, honest_run: tuple[ExtractionRun, dict[str, Any]], tmp: Path
) -> None:
    copies = _near_copies(honest)
    attacked = _write(tmp / "d3.jsonl", _records(honest) + copies)
    run = extract_split_templates(attacked, "train", tmp / "d3_templates")
    assert run.manifest["reactions_with_mismatched_mapping"] == 0  # the copies are consistent
    with pytest.raises(DataQualityError, match="near-duplicate reactant set"):
        _run(attacked, tmp / "d3_strict", "train-extracted", run, strict=True)
    result = _run(attacked, tmp / "d3_run", "train-extracted", run)
    _verifies(result)
    metrics = result.report["metrics"]
    near = metrics["leakage"]["near_duplicates"]
    held = len(copies)
    assert metrics["leakage"]["reactant_sets"]["shared_across_splits"] == 0  # exact sees nothing
    assert near["reactant_sets"]["shared_across_splits"] == held
    assert near["products"]["shared_across_splits"] >= held // 2
    assert {m["smiles"] for m in near["spectators"]["frequent_molecules"]} >= {
        "CN(C)C=O",
        "[Na+]",
        "[Cl-]",
    }
    assert any("near-duplicates" in w for w in metrics["leakage"]["warnings"])
    rows = [json.loads(line) for line in result.rows_path.read_text().splitlines()]
    sources = _named_sources(run)
    marked = [r for r in rows if r["split"] != "train" and r["in_sample"]]
    copied = {c["reaction_id"].removeprefix("copy-") for c in copies if c["reaction_id"] in sources}
    assert copied and {r["reaction_id"] for r in marked} >= copied
    assert all(r["in_sample_reason"] == "near_duplicate_of_source" for r in marked)
    assert (
        metrics["headline"]["warnings"]
        and "val/test row(s) are in-sample" in (metrics["headline"]["warnings"][0])
    )
    assert metrics["held_out"]["n_valid"] == held - len(marked)
    assert audit_rows(rows) == metrics["leakage"]  # verify recomputes it from rows


def test_d4_a_rule_file_from_every_split_marks_its_sources_in_sample_in_file_mode(
    honest: Path, honest_run: tuple[ExtractionRun, dict[str, Any]], tmp: Path
) -> None:
    every = extract_split_templates(honest, "all", tmp / "d4_all")
    result = _run(honest, tmp / "d4_run", "file", every)
    _verifies(result)
    metrics = result.report["metrics"]
    headline = metrics["headline"]
    rows = [json.loads(line) for line in result.rows_path.read_text().splitlines()]
    named = _named_sources(every)
    held = [r for r in rows if r["split"] in ("val", "test")]
    in_sample = [r for r in held if r["in_sample"]]
    assert {r["reaction_id"] for r in held} & named <= {r["reaction_id"] for r in in_sample}
    assert in_sample and headline["basis"] == "held_out"
    assert set(headline["in_sample_splits"]) >= {"train", "val"}
    assert headline["overall_includes_in_sample_rows"] is True
    assert headline["warnings"] and f"{len(in_sample)} val/test row(s)" in headline["warnings"][0]
    assert metrics["held_out"]["n_valid"] == len(held) - len(in_sample)
    # the held-out rows that are left score only on templates from other reactions
    out_of_sample = {r["reaction_id"] for r in held if not r["in_sample"]}
    assert not out_of_sample & named
