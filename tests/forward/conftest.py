"""Shared helpers for the forward-benchmark tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_CORPUS = FIXTURES / "forward_bench_corpus.jsonl"


def corpus_line(
    reaction_id: str, reactants: list[str], accepted: list[list[str]], **extra: Any
) -> str:
    """One schema-1 corpus line."""
    obj: dict[str, Any] = {
        "schema_version": 1,
        "reaction_id": reaction_id,
        "reactants": reactants,
        "accepted_products": accepted,
    }
    obj.update(extra)
    return json.dumps(obj)


@pytest.fixture
def write_corpus(tmp_path: Path) -> Any:
    """Write lines to a corpus file in tmp_path and return its path."""

    def write(lines: list[str], name: str = "corpus.jsonl") -> Path:
        path = tmp_path / name
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return path

    return write
