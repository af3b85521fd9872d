"""``canonicalize_file``: ``chemgauge canon`` as a call, one output line per input line."""

from __future__ import annotations

from pathlib import Path

import pytest

from chemgauge.chem import canonicalize_file
from chemgauge.errors import DataQualityError
from chemgauge.eval.executors import ExecutorConfig

SERIAL = ExecutorConfig(kind="serial")


def test_every_input_line_has_its_output_line(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_bytes(b"OCC ethanol\n\nC1CC\nN[C@@H](C)C(=O)O alanine L\n\xff\n")
    out = tmp_path / "keys.txt"
    invalid: list[tuple[int, str]] = []
    summary = canonicalize_file(
        source,
        "stereo_ignored",
        out,
        execution=SERIAL,
        on_invalid=lambda _src, number, _reason, value: invalid.append((number, value)),
    )
    assert out.read_text().splitlines() == ["CCO\tethanol", "", "", "CC(N)C(=O)O\talanine L", ""]
    assert (summary.lines, summary.invalid, summary.blank, summary.smiles) == (5, 2, 1, 4)
    assert [number for number, _ in invalid] == [3, 5]
    assert summary.policy == "stereo_ignored"


def test_strict_stops_at_the_first_invalid_line_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("CCO\nC1CC\nCCN\n")
    out = tmp_path / "keys.txt"
    with pytest.raises(DataQualityError, match=r"in\.smi, line 2.*C1CC"):
        canonicalize_file(source, out=out, strict=True, execution=SERIAL)
    assert not out.exists()
