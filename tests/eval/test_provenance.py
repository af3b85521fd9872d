"""Canonical JSON hashing, row reproducibility hashes and provenance blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from chemgauge.errors import InputFileError
from chemgauge.eval.provenance import (
    canonical_json,
    reproducibility_sha256,
    run_provenance,
    sha256_file,
    sha256_json,
    strip_fields,
)


def test_canonical_json_is_sorted_and_compact() -> None:
    assert canonical_json({"b": 1, "a": [1, 2]}) == b'{"a":[1,2],"b":1}'
    assert sha256_json({"b": 1, "a": 2}) == sha256_json({"a": 2, "b": 1})


def test_reproducibility_hash_ignores_named_fields_only() -> None:
    rows = [{"id": 1, "elapsed_ms": 3.2, "p": {"x": 1, "t": 9}}, {"id": 2, "elapsed_ms": 1.0}]
    same = [{"id": 1, "elapsed_ms": 99.0, "p": {"x": 1, "t": 0}}, {"id": 2, "elapsed_ms": 5.0}]
    exclude = ["elapsed_ms", "p.t"]
    assert reproducibility_sha256(rows, exclude) == reproducibility_sha256(same, exclude)
    assert reproducibility_sha256(rows, exclude) != reproducibility_sha256(rows[::-1], exclude)
    changed = [{"id": 1, "elapsed_ms": 3.2, "p": {"x": 2, "t": 9}}, rows[1]]
    assert reproducibility_sha256(rows, exclude) != reproducibility_sha256(changed, exclude)
    assert strip_fields({"a": 1, "b": {"c": 2}}, ["b.c"]) == {"a": 1, "b": {}}


def test_file_hash_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"abc")
    assert sha256_file(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    with pytest.raises(InputFileError, match=r"missing\.txt"):
        sha256_file(tmp_path / "missing.txt")


def test_run_provenance_block(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text("{}\n")
    prov = run_provenance({"k": 1}, {"corpus": path}).to_dict()
    assert prov["config_sha256"] == sha256_json({"k": 1})
    assert prov["input_sha256"]["corpus"] == sha256_file(path)
    assert len(prov["source_tree_sha256"]) == 64
    assert prov["rdkit_version"] and prov["python_version"]
