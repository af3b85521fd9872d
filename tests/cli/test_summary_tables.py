"""Every family command ends with a summary table of headline numbers with intervals;
``--quiet`` prints no table and no progress; output that is no terminal is a Markdown table
(no box art, no escape codes, never cut to a width).

Typer's CliRunner gives the commands pipes, not a terminal, so every table here must come
out as Markdown; the progress bar is checked on a fake terminal.
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.families.forward.conftest import FIXTURE_CORPUS
from tests.families.p2s.conftest import SECRET, SOURCES, write_table
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import count_rate_cell, summary_table
from chemgauge.families.p2s.config import BuildConfig

runner = CliRunner()
INTERVAL = re.compile(r"\d+\.\d% \[\d+\.\d, \d+\.\d\]")


def _table(args: Sequence[str], *, title: str) -> str:
    """Run a command and check it printed a plain table with a rate and its interval."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "\x1b[" not in out  # no colour or cursor codes when the output is no terminal
    assert title in out and "\n|---" in out and "┏" not in out and "…" not in out, out
    assert INTERVAL.search(out), out
    return out


def _quiet(args: Sequence[str], *, allowed: str = "") -> None:
    """Run with --quiet: no table (and nothing else, beyond what the command's data is)."""
    result = runner.invoke(app, [*args, "--quiet"])
    assert result.exit_code == 0, result.output
    assert "|---" not in result.output and not INTERVAL.search(result.output)
    assert result.output == allowed, result.output


def test_canon(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("CCO a\nC1CC\n\nc1ccccc1\n")
    args = ["canon", str(source), "-o", str(tmp_path / "out.txt"), "--executor", "serial"]
    out = _table(args, title="canon (exact): 4 lines, 1 invalid")
    assert "66.7% [20.8, 93.9] (2/3)" in out  # 2 of the 3 SMILES lines are valid
    # --quiet hides progress and summary, never the per-line report of an invalid line
    _quiet(args, allowed=f"{source}:2: SMILES syntax error: 'C1CC'\n")


def test_forward_enumerate_and_benchmark(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("CC(=O)O.NCc1ccccc1 amide\nC1CC broken\n")
    args = ["forward", "enumerate", "-i", str(source), "-o", str(tmp_path / "c.jsonl")]
    args += ["--executor", "serial"]
    out = _table(args, title="forward enumerate: 2 reactions, 1 with errors")
    assert "50.0% [9.5, 90.5] (1/2)" in out
    quiet = runner.invoke(app, [*args, "--quiet"])
    assert quiet.exit_code == 0 and "|---" not in quiet.output and "%" not in quiet.output

    args = ["forward", "benchmark", "--corpus", str(FIXTURE_CORPUS), "--executor", "serial"]
    args += ["--out", str(tmp_path / "run")]
    out = _table(args, title="forward benchmark (embedded rules)")
    assert re.search(r"overall\s*\|\s*16\s*\|", out)
    _quiet(args)


def test_retro_eval(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\nCCO.CC(=O)O>>CCOC(C)=O\n")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        '{"product": "CNC(C)=O", "predictions": ["C1CC", "CN.CC(=O)O"]}\n'
        '{"product": "CCOC(C)=O", "predictions": []}\n'  # every target has a line: no warning
    )
    args = ["retro", "eval", f"data_dir={data}", "model_class=predictions"]
    args += [f"model_dir={preds}", "num_top_results=5", "executor=serial"]
    args += ["--out", str(tmp_path / "out")]
    out = _table(args, title="retro eval: test.smi, 2 targets")
    assert re.search(r"syntheseus\s*\|\s*exact\s*\|\s*2\s*\|\s*50\.0% \[9\.5, 90\.5\]", out)
    _quiet(args)


@pytest.mark.external
def test_names_coverage(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("smiles\tname\tid\nCCO\tethanol\ta\nC[C@H](N)C(=O)O\tD-alanine\tb\n")
    args = ["names", "coverage", "-i", str(pairs), "--out", str(tmp_path / "run"), "-j", "1"]
    out = _table(args, title="name round trip: 2 structures")
    # rt_valid, confidently_wrong, unparseable, abstained, unscorable, opsin_error, total
    assert re.search(
        r"exact\s*\|\s*1\s*\|\s*1\s*\|\s*0\s*\|\s*0\s*\|\s*0\s*\|\s*0\s*\|\s*2\s*\|", out
    )
    assert "0 input lines rejected" in out
    _quiet(args)


def test_ocsr_run_and_score(tmp_path: Path) -> None:
    from chemgauge.families.ocsr.cohort import COHORT, build_cohort
    from chemgauge.families.ocsr.engine.base import RECOGNIZERS

    manifest = build_cohort(tmp_path / "cohort", tuple(e for e in COHORT if e.id == "ethanol"))
    ethanol = manifest.by_id["ethanol"].sha256

    def recognize(image: Path) -> str:
        return "CCO" if hashlib.sha256(image.read_bytes()).hexdigest() == ethanol else ""

    RECOGNIZERS.register("summary_test_ethanol", recognize, replace=True)
    path = str(manifest.root / "manifest.json")
    args = ["ocsr", "run", "--manifest", path, "--model", "python", "--callable"]
    args += ["summary_test_ethanol", "--run", "--no-html"]
    out = _table([*args, "-o", str(tmp_path / "out")], title="ocsr: 1 planned attempts")
    assert re.search(r"exact\s*\|\s*100\.0% \[20\.7, 100\.0\] \(1/1\)", out)
    assert "reproducibility_sha256 " in out
    _quiet([*args, "-o", str(tmp_path / "quiet")])
    score = ["ocsr", "score", "--manifest", path, "-o", str(tmp_path / "out"), "--no-html"]
    _table(score, title="ocsr: ")
    _quiet(score)


def test_p2s_build_run_and_score(tmp_path: Path) -> None:
    sources = tmp_path / "s.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    table = tmp_path / "t.jsonl"
    write_table(sources, table, BuildConfig(directories=("dipole",)))
    provider = ["--provider", "table", "--table", str(table)]
    secret = tmp_path / "secret"
    secret.write_text(SECRET)  # the p2s fixtures' build secret: the same views as theirs

    build = ["p2s", "build", str(sources), "-p", "dipole", *provider, "--secret-file", str(secret)]
    out = runner.invoke(app, [*build, "-o", str(tmp_path / "data")]).output
    # Counts have no interval: the build summary is a table of task counts per view.
    assert "| dipole | 10 | 10 | 20 |" in out, out
    assert "\x1b[" not in out
    _quiet([*build, "-o", str(tmp_path / "data2")])

    data = str(tmp_path / "data")
    run = ["p2s", "run", data, "-m", "property_oracle", "-o", str(tmp_path / "runs"), *provider]
    out = _table(run, title="p2s property_oracle: accuracy")
    assert re.search(r"dipole\s*\|\s*correct\s*\|\s*100\.0% \[72\.2, 100\.0\] \(10/10\)", out)
    assert re.search(r"dipole\s*\|.*\|\s*YES\s*\|", out)  # the use-claim table
    _quiet(run)

    predictions = str(tmp_path / "runs" / "property_oracle" / "dipole" / "correct.jsonl")
    score = ["p2s", "score", "--data", data, "--property", "dipole", "--condition", "correct"]
    score += ["--predictions", predictions]
    out = _table(score, title="p2s score")
    assert "dipole/correct: 10 hits / 10 tasks" in out  # the plain result line stays
    _quiet(
        score,
        allowed="dipole/correct: 10 hits / 10 tasks, accuracy 1.0000; missing 0, "
        "invalid 0, out of range 0; unknown records 0, unattributable lines 0\n",
    )
    folder = ["p2s", "score", "--data", data, "--out", str(tmp_path / "runs" / "property_oracle")]
    _table(folder, title="use claim")
    _quiet(folder)


def test_summary_table_cells_are_text_not_markup() -> None:
    table = summary_table("t [x]", ("a", "b"), [("[bold]C[C@H](N)O[/bold]", "1")])
    console_out = io.StringIO()
    from rich.console import Console

    Console(file=console_out, width=80).print(table)
    assert "[bold]C[C@H](N)O[/bold]" in console_out.getvalue()
    assert "t [x]" in console_out.getvalue()
    assert count_rate_cell(0, 0) == "n/a (0/0)"


def test_progress_bar_shows_rate_and_eta_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_bar("work", 200, min_total=10) as advance:
        for _ in range(20):
            advance(10)
    drawn = terminal.getvalue()
    assert "200/200" in drawn and re.search(r"\d/s", drawn) and "0:00:0" in drawn

    for quiet, stream in ((True, Terminal()), (False, io.StringIO())):
        monkeypatch.setattr(sys, "stderr", stream)
        with progress_bar("work", 200, quiet=quiet, min_total=10) as advance:
            advance(200)
        assert stream.getvalue() == ""
