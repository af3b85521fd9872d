"""The coverage instrument end to end with the real OPSIN, on OPSIN's own test pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rdkit import Chem
from tests.conftest import SHARED_DATA, assert_valid_report, shared_file
from typer.testing import CliRunner

from chemgauge.benchmarks.names.inputs import NamePair
from chemgauge.benchmarks.names.runner import CoverageConfig, ReadBack, score_pairs
from chemgauge.cli import app
from chemgauge.eval.executors import ExecutorConfig, make_executor

pytestmark = pytest.mark.external

# Names in OPSIN's 2.9.0 test files that only parse with OPSIN's radicals option (-r).
RADICAL_CASES = {
    "radicals.txt": {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
    "spiro.txt": {17, 18, 19, 29, 30, 31, 32},
}


def test_cli_end_to_end(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "smiles\tname\tid\nCCO\tethanol\ta\nC[C@H](N)C(=O)O\tD-alanine\tb\n"
        "c1ccccc1\t\tc\nCC(=O)O\tfoo bar baz\td\nC1CC\tbroken\te\n"
    )
    rows_path, report_path = tmp_path / "rows.jsonl", tmp_path / "report.json"
    args = ["names", "coverage", "-i", str(pairs), "--output-rows", str(rows_path)]
    args += ["--output-report", str(report_path), "-j", "1", "-q"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert [(r["id"], r["strict"], r["exact"]) for r in rows] == [
        ("a", "rt_valid", "rt_valid"),
        ("b", "rt_valid", "confidently_wrong"),
        ("c", "abstained", "abstained"),
        ("d", "unparseable", "unparseable"),
    ]
    report = assert_valid_report(report_path)
    assert report["metrics"]["input_stats"]["rejections_by_reason"] == {"unparseable_smiles": 1}
    assert report["counts"]["rejected_by_reason"] == {"unparseable_smiles": 1}
    assert report["provenance"]["backends"]["opsin"]["opsin_version"] == "2.9.0"
    assert report["metrics"]["confidently_wrong_rows"][0]["wrong_under"] == ["exact"]
    # Same input, same rows and reproducibility hash.
    again = tmp_path / "rows2.jsonl"
    args2 = [a if a != str(rows_path) else str(again) for a in args]
    assert CliRunner().invoke(app, args2).exit_code == 0
    assert again.read_bytes() == rows_path.read_bytes()


def _opsin_pairs() -> list[NamePair]:
    folder = SHARED_DATA / "opsin" / "name_to_inchi"
    pairs: list[NamePair] = []
    for path in sorted(folder.glob("*.txt")):
        shared_file(f"opsin/name_to_inchi/{path.name}")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip() or line.startswith(("//", "#")):
                continue
            name, inchi = line.split("\t")[:2]
            mol = Chem.MolFromInchi(inchi)
            if mol is None or mol.GetNumAtoms() == 0:
                continue
            pairs.append(NamePair(f"{path.name}:{number}", number, Chem.MolToSmiles(mol), name))
    return pairs


@pytest.mark.slow
def test_opsin_reproduces_its_own_test_pairs() -> None:
    from chemgauge.engines.opsin.runner import OpsinConfig, OpsinRunner

    pairs = _opsin_pairs()
    assert len(pairs) == 1047  # 1,048 pairs; one InChI RDKit cannot read back
    executor = make_executor(ExecutorConfig(kind="local", jobs=2, chunk_size=16))
    try:
        with OpsinRunner(OpsinConfig(jvms=2)) as opsin:

            def resolve(names: list[str]) -> list[ReadBack]:
                out = opsin.names_to_smiles(names)
                return [ReadBack(r.smiles, r.status.value, r.error) for r in out]

            rows = score_pairs(pairs, resolve, CoverageConfig(), executor)  # type: ignore[arg-type]
    finally:
        executor.close()
    unparsed = {r["id"] for r in rows if r["strict"] == "unparseable"}
    expected = {f"{f}:{n}" for f, lines in RADICAL_CASES.items() for n in lines}
    assert unparsed == expected
    assert sum(r["strict"] == "rt_valid" for r in rows) == len(pairs) - len(expected)
    assert not any(r["strict"] == "confidently_wrong" for r in rows)
    # Uninterpretable names are unparseable, never wrong.
    negative = shared_file("opsin/negative/uninterpretable.txt")
    names = [n for n in negative.read_text().splitlines() if n.strip() and not n.startswith("#")]
    with OpsinRunner(OpsinConfig(jvms=1)) as opsin:
        answers = opsin.names_to_smiles(names)
    neg_pairs = [NamePair(str(i), i, "C", n) for i, n in enumerate(names, start=1)]
    neg_rows = score_pairs(
        neg_pairs,
        lambda ns: [ReadBack(a.smiles, a.status.value) for a in answers if a.name in set(ns)],
        CoverageConfig(),
    )
    assert all(r["strict"] == "unparseable" for r in neg_rows)


def test_radical_cases_parse_with_the_radicals_option() -> None:
    from chemgauge.engines.opsin.runner import OpsinConfig, OpsinRunner

    cases = {"methyl": "[CH3]", "phenyl": "[c]1ccccc1", "prop-2-yl": "C[CH]C"}
    pairs = [NamePair(str(i), i, s, n) for i, (n, s) in enumerate(cases.items(), start=1)]
    for radicals, expected in ((False, "unparseable"), (True, "rt_valid")):
        with OpsinRunner(OpsinConfig(allow_radicals=radicals)) as opsin:
            rows = score_pairs(
                pairs,
                lambda ns, o=opsin: [
                    ReadBack(r.smiles, r.status.value) for r in o.names_to_smiles(ns)
                ],
                CoverageConfig(),
            )
        assert {r["strict"] for r in rows} == {expected}


def test_interrupted_run_resumes_without_repeating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemgauge.cli import names as names_cli

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "smiles\tname\nCCO\tethanol\nCO\tmethanol\nCCC\tpropane\nCCCC\tbutane\nC\tmethane\n"
    )
    rows = tmp_path / "rows.jsonl"
    base = ["names", "coverage", "-i", str(pairs), "--output-rows", str(rows), "-q", "-j", "1"]
    base += ["--output-report", str(tmp_path / "report.json")]
    assert CliRunner().invoke(app, base).exit_code == 0
    reference = rows.read_bytes()
    rows.unlink()

    monkeypatch.setattr(names_cli, "_BLOCK", 2)
    real = names_cli.score_pairs
    seen: list[str] = []

    def dying(block, *args, **kwargs):  # type: ignore[no-untyped-def]
        if seen:
            raise KeyboardInterrupt
        seen.extend(p.item_id for p in block)
        return real(block, *args, **kwargs)

    monkeypatch.setattr(names_cli, "score_pairs", dying)
    CliRunner().invoke(app, base)
    assert not rows.exists(), "no final file from an interrupted run"
    assert (tmp_path / "rows.jsonl.journal").exists()

    resumed: list[str] = []

    def counting(block, *args, **kwargs):  # type: ignore[no-untyped-def]
        resumed.extend(p.item_id for p in block)
        return real(block, *args, **kwargs)

    monkeypatch.setattr(names_cli, "score_pairs", counting)
    assert CliRunner().invoke(app, base).exit_code == 0
    assert seen == ["2", "3"] and resumed == ["4", "5", "6"]
    assert rows.read_bytes() == reference
    assert not (tmp_path / "rows.jsonl.journal").exists()


def test_rows_keep_input_order_whatever_the_completion_order_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemgauge.cli import names as names_cli

    pairs = tmp_path / "pairs.tsv"
    named = {"CCO": "ethanol", "CO": "methanol", "CCC": "propane", "CC": "", "CCCC": "butane"}
    named |= {"C": "methane", "c1ccccc1": "benzene", "CN": "gibberish x"}
    pairs.write_text("smiles\tname\n" + "".join(f"{s}\t{n}\n" for s, n in named.items()))
    rows, report = tmp_path / "rows.jsonl", tmp_path / "report.json"
    base = ["names", "coverage", "-i", str(pairs), "--output-rows", str(rows), "-q", "-j", "1"]
    base += ["--output-report", str(report)]
    assert CliRunner().invoke(app, base).exit_code == 0
    reference, digest = rows.read_bytes(), json.loads(report.read_text())
    rows.unlink()

    # Each block's rows complete last-first, and the second block never completes.
    monkeypatch.setattr(names_cli, "_BLOCK", 3)
    real = names_cli.score_pairs
    blocks: list[list[str]] = []

    def reversed_then_dying(block, *args, **kwargs):  # type: ignore[no-untyped-def]
        blocks.append([p.item_id for p in block])
        if len(blocks) == 2:
            raise KeyboardInterrupt
        return real(block, *args, **kwargs)[::-1]

    monkeypatch.setattr(names_cli, "score_pairs", reversed_then_dying)
    CliRunner().invoke(app, base)
    journal = tmp_path / "rows.jsonl.journal"
    journaled = [json.loads(line)["id"] for line in journal.read_text().splitlines()[1:]]
    assert journaled == ["4", "3", "2"] and not rows.exists()

    blocks.clear()
    monkeypatch.setattr(names_cli, "score_pairs", lambda b, *a, **k: real(b, *a, **k)[::-1])
    assert CliRunner().invoke(app, base).exit_code == 0
    assert rows.read_bytes() == reference, "input order, nothing lost, nothing repeated"
    resumed = json.loads(report.read_text())
    assert resumed["reproducibility_sha256"] == digest["reproducibility_sha256"]
    assert not journal.exists()
