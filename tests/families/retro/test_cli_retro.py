"""``chemgauge retro``: key=value and --flags, errors without tracebacks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
from typer.testing import CliRunner

from chemgauge.cli.app import app


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data"
    data.mkdir()
    (data / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\nCCO.CC(=O)O>>CCOC(C)=O\n")
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"product": "CNC(C)=O", "predictions": ["C1CC", "CN.CC(=O)O"]}\n')
    return data, preds


def test_key_value_and_flags_give_the_same_report(tmp_path: Path) -> None:
    data, preds = _setup(tmp_path)
    runner = CliRunner()
    a = runner.invoke(
        app,
        [
            "retro",
            "eval",
            f"data_dir={data}",
            "model_class=predictions",
            f"model_dir={preds}",
            "num_top_results=5",
            f"results_dir={tmp_path / 'a'}",
            "executor=serial",
            "allow_missing=true",  # one of the two targets has no predictions
        ],
    )
    assert a.exit_code == 0, a.output
    assert re.search(r"syntheseus\s*\|\s*exact\s*\|\s*2\s*\|\s*50\.0% \[9\.5, 90\.5\]", a.output)
    b = runner.invoke(
        app,
        [
            "retro",
            "eval",
            "--data-dir",
            str(data),
            "-m",
            "predictions",
            "--model-dir",
            str(preds),
            "--num-top-results",
            "5",
            "-o",
            str(tmp_path / "b"),
            "--executor",
            "serial",
            "--allow-missing",
            "--quiet",
        ],
    )
    assert b.exit_code == 0, b.output
    # --quiet drops the summary, never the warning about what was not scored
    assert b.output.startswith("warning: 1 of 2 targets (50.0%) have no line")
    ra = orjson.loads((tmp_path / "a" / "report.json").read_bytes())
    rb = orjson.loads((tmp_path / "b" / "report.json").read_bytes())
    assert ra["reproducibility_sha256"] == rb["reproducibility_sha256"]
    assert ra["metrics"] == rb["metrics"]


def test_out_and_model_are_the_flags_of_results_dir_and_model_class(tmp_path: Path) -> None:
    data, preds = _setup(tmp_path)
    common = [f"data_dir={data}", f"model_dir={preds}", "executor=serial", "allow_missing=1"]
    proc = subprocess.run(
        [sys.executable, "-m", "chemgauge", "retro", "eval", *common, "--model", "predictions"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "results in runs/retro" in proc.stderr  # the default run folder
    assert (tmp_path / "runs" / "retro" / "report.json").is_file()
    runner = CliRunner()
    both = runner.invoke(
        app,
        ["retro", "eval", *common, "model_class=predictions", "-m", "templates", "-q"],
    )
    assert both.exit_code != 0
    assert "'model_class' given twice" in str(both.exception)
    clash = runner.invoke(
        app, ["retro", "eval", *common, "-m", "predictions", "results_dir=x", "--out", "y"]
    )
    assert clash.exit_code != 0
    assert "'out' given twice" in str(clash.exception)


def test_unknown_key_fails_with_did_you_mean_and_exit_2(tmp_path: Path) -> None:
    data, preds = _setup(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "chemgauge",
            "retro",
            "eval",
            f"data_dir={data}",
            "model_class=predictions",
            f"model_dir={preds}",
            "num_top_result=5",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2
    assert "unknown option 'num_top_result'. Did you mean 'num_top_results'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "predictions.jsonl").exists()  # validated before any work


def test_conflicting_key_value_and_flag(tmp_path: Path) -> None:
    data, _ = _setup(tmp_path)
    result = CliRunner().invoke(
        app,
        [
            "retro",
            "eval",
            f"data_dir={data}",
            "model_class=predictions",
            "--fold",
            "val",
            "fold=test",
        ],
    )
    assert result.exit_code != 0
    assert "given as key=value and as --flag" in str(result.exception)


def test_models_and_targets_commands(tmp_path: Path) -> None:
    data, _ = _setup(tmp_path)
    runner = CliRunner()
    models = runner.invoke(app, ["retro", "models"])
    assert models.output.split() == [
        "predictions",
        "templates",
        "neuralsym",
        "similarity",
        "syntheseus:<ModelClass>",
    ]
    targets = runner.invoke(app, ["retro", "targets", str(data)])
    assert "test.smi (smi): 2 targets, 0 rejected" in targets.output
    spelt = runner.invoke(app, ["retro", "targets", str(data), "--fold", "TEST"])
    assert spelt.output == targets.output


def test_the_summary_counts_divergences_and_a_cut_warns_even_when_quiet(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\nCCO.CC(=O)O>>CCOC(C)=O\n")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        '{"product": "CNC(C)=O", "predictions": ["", "CN.CC(=O)O"]}\n'
        '{"product": "CCOC(C)=O", "predictions": ["CCO.CC(=O)O", "CC", "CCC", "CCCC"]}\n'
    )
    base = [
        "retro",
        "eval",
        f"data_dir={data}",
        "model_class=predictions",
        f"model_dir={preds}",
        "num_top_results=2",
        "executor=serial",
    ]
    runner = CliRunner()
    loud = runner.invoke(app, [*base, f"results_dir={tmp_path / 'a'}"])
    assert loud.exit_code == 0, loud.output
    # the '' output holds a rank for syntheseus: the truth is second there, first for chemgauge
    assert "differs from the 'syntheseus' convention on 1 of 2 targets: empty_output 1" in (
        loud.output
    )
    assert "warning: 2 outputs beyond num_top_results=2 were cut (1 targets)" in loud.output
    quiet = runner.invoke(app, [*base, f"results_dir={tmp_path / 'b'}", "--quiet"])
    assert quiet.exit_code == 0
    assert "differs from" not in quiet.output and "were cut" in quiet.output
