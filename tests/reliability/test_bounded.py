"""Bounded by construction: one flag, one encoding, one hand-edited line can no longer take
the machine, crash the command or read as nothing. Each case failed before its fix (a
traceback, 880 processes, 0 rows with exit 0, last-key-wins)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.conftest import require_module
from tests.reliability.commands import DEMO, run_cli

from chemgauge.eval.executors import MAX_LOCAL_JOBS


def _one_line(done: object, status: int = 2) -> str:
    stderr = str(getattr(done, "stderr", ""))
    assert getattr(done, "returncode", None) == status, stderr
    assert "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    return stderr


def test_jobs_above_four_per_core_are_refused_with_the_range(tmp_path: Path) -> None:
    smiles = tmp_path / "m.smi"
    smiles.write_text("CCO\n")
    for args in (
        ["canon", str(smiles), "--jobs", "100000"],
        ["forward", "benchmark", "--out", str(tmp_path / "f"), "--jobs", "100000"],
        ["canon", str(smiles), "--jobs", "-1"],
    ):
        stderr = _one_line(run_cli(args))
        assert f"--jobs must be between 0 and {MAX_LOCAL_JOBS}" in stderr, stderr
    assert run_cli(["ocsr", "render", "--out", str(tmp_path / "c"), "-q"]).returncode == 0
    manifest = str(tmp_path / "c" / "manifest.json")
    done = run_cli(["ocsr", "run", "--manifest", manifest, "--out", str(tmp_path / "o"),
                    "--jobs", "999"])  # fmt: skip
    assert f"--jobs must be between 1 and {MAX_LOCAL_JOBS}" in _one_line(done)


@pytest.mark.parametrize("seed", ["-1", "1000000000000000000000000"])
def test_a_seed_out_of_range_is_a_usage_error_before_any_output(tmp_path: Path, seed: str) -> None:
    out = tmp_path / "run"
    stderr = _one_line(run_cli(["forward", "benchmark", "--out", str(out), "--seed", seed]))
    assert "--seed" in stderr, stderr
    assert re.search(r"0<=x<=4294967295|than or equal to (0|4294967295)", stderr), stderr
    assert not out.exists()  # no rows.jsonl without its report.json
    for command in (["compare", str(out), str(out)], ["board", str(out)]):
        assert "--seed" in _one_line(run_cli([*command, "--seed", seed]))


def test_a_utf16_corpus_is_an_error_naming_the_encoding(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(DEMO.read_text().encode("utf-16"))
    stderr = _one_line(
        run_cli(["forward", "benchmark", "--corpus", str(corpus), "--out", str(tmp_path / "o")])
    )
    assert str(corpus) in stderr and "UTF-16 (little-endian) text, not UTF-8" in stderr


def test_a_utf16_prediction_file_is_an_error_not_zero_percent(tmp_path: Path) -> None:
    predictions = tmp_path / "p.jsonl"
    text = '{"record_id": "x", "selected_candidate_index": 0}\n'
    predictions.write_bytes(text.encode("utf-16-le"))  # no byte-order mark: the NUL pattern
    done = run_cli(
        ["p2s", "score", "--property", "dipole", "--condition", "correct", "--predictions",
         str(predictions)]
    )  # fmt: skip
    stderr = _one_line(done)
    assert "UTF-16 (little-endian)" in stderr and "0.0%" not in done.stdout


def test_a_corpus_line_with_a_repeated_key_is_rejected_not_last_wins(tmp_path: Path) -> None:
    first = DEMO.read_text().splitlines()[0]
    repeated = first[:-1] + ', "reactants": ["C"]}'
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(repeated + "\n" + "\n".join(DEMO.read_text().splitlines()[1:]) + "\n")
    out = tmp_path / "run"
    done = run_cli(["forward", "benchmark", "--corpus", str(corpus), "--out", str(out), "--json"])
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)["metrics"]["corpus"]["stats"]
    clean = run_cli(["forward", "benchmark", "--out", str(tmp_path / "clean"), "--json"])
    before = json.loads(clean.stdout)["metrics"]["corpus"]["stats"]
    assert stats["malformed_json"] == before["malformed_json"] + 1, stats
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert rows and all(row["reactants_original"] != ["C"] for row in rows)  # later key lost


def test_comparing_a_run_with_itself_warns(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli(["forward", "benchmark", "--out", str(out), "-q"]).returncode == 0
    done = run_cli(["compare", str(out), str(out), "-q"])
    assert done.returncode == 0, done.stderr
    assert "warning: A and B are the same run" in done.stderr
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("rows.jsonl", "report.json"):
        (copy / name).write_bytes((out / name).read_bytes())
    done = run_cli(["compare", str(out), str(copy), "-q"])
    assert "identical rows" in done.stderr


def test_structure_limits_are_recorded_in_every_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_cli(["forward", "benchmark", "--out", str(out), "-q", "--max-atoms", "400"])
    assert done.returncode == 0, done.stderr
    provenance = json.loads((out / "report.json").read_text())["provenance"]
    assert provenance["structure_limits"]["max_atoms"] == 400


def test_board_is_plain_markdown_when_piped_with_user_strings_inert(tmp_path: Path) -> None:
    hostile = tmp_path / "run<img src=x onerror=alert(1)>|[x](javascript:alert(1))"
    assert run_cli(["forward", "benchmark", "--out", str(hostile), "-q"]).returncode == 0
    done = run_cli(["board", str(hostile)])
    assert done.returncode == 0, done.stderr
    assert "┃" not in done.stdout and "━" not in done.stdout  # no terminal box when piped
    assert "| rank | run |" in done.stdout
    assert "<img" not in done.stdout and "](javascript" not in done.stdout
    assert "&lt;img src=x onerror=alert(1)&gt;\\|[x]\\(javascript" in done.stdout
    board = tmp_path / "board"
    assert run_cli(["board", str(hostile), "--out", str(board), "-q"]).returncode == 0
    page = (board / "board.md").read_text()
    assert "<img" not in page and "](javascript" not in page
    assert "<img" not in (board / "board.html").read_text()


def test_a_recorded_rows_file_outside_the_run_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run_cli(["forward", "benchmark", "--out", str(out), "-q"]).returncode == 0
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"password": "hunter2"}\n')
    report = out / "report.json"
    envelope = json.loads(report.read_text())
    envelope["rows_file"] = "../secret.jsonl"
    report.write_text(json.dumps(envelope))
    for command in (["report", str(out)], ["verify", str(out)]):
        done = run_cli(command)
        assert done.returncode != 0, done.stdout
        assert "outside the run folder" in done.stderr and "hunter2" not in done.stderr
        assert "Traceback" not in done.stderr
    explicit = run_cli(["report", str(out), "--rows", str(out / "rows.jsonl"), "-q"])
    assert "outside the run folder" not in explicit.stderr


def test_a_record_with_2999_accepted_products_is_refused_unread(tmp_path: Path) -> None:
    products = [[f"C{'C' * (i % 40)}O"] for i in range(2999)]
    record = {"schema_version": 1, "reaction_id": "huge", "reactants": ["CCO"],
              "accepted_products": products}  # fmt: skip
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps(record) + "\n" + DEMO.read_text())
    out = tmp_path / "run"
    done = run_cli(["forward", "benchmark", "--corpus", str(corpus), "--out", str(out), "--json"])
    assert done.returncode == 0, done.stderr
    corpus_block = json.loads(done.stdout)["metrics"]["corpus"]
    assert corpus_block["stats"]["record_too_large"] == 1
    warning = next(w for w in corpus_block["warnings"] if w["code"] == "record_too_large")
    assert (
        "2,999 entries, over the limit of 100 (raise it with --max-alternatives)"
        in (warning["message"])
    )
    stats = corpus_block["stats"]
    assert stats["lines_read"] == stats["blank_lines"] + stats["records_accepted"] + sum(
        v for k, v in stats.items() if k not in ("lines_read", "blank_lines", "records_accepted")
    )


def test_a_corpus_with_lines_but_no_record_is_an_error_naming_it(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("reactants,products\nCCO,CC=O\n")  # a CSV where JSONL belongs
    out = tmp_path / "run"
    stderr = _one_line(
        run_cli(["forward", "benchmark", "--corpus", str(corpus), "--out", str(out)])
    )
    assert str(corpus) in stderr and "no record could be read from 2 non-blank lines" in stderr
    assert "malformed_json 2" in stderr


def test_quiet_is_silent_on_a_local_ray_cluster_and_in_corpus_conversion(tmp_path: Path) -> None:
    require_module("ray")
    done = run_cli(["forward", "benchmark", "--out", str(tmp_path / "r"), "--executor", "ray",
                    "--jobs", "1", "-q"])  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout == ""  # before: Ray's token-authentication notice
    csv = tmp_path / "u.csv"
    header = "id,class,reactants>reagents>production\n"
    csv.write_text(header + "US1,1,[CH3:1][OH:2]>>[CH3:1][O:2]C\nbad\n")
    done = run_cli(["forward", "corpus-from-uspto", str(csv), "--out", str(tmp_path / "c.jsonl"),
                    "-q"])  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout == ""


def test_an_escape_sequence_in_a_file_name_reaches_no_terminal(tmp_path: Path) -> None:
    name = tmp_path / "evil\x1b[2J\rname.smi"
    stderr = _one_line(run_cli(["canon", str(name)]), status=3)
    assert "\x1b" not in stderr and "\r" not in stderr
    assert "evil\\x1b[2J\\x0dname.smi: file not found" in stderr


def test_a_newline_in_a_file_name_cannot_split_a_diagnostic(tmp_path: Path) -> None:
    missing = tmp_path / "two\nlines.smi"
    stderr = _one_line(run_cli(["canon", str(missing)]), status=3)
    assert "two\\x0alines.smi: file not found" in stderr

    given = tmp_path / "a\tb\nc.smi"
    given.write_text("CCO\nxyz\n")
    done = run_cli(["canon", str(given), "--out", str(tmp_path / "out.smi"), "-q"])
    assert done.returncode == 0, done.stderr
    expected = f"{tmp_path}/a\\x09b\\x0ac.smi:2: SMILES syntax error: 'xyz'"
    assert done.stderr.splitlines() == [expected]
