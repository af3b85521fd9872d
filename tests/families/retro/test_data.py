"""Data scanning, the three formats, and counted rejections with line numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import shared_path

from chemgauge.errors import ConfigError, DataQualityError, InputFileError
from chemgauge.families.retro.data import find_fold_file, load_targets, scan_data_dir

MAPPED = "[CH3:1][C:2](=[O:3])[OH:4].[NH2:5][CH3:6]>O>[CH3:1][C:2](=[O:3])[NH:5][CH3:6]"


def _touch(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).write_text("")


def test_scan_picks_format_by_extension(tmp_path: Path) -> None:
    _touch(tmp_path, "uspto_train.csv", "uspto_val.csv", "uspto_test.csv", "notes.txt")
    files = scan_data_dir(tmp_path)
    assert {f: d.path.name for f, d in files.items()} == {
        "train": "uspto_train.csv",
        "val": "uspto_val.csv",
        "test": "uspto_test.csv",
    }
    assert {d.format for d in files.values()} == {"csv"}


def test_two_files_for_one_fold_is_an_error_listing_them(tmp_path: Path) -> None:
    _touch(tmp_path, "a_test.smi", "b_test.smi")
    with pytest.raises(
        ConfigError, match=r"more than one smi file for fold 'test': a_test.smi, b_test.smi"
    ):
        scan_data_dir(tmp_path)


def test_two_formats_is_an_error_listing_files(tmp_path: Path) -> None:
    _touch(tmp_path, "train.jsonl", "test.csv")
    with pytest.raises(
        ConfigError, match=r"more than one format \(csv: test.csv; jsonl: train.jsonl\)"
    ):
        scan_data_dir(tmp_path)


def test_only_the_selected_fold_must_exist(tmp_path: Path) -> None:
    _touch(tmp_path, "test.smi")
    assert find_fold_file(tmp_path, "test").format == "smi"
    with pytest.raises(
        ConfigError, match=r"no file ending in val\.\{jsonl,csv,smi\}.*found: test.smi"
    ):
        find_fold_file(tmp_path, "val")
    with pytest.raises(ConfigError, match="unknown fold 'tset'"):
        find_fold_file(tmp_path, "tset")


def test_shared_uspto_folder_resolves_by_suffix() -> None:
    folder = shared_path("uspto50k")
    # test_with_class.csv does not end in "test.csv", so the folder is not ambiguous
    assert find_fold_file(folder, "test").path.name == "test.csv"
    assert find_fold_file(folder, "val").path.name == "val.csv"


def test_csv_format_strips_maps_keeps_reagents_out_and_counts_bad_lines(tmp_path: Path) -> None:
    (tmp_path / "test.csv").write_text(
        "id,class,reactants>reagents>production\n"
        f"R1,UNK,{MAPPED}\n"
        "R2,3,CC(=O)O.NC>>CC(=O)NCC\n"
        "R3,1,not a reaction\n"
        "R4,1,C1CC>>CC\n"
        "\n"
        "R5,2,CCO>>CC=O.O\n"
        "R6,2,CCO>>\n"
    )
    data = load_targets(find_fold_file(tmp_path, "test"))
    first, second = data.targets
    assert first.product == "CNC(C)=O"
    assert first.reactants == ("CC(=O)O", "CN")  # water reagent not among reactants
    assert first.reaction_class is None and first.source_id == "R1"
    assert first.target == "test:2" and first.line == 2
    assert second.reaction_class == "3" and second.target == "test:3"
    stats = data.stats.to_dict()
    assert stats["rejections_by_reason"] == {
        "multiple_products": 1,
        "no_product": 1,
        "not_a_reaction": 1,
        "unparsable_reactants": 1,
    }
    assert [(d["line"], d["reason"]) for d in stats["diagnostics"]] == [
        (4, "not_a_reaction"),
        (5, "unparsable_reactants"),
        (7, "multiple_products"),
        (8, "no_product"),
    ]


def test_csv_without_the_column_names_file_and_header(tmp_path: Path) -> None:
    (tmp_path / "test.csv").write_text("id,rxn\nA,CC>>CC\n")
    with pytest.raises(
        InputFileError, match=r"test.csv, line 1: .*'reactants>reagents>production'"
    ):
        load_targets(find_fold_file(tmp_path, "test"))


def test_smi_format(tmp_path: Path) -> None:
    (tmp_path / "x_test.smi").write_text(f"{MAPPED}\n\nCCO>>CC=O |f:0|\nC(>>C\n")
    data = load_targets(find_fold_file(tmp_path, "test"))
    assert [(t.line, t.product, t.reactants) for t in data.targets] == [
        (1, "CNC(C)=O", ("CC(=O)O", "CN")),
        (3, "CC=O", ("CCO",)),
    ]
    assert data.stats.to_dict()["rejections_by_reason"] == {"unparsable_reactants": 1}


def test_jsonl_format(tmp_path: Path) -> None:
    (tmp_path / "test.jsonl").write_text(
        '{"reactants": [{"smiles": "Cc1ccc(Br)cc1"}, {"smiles": "Cc1ccc(B(O)O)cc1"}], '
        '"products": [{"smiles": "Cc1ccc(-c2ccc(C)cc2)cc1"}], "class": 9}\n'
        '{"reactants": "CC", "products": []}\n'
        "{not json\n"
    )
    data = load_targets(find_fold_file(tmp_path, "test"))
    (target,) = data.targets
    assert target.product == "Cc1ccc(-c2ccc(C)cc2)cc1"
    assert target.reactants == ("Cc1ccc(B(O)O)cc1", "Cc1ccc(Br)cc1")
    assert target.reaction_class == "9"
    assert data.stats.to_dict()["rejections_by_reason"] == {"bad_schema": 1, "malformed_json": 1}


def test_strict_turns_the_first_bad_line_into_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "test.smi").write_text("CCO>>CC=O\nC1CC>>CC\n")
    with pytest.raises(
        DataQualityError, match=r"test.smi, line 2: unparsable_reactants.*'C1CC>>CC'"
    ):
        load_targets(find_fold_file(tmp_path, "test"), strict=True)


def test_limit_keeps_the_first_lines(tmp_path: Path) -> None:
    (tmp_path / "test.smi").write_text("CCO>>CC=O\nCCN>>CC=N\nCCC>>C=CC\n")
    data = load_targets(find_fold_file(tmp_path, "test"), limit=2)
    assert [t.line for t in data.targets] == [1, 2]
