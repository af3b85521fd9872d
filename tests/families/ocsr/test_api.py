"""``chemgauge.families.ocsr.run`` and ``score``: the commands as calls, with the same report."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import chemgauge.families.ocsr
from chemgauge.cli.app import app
from chemgauge.families.ocsr.config import RecognizerOptions
from chemgauge.families.ocsr.manifest import Manifest


def _report(folder: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((folder / "report.json").read_text())
    return loaded


def _cli(*args: str) -> None:
    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, done.output


def test_ocsr_run_and_score_are_the_commands_as_calls(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers({"ethanol": "CCO"})
    manifest = small_cohort.root / "manifest.json"
    options = RecognizerOptions(callable=name)
    report = chemgauge.families.ocsr.run(
        manifest=manifest, model="python", out=tmp_path / "api", recognizer=options
    )
    assert _report(tmp_path / "api") == report
    exact = report["metrics"]["finite_reference"]["policies"]["exact"]["completed_exact"]
    assert exact == 1
    cli = tmp_path / "cli"
    _cli(
        "ocsr", "run", "--manifest", str(manifest), "--model", "python", "--callable", name,
        "-o", str(cli), "--run", "-q",
    )  # fmt: skip
    assert report["reproducibility_sha256"] == _report(cli)["reproducibility_sha256"]
    again = chemgauge.families.ocsr.score(manifest=manifest, out=tmp_path / "api")
    assert again["reproducibility_sha256"] == report["reproducibility_sha256"]
