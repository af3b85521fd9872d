"""The Python API (``chemgauge.families.<family>``: forward, retro, names, ocsr, p2s): each call
writes the run folder its command writes and returns the report, with the same numbers as the
command's, and keeps the command's guards (an output may not clobber an input; a run that
leaves too many targets unscored fails)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import chemgauge.families.forward
import chemgauge.families.names
import chemgauge.families.ocsr
import chemgauge.families.p2s
import chemgauge.families.retro
from chemgauge.cli.app import app
from chemgauge.cli.examples import copy_examples
from chemgauge.errors import ConfigError, DataQualityError, OutputPathError

runner = CliRunner()


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped example inputs in a fresh working folder."""
    copy_examples(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _cli(*args: str) -> None:
    done = runner.invoke(app, list(args))
    assert done.exit_code == 0, done.output


def _untimed(value: Any) -> Any:
    """A report part without its measured times (``latency_ms``, ``timing``)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in ("latency_ms", "timing")}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _report(folder: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((folder / "report.json").read_text())
    return loaded


def test_forward_benchmark_is_the_command_as_a_call(examples: Path) -> None:
    report = chemgauge.families.forward.benchmark(out="runs/api", executor="serial", seed=3)
    assert sorted(p.name for p in (examples / "runs/api").iterdir()) == [
        "report.json",
        "rows.jsonl",
    ]
    assert _report(examples / "runs/api") == report
    _cli("forward", "benchmark", "--out", "runs/cli", "--executor", "serial", "--seed", "3")
    command = _report(examples / "runs/cli")
    assert _untimed(report["metrics"]) == _untimed(command["metrics"])
    assert report["metrics"]["overall"]["n_rows"] > 0
    assert report["reproducibility_sha256"] == command["reproducibility_sha256"]


def test_forward_benchmark_refuses_to_write_over_its_corpus(examples: Path) -> None:
    corpus = examples / "runs/api/rows.jsonl"
    corpus.parent.mkdir(parents=True)
    corpus.write_bytes(chemgauge.families.forward.demo_corpus_path().read_bytes())
    with pytest.raises(OutputPathError, match=r"rows\.jsonl"):
        chemgauge.families.forward.benchmark(corpus, out="runs/api")
    assert corpus.read_bytes() == chemgauge.families.forward.demo_corpus_path().read_bytes()


def test_retro_evaluate_is_the_command_as_a_call(examples: Path) -> None:
    options = {"model_dir": "retro/predictions.jsonl", "fold": "test"}
    report = chemgauge.families.retro.evaluate("retro/data", "predictions", **options)
    assert _report(examples / "runs/retro") == report
    assert (examples / "runs/retro/syntheseus_results.json").is_file()
    _cli(
        "retro",
        "eval",
        "data_dir=retro/data",
        "model_class=predictions",
        "model_dir=retro/predictions.jsonl",
        "--out",
        "runs/retro-cli",
        "-q",
    )
    assert _untimed(report["metrics"]) == _untimed(_report(examples / "runs/retro-cli")["metrics"])
    # syntheseus's spelling of a key works here too, and an unknown key says what it meant
    keep = chemgauge.families.retro.evaluate(
        "retro/data", results_dir="runs/keep", skip_repeats="False", **options
    )
    assert report["config"]["skip_repeats"] is True
    assert keep["config"]["skip_repeats"] is False
    assert keep["config"]["conventions"][0] == "syntheseus_keep_repeats"
    with pytest.raises(ConfigError, match="num_top_results"):
        chemgauge.families.retro.evaluate("retro/data", out="runs/x", num_top_result=5, **options)


def test_retro_evaluate_fails_when_most_targets_are_unscored(examples: Path) -> None:
    lines = (examples / "retro/predictions.jsonl").read_text().splitlines()
    (examples / "few.jsonl").write_text("\n".join(lines[:2]) + "\n")
    with pytest.raises(DataQualityError, match="could not be scored"):
        chemgauge.families.retro.evaluate("retro/data", model_dir="few.jsonl", out="runs/few")
    report = chemgauge.families.retro.evaluate(
        "retro/data", model="predictions", model_dir="few.jsonl", out="runs/few", allow_missing=True
    )
    assert report["metrics"]


@pytest.mark.external
def test_names_coverage_is_the_command_as_a_call(examples: Path) -> None:
    report = chemgauge.families.names.coverage("names/pairs.tsv")
    assert _report(examples / "runs/names") == report
    _cli("names", "coverage", "--input", "names/pairs.tsv", "--out", "runs/n")
    assert _untimed(report["metrics"]) == _untimed(_report(examples / "runs/n")["metrics"])
    strict = report["metrics"]["lenses"]["strict"]["counts"]
    assert sum(strict.values()) == report["metrics"]["total"] > 0
    named = chemgauge.families.names.coverage(
        smiles="names/structures.smi", namer_cmd="python3 names/namer.py", out="runs/api-namer"
    )
    _cli("names", "coverage", "-m", "command", "--namer-cmd", "python3 names/namer.py",
         "--smiles", "names/structures.smi", "-o", "runs/cli-namer")  # fmt: skip
    command = _report(examples / "runs/cli-namer")
    assert _untimed(named["metrics"]) == _untimed(command["metrics"])
    namer = {"model": "command", "namer_cmd": "python3 names/namer.py"}
    assert named["provenance"]["backends"]["namer"] == command["provenance"]["backends"]["namer"]
    assert command["provenance"]["backends"]["namer"] == namer


def test_names_options_are_checked(examples: Path) -> None:
    with pytest.raises(ConfigError, match="max-opsin-errors"):
        chemgauge.families.names.coverage("names/pairs.tsv", max_opsin_errors=2.0)
    with pytest.raises(ConfigError, match="Did you mean 'jobs'"):
        chemgauge.families.names.coverage("names/pairs.tsv", job=1)
    with pytest.raises(ConfigError, match="exactly one"):
        chemgauge.families.names.coverage(None)
    with pytest.raises(ConfigError, match="needs --smiles"):
        chemgauge.families.names.coverage(namer_cmd="python3 names/namer.py")
    with pytest.raises(ConfigError, match="Did you mean 'command'"):
        chemgauge.families.names.coverage(smiles="names/structures.smi", model="comand")
    assert not (examples / "runs").exists()  # refused before any output was claimed


def test_p2s_run_is_the_command_as_a_call(examples: Path) -> None:
    report = chemgauge.families.p2s.run(model="structure_only", out="runs/api")
    assert _report(examples / "runs/api/structure_only") == report
    _cli("p2s", "run", "-m", "structure_only", "-o", "runs/cli", "-q")
    command = _report(examples / "runs/cli/structure_only")
    assert _untimed(report["metrics"]) == _untimed(command["metrics"])
    with pytest.raises(ConfigError, match="chat model"):
        chemgauge.families.p2s.run(model="chat", out="runs/chat")


def test_public_names_are_exported() -> None:
    from chemgauge.eval import split_bucket

    assert 0 <= split_bucket("reaction-1") < 100
    for module in (
        chemgauge.families.forward,
        chemgauge.families.retro,
        chemgauge.families.names,
        chemgauge.families.ocsr,
    ):
        for name in module.__all__:
            assert getattr(module, name) is not None, (module, name)
