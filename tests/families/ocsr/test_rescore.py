"""``ocsr score`` keeps the run's provenance, and refuses a journal edited since the run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.eval.envelope import without_timing
from chemgauge.eval.provenance import sha256_json
from chemgauge.families.ocsr.manifest import Manifest

runner = CliRunner()
GLY_ALA = "NCC(=O)N[C@@H](C)C(=O)O"


@pytest.fixture
def finished(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> Path:
    """A finished run folder (a budget cut some attempts), with its report."""
    name = answers({"ethanol": "CCO", "gly_l_ala": GLY_ALA, "gly_l_ala_lowres": "NCC"})
    out = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "ocsr", "run", "--manifest", str(small_cohort.root / "manifest.json"),
            "--model", "python", "--callable", name, "-o", str(out), "--run", "--max-requests", "6",
            "--budget-seconds", "600", "--quiet",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def _score(manifest: Manifest, out: Path) -> Any:
    return runner.invoke(
        app,
        ["ocsr", "score", "--manifest", str(manifest.root / "manifest.json"), "-o", str(out), "-q"],
    )


def _report(out: Path) -> dict[str, Any]:
    return dict(json.loads((out / "report.json").read_text()))


def test_score_on_a_finished_run_keeps_config_hash_and_backend(
    small_cohort: Manifest, finished: Path
) -> None:
    before = _report(finished)
    config = before["config"]
    assert config["backend"]["backend"] == "python"
    assert (
        config["run_config"]["max_requests"] == 6 and config["run_config"]["budget_seconds"] == 600
    )
    journal = before["timing"]["attempts_journal"]
    assert journal["path"] == "attempts.jsonl"
    assert journal["size"] == (finished / "attempts.jsonl").stat().st_size
    result = _score(small_cohort, finished)
    assert result.exit_code == 0, result.output
    after = _report(finished)
    assert after["config_sha256"] == before["config_sha256"]
    assert after["config"]["backend"] == config["backend"]
    assert after["provenance"]["backends"] == before["provenance"]["backends"]
    assert without_timing(after) == without_timing(before)  # nothing else changed either
    assert after["timing"]["attempts_journal"] == journal


def test_an_edited_attempts_journal_is_not_rescored(small_cohort: Manifest, finished: Path) -> None:
    journal = finished / "attempts.jsonl"
    report = (finished / "report.json").read_bytes()
    # Turn the wrong answer into the right one: a plausible, well-formed edit.
    journal.write_text(journal.read_text().replace('"NCC"', f'"{GLY_ALA}"'))
    result = _score(small_cohort, finished)
    assert result.exit_code != 0
    message = str(result.exception)
    assert "attempts.jsonl" in message and "changed since the run recorded it" in message
    assert (finished / "report.json").read_bytes() == report  # nothing rewritten


def test_verify_catches_an_edited_attempts_journal(finished: Path) -> None:
    assert runner.invoke(app, ["verify", str(finished)]).exit_code == 0
    journal = finished / "attempts.jsonl"
    journal.write_text(journal.read_text().replace('"NCC"', f'"{GLY_ALA}"'))
    result = runner.invoke(app, ["verify", str(finished)])
    assert result.exit_code != 0
    assert "timing.attempts_journal.sha256" in result.output


def test_a_changed_scoring_policy_is_said_and_recorded(
    small_cohort: Manifest, finished: Path
) -> None:
    path = finished / "report.json"
    report = _report(finished)
    # A run scored under an older claim of the exact policy, as that run would record it.
    report["config"]["scoring"]["claims"]["exact"] = "canonical isomeric SMILES"
    report["config_sha256"] = sha256_json(report["config"])
    path.write_text(json.dumps(report))
    result = runner.invoke(
        app,
        [
            "ocsr",
            "score",
            "--manifest",
            str(small_cohort.root / "manifest.json"),
            "-o",
            str(finished),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "scoring changed since the run: claim of 'exact'" in result.output
    after = _report(finished)
    assert after["config_sha256"] != report["config_sha256"]
    assert after["provenance"]["rescored"][0].startswith("scoring changed")
    assert after["config"]["backend"] == report["config"]["backend"]


def test_score_needs_the_runs_record_and_its_manifest(
    small_cohort: Manifest, finished: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.json"
    data = json.loads((small_cohort.root / "manifest.json").read_text())
    data["description"] = "another manifest"
    other.write_text(json.dumps(data))
    result = runner.invoke(
        app, ["ocsr", "score", "--manifest", str(other), "-o", str(finished), "-q"]
    )
    assert result.exit_code != 0
    assert "is not the manifest the run used" in str(result.exception)
    (finished / "report.json").unlink()
    result = _score(small_cohort, finished)
    assert result.exit_code != 0
    assert "no report records this run's attempts hash" in str(result.exception)


def _run_args(manifest: Manifest, out: Path, *extra: str) -> list[str]:
    return [
        "ocsr", "run", "--manifest", str(manifest.root / "manifest.json"), "--model", "python",
        "--callable", "test_table", "-o", str(out), "--run", "--quiet", *extra,
    ]  # fmt: skip


def test_an_edited_journal_is_not_resumed_either(small_cohort: Manifest, finished: Path) -> None:
    journal = finished / "attempts.jsonl"
    journal.write_text(journal.read_text().replace('"NCC"', f'"{GLY_ALA}"'))
    limits = ("--max-requests", "6", "--budget-seconds", "600")
    result = runner.invoke(app, _run_args(small_cohort, finished, *limits))
    assert result.exit_code != 0
    assert "changed since the run that wrote report.json" in str(result.exception)
    restarted = runner.invoke(app, _run_args(small_cohort, finished, *limits, "--restart"))
    assert restarted.exit_code == 0, restarted.output
    assert '"NCC"' in journal.read_text()  # run again from scratch


def test_an_unfinished_extension_is_resumed_not_rescored(
    small_cohort: Manifest, finished: Path
) -> None:
    """A resumed run that appended rows and stopped before its report: score says to finish
    it, and the run (which only appended) resumes."""
    from chemgauge.families.ocsr.config import RunConfig
    from chemgauge.families.ocsr.engine.recognizers import PythonRecognizer
    from chemgauge.families.ocsr.runner import journal_attempts

    journal_attempts(
        small_cohort,
        PythonRecognizer("test_table"),
        RunConfig(max_requests=7, budget_seconds=600),
        finished,
    )  # rows appended, no report written (as if interrupted before scoring)
    result = _score(small_cohort, finished)
    assert result.exit_code != 0
    assert "holds rows written after the run's report" in str(result.exception)
    limits = ("--max-requests", "7", "--budget-seconds", "600")
    assert runner.invoke(app, _run_args(small_cohort, finished, *limits)).exit_code == 0
    assert _report(finished)["metrics"]["all_attempts"]["statuses"]["not_run"] == 1
    assert _score(small_cohort, finished).exit_code == 0


def test_verify_catches_an_edited_claim(finished: Path) -> None:
    """Claims describe the code, not rows: the one in metrics must be the one the config
    (and its hash) recorded."""
    path = finished / "report.json"
    report = _report(finished)
    report["metrics"]["finite_reference"]["policies"]["exact"]["claim"] = "anything goes"
    path.write_text(json.dumps(report))
    result = runner.invoke(app, ["verify", str(finished)])
    assert result.exit_code == 1
    assert "policies[*].claim" in result.output
