"""``chemgauge p2s`` end to end through the real Typer app, with the table provider."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import ConfigError
from chemgauge.families.p2s.config import BuildConfig

from .conftest import SECRET, SOURCES, write_table

runner = CliRunner()


def test_build_tasks_run_score_claim(tmp_path: Path) -> None:
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    table = tmp_path / "t.jsonl"
    write_table(sources, table, BuildConfig(directories=("dipole",)))
    data, runs = tmp_path / "data", tmp_path / "runs"
    secret = tmp_path / "secret"
    secret.write_text(SECRET)  # the fixtures' build secret: the same views as every fixture
    result = runner.invoke(
        app,
        [
            "p2s",
            "build",
            str(sources),
            "-o",
            str(data),
            "-p",
            "dipole",
            "-p",
            "gap",
            "--provider",
            "table",
            "--table",
            str(table),
            "--secret-file",
            str(secret),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "2 rejected" in result.output
    assert re.search(r"dipole\s*\|\s*10\s*\|\s*10\s*\|\s*20\s*\|", result.output), result.output

    result = runner.invoke(app, ["p2s", "tasks", str(data)])
    assert result.exit_code == 0, result.output
    assert "dipole: correct 10, shuffled 10, counterfactual 20" in result.output

    for model in ("structure_only", "random", "property_oracle"):
        result = runner.invoke(
            app,
            [
                "p2s",
                "run",
                str(data),
                "-m",
                model,
                "-o",
                str(runs),
                "-p",
                "dipole",
                "--provider",
                "table",
                "--table",
                str(table),
                "-q",
            ],
        )
        assert result.exit_code == 0, result.output

    result = runner.invoke(
        app,
        [
            "p2s",
            "score",
            "--data",
            str(data),
            "--property",
            "dipole",
            "--condition",
            "counterfactual",
            "--predictions",
            str(runs / "property_oracle/dipole/counterfactual.jsonl"),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    accuracy = json.loads(result.output)["accuracy"]
    assert (accuracy["count"], accuracy["n"], accuracy["value"]) == (20, 20, 1.0)

    report = tmp_path / "claim.json"
    result = runner.invoke(
        app,
        [
            "p2s",
            "claim",
            "--data",
            str(data),
            "--property",
            "dipole",
            "--run",
            str(runs / "property_oracle"),
            "-o",
            str(report),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "use claim: YES" in result.output
    assert json.loads(report.read_text())["use_claim"] is True
    result = runner.invoke(
        app,
        [
            "p2s",
            "claim",
            "--data",
            str(data),
            "--property",
            "dipole",
            "--run",
            str(runs / "structure_only"),
        ],
    )
    assert "use claim: no" in result.output


def test_bad_predictions_exit_2_naming_file_and_line(
    tmp_path: Path, built: dict[str, Path]
) -> None:
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        '{"record_id": "x", "selected_candidate_index": 0}\n'
        '{"record_id": "x", "selected_candidate_index": 1}\n'
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chemgauge",
            "p2s",
            "score",
            "--data",
            str(built["data"]),
            "--property",
            "dipole",
            "--condition",
            "correct",
            "--predictions",
            str(predictions),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert f"{predictions}, line 2: duplicate record_id" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_structure_only_runs_are_recorded_as_such(tmp_path: Path, built: dict[str, Path]) -> None:
    """Rows of an --omit-properties run hold no evidence; the report config says so."""
    from chemgauge.report.loading import load_run
    from chemgauge.report.verify import verify_run

    runs = tmp_path / "runs"
    base = ["p2s", "run", str(built["data"]), "-m", "random", "-o", str(runs), "-q"]
    for extra in ([], ["--omit-properties"]):
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
    for folder, omitted in (("random", False), ("random@no_property", True)):
        rows = [json.loads(line) for line in (runs / folder / "rows.jsonl").read_text().split()]
        assert rows and all(r["properties_omitted"] is omitted for r in rows)
        assert all(bool(r["properties"]) is not omitted for r in rows)
        report = json.loads((runs / folder / "report.json").read_text())
        assert report["config"]["omit_properties"] is omitted
        assert verify_run(load_run(runs / folder)).ok
    # scoring the folder again (from its prediction files) keeps what the manifest says
    again = runner.invoke(
        app,
        ["p2s", "score", "--data", str(built["data"]), "--out", str(runs / "random@no_property")],
    )
    assert again.exit_code == 0, again.output
    rows = (runs / "random@no_property" / "rows.jsonl").read_text().split("\n")[0]
    assert json.loads(rows)["properties"] == {}


def test_claim_rejects_an_alpha_outside_0_1_before_reading_anything(tmp_path: Path) -> None:
    """A level of 1.5 would let the claim hold on the sign of the difference alone."""
    result = runner.invoke(
        app,
        [
            "p2s",
            "claim",
            "--property",
            "dipole",
            "--run",
            str(tmp_path / "absent"),
            "--alpha",
            "1.5",
        ],
    )
    # the app raises; chemgauge's entry point turns a ConfigError into its message, exit 2
    assert isinstance(result.exception, ConfigError), result.output
    assert str(result.exception) == "--alpha must be in (0, 1), got 1.5"
    assert result.exception.exit_code == 2
