"""Extending a run's budget resumes its journal and runs only the attempts not run before."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.eval.envelope import without_timing
from chemgauge.eval.provenance import strip_fields
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.families.ocsr.engine.recognizers import PythonRecognizer
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.runner import TIMING_FIELDS, run_attempts

GLY_ALA = "NCC(=O)N[C@@H](C)C(=O)O"


def _table(manifest: Manifest) -> dict[str, Any]:
    return {case.id: "CCO" if case.id.startswith("ethanol") else GLY_ALA for case in manifest.cases}


def _run(manifest: Manifest, name: str, out: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        app,
        [
            "ocsr", "run", "--manifest", str(manifest.root / "manifest.json"), "--model", "python",
            "--callable", name, "-o", str(out), "--run", "--repeats", "2", "--quiet", *extra,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return dict(json.loads((out / "report.json").read_text()))


def test_max_requests_3_then_10_makes_exactly_7_more_attempts(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers(_table(small_cohort))
    seen = RECOGNIZERS.get(name).seen  # type: ignore[attr-defined]
    out = tmp_path / "out"
    first = _run(small_cohort, name, out, "--max-requests", "3")
    assert len(seen) == 3 and first["metrics"]["all_attempts"]["statuses"]["not_run"] == 13
    extended = _run(small_cohort, name, out, "--max-requests", "10")
    assert len(seen) == 10  # exactly 7 more
    assert extended["metrics"]["all_attempts"]["statuses"]["not_run"] == 6
    rows = [json.loads(line) for line in (out / "scored.jsonl").read_text().splitlines()]
    reasons = {row["not_run_reason"] for row in rows if row["status"] == "not_run"}
    assert reasons == {"max_requests (10) reached"}
    # The extended run's rows are those of a run limited to 10 from the start.
    direct = tmp_path / "direct"
    _run(small_cohort, name, direct, "--max-requests", "10")
    again = [json.loads(line) for line in (direct / "scored.jsonl").read_text().splitlines()]
    assert [strip_fields(r, TIMING_FIELDS) for r in rows] == [
        strip_fields(r, TIMING_FIELDS) for r in again
    ]
    assert (
        extended["reproducibility_sha256"]
        == json.loads((direct / "report.json").read_text())["reproducibility_sha256"]
    )
    # The same command again sends nothing and writes nothing new to the journal.
    journal = (out / "attempts.jsonl").read_bytes()
    calls = len(seen)
    _run(small_cohort, name, out, "--max-requests", "10")
    assert len(seen) == calls and (out / "attempts.jsonl").read_bytes() == journal
    # Re-scoring the extended run reads the newest row of each attempt: the same report.
    report = without_timing(json.loads((out / "report.json").read_text()))
    rescored = CliRunner().invoke(
        app,
        [
            "ocsr",
            "score",
            "--manifest",
            str(small_cohort.root / "manifest.json"),
            "-o",
            str(out),
            "-q",
        ],
    )
    assert rescored.exit_code == 0, rescored.output
    assert without_timing(json.loads((out / "report.json").read_text())) == report


def test_a_larger_time_budget_runs_what_the_smaller_one_could_not(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers(_table(small_cohort))
    table = RECOGNIZERS.get(name)

    def sleepy(image: Path) -> str:
        time.sleep(0.3)
        return str(table(image))

    RECOGNIZERS.register("test_extend_sleepy", sleepy, replace=True)
    sleepy_backend = PythonRecognizer("test_extend_sleepy")
    short = run_attempts(small_cohort, sleepy_backend, RunConfig(budget_seconds=0.5), tmp_path)
    skipped = [row["attempt_id"] for row in short if row["status"] == "not_run"]
    assert skipped and all(
        row["not_run_reason"] == "overall budget (0.5 s) exhausted"
        for row in short
        if row["status"] == "not_run"
    )
    ran_before = {row["attempt_id"]: row for row in short if row["status"] != "not_run"}
    again = PythonRecognizer("test_extend_sleepy")
    longer = run_attempts(small_cohort, again, RunConfig(budget_seconds=120), tmp_path)
    assert again.calls == len(skipped)  # only what the smaller budget did not reach
    assert all(row["status"] != "not_run" for row in longer)
    for row in longer:  # the attempts that ran before keep their rows
        if row["attempt_id"] in ran_before:
            assert row == ran_before[row["attempt_id"]]
