"""Runner and report: statuses, budgets, denominators, repeats, determinism, resume."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chemgauge.errors import ConfigError
from chemgauge.eval.envelope import without_timing
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.families.ocsr.engine.recognizers import PythonRecognizer
from chemgauge.families.ocsr.evaluate import score_attempts
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.page import write_html
from chemgauge.families.ocsr.report import write_report
from chemgauge.families.ocsr.runner import (
    describe_plan,
    plan_attempts,
    run_attempts,
)
from chemgauge.families.ocsr.scoring import POLICIES

GLY_ALA = "NCC(=O)N[C@@H](C)C(=O)O"
BOC = "CC(C)(C)OC(=O)N[C@@H](C)C(=O)[O-].[Na+]"
TABLE: dict[str, Any] = {
    "ethanol": {"smiles": None, "clarification": "please send a higher-resolution image"},
    "ethanol_11x5": {"smiles": None, "clarification": "image too small"},
    "gly_l_ala": GLY_ALA,
    "gly_l_ala_lowres": "NCC(=O)NCC(=O)O",  # drops the methyl and its stereo
    "gly_l_ala_lowcontrast": {"status": "provisional", "smiles": GLY_ALA},
    "gly_l_ala_crop": "CC(NC=O)C(=O)O",
    "boc_l_ala_sodium": "CC(C)(C)OC(=O)N[C@@H](C)C(=O)[O-]",  # sodium lost
    "boc_l_ala_sodium_lowres": RuntimeError("model crashed"),
}


def _run(
    manifest: Manifest, name: str, out: Path, config: RunConfig
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = run_attempts(manifest, PythonRecognizer(name), config, out)
    scored = score_attempts(manifest, rows)
    report = write_report(out, manifest, scored, POLICIES, {"test": True}, page=write_html)
    return scored, report


def test_plan_is_repeat_major_and_dry_run_describes_budgets(small_cohort: Manifest) -> None:
    config = RunConfig(repeats=2, max_requests=10)
    plan = plan_attempts(small_cohort, config)
    assert len(plan) == 16
    assert [p.repeat for p in plan] == [1] * 8 + [2] * 8
    assert plan[8].attempt_id == "ethanol#r2"
    text = describe_plan(small_cohort, config, {"backend": "x"})
    assert "planned attempts: 16" in text and "at most 10 attempt(s) can start" in text


def test_dry_run_at_zero_requests_says_zero(small_cohort: Manifest) -> None:
    text = describe_plan(small_cohort, RunConfig(max_requests=0), {"backend": "x"})
    assert "at most 0 attempt(s) started;" in text
    assert "at most 0 attempt(s) can start" in text
    unbounded = describe_plan(small_cohort, RunConfig(), {})
    assert "no limit on attempts started; 60 s per attempt; no overall time limit" in unbounded
    assert "unbounded s" not in unbounded


def test_statuses_denominators_and_localized_errors(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers(TABLE)
    scored, report = _run(small_cohort, name, tmp_path, RunConfig(repeats=2, max_requests=12))
    by_id = {r["attempt_id"]: r for r in scored}
    assert by_id["ethanol#r1"]["status"] == "clarification"
    assert by_id["gly_l_ala_lowcontrast#r1"]["status"] == "provisional"
    assert by_id["boc_l_ala_sodium_lowres#r1"]["status"] == "failure"
    assert "model crashed" in by_id["boc_l_ala_sodium_lowres#r1"]["recognition"]["message"]
    # Budget: 12 of 16 planned attempts start; the last four repeats are not_run.
    not_run = [r["attempt_id"] for r in scored if r["status"] == "not_run"]
    assert not_run == [
        "gly_l_ala_lowcontrast#r2",
        "gly_l_ala_crop#r2",
        "boc_l_ala_sodium#r2",
        "boc_l_ala_sodium_lowres#r2",
    ]
    assert all(r["not_run_reason"] == "max_requests (12) reached" for r in scored[12:])
    report = report["metrics"]
    finite = report["finite_reference"]
    # 6 finite-reference cases x 2 repeats; ethanol_11x5 and the crop are qualitative.
    assert finite["planned"] == 12 and report["no_reference"]["planned"] == 4
    assert finite["statuses"] == {
        "completed": 5,
        "provisional": 1,
        "clarification": 2,
        "failure": 1,
        "timeout": 0,
        "not_run": 3,
    }
    exact = finite["policies"]["exact"]
    # gly_l_ala twice; provisional exact previews are counted apart.
    assert (exact["completed_exact"], exact["provisional_exact"]) == (2, 1)
    assert exact["completed_exact_over_planned"]["n"] == 12
    assert finite["policies"]["stereo_ignored"]["completed_exact"] == 2
    errors = report["localized_errors"]["attempts_with_category"]
    assert errors["missing_fragment"] == 1  # sodium lost
    assert errors["missing_atom"] == 2 and errors["tetrahedral_stereo_missing"] == 2
    assert errors["abbreviation_label"] == 1  # SMILES cannot carry the Boc label
    assert errors["abbreviation_member_chemistry"] == 0
    qualitative = {a["attempt_id"]: a for a in report["no_reference"]["attempts"]}
    assert qualitative["ethanol_11x5#r1"]["message"] == "image too small"
    assert qualitative["gly_l_ala_crop#r1"]["candidate_smiles"] == "CC(NC=O)C(=O)O"
    consistency = {c["case_id"]: c for c in report["consistency"]}
    assert consistency["gly_l_ala"]["same_graph"] and consistency["gly_l_ala"]["same_status"]
    assert "boc_l_ala_sodium" not in consistency  # its repeat was not run
    page = (tmp_path / "report.html").read_text()
    assert page.count('class="failure attempt"') == 16  # one per attempt
    assert page.count('class="card"') == len(finite["policies"])  # the headline, per policy


def test_neutral_image_names_and_validation_apart_from_exactness(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers({"gly_l_ala": "C1CC", "ethanol": "CCN"})
    scored, report = _run(small_cohort, name, tmp_path, RunConfig())
    assert set(RECOGNIZERS.get(name).seen) == {"input.png"}  # type: ignore[attr-defined]
    by_id = {r["attempt_id"]: r for r in scored}
    bad = by_id["gly_l_ala#r1"]
    assert bad["status"] == "completed" and bad["candidate"]["accepted"] is False
    assert bad["identity"]["exact"] == "no_candidate"
    wrong = by_id["ethanol#r1"]
    assert wrong["candidate"]["accepted"] is True and wrong["identity"]["exact"] == "mismatch"
    assert report["metrics"]["validation"]["completed"]["accepted"] == 1


def test_report_bytes_identical_across_runs_and_jobs(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers(TABLE)
    _, first = _run(small_cohort, name, tmp_path / "a", RunConfig(repeats=2))
    _, second = _run(small_cohort, name, tmp_path / "b", RunConfig(repeats=2, jobs=3))
    assert first["reproducibility_sha256"] == second["reproducibility_sha256"]
    assert without_timing(first) == without_timing(second)
    html_a = (tmp_path / "a" / "report.html").read_bytes()
    assert html_a == (tmp_path / "b" / "report.html").read_bytes()


def test_resume_skips_finished_attempts(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers(TABLE)
    recognizer = PythonRecognizer(name)
    run_attempts(small_cohort, recognizer, RunConfig(), tmp_path)
    assert recognizer.calls == 8
    again = PythonRecognizer(name)
    rows = run_attempts(small_cohort, again, RunConfig(), tmp_path)
    assert again.calls == 0 and len(rows) == 8
    # A budget is not part of what an attempt returns: a smaller one resumes and runs nothing.
    assert len(run_attempts(small_cohort, again, RunConfig(max_requests=3), tmp_path)) == 8
    assert again.calls == 0
    with pytest.raises(ConfigError, match="another configuration"):
        run_attempts(small_cohort, again, RunConfig(per_workflow_seconds=5), tmp_path)


def test_overall_budget_exhausted_records_not_run(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    import time

    name = answers({})
    slow = RECOGNIZERS.get(name)

    def sleepy(image: Path) -> str:
        time.sleep(0.3)
        return str(slow(image))

    RECOGNIZERS.register("test_sleepy", sleepy, replace=True)
    rows = run_attempts(
        small_cohort, PythonRecognizer("test_sleepy"), RunConfig(budget_seconds=0.5), tmp_path
    )
    statuses = [r["status"] for r in rows]
    assert statuses[0] != "not_run" and statuses[-1] == "not_run"
    reasons = {r["not_run_reason"] for r in rows if r["status"] == "not_run"}
    assert reasons == {"overall budget (0.5 s) exhausted"}
    ran = [r for r in rows if r["status"] != "not_run"]
    assert all(r["timeout_seconds"] <= 0.5 for r in ran)
    assert json.loads(json.dumps(rows)) == rows  # rows are plain JSON: they round-trip


def test_abbreviation_labels_and_repeat_reliability_from_real_graphs(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    """The Boc reference's label is recalled from a molfile that keeps its superatom group,
    never from SMILES (which cannot carry it), while both are exact graphs."""
    from chemgauge.chem import parse_smiles
    from chemgauge.chem.molfile import add_abbreviation, mol_to_molfile

    with_label = mol_to_molfile(add_abbreviation(parse_smiles(BOC), "Boc", range(7)))
    seen: dict[str, int] = {}

    def answer(case: str, first: str, later: str) -> Callable[[Path], str]:
        def recognize(image: Path) -> str:
            seen[case] = seen.get(case, 0) + 1
            return first if seen[case] == 1 else later

        return recognize

    name = answers({"ethanol": "CCO"})
    table = RECOGNIZERS.get(name)
    per_case = {
        "boc_l_ala_sodium": answer("boc", with_label, BOC),  # label kept, then SMILES
        "gly_l_ala": answer("gly", GLY_ALA, "NCC(=O)NCC(=O)O"),  # exact once of two
    }
    hashes = {small_cohort.by_id[case].sha256: fn for case, fn in per_case.items()}

    def recognize(image: Path) -> Any:
        import hashlib

        digest = hashlib.sha256(image.read_bytes()).hexdigest()
        return hashes[digest](image) if digest in hashes else table(image)

    RECOGNIZERS.register("test_labels", recognize, replace=True)
    scored, report = _run(small_cohort, "test_labels", tmp_path, RunConfig(repeats=2))
    by_id = {row["attempt_id"]: row for row in scored}
    first, second = by_id["boc_l_ala_sodium#r1"], by_id["boc_l_ala_sodium#r2"]
    assert first["identity"]["exact"] == second["identity"]["exact"] == "match"
    assert first["abbreviations"] == {"reference": ["Boc"], "candidate": ["Boc"], "recalled": 1}
    assert second["abbreviations"] == {"reference": ["Boc"], "candidate": [], "recalled": 0}
    assert by_id["ethanol#r1"]["abbreviations"] is None
    labels = report["metrics"]["abbreviations"]
    # boc_l_ala_sodium and its lowres variant carry the Boc group: 2 cases x 2 repeats.
    assert (labels["planned_groups"], labels["recalled"]) == (4, 1)
    assert labels["by_label"] == {"Boc": {"planned": 4, "recalled": 1}}
    repeats = report["metrics"]["repeats"]
    exact = repeats["policies"]["exact"]
    # six finite-reference images: ethanol and boc exact in both repeats, gly_l_ala in one.
    assert (repeats["repeats"], repeats["cases"]) == (2, 6)
    assert (exact["exact_in_all"]["count"], exact["exact_in_any"]["count"]) == (2, 3)
