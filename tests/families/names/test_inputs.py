"""Reading name pairs: formats, counted rejections, clear errors; the command namer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from chemgauge.errors import BackendError, DataQualityError, InputFileError
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.names.engine.namer import CommandNamer
from chemgauge.families.names.inputs import iter_pairs, read_pairs, read_smiles_file


def test_tsv_with_bom_crlf_and_bad_rows(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_bytes(
        "\ufeffsmiles\tname\tid\r\nCCO\tethanol\ta\r\nC1CC\tbroken\tb\r\n\tnothing\tc\r\n"
        "CCN\tethylamine\ta\r\nc1ccccc1\t\td\r\n".encode()
    )
    stats = RejectionStats()
    pairs = read_pairs(path, stats)
    assert [(p.item_id, p.line, p.name) for p in pairs] == [("a", 2, "ethanol"), ("d", 6, "")]
    assert stats.counts == {"unparseable_smiles": 1, "empty_smiles": 1, "duplicate_id": 1}
    assert [d.line for d in stats.diagnostics] == [3, 4, 5]


def test_csv_and_jsonl(tmp_path: Path) -> None:
    csv_path = tmp_path / "pairs.csv"
    csv_path.write_text('smiles,name\nCCO,ethanol\nCC(=O)O,"acetic acid, glacial"\n')
    pairs = read_pairs(csv_path, RejectionStats())
    assert [p.name for p in pairs] == ["ethanol", "acetic acid, glacial"]
    assert [p.item_id for p in pairs] == ["2", "3"]
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text('{"smiles": "CCO", "name": "ethanol", "id": "x"}\n{"smiles": 3}\nnot json\n')
    stats = RejectionStats()
    assert [p.item_id for p in read_pairs(jsonl, stats)] == ["x"]
    assert stats.counts == {"smiles_not_a_string": 1, "malformed_json": 1}


def test_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="unknown format"):
        read_pairs(tmp_path / "pairs.txt", RejectionStats())
    with pytest.raises(InputFileError, match="file not found"):
        read_pairs(tmp_path / "missing.tsv", RejectionStats())
    bad = tmp_path / "bad.tsv"
    bad.write_text("structure\tname\nCCO\tethanol\n")
    with pytest.raises(InputFileError, match="missing column"):
        read_pairs(bad, RejectionStats())
    strict = tmp_path / "strict.tsv"
    strict.write_text("smiles\tname\nCCO\tethanol\nC1CC\tx\n")
    with pytest.raises(DataQualityError, match=r"strict\.tsv, line 3"):
        read_pairs(strict, RejectionStats(strict=True))


def test_pairs_stream_with_rejections_counted_as_a_whole_file_read_counts_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "pairs.csv"
    # a quote left open is a malformed record (it never swallows the next line)
    path.write_text('smiles,name\nC1CC,broken\nCCO,ethanol\nCCC,"open quote\nCO,methanol\n')
    stats = RejectionStats()
    pairs = iter_pairs(path, stats)
    # Malformed lines are counted before the first pair, and ahead of the rows' own checks.
    assert [d.reason for d in stats.diagnostics] == ["malformed_row"]
    assert stats.accepted == 0
    assert next(pairs).smiles == "CCO"
    assert [d.reason for d in stats.diagnostics] == ["malformed_row", "unparseable_smiles"]
    assert [p.name for p in pairs] == ["methanol"]
    assert stats.accepted == 2 and stats.rejected == 2


def test_strict_refuses_a_file_before_yielding_any_pair(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    good = '{"smiles": "CCO", "name": "ethanol"}\n'
    path.write_text(good * 3 + '{"smiles": "C1CC", "name": "broken"}\n')
    with pytest.raises(DataQualityError, match=r"pairs\.jsonl, line 4: unparseable_smiles"):
        iter_pairs(path, RejectionStats(strict=True))
    path.write_text(good * 3 + "[1]\n")
    with pytest.raises(DataQualityError, match="line 4: malformed_json"):
        iter_pairs(path, RejectionStats(strict=True))


def _namer(tmp_path: Path, body: str) -> CommandNamer:
    script = tmp_path / "namer.py"
    script.write_text(body)
    return CommandNamer((sys.executable, str(script)), timeout_s=20)


def test_command_namer_batches_over_stdin(tmp_path: Path) -> None:
    namer = _namer(
        tmp_path,
        "import sys\nfor line in sys.stdin:\n    s = line.strip()\n"
        "    print({'CCO': 'ethanol'}.get(s, ''))\n",
    )
    assert namer.name(["CCO", "C$(rm -rf x);`echo`", "CCO"]) == ["ethanol", "", "ethanol"]


def test_command_namer_failures_are_clear(tmp_path: Path) -> None:
    short = _namer(tmp_path, "import sys\nsys.stdin.read()\nprint('one')\n")
    with pytest.raises(BackendError, match="1 lines for 2 structures"):
        short.name(["C", "CC"])
    crash = _namer(tmp_path, "import sys\nsys.exit(3)\n")
    with pytest.raises(BackendError, match="exited with 3"):
        crash.name(["C"])
    with pytest.raises(BackendError, match="not found"):
        CommandNamer(("/no/such/namer",)).name(["C"])
    hang = CommandNamer((sys.executable, "-c", "import time; time.sleep(30)"), timeout_s=0.5)
    with pytest.raises(BackendError, match="timed out"):
        hang.name(["C"])
    assert CommandNamer.from_string("namer --flag 'a b'").argv == ("namer", "--flag", "a b")


def test_a_smiles_file_with_a_repeated_id_counts_the_repeat(tmp_path: Path) -> None:
    # Before: both lines were kept, so rows.jsonl held the id twice.
    path = tmp_path / "structures.smi"
    path.write_text("CCO a\nCCN b\nc1ccccc1 a\nCCC\nCCCC 4\n")
    stats = RejectionStats()
    pairs = read_smiles_file(path, stats)
    assert [(p.item_id, p.line) for p in pairs] == [("a", 1), ("b", 2), ("4", 4)]
    assert stats.counts == {"duplicate_id": 2}
    assert [d.line for d in stats.diagnostics] == [3, 5]
