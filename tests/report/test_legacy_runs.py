"""Run folders written before the run envelope are still read, reported, compared and verified.

The folders under ``legacy/`` were written by chemgauge before every family wrote the envelope
(see ``legacy/README.md``); they are read through the legacy mappings into the same envelope.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from chemgauge.benchmarks.forward.runner import BenchmarkConfig, run_benchmark
from chemgauge.benchmarks.retro import RetroEvalConfig, run_retro_eval
from chemgauge.cli.app import app
from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.report.compare import compare_runs
from chemgauge.report.html import render_run_html
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.verify import verify_run

LEGACY = Path(__file__).parent / "legacy"
FOLDERS = {
    "forward": LEGACY / "forward",
    "retro": LEGACY / "retro",
    "names": LEGACY / "names",
    "ocsr": LEGACY / "ocsr",
    "p2s": LEGACY / "p2s" / "runs" / "random",
}
runner = CliRunner()


@pytest.mark.parametrize("family", sorted(FOLDERS))
def test_old_run_is_read_into_the_envelope(family: str) -> None:
    run = load_run(FOLDERS[family])
    assert run.family == family and run.legacy is not None
    assert "counts" in run.derived
    assert run.envelope.counts.items == len(run.rows) > 0
    assert run.metrics and run.envelope.reproducibility_sha256
    # What the old report recorded is carried unchanged into the envelope.
    old = orjson.loads((FOLDERS[family] / "report.json").read_bytes())
    old_hash = old.get("reproducibility_sha256") or old["provenance"]["reproducibility_sha256"]
    assert run.envelope.reproducibility_sha256 == old_hash


@pytest.mark.parametrize("family", sorted(FOLDERS))
def test_old_run_verifies(family: str) -> None:
    result = verify_run(load_run(FOLDERS[family]))
    assert result.ok, [d.describe() for d in result.differences]
    checks = {c.name: c for c in result.checks}
    assert checks["aggregates"].ok and checks["reproducibility hash"].ok
    assert checks["cross-checks"].ok
    assert checks["counts"].ok is None  # derived from the rows, so not a check
    if family == "p2s":  # the data folder was recorded as another machine's absolute path
        assert result.exit_code == 3 and all(
            m.split(":")[0] in ("tasks", "labels") for m in result.missing_inputs
        )
        assert verify_run(load_run(FOLDERS[family]), check_inputs=False).exit_code == 0
    else:
        assert result.exit_code == 0 and not result.missing_inputs


@pytest.mark.parametrize("family", sorted(FOLDERS))
def test_old_run_is_reported_and_compared_with_itself(family: str) -> None:
    run = load_run(FOLDERS[family])
    adapter = get_adapter(family)
    assert adapter.headline(run)
    page = render_run_html(run, adapter, verify_run(run, check_inputs=False))
    assert "read from" in page and (run.legacy or "") in page
    result = compare_runs(run, run)
    assert result["protocol"]["match"] is True
    assert all(r["only_a"] == r["only_b"] == 0 for r in result["overall"])
    cli = runner.invoke(app, ["report", str(FOLDERS[family]), "--quiet"])
    assert cli.exit_code == 0, cli.output


def test_cli_verify_exit_codes_on_old_runs() -> None:
    assert runner.invoke(app, ["verify", str(FOLDERS["forward"]), "-q"]).exit_code == 0
    missing = runner.invoke(app, ["verify", str(FOLDERS["p2s"]), "-q"])
    assert missing.exit_code == 3
    assert "recorded inputs not found" in missing.output and "--no-inputs" in missing.output
    skipped = runner.invoke(app, ["verify", str(FOLDERS["p2s"]), "-q", "--no-inputs"])
    assert skipped.exit_code == 0


def test_edited_old_report_is_still_caught(tmp_path: Path) -> None:
    folder = tmp_path / "forward"
    shutil.copytree(FOLDERS["forward"], folder)
    report = orjson.loads((folder / "report.json").read_bytes())
    report["provenance"]["corpus_sha256"] = "0" * 64
    report["by_split"]["test"]["n_rows"] += 1
    (folder / "report.json").write_bytes(orjson.dumps(report))
    wheres = {d.where.split(" (")[0] for d in verify_run(load_run(folder)).differences}
    assert {"provenance.corpus_sha256", "metrics.by_split.test.n_rows"} <= wheres


def test_old_forward_run_compares_with_a_new_run_of_todays_code(tmp_path: Path) -> None:
    new = tmp_path / "new"
    new.mkdir()
    config = BenchmarkConfig(
        corpus=FOLDERS["forward"] / "corpus.jsonl", output_rows=new / "rows.jsonl"
    )
    result = run_benchmark(config, ExecutorConfig(kind="serial", jobs=1))
    write_envelope(new / "report.json", result.envelope)
    old, current = load_run(FOLDERS["forward"]), load_run(new)
    assert current.legacy is None and verify_run(current).exit_code == 0
    # Row schema 3 adds group_key_source to every row (and the schema version to the config),
    # so the hashes differ from the old run's; the items and their outcomes do not.
    assert (old.config["row_schema_version"], current.config["row_schema_version"]) == (2, 3)
    assert current.envelope.reproducibility_sha256 != old.envelope.reproducibility_sha256
    comparison = compare_runs(old, current)
    assert comparison["protocol"]["match"] is True
    assert comparison["items"]["shared"] == len(old.rows)
    assert all(r["only_a"] == r["only_b"] == 0 for r in comparison["overall"])


def test_old_retro_run_compares_with_a_new_run_of_todays_code(tmp_path: Path) -> None:
    folder = FOLDERS["retro"]
    config = RetroEvalConfig.from_options(
        {
            "data_dir": str(folder / "data"),
            "model_class": "predictions",
            "model_dir": str(folder / "outputs.jsonl"),
            "num_top_results": 3,
            "results_dir": str(tmp_path / "new"),
            "executor": "serial",
        }
    )
    run_retro_eval(config)
    old, current = load_run(folder), load_run(tmp_path / "new")
    # rows gained each invalid output's reason (retro family schema 2); the rest is unchanged
    rows = current.rows
    reasons = [r.pop("invalid_reasons") for r in rows]
    assert [len(x) for x in reasons] == [len(r["invalid_ranks"]) for r in rows]
    assert [x for row_reasons in reasons for x in row_reasons] == ["syntax"]
    assert rows == old.rows
    assert current.metrics["accuracy"] == old.metrics["accuracy"]
    comparison = compare_runs(old, current)
    assert comparison["protocol"]["match"] is True
    assert all(r["only_a"] == r["only_b"] == 0 for r in comparison["overall"])
