"""Every family reads text through one line reader: a BOM never changes a score, one bad byte
costs only its own line (counted with its true number), a stray quote never merges rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import DataQualityError
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.forward.corpus import demo_corpus_path, load_corpus
from chemgauge.families.forward.uspto import write_uspto_corpus
from chemgauge.families.names.inputs import read_pairs, read_smiles_file
from chemgauge.families.ocsr.manifest import load_manifest
from chemgauge.families.p2s.scoring import read_predictions
from chemgauge.families.retro.data import DataFile, load_targets
from chemgauge.report.loading import load_run

BOM = b"\xef\xbb\xbf"
runner = CliRunner()


def _forward_rows(tmp_path: Path, corpus: Path, *extra: str) -> list[dict[str, Any]]:
    rows = tmp_path / f"run-{corpus.stem}" / "rows.jsonl"
    result = runner.invoke(
        app,
        [
            "forward",
            "benchmark",
            "--corpus",
            str(corpus),
            "--out",
            str(rows.parent),
            "--executor",
            "serial",
            "--quiet",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return [orjson.loads(line) for line in rows.read_bytes().splitlines()]


def test_forward_bom_keeps_the_first_record(tmp_path: Path) -> None:
    demo = demo_corpus_path().read_bytes()
    plain, bom = tmp_path / "plain.jsonl", tmp_path / "bom.jsonl"
    plain.write_bytes(demo)
    bom.write_bytes(BOM + demo)
    with_bom = _forward_rows(tmp_path, bom)
    assert [r["reaction_id"] for r in with_bom] == [
        r["reaction_id"] for r in _forward_rows(tmp_path, plain)
    ]
    assert with_bom[0]["reaction_id"] == "fx-01" and with_bom[0]["input_status"] == "valid"


def test_forward_bad_byte_on_line_150_is_counted_there_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    lines = demo_corpus_path().read_bytes().splitlines(keepends=True)
    late = orjson.dumps(
        {
            "schema_version": 1,
            "reaction_id": "late",
            "reactants": ["OCCCCC", "CC(=O)O"],
            "accepted_products": [["CCCCCOC(C)=O"]],
        }
    )
    data = b"".join(lines[:10]) + b"\n" * 139 + b'{"reaction_id": "x\xff"}\n' + late + b"\n"
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(data)
    loaded = load_corpus(corpus)
    assert loaded.stats.counts["malformed_json"] == 1
    assert loaded.stats.warnings[0].line == 150
    assert "not valid UTF-8" in loaded.stats.warnings[0].message
    rows = _forward_rows(tmp_path, corpus)
    assert (rows[-1]["source_line"], rows[-1]["reaction_id"]) == (151, "late")
    strict = runner.invoke(
        app,
        [
            "forward",
            "benchmark",
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path / "strict"),
            "--strict",
            "--quiet",
        ],
    )
    assert isinstance(strict.exception, DataQualityError)
    assert "corpus.jsonl, line 150: not valid UTF-8" in str(strict.exception)


def test_uspto_csv_bad_byte_long_field_and_open_quote_are_counted(tmp_path: Path) -> None:
    csv_path = tmp_path / "test.csv"
    good = b"US1,1,[CH3:1][OH:2]>>[CH3:1][O:2]C\n"
    long_field = b"US2,1," + b"C" * 200_000 + b">>CC\n"  # over csv's 128 KiB default
    csv_path.write_bytes(
        b"id,class,reactants>reagents>production\n"
        + good
        + b"US3,1,CC\xff>>C\n"
        + long_field
        + b'US4,1,"CO>>C\n'
        + good
    )
    stats = RejectionStats(path=str(csv_path))
    assert write_uspto_corpus([csv_path], tmp_path / "corpus.jsonl", [stats]) == 3
    assert dict(stats.counts) == {"invalid_utf8": 1, "malformed_row": 1}
    assert [d.line for d in stats.diagnostics] == [3, 5]
    result = runner.invoke(
        app, ["forward", "corpus-from-uspto", str(csv_path), "--out", str(tmp_path / "c.jsonl")]
    )
    assert result.exit_code == 0, result.output
    assert "test.csv:3: invalid_utf8" in result.output and "2 lines rejected" in result.output


def _retro(tmp_path: Path, name: str, prefix: bytes) -> dict[str, Any]:
    data = tmp_path / name / "data"
    data.mkdir(parents=True)
    targets = [
        ("CC(=O)O.CN", "CNC(C)=O"),
        ("CCO.CC(=O)O", "CCOC(C)=O"),
        ("CC(=O)Cl.NCc1ccccc1", "CC(=O)NCc1ccccc1"),
    ]
    (data / "test.smi").write_bytes(prefix + "".join(f"{r}>>{p}\n" for r, p in targets).encode())
    preds = tmp_path / name / "preds.jsonl"
    preds.write_bytes(
        prefix
        + b"".join(orjson.dumps({"product": p, "predictions": [r]}) + b"\n" for r, p in targets)
    )
    out = tmp_path / name / "out"
    result = runner.invoke(
        app,
        [
            "retro",
            "eval",
            f"data_dir={data}",
            "model_class=predictions",
            "allow_missing=true",
            f"model_dir={preds}",
            "--out",
            str(out),
            "executor=serial",
            "quiet=true",
        ],
    )
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = orjson.loads((out / "report.json").read_bytes())
    return report


def test_retro_bom_does_not_change_top1(tmp_path: Path) -> None:
    plain = _retro(tmp_path, "plain", b"")
    bom = _retro(tmp_path, "bom", BOM)
    top1 = plain["metrics"]["accuracy"]["syntheseus"]["exact"]["top_k"][0]
    assert (top1["k"], top1["value"]) == (1, 1.0)
    assert bom["metrics"]["accuracy"] == plain["metrics"]["accuracy"]
    assert bom["metrics"]["data"]["lines"]["rejected"] == 0


def test_retro_csv_bad_byte_and_quotes_are_per_line(tmp_path: Path) -> None:
    path = tmp_path / "test.csv"
    path.write_bytes(
        b"id,reactants>reagents>production\n"
        b"a,CC(=O)O.CN>>CNC(C)=O\n"
        b"b,CC\xffO>>CC\n"
        b'c,"CCO.CC(=O)O>>CCOC(C)=O\n'
        b"d,CCO.CC(=O)O>>CCOC(C)=O\n"
    )
    targets = load_targets(DataFile("test", "csv", path))
    assert [t.line for t in targets.targets] == [2, 5]
    assert dict(targets.stats.counts) == {"invalid_utf8": 1, "malformed_row": 1}
    assert [d.line for d in targets.stats.diagnostics] == [3, 4]
    with pytest.raises(DataQualityError, match=r"test\.csv, line 3: invalid_utf8"):
        load_targets(DataFile("test", "csv", path), strict=True)


def test_names_stray_quote_never_merges_two_rows(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_bytes(
        b"smiles\tname\n"
        b'CCO\t"ethanol\n'  # a stray quote: before, it swallowed the next row
        b"CC(=O)O\tacetic acid\n"
        b"CO\tmeth\xffanol\n"
        b"CCC\tpropane\n"
    )
    stats = RejectionStats()
    pairs = read_pairs(path, stats)
    assert [(p.line, p.name) for p in pairs] == [(3, "acetic acid"), (5, "propane")]
    assert dict(stats.counts) == {"malformed_row": 1, "invalid_utf8": 1}
    assert [d.line for d in stats.diagnostics] == [2, 4]


def test_names_smiles_file_bom_reaches_the_namer_as_a_structure(tmp_path: Path) -> None:
    path = tmp_path / "structures.smi"
    path.write_bytes(BOM + b"CCO ethanol\nc1ccccc1 benzene\n")
    stats = RejectionStats()
    pairs = read_smiles_file(path, stats)
    assert [(p.item_id, p.smiles) for p in pairs] == [("ethanol", "CCO"), ("benzene", "c1ccccc1")]
    assert stats.rejected == 0
    tsv = tmp_path / "pairs.tsv"
    tsv.write_bytes(BOM + b"smiles\tname\nCCO\tethanol\n")
    assert [p.name for p in read_pairs(tsv, RejectionStats())] == ["ethanol"]


def test_p2s_predictions_bom_and_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    lines = [orjson.dumps({"record_id": f"r{i}", "selected_candidate_index": 0}) for i in range(5)]
    path.write_bytes(BOM + b"\n".join(lines) + b"\n")
    read = read_predictions(path)
    assert sorted(read.by_record) == [f"r{i}" for i in range(5)] and read.unattributable == 0
    path.write_bytes(b"\n".join([*lines[:2], b'{"record_id": "r\xff"}', *lines[3:]]) + b"\n")
    read = read_predictions(path)
    assert sorted(read.by_record) == ["r0", "r1", "r3", "r4"] and read.unattributable == 1
    # '{"record_id": "r' is 16 bytes: the bad byte is the 17th of line 3
    assert read.diagnostics[0].endswith(
        ":3: not valid UTF-8 (invalid start byte at byte 17 of the line)"
    )


def test_canon_bad_byte_is_its_own_line(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_bytes(BOM + b"OCC\nC\xffC\nc1ccccc1\n")
    out = tmp_path / "out.txt"
    result = runner.invoke(app, ["canon", str(source), "--out", str(out), "--executor", "serial"])
    assert result.exit_code == 0, result.output
    assert out.read_text().splitlines() == ["CCO", "", "c1ccccc1"]
    assert "in.smi:2: not valid UTF-8" in result.output
    strict = runner.invoke(app, ["canon", str(source), "--strict", "--executor", "serial"])
    assert isinstance(strict.exception, DataQualityError)
    assert "in.smi, line 2: not valid UTF-8" in str(strict.exception)


def test_report_reader_counts_an_undecodable_row_on_its_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = runner.invoke(
        app,
        [
            "forward",
            "benchmark",
            "--out",
            str(run),
            "--executor",
            "serial",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    report = run / "report.json"
    report.write_bytes(BOM + report.read_bytes())
    rows = (run / "rows.jsonl").read_bytes().splitlines(keepends=True)
    (run / "rows.jsonl").write_bytes(b"".join([*rows[:4], b"\xff\xfe\n", *rows[4:]]))
    loaded = load_run(run)
    assert loaded.bad_lines and loaded.bad_lines[0][0] == 5
    assert loaded.bad_lines[0][1].startswith("invalid_utf8")


def test_ocsr_manifest_with_a_bom_loads(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ocsr", "render", "--out", str(tmp_path / "cohort"), "-q"])
    assert result.exit_code == 0, result.output
    manifest = tmp_path / "cohort" / "manifest.json"
    expected = len(load_manifest(manifest).cases)
    manifest.write_bytes(BOM + manifest.read_bytes())
    assert len(load_manifest(manifest).cases) == expected
