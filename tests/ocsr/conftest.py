"""A small rendered cohort and a dict-backed recognizer (the injected boundary)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chemgauge.benchmarks.ocsr.cohort import COHORT, build_cohort
from chemgauge.benchmarks.ocsr.manifest import Manifest
from chemgauge.engines.ocsr.base import RECOGNIZERS

SMALL = tuple(e for e in COHORT if e.id in {"ethanol", "gly_l_ala", "boc_l_ala_sodium"})


@pytest.fixture(scope="session")
def small_cohort(tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    return build_cohort(tmp_path_factory.mktemp("cohort"), SMALL)


@pytest.fixture
def answers(small_cohort: Manifest) -> Callable[[dict[str, Any]], str]:
    """Register a recognizer answering per case id (looked up by image hash); returns its name."""

    def install(table: dict[str, Any]) -> str:
        by_hash = {small_cohort.by_id[case_id].sha256: answer for case_id, answer in table.items()}
        seen: list[str] = []

        def recognize(image: Path) -> Any:
            seen.append(image.name)
            answer = by_hash.get(hashlib.sha256(image.read_bytes()).hexdigest(), "")
            if isinstance(answer, Exception):
                raise answer
            return answer

        recognize.seen = seen  # type: ignore[attr-defined]
        RECOGNIZERS.register("test_table", recognize, replace=True)
        return "test_table"

    return install
