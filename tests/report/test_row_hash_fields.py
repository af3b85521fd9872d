"""The row hash covers every field it promises: in each family's run, dropping or changing
any row field outside ``reproducibility_excludes`` (nested fields included) changes it.

Slips considered: a field left out of the hashed dict (``top_candidates`` once was), an
exclude list that matches by prefix and swallows a sibling, a nested change unseen because
only the top level is hashed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from chemgauge.eval.provenance import reproducibility_sha256

FAMILIES = ("forward", "retro", "names", "ocsr", "p2s")


def _leaves(row: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in row.items():
        path = (*prefix, key)
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, path)
        else:
            yield path


def _parent(row: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for key in path[:-1]:
        row = row[key]
    return row


@pytest.mark.parametrize("family", FAMILIES)
def test_every_promised_field_moves_the_row_hash(family_runs: dict[str, Path], family: str) -> None:
    check_row_hash_fields(family_runs[family], family)


def check_row_hash_fields(run: Path, family: str) -> None:
    """The recorded row hash is the rows' own, and moves when any promised field changes."""
    report = orjson.loads((run / "report.json").read_bytes())
    rows_file = run / report["rows_file"]
    rows = [orjson.loads(line) for line in rows_file.read_bytes().splitlines()]
    excludes = report["reproducibility_excludes"]
    for field in excludes:  # only timing and provenance may stay out of the hash
        assert field.startswith("provenance.") or any(
            word in field for word in ("elapsed", "seconds", "_ms", "time", "latency")
        ), f"{family}: {field} is excluded from the row hash"
    assert reproducibility_sha256(rows, excludes) == report["reproducibility_sha256"]

    excluded = {tuple(e.split(".")) for e in excludes}
    checked = 0
    for path in _leaves(rows[0]):
        if any(path[: len(e)] == e for e in excluded):
            continue
        for change in ("drop", "edit"):
            edited = copy.deepcopy(rows)
            parent = _parent(edited[0], path)
            if change == "drop":
                del parent[path[-1]]
            else:
                parent[path[-1]] = ["edited", parent[path[-1]]]
            assert reproducibility_sha256(edited, excludes) != report["reproducibility_sha256"], (
                f"{family}: {change} of {'.'.join(path)} leaves the row hash unchanged"
            )
        checked += 1
    assert checked >= 5, f"{family}: only {checked} fields checked"
