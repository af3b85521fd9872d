"""``chemgauge forward`` through the real Typer app."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app

from .conftest import FIXTURE_CORPUS, corpus_line, write_mapped_corpus

runner = CliRunner()


def test_predict_prints_ranked_candidates_with_balance() -> None:
    result = runner.invoke(app, ["forward", "predict", "CC(=O)O.NCc1ccccc1"])
    assert result.exit_code == 0
    first = result.stdout.splitlines()[0].split("\t")
    assert first[:2] == ["0", "CC(=O)NCc1ccccc1"] and "missing H2O" in first[-1]


def test_predict_report_is_json_with_stats(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["forward", "predict", "CC(=O)O", "NCc1ccccc1", "--report", "--max-results", "1"]
    )
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert len(data["candidates"]) == 1 and data["stats"]["capped"] is True
    assert data["stats"]["pool_complete"] is False and "rules_loaded" in data["stats"]


def test_predict_templates_extend_the_embedded_set(tmp_path: Path) -> None:
    rules = tmp_path / "extra.jsonl"
    rules.write_text(
        json.dumps({"template_id": "methylation", "smirks": "[OH:1][c:2]>>[CH3]-[O:1][c:2]"}) + "\n"
    )
    result = runner.invoke(app, ["forward", "predict", "Oc1ccccc1", "--templates", str(rules)])
    assert result.exit_code == 0 and "COc1ccccc1" in result.stdout
    assert "methylation" in result.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"template_id": "x", "smirks": "[C:1]>>[C:1"}\n')
    result = runner.invoke(app, ["forward", "predict", "CCO", "--templates", str(bad)])
    assert result.exit_code != 0
    assert "line 1" in str(result.exception)


def test_enumerate_writes_one_record_per_line_and_counts_errors(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("CC(=O)O.NCc1ccccc1 amide\n\nC1CC broken\nCCOC(=O)c1ccccc1.CN\n")
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}.jsonl"
        result = runner.invoke(
            app,
            [
                "forward",
                "enumerate",
                "--input",
                str(source),
                "--out",
                str(out),
                "--jobs",
                jobs,
                "--chunk-size",
                "1",
            ],
        )
        assert result.exit_code == 0, result.output
        assert "3 reactions, 1 with errors" in result.output
        outs.append([json.loads(line) for line in out.read_text().splitlines()])
    records = outs[0]
    assert [r["line"] for r in records] == [1, 3, 4]
    assert records[0]["id"] == "amide" and records[0]["candidates"][0]["smiles"] == (
        "CC(=O)NCc1ccccc1"
    )
    assert records[1]["error"] is not None and records[1]["candidates"] == []
    strip = [[{k: v for k, v in r.items() if k != "elapsed_ms"} for r in o] for o in outs]
    assert strip[0] == strip[1]


def test_benchmark_json_prints_the_report_and_nothing_else(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    args = ["forward", "benchmark", "--corpus", str(FIXTURE_CORPUS), "--out", str(folder)]
    result = runner.invoke(app, [*args, "--json", "--executor", "serial", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (folder / "report.json").read_bytes()  # report.json itself
    report = json.loads(result.stdout)
    assert report["metrics"]["overall"]["n_rows"] == 16
    assert len((folder / "rows.jsonl").read_text().splitlines()) == 16
    again = tmp_path / "again"
    result = runner.invoke(app, [*args[:-2], "-o", str(again), "--executor", "serial"])
    assert result.exit_code == 0 and result.stdout == ""
    assert "forward benchmark" in result.stderr and "failure_reason" in result.stderr
    written = json.loads((again / "report.json").read_text())
    coverage = report["metrics"]["overall"]["proposal_coverage"]
    assert written["metrics"]["overall"]["proposal_coverage"] == coverage
    assert list(written)[:3] == ["format", "schema_version", "family"]  # the envelope first


def test_benchmark_takes_no_rows_or_report_file_of_its_own(tmp_path: Path) -> None:
    for flag in ("--output-rows", "--output-report"):
        result = runner.invoke(app, ["forward", "benchmark", flag, str(tmp_path / "x.json")])
        assert result.exit_code == 2 and "No such option" in result.output


def test_benchmark_writes_a_run_folder_report_can_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["--corpus", str(FIXTURE_CORPUS), "--executor", "serial", "-q"]
    result = runner.invoke(app, ["forward", "benchmark", *args])
    assert result.exit_code == 0 and result.stdout == "", result.output
    folder = tmp_path / "runs" / "forward"  # the family's own default folder
    assert sorted(p.name for p in folder.iterdir()) == ["report.json", "rows.jsonl"]
    written = json.loads((folder / "report.json").read_text())
    assert written["metrics"]["overall"]["n_rows"] == 16
    shown = runner.invoke(app, ["report", str(folder), "-q"])
    assert shown.exit_code == 0, shown.output


def test_benchmark_defaults_to_the_bundled_demo_corpus(tmp_path: Path) -> None:
    def corpus_hash(*args: str) -> str:
        out = ["--out", str(tmp_path / str(len(args))), "--json", "-q", "--executor", "serial"]
        result = runner.invoke(app, ["forward", "benchmark", *args, *out])
        assert result.exit_code == 0, result.output
        sha256: str = json.loads(result.stdout)["inputs"][0]["sha256"]
        return sha256

    assert corpus_hash() == corpus_hash("--corpus", str(FIXTURE_CORPUS))


def test_user_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(corpus_line("a", ["CCO"], [["CC=O"]]) + "\n{oops\n")
    cmd = [
        sys.executable,
        "-m",
        "chemgauge",
        "forward",
        "benchmark",
        "--corpus",
        str(corpus),
        "--out",
        str(tmp_path / "r"),
        "--strict",
        "--executor",
        "serial",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert f"{corpus}, line 2" in done.stderr and done.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--templates", "x.jsonl"], "never mixed"),
        (
            ["--template-source", "train-extracted", "--templates", "x.jsonl"],
            "needs --template-manifest",
        ),
        (["--template-source", "scorer-conditioned"], "learned scorer"),
    ],
)
def test_template_source_misuse_is_refused(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["forward", "benchmark", "--out", str(tmp_path / "r"), *args])
    assert result.exit_code != 0 and message in str(result.exception)


def test_corpus_from_uspto_and_extract_templates(tmp_path: Path) -> None:
    csv_path = tmp_path / "mini.csv"
    csv_path.write_text(
        "id,class,reactants>reagents>production\n"
        "US1,2,[CH3:1][C:2](=[O:3])[OH:4].[NH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:5][CH3:6]\n"
        "US2,UNK,C1CC>>CC\n"
    )
    corpus = tmp_path / "corpus.jsonl"
    result = runner.invoke(
        app, ["forward", "corpus-from-uspto", str(csv_path), "--out", str(corpus)]
    )
    assert result.exit_code == 0
    first, second = (json.loads(line) for line in corpus.read_text().splitlines())
    assert first["reaction_id"] == "mini:2" and first["group_key"] == "US1"
    assert first["reactants"] == ["CC(=O)O", "CN"] and first["accepted_products"] == [["CNC(C)=O"]]
    assert first["reaction_class"] == "2" and ":" in first["mapped_reaction"]
    assert "reaction_class" not in second and second["reactants"] == ["C1CC"]
    out = tmp_path / "templates"
    result = runner.invoke(
        app,
        [
            "forward",
            "extract-templates",
            "--corpus",
            str(corpus),
            "--split",
            "all",
            "--out",
            str(out),
            "--jobs",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["included_split"] == "all" and manifest["extraction"]["extracted"] == 1
    assert manifest["corpus_stats"]["unparseable_smiles"] == 1
    result = runner.invoke(
        app,
        [
            "forward",
            "extract-templates",
            "--corpus",
            str(csv_path),
            "--split",
            "all",
            "--out",
            str(tmp_path / "csv"),
            "-j",
            "1",
        ],
    )
    assert result.exit_code == 0
    assert json.loads((tmp_path / "csv" / "manifest.json").read_text())["source_corpus_format"] == (
        "csv"
    )


def test_train_extracted_summary_leads_with_held_out_rows_and_warns_of_leakage(
    tmp_path: Path,
) -> None:
    corpus = write_mapped_corpus(tmp_path / "mapped.jsonl")
    out = tmp_path / "t"
    args = ["forward", "extract-templates", "--corpus", str(corpus), "--split", "train"]
    assert runner.invoke(app, [*args, "--out", str(out), "-j", "1"]).exit_code == 0
    result = runner.invoke(
        app,
        [
            "forward",
            "benchmark",
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path / "run"),
            "--template-source",
            "train-extracted",
            "--templates",
            str(out / "templates.jsonl"),
            "--template-manifest",
            str(out / "manifest.json"),
            "--executor",
            "serial",
            "--seed",
            "7",
        ],
    )
    assert result.exit_code == 0, result.output
    err = result.stderr
    order = [
        err.index(label)
        for label in ("held out", "split val", "split test", "split train", "overall")
    ]
    # v1 and x1 share their reactants with the train sources t1 and t2: in-sample, not held out
    assert order == sorted(order) and "conditional on coverage, held out (0 rows)" in err
    assert "warning: leakage: 1 reactant set(s) occur in both train and test" in err
    assert "warning: in-sample: 2 val/test row(s) are in-sample (val 1, test 1)" in err
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    headline = report["metrics"]["headline"]
    assert {k: v for k, v in headline.items() if k != "warnings"} == {
        "basis": "held_out",
        "held_out_splits": ["val", "test"],
        "in_sample_splits": ["train", "val", "test"],
        "overall_includes_in_sample_rows": True,
        "in_sample_rows": {"train": 2, "val": 1, "test": 1},
        "in_sample_by_reason": {"template_source": 2, "near_duplicate_of_source": 2},
    }
    assert report["metrics"]["bootstrap"]["seed"] == 7
    assert report["metrics"]["held_out"]["n_rows"] == 0
