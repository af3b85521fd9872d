"""The protocol's bounded policy is the default for back-ends that ask a model or program
(16 workflows, 300 s each, 1,800 s overall, one reserved for a control run); --repeats and
--max-requests are capped; the dry run states every budget in words."""

from __future__ import annotations

import sys
from pathlib import Path

from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.families.ocsr.config import MAX_REPEATS, RunConfig
from chemgauge.families.ocsr.manifest import Manifest


def _dry(manifest: Manifest, *args: str) -> str:
    result = CliRunner().invoke(
        app, ["ocsr", "run", "--manifest", str(manifest.root / "manifest.json"), *args]
    )
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_command_and_http_get_the_bounded_policy(small_cohort: Manifest) -> None:
    command = ["--model", "command", "--command-arg", sys.executable, "--command-arg", "{image}"]
    text = _dry(small_cohort, *command)
    assert "at most 15 attempt(s) started; 300 s per attempt; 1,500 s overall" in text
    assert "16 workflows of 300 s within 1,800 s" in text and "reserved" in text
    http = ["--model", "http", "--url", "http://127.0.0.1:9/v1", "--endpoint-model", "m"]
    assert "at most 15 attempt(s) started; 300 s per attempt" in _dry(small_cohort, *http)
    overridden = _dry(small_cohort, *http, "--budget-seconds", "60", "--max-requests", "3")
    assert "at most 3 attempt(s) started; 300 s per attempt; 60 s overall" in overridden
    lifted = _dry(small_cohort, *http, "--unbounded")
    assert "no limit on attempts started" in lifted and "no overall time limit" in lifted


def test_osra_and_python_keep_their_unbounded_defaults(small_cohort: Manifest) -> None:
    text = _dry(small_cohort, "--model", "osra")
    assert "no limit on attempts started; 60 s per attempt; no overall time limit" in text


def test_repeats_and_max_requests_are_capped(small_cohort: Manifest, tmp_path: Path) -> None:
    manifest = str(small_cohort.root / "manifest.json")
    for flag, value in (("--repeats", "1000000"), ("--max-requests", "100000000")):
        result = CliRunner().invoke(app, ["ocsr", "run", "--manifest", manifest, flag, value])
        assert result.exit_code != 0 and flag in result.output
    assert RunConfig(repeats=MAX_REPEATS).repeats == MAX_REPEATS
    import pytest

    from chemgauge.errors import ConfigError

    with pytest.raises(ConfigError, match="repeats"):
        RunConfig(repeats=MAX_REPEATS + 1)


def test_the_api_applies_the_bounded_policy_to_a_command(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    import chemgauge.families.ocsr
    from chemgauge.families.ocsr.config import RecognizerOptions

    script = tmp_path / "r.py"
    script.write_text("print('CCO')")
    report = chemgauge.families.ocsr.run(
        small_cohort.root / "manifest.json",
        model="command",
        out=tmp_path / "run",
        recognizer=RecognizerOptions(command=(sys.executable, str(script), "{image}")),
        html=False,
    )
    policy = report["config"]["run_config"]
    assert (policy["max_requests"], policy["per_workflow_seconds"], policy["budget_seconds"]) == (
        15,
        300.0,
        1500.0,
    )


def test_render_refuses_to_replace_an_edited_manifest(tmp_path: Path) -> None:
    out = tmp_path / "cohort"
    render = ["ocsr", "render", "--out", str(out), "--width", "120", "--height", "90", "-q"]
    assert CliRunner().invoke(app, render).exit_code == 0
    manifest = out / "manifest.json"
    assert CliRunner().invoke(app, render).exit_code == 0  # the same manifest: fine
    edited = manifest.read_text().replace("chemgauge-ocsr-synthetic-v1", "my-edited-set")
    manifest.write_text(edited)
    result = CliRunner().invoke(app, render)
    assert result.exit_code != 0 and "differs" in str(result.exception)
    assert manifest.read_text() == edited


def test_every_not_run_count_names_its_reasons(small_cohort: Manifest, tmp_path: Path) -> None:
    script = tmp_path / "r.py"
    script.write_text("print('CCO')")
    result = CliRunner().invoke(
        app,
        [
            "ocsr", "run", "--manifest", str(small_cohort.root / "manifest.json"),
            "--model", "command", "--command-arg", sys.executable, "--command-arg", str(script),
            "--command-arg", "{image}", "--max-requests", "2", "-o", str(tmp_path / "o"),
            "--run",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "not run (max_requests (2) reached:" in text
    page = (tmp_path / "o" / "report.html").read_text()
    assert "not run (max_requests (2) reached:" in page
