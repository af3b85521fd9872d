"""Regression tests for the reader bugs the hostile-input suites found (one test per bug)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.reliability.family_readers import (
    ATTEMPTS,
    ETHANOL_MOLFILE,
    ocsr_manifest,
    png_bytes,
    read_ocsr_manifest,
)

from chemgauge.chem import mol_to_canonical
from chemgauge.errors import InputFileError
from chemgauge.families.ocsr.external import import_image_set
from chemgauge.families.ocsr.manifest import load_manifest
from chemgauge.families.ocsr.runner import read_attempts
from chemgauge.families.retro.data import DataFile, load_targets
from chemgauge.families.retro.engine.predictions import PredictionsFileModel


def test_retro_predictions_count_a_repeated_identical_line(tmp_path: Path) -> None:
    # Before: the repeat was neither accepted nor rejected (silently dropped).
    path = tmp_path / "p.jsonl"
    line = '{"product": "CCO", "predictions": ["C.O"]}\n'
    path.write_text(line + line + '{"product": "OCC", "predictions": ["C.O"]}\n')
    model = PredictionsFileModel(path, jobs=1)
    model.prepare()  # lines are keyed (and counted) here
    assert (model.stats.accepted, model.stats.rejected) == (3, 0)


def test_retro_csv_cell_with_whitespace_before_a_separator_is_a_counted_rejection(
    tmp_path: Path,
) -> None:
    # Before: SmilesError out of the reader (the '>' count saw the whole quoted cell).
    path = tmp_path / "test.csv"
    path.write_bytes(
        b"id,reactants>reagents>production\n"
        b'a,"CC(=O\r)Cl.NCC>>CCNC(C)=O"\n'
        b'b,"CC(=O)O.CN>>CNC(C)=O |f:0|"\n'
    )
    targets = load_targets(DataFile("test", "csv", path))
    assert targets.stats.accepted == 1
    # The CR ends a line: the open quote is line 2's problem, the rest is line 3's; the
    # two halves are never read as one row.
    assert dict(targets.stats.counts) == {"malformed_row": 1, "wrong_column_count": 1}
    assert [d.line for d in targets.stats.diagnostics] == [2, 3]


def test_ocsr_manifest_that_is_a_directory_is_named(tmp_path: Path) -> None:
    # Before: IsADirectoryError.
    folder = tmp_path / "manifest.json"
    folder.mkdir()
    with pytest.raises(InputFileError, match=r"manifest.json: expected a file, found a directory"):
        load_manifest(folder)


def test_ocsr_manifest_with_a_missing_image_names_manifest_and_case(tmp_path: Path) -> None:
    # Before: the error named only the image (a path the manifest's author never typed whole).
    path = tmp_path / "m.json"
    path.write_bytes(ocsr_manifest())
    with pytest.raises(InputFileError) as info:
        load_manifest(path)
    assert str(info.value).startswith(f"{path}: case 'ethanol': ")
    assert "ethanol.png" in str(info.value)
    read_ocsr_manifest(path)  # with its assets written beside it, it loads


def test_ocsr_import_refuses_unreadable_files_naming_them(tmp_path: Path) -> None:
    # Before: UnidentifiedImageError, OSError (truncated) or IsADirectoryError. An image the
    # header check refuses is recorded with the reason (the run records it not_run).
    from chemgauge.families.ocsr.external import build_import

    images, references = tmp_path / "images", tmp_path / "refs"
    images.mkdir()
    references.mkdir()

    def run() -> None:
        import_image_set(
            images, references, tmp_path / "m.json", name="x", attribution="a", licence="l"
        )

    def refusal() -> str:
        built = build_import(
            images, references, tmp_path / "m.json", name="x", attribution="a", licence="l"
        )
        return built.summary.refused_images["a"]

    (images / "a.png").write_text("not a picture\n")
    assert refusal().startswith("not an image format")
    (images / "a.png").write_bytes(png_bytes(24, 16)[:30])
    assert refusal().startswith("not a readable image")
    (images / "a.png").write_bytes(png_bytes(24, 16))
    (references / "a.mol").mkdir()
    with pytest.raises(InputFileError, match=r"a.mol: expected a file, found a directory"):
        run()
    (references / "a.mol").rmdir()
    (references / "a.mol").write_text(ETHANOL_MOLFILE)
    run()
    with pytest.raises(InputFileError, match=r"missing: cannot list folder"):
        import_image_set(
            tmp_path / "missing", references, tmp_path / "m.json", name="x", attribution="a",
            licence="l",
        )  # fmt: skip


def _attempts(tmp_path: Path, extra: bytes) -> Path:
    manifest = tmp_path / "m.json"
    manifest.write_bytes(ocsr_manifest())
    read_ocsr_manifest(manifest)
    path = tmp_path / "attempts.jsonl"
    path.write_bytes(ATTEMPTS + extra)
    return path


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (b'{"attempt_id": "x"}\n', "line 4: case_id None is not a case"),
        (b"[1]\n", "line 4: line is not a JSON object"),
        (b"{\n", "line 4: not valid JSON"),
        (
            b'{"attempt_id":"e#r2","case_id":"ethanol","plan_index":"2","repeat":2,'
            b'"status":"completed"}\n',
            "line 4: plan_index must be an integer",
        ),
        (
            b'{"attempt_id":"e#r2","case_id":"ethanol","plan_index":2,"repeat":2,'
            b'"status":"done"}\n',
            "line 4: status must be one of",
        ),
        (
            b'{"attempt_id":"e#r2","case_id":"ethanol","plan_index":2,"repeat":2,'
            b'"status":"completed","recognition":null}\n',
            "line 4: recognition missing",
        ),
        (
            b'{"attempt_id":"e#r2","case_id":"ethanol","plan_index":2,"repeat":2,'
            b'"status":"completed","recognition":{"elapsed_seconds":"1"}}\n',
            "line 4: recognition.elapsed_seconds must be a number",
        ),
        (  # an attempt that ran is written once (only a not_run row may be superseded)
            b'{"attempt_id":"ethanol#r1","case_id":"ethanol","plan_index":0,"repeat":1,'
            b'"status":"not_run","recognition":null}\n',
            "line 4: attempt 'ethanol#r1' is also on line 2",
        ),
    ],
)
def test_ocsr_attempt_rows_are_checked_before_scoring(
    tmp_path: Path, extra: bytes, message: str
) -> None:
    # Before (`chemgauge ocsr score`): KeyError / TypeError out of the sort or the scorer.
    path = _attempts(tmp_path, extra)
    manifest = load_manifest(tmp_path / "m.json")
    with pytest.raises(InputFileError, match=message):
        read_attempts(path, manifest)


def test_ocsr_attempt_rows_read_in_plan_order(tmp_path: Path) -> None:
    path = _attempts(tmp_path, b"\n")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[2] + lines[1])
    rows = read_attempts(path, load_manifest(tmp_path / "m.json"))
    assert [r["attempt_id"] for r in rows] == ["ethanol#r1", "blank#r1"]


def _record_run(folder: Path) -> None:
    """A report.json recording the journal's hash, as `ocsr run` writes it."""
    from chemgauge.families.ocsr.config import RunConfig
    from chemgauge.families.ocsr.provenance import scoring_config
    from chemgauge.families.ocsr.report import write_report
    from chemgauge.families.ocsr.scoring import POLICIES

    extra = {
        "scoring": scoring_config(),
        "backend": {"backend": "python"},
        "run_config": RunConfig(max_requests=1).to_dict(),
        "attempts_config_sha256": "0" * 64,
    }
    manifest = load_manifest(folder / "m.json", verify=False)
    write_report(folder, manifest, [], POLICIES, extra, manifest_path=folder / "m.json")


def test_ocsr_score_cli_names_a_bad_journal_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from chemgauge.cli import app

    path = _attempts(tmp_path, b'{"attempt_id": "x"}\n')
    args = ["ocsr", "score", "--manifest", str(tmp_path / "m.json"), "-o", str(tmp_path), "-q"]
    result = CliRunner().invoke(app, [*args, "--no-html"])
    assert isinstance(result.exception, InputFileError)  # no report: nothing to check against
    assert "no report records this run's attempts hash" in str(result.exception)
    _record_run(tmp_path)
    result = CliRunner().invoke(app, [*args, "--no-html"])
    assert isinstance(result.exception, InputFileError)  # printed by the CLI without a trace
    assert "attempts.jsonl, line 4: case_id None is not a case" in str(result.exception)
    path.write_bytes(ATTEMPTS)
    _record_run(tmp_path)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "report.json").exists() and (tmp_path / "report.html").exists()


def test_a_reference_molfile_import_accepts_is_read_back_by_the_run(tmp_path: Path) -> None:
    # Before: import read a Latin-1 title line leniently, then scoring refused the same file
    # as "not UTF-8" (one CLEF reference did this).
    images, references = tmp_path / "images", tmp_path / "refs"
    images.mkdir()
    references.mkdir()
    (images / "a.png").write_bytes(png_bytes(24, 16))
    (references / "a.mol").write_bytes(b"Ethanol (\xe9thanol)" + ETHANOL_MOLFILE.encode())
    manifest = import_image_set(
        images, references, tmp_path / "m.json", name="x", attribution="a", licence="l"
    )
    (case,) = manifest.cases
    assert case.reference is not None and case.reference.smiles == "CCO"
    loaded = load_manifest(tmp_path / "m.json")
    mol = loaded.reference_mol(loaded.cases[0])
    assert mol is not None and mol_to_canonical(mol) == "CCO"
