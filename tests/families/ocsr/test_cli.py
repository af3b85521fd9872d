"""``chemgauge ocsr``: render, dry-run plan, a full run with a python back-end, bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.families.ocsr.manifest import Manifest

runner = CliRunner()


def test_render_writes_cohort(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ocsr", "render", "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "without a unique reference" in result.output
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest["manifest_version"] == 1 and len(manifest["cases"]) >= 15


def test_run_is_a_dry_run_by_default_then_runs(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers({"ethanol": "CCO"})
    manifest = str(small_cohort.root / "manifest.json")
    out = tmp_path / "out"
    base = [
        "ocsr",
        "run",
        "--manifest",
        manifest,
        "-m",
        "python",
        "--callable",
        name,
        "-o",
        str(out),
    ]
    dry = runner.invoke(app, base)
    assert dry.exit_code == 0 and "dry run" in dry.output and not out.exists()
    done = runner.invoke(app, [*base, "--run", "--max-requests", "3", "--quiet"])
    assert done.exit_code == 0, done.output
    report = json.loads((out / "report.json").read_text())
    assert report["metrics"]["all_attempts"]["statuses"]["not_run"] == 5
    assert report["metrics"]["finite_reference"]["policies"]["exact"]["completed_exact"] == 1
    assert report["inputs"][0]["role"] == "manifest"
    rescored = runner.invoke(
        app, ["ocsr", "score", "--manifest", manifest, "-o", str(out), "--quiet"]
    )
    assert rescored.exit_code == 0
    assert (
        json.loads((out / "report.json").read_text())["reproducibility_sha256"]
        == report["reproducibility_sha256"]
    )


def test_backend_options_are_checked(small_cohort: Manifest) -> None:
    manifest = str(small_cohort.root / "manifest.json")
    result = runner.invoke(app, ["ocsr", "run", "--manifest", manifest, "--model", "http"])
    assert result.exit_code != 0 and "--url and --endpoint-model" in str(result.exception)


def test_image_limits_are_cli_options(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers({"ethanol": "CCO"})
    out = tmp_path / "tiny"
    args = [
        "ocsr",
        "run",
        "--manifest",
        str(small_cohort.root / "manifest.json"),
        "--model",
        "python",
    ]
    result = runner.invoke(
        app,
        [*args, "--callable", name, "-o", str(out), "--run", "--quiet", "--max-image-pixels", "1"],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()[1:]]
    assert rows and all(row["status"] == "not_run" for row in rows)
    assert all("pixels" in row["not_run_reason"] for row in rows)
    bad = runner.invoke(app, [*args, "--callable", name, "--max-image-pixels", "0"])
    assert bad.exit_code != 0 and "image limits must be positive" in str(bad.exception)


def test_one_spelling_per_option_and_m_is_the_model(small_cohort: Manifest) -> None:
    manifest = str(small_cohort.root / "manifest.json")
    for old in (["--backend", "osra"], ["--output", "out"], ["--model", "http", "--model-x"]):
        result = runner.invoke(app, ["ocsr", "run", "--manifest", manifest, *old])
        assert result.exit_code == 2 and "No such option" in result.output, old
    # -m names the system under test, never the manifest
    result = runner.invoke(app, ["ocsr", "run", "-m", manifest])
    assert result.exit_code == 2 and "Missing option '--manifest'" in result.output
    unknown = runner.invoke(app, ["ocsr", "run", "--manifest", manifest, "-m", "osr"])
    assert unknown.exit_code != 0 and "Did you mean 'osra'" in str(unknown.exception)
    score = runner.invoke(app, ["ocsr", "score", "-m", manifest])
    assert score.exit_code == 2 and "No such option: -m" in score.output
