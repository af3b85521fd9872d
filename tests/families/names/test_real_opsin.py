"""The coverage instrument end to end with the real OPSIN, on OPSIN's own test pairs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rdkit import Chem
from tests.conftest import assert_valid_report, shared_file, shared_path
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import BackendError, ConfigError
from chemgauge.eval.executors import ExecutorConfig, make_executor
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.inputs import NamePair
from chemgauge.families.names.metrics import OWN_LENSES
from chemgauge.families.names.runner import ReadBack, score_pairs

pytestmark = pytest.mark.external

ALKANES = (
    "methane", "ethane", "propane", "butane", "pentane",
    "hexane", "heptane", "octane", "nonane", "decane",
)  # fmt: skip

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
    run = tmp_path / "run"
    rows_path, report_path = run / "rows.jsonl", run / "report.json"
    args = ["names", "coverage", "-i", str(pairs), "--out", str(run), "-j", "1", "-q"]
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
    assert "namer" not in report["provenance"]["backends"], "a pairs file ran no namer"
    assert report["metrics"]["confidently_wrong_rows"][0]["wrong_under"] == ["exact"]
    # Same input, same rows and reproducibility hash.
    again = tmp_path / "again"
    args2 = [a if a != str(run) else str(again) for a in args]
    assert CliRunner().invoke(app, args2).exit_code == 0
    assert (again / "rows.jsonl").read_bytes() == rows_path.read_bytes()
    repeated = json.loads((again / "report.json").read_text())
    assert repeated["reproducibility_sha256"] == report["reproducibility_sha256"]


def _opsin_pairs() -> list[NamePair]:
    folder = shared_path("opsin/name_to_inchi")
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
    from chemgauge.families.names.engine.runner import OpsinConfig, OpsinRunner

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
    # Parity is never stricter than strict: its wrong set is inside strict's (empty here),
    # and everything strict accepts it accepts (resonance forms, organometallics, peptides).
    wrong = {lens: {r["id"] for r in rows if r[lens] == "confidently_wrong"} for lens in OWN_LENSES}
    assert wrong["parity"] <= wrong["strict"] == set()
    valid = {lens: {r["id"] for r in rows if r[lens] == "rt_valid"} for lens in OWN_LENSES}
    assert valid["strict"] <= valid["parity"]
    assert not any(r["parity"] == "unscorable" for r in rows)
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


def test_stereo_errors_are_caught_by_exact_only() -> None:
    # Real OPSIN read-backs of names that invert, omit, add or swap stereo.
    from chemgauge.families.names.engine.runner import OpsinConfig, OpsinRunner

    cases = [
        ("CC[C@@H](C)Cl", "(2R)-2-chlorobutane", "rt_valid"),  # the right name
        ("CC[C@@H](C)Cl", "(2S)-2-chlorobutane", "confidently_wrong"),  # inversion
        ("CC[C@@H](C)Cl", "2-chlorobutane", "confidently_wrong"),  # omission
        ("CCC(C)Cl", "(2R)-2-chlorobutane", "confidently_wrong"),  # addition
        ("C/C=C/C", "(Z)-but-2-ene", "confidently_wrong"),  # E/Z swap
        ("C/C=C/C", "(E)-but-2-ene", "rt_valid"),
        ("C[C@H](N)C(=O)O", "D-alanine", "confidently_wrong"),  # at a tautomeric atom
    ]
    pairs = [NamePair(str(i), i, s, n) for i, (s, n, _) in enumerate(cases, start=1)]
    with OpsinRunner(OpsinConfig(jvms=1)) as opsin:
        rows = score_pairs(
            pairs,
            lambda ns: [ReadBack(r.smiles, r.status.value) for r in opsin.names_to_smiles(ns)],
            CoverageConfig(),
        )
    assert [(r["parity"], r["strict"], r["exact"]) for r in rows] == [
        ("rt_valid", "rt_valid", exact) for _, _, exact in cases
    ]


def test_radical_cases_parse_with_the_radicals_option() -> None:
    from chemgauge.families.names.engine.runner import OpsinConfig, OpsinRunner

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
    import chemgauge.families.names.api as names_cli

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "smiles\tname\nCCO\tethanol\nCO\tmethanol\nCCC\tpropane\nCCCC\tbutane\nC\tmethane\n"
    )
    rows = tmp_path / "run" / "rows.jsonl"
    base = ["names", "coverage", "-i", str(pairs), "-o", str(rows.parent), "-q", "-j", "1"]
    assert CliRunner().invoke(app, base).exit_code == 0
    reference = rows.read_bytes()
    rows.unlink()

    monkeypatch.setattr(names_cli, "_BLOCK", 2)
    real = names_cli.score_blocks
    seen: list[str] = []

    def dying(blocks, *args, **kwargs):  # type: ignore[no-untyped-def]
        for block, rows in real(blocks, *args, **kwargs):
            if seen:
                raise KeyboardInterrupt
            seen.extend(p.item_id for p in block)
            yield block, rows

    monkeypatch.setattr(names_cli, "score_blocks", dying)
    CliRunner().invoke(app, base)
    assert not rows.exists(), "no final file from an interrupted run"
    assert (rows.parent / "rows.jsonl.journal").exists()

    resumed: list[str] = []

    def counting(blocks, *args, **kwargs):  # type: ignore[no-untyped-def]
        for block, rows in real(blocks, *args, **kwargs):
            resumed.extend(p.item_id for p in block)
            yield block, rows

    monkeypatch.setattr(names_cli, "score_blocks", counting)
    assert CliRunner().invoke(app, base).exit_code == 0
    assert seen == ["2", "3"] and resumed == ["4", "5", "6"]
    assert rows.read_bytes() == reference
    assert not (rows.parent / "rows.jsonl.journal").exists()


def test_rows_keep_input_order_whatever_the_completion_order_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import chemgauge.families.names.api as names_cli

    pairs = tmp_path / "pairs.tsv"
    named = {"CCO": "ethanol", "CO": "methanol", "CCC": "propane", "CC": "", "CCCC": "butane"}
    named |= {"C": "methane", "c1ccccc1": "benzene", "CN": "gibberish x"}
    pairs.write_text("smiles\tname\n" + "".join(f"{s}\t{n}\n" for s, n in named.items()))
    rows, report = tmp_path / "run" / "rows.jsonl", tmp_path / "run" / "report.json"
    base = ["names", "coverage", "-i", str(pairs), "--out", str(rows.parent), "-q", "-j", "1"]
    assert CliRunner().invoke(app, base).exit_code == 0
    reference, digest = rows.read_bytes(), json.loads(report.read_text())
    rows.unlink()

    # Each block's rows complete last-first, and the second block never completes.
    monkeypatch.setattr(names_cli, "_BLOCK", 3)
    real = names_cli.score_blocks
    blocks: list[list[str]] = []

    def reversed_then_dying(stream, *args, **kwargs):  # type: ignore[no-untyped-def]
        for block, rows in real(stream, *args, **kwargs):
            blocks.append([p.item_id for p in block])
            if len(blocks) == 2:
                raise KeyboardInterrupt
            yield block, rows[::-1]

    def reversed_rows(stream, *args, **kwargs):  # type: ignore[no-untyped-def]
        for block, rows in real(stream, *args, **kwargs):
            yield block, rows[::-1]

    monkeypatch.setattr(names_cli, "score_blocks", reversed_then_dying)
    CliRunner().invoke(app, base)
    journal = rows.parent / "rows.jsonl.journal"
    journaled = [json.loads(line)["id"] for line in journal.read_text().splitlines()[1:]]
    assert journaled == ["4", "3", "2"] and not rows.exists()

    blocks.clear()
    monkeypatch.setattr(names_cli, "score_blocks", reversed_rows)
    assert CliRunner().invoke(app, base).exit_code == 0
    assert rows.read_bytes() == reference, "input order, nothing lost, nothing repeated"
    resumed = json.loads(report.read_text())
    assert resumed["reproducibility_sha256"] == digest["reproducibility_sha256"]
    assert not journal.exists()


def _run(tmp_path: Path, body: str, *extra: str) -> tuple[Any, list[dict[str, Any]], Path]:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("smiles\tname\n" + body)
    rows_path, report_path = tmp_path / "run" / "rows.jsonl", tmp_path / "run" / "report.json"
    args = ["names", "coverage", "-i", str(pairs), "--out", str(rows_path.parent), "-j", "1"]
    args += extra
    result = CliRunner().invoke(app, args)
    rows = (
        [json.loads(line) for line in rows_path.read_text().splitlines()]
        if rows_path.exists()
        else []
    )
    return result, rows, report_path


def test_a_tiny_timeout_gives_opsin_errors_a_warning_and_a_nonzero_exit(tmp_path: Path) -> None:
    body = "CCO\tethanol\nCO\tmethanol\nCCC\tpropane\n"
    result, rows, report_path = _run(tmp_path, body, "--timeout", "0.001", "-q")
    assert [r["strict"] for r in rows] == ["opsin_error"] * 3, "never the namer's unparseable"
    assert {r["opsin_status"] for r in rows} <= {"timeout", "skipped"}
    assert isinstance(result.exception, BackendError)
    assert "3 of 3 names (100.0%) hit OPSIN errors" in str(result.exception)
    assert "warning: OPSIN failed on 3 of 3 names (100.0%; " in result.stderr
    assert report_path.exists()
    report = json.loads(report_path.read_text())  # written before the error: nothing lost
    assert report["metrics"]["opsin_error"] == 3 and report["metrics"]["complete"] is False
    strict = report["metrics"]["lenses"]["strict"]
    assert (strict["opsin_error"]["count"], strict["opsin_error"]["n"]) == (3, 3)
    assert (strict["coverage"]["count"], strict["coverage"]["n"]) == (3, 3)
    assert "timeouts: rerun with a larger --timeout" in str(result.exception)
    verified = CliRunner().invoke(app, ["verify", str(report_path.parent)])
    assert verified.exit_code == 1 and "incomplete" in verified.output
    assert [e["id"] for e in report["metrics"]["opsin_error_rows"]] == ["2", "3", "4"]
    assert sum(report["metrics"]["opsin_error_by_status"].values()) == 3
    assert report["metrics"]["lenses"]["strict"]["unparseable"]["count"] == 0


def test_a_refused_name_is_the_namers_unparseable_never_an_opsin_error(tmp_path: Path) -> None:
    # A name longer than OPSIN's limit is refused (never sent): the namer's failure, inside
    # every denominator, and no OPSIN error at all.
    names = "".join(f"{'C' * (i + 1)}\t{name}\n" for i, name in enumerate(ALKANES * 10))
    body = names + f"CCO\t{'x' * 100_001}\n"
    result, rows, report_path = _run(tmp_path, body)
    assert result.exit_code == 0, result.output
    refused = [r for r in rows if r["id"] == "102"]
    assert refused[0]["strict"] == "unparseable"
    assert refused[0]["unparseable_reason"] == "name_too_long"
    assert "warning: OPSIN failed" not in result.stderr and "--timeout" not in result.stderr
    metrics = json.loads(report_path.read_text())["metrics"]
    assert metrics["opsin_error"] == 0 and metrics["unparseable_by_reason"] == {"name_too_long": 1}
    strict = metrics["lenses"]["strict"]
    assert strict["abs_rt_valid"]["n"] == strict["unparseable"]["n"] == 101
    assert strict["unparseable"]["count"] == 1
    assert metrics["complete"] is True
    assert CliRunner().invoke(app, ["verify", str(report_path.parent)]).exit_code == 0


def test_any_opsin_error_under_strict_is_an_error(tmp_path: Path) -> None:
    body = "CCO\tethanol\nCO\tmethanol\n"
    strict, _, _ = _run(tmp_path, body, "--timeout", "0.001", "--strict", "-q")
    assert isinstance(strict.exception, BackendError)
    assert "--strict" in str(strict.exception)


def test_the_summary_shows_every_class_per_lens_and_rejected_lines(tmp_path: Path) -> None:
    body = "CCO\tethanol\nC[C@H](N)C(=O)O\tD-alanine\nc1ccccc1\t\nCC(=O)O\tfoo bar baz\n"
    body += "C1CC\tbroken\n"
    result, _, _ = _run(tmp_path, body)
    assert result.exit_code == 0, result.output
    table = result.stderr
    for column in ("rt_valid", "confidently_wrong", "unparseable", "abstained", "unscorable"):
        assert column in table
    assert "opsin_error" in table and "total" in table
    exact = next(line for line in table.splitlines() if line.lstrip("│| ").startswith("exact"))
    assert [cell.strip() for cell in re.split(r"[│|]", exact) if cell.strip()][:8] == [
        "exact", "1", "1", "1", "1", "0", "0", "4",
    ]  # fmt: skip
    assert "1 input line rejected (unparseable_smiles: 1)" in table
    # Hexafluorophosphate cannot be standardized: unscorable under parity, with the reason.
    result, rows, _ = _run(tmp_path, "F[P-](F)(F)(F)(F)F\tphosphorus pentafluoride\n")
    assert [(r["parity"], r["strict"]) for r in rows] == [("unscorable", "confidently_wrong")]
    assert "unscorable under parity (never credited): not_standardizable: 1" in result.stderr


def test_an_unbalanced_quote_in_the_namer_command_is_a_one_line_error(tmp_path: Path) -> None:
    smiles = tmp_path / "in.smi"
    smiles.write_text("CCO\n")
    args = ["names", "coverage", "--namer-cmd", "my-namer 'unbalanced", "--smiles", str(smiles)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    assert isinstance(result.exception, ConfigError)
    assert "--namer-cmd" in str(result.exception) and "quotation" in str(result.exception)
