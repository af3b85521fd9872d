"""Every landed reader as ``(valid bytes, suffix, read(path))``, with its counting invariant.

A reader's ``read`` loads a file the way the CLI would and, where the reader counts
rejections, checks that every non-blank data line was either accepted or counted with a
reason (nothing silently dropped). Used by the tests and by ``bench/reliability.py``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import ChemgaugeError
from chemgauge.eval.jsonl import read_jsonl
from chemgauge.eval.lines import read_lines
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.forward.engine.rules import load_rule_file
from chemgauge.families.names.inputs import read_pairs, read_smiles_file
from chemgauge.families.p2s.scoring import read_predictions
from chemgauge.families.p2s.taskfile import load_view


class CountingError(AssertionError):
    """A reader returned but lost a line: neither accepted nor counted."""


def _is_data(raw: bytes) -> bool:
    """A line a reader must account for: any line that is not UTF-8, or non-blank text."""
    try:
        return bool(raw.decode("utf-8").strip())
    except UnicodeDecodeError:
        return True


def _data_lines(path: Path, header: bool = False) -> int:
    data = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    # The readers split bytes on LF, CR and CRLF only, then decode each line on its own.
    lines = [t for t in re.split(rb"\r\n|\r|\n", data) if _is_data(t)]
    return len(lines) - (1 if header and lines else 0)


def _check(stats: RejectionStats, expected: int, path: Path) -> None:
    if stats.accepted + stats.rejected != expected:
        raise CountingError(
            f"{path}: {expected} data lines but {stats.accepted} accepted + "
            f"{stats.rejected} rejected ({dict(stats.counts)})"
        )
    if stats.rejected and not all(d.reason for d in stats.diagnostics):
        raise CountingError(f"{path}: a rejection without a reason")


def read_foundation_jsonl(path: Path) -> None:
    stats = RejectionStats()
    n = sum(1 for _ in read_jsonl(path, stats))
    stats.accepted = n
    _check(stats, _data_lines(path), path)


def read_foundation_lines(path: Path) -> None:
    for _ in read_lines(path):
        pass


def read_names_table(path: Path) -> None:
    stats = RejectionStats()
    pairs = read_pairs(path, stats)
    assert stats.accepted == len(pairs)
    # CSV/TSV too: every physical line is one record (a quote never spans lines)
    _check(stats, _data_lines(path, header=path.suffix != ".jsonl"), path)


def read_names_smiles(path: Path) -> None:
    stats = RejectionStats()
    pairs = read_smiles_file(path, stats)
    assert stats.accepted == len(pairs)
    _check(stats, _data_lines(path), path)


def read_rules(path: Path) -> None:
    load_rule_file(path)


def read_p2s_predictions(path: Path) -> None:
    result = read_predictions(path)
    expected = _data_lines(path)
    if len(result.by_record) + result.unattributable != expected:
        raise CountingError(
            f"{path}: {expected} lines but {len(result.by_record)} attributed + "
            f"{result.unattributable} unattributable"
        )


def canon_cli(path: Path) -> None:
    out = path.with_name(path.name + ".canon.txt")
    result = CliRunner().invoke(
        app, ["canon", str(path), "-o", str(out), "--executor", "serial", "-q"]
    )
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    if result.exit_code != 0:
        raise ChemgaugeError(f"{path}: canon exited {result.exit_code}: {result.output[-300:]}")
    lines = out.read_bytes().count(b"\n")
    raw = path.read_bytes()
    # One output line per input line: what read_lines yields.
    expected = len(list(read_lines(path))) if raw else 0
    if lines != expected:
        raise CountingError(f"{path}: {expected} input lines but {lines} output lines")


def p2s_view_reader(template: Path) -> Callable[[Path], None]:
    """A reader that swaps the hostile file in as a view's task (or label) file."""

    def read(path: Path) -> None:
        data = path.parent / f"data_{path.name}"
        if data.exists():
            shutil.rmtree(data)
        shutil.copytree(template, data)
        role = "labels" if ".labels" in path.name else "tasks"
        target = data / "dipole" / ("correct.labels.jsonl" if role == "labels" else "correct.jsonl")
        target.unlink()
        if path.is_dir():
            target.mkdir()
        else:
            shutil.copyfile(path, target)
        load_view(data, "dipole", "correct")

    return read


@dataclass(frozen=True)
class Reader:
    """A reader under test: family, name, a valid example, the suffix it expects, how to read."""

    family: str
    name: str
    valid: bytes
    suffix: str
    read: Callable[[Path], None]
    names_file: bool = True  # its errors name the file itself (else a file in its folder)


NAMES_TSV = b"smiles\tname\tid\nCCO\tethanol\ta\nc1ccccc1\tbenzene\tb\nC1CC\tbroken\tc\n"
NAMES_CSV = b'smiles,name\nCCO,ethanol\nCC(=O)O,"acetic acid, glacial"\n'
NAMES_JSONL = (
    b'{"smiles": "CCO", "name": "ethanol", "id": "x"}\n{"smiles": "c1ccccc1", "name": "benzene"}\n'
)
SMILES_FILE = b"CCO ethanol\nc1ccccc1 benzene\nC1CC broken\n"
RULES = (
    b'{"template_id": "amide", "smirks": "[C:1](=[O:2])[OH].[N;H2:3]>>[C:1](=[O:2])[N:3]", '
    b'"name": "amide coupling"}\n'
    b'{"template_id": "graph", "smirks": ""}\n'
)
PREDICTIONS = (
    b'{"record_id": "r1", "selected_candidate_index": 0}\n'
    b'{"record_id": "r2", "invalid": true, "reason": "no answer"}\n'
)


def landed_readers(p2s_data: Path | None = None) -> list[Reader]:
    """Every reader of a landed family (p2s views need a built data folder)."""
    readers = [
        Reader("foundation", "read_jsonl", NAMES_JSONL, ".jsonl", read_foundation_jsonl),
        Reader("foundation", "read_lines", SMILES_FILE, ".txt", read_foundation_lines),
        Reader("foundation", "canon_cli", SMILES_FILE, ".smi", canon_cli),
        Reader("names", "pairs_tsv", NAMES_TSV, ".tsv", read_names_table),
        Reader("names", "pairs_csv", NAMES_CSV, ".csv", read_names_table),
        Reader("names", "pairs_jsonl", NAMES_JSONL, ".jsonl", read_names_table),
        Reader("names", "smiles_file", SMILES_FILE, ".smi", read_names_smiles),
        Reader("forward", "rule_file", RULES, ".jsonl", read_rules),
        Reader("p2s", "predictions", PREDICTIONS, ".jsonl", read_p2s_predictions),
    ]
    if p2s_data is not None:
        tasks = (p2s_data / "dipole" / "correct.jsonl").read_bytes()
        labels = (p2s_data / "dipole" / "correct.labels.jsonl").read_bytes()
        view = p2s_view_reader(p2s_data)
        readers.append(Reader("p2s", "task_file", tasks, ".jsonl", view, names_file=False))
        readers.append(Reader("p2s", "label_file", labels, ".labels.jsonl", view, False))
    return readers
