"""Streaming runs: rows are journaled while the run goes on, memory does not grow with the
corpus, and a resumed run (from an in-order or an out-of-order journal) writes the same bytes."""

from __future__ import annotations

import itertools
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from chemgauge.eval.executors import ExecutorConfig
from chemgauge.eval.journal import iter_journal
from chemgauge.families.forward import runner as runner_module
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.runner import run_benchmark

from .conftest import FIXTURE_CORPUS, corpus_line
from .test_rows import report

ONE_BY_ONE = ExecutorConfig(kind="serial", jobs=1, chunk_size=1)
_ELAPSED = re.compile(rb'"elapsed_ms":(null|[0-9.e+-]+)')


def run(tmp_path: Path, name: str, executor: ExecutorConfig = ONE_BY_ONE, **kw: Any) -> Any:
    """A run into the folder ``tmp_path / name`` on ``executor``."""
    config = BenchmarkConfig(
        corpus=kw.pop("corpus", FIXTURE_CORPUS),
        out=tmp_path / name,
        executor=executor.kind,
        jobs=executor.jobs,
        chunk_size=executor.chunk_size,
        **kw,
    )
    return run_benchmark(config)


def untimed_bytes(path: Path) -> bytes:
    """The rows file with every elapsed_ms value blanked (the only field allowed to differ)."""
    return _ELAPSED.sub(b'"elapsed_ms":_', path.read_bytes())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return untimed_bytes(run(tmp_path_factory.mktemp("reference"), "rows").rows_path)


def test_rows_are_journaled_in_line_order_while_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "live" / "rows.jsonl.journal"
    seen: list[list[int]] = []
    real = runner_module.predict_products_detailed

    def spy(reactants: Any, rules: Any, config: Any) -> Any:
        seen.append([row["source_line"] for row in iter_journal(journal)])
        assert not (tmp_path / "live" / "rows.jsonl").exists()
        return real(reactants, rules, config)

    monkeypatch.setattr(runner_module, "predict_products_detailed", spy)
    result = run(tmp_path, "live")
    # Reaction k is predicted only once the rows before it are on disk; lines 1-10 are the
    # fixture's distinct valid reactions, line 18 the first of a conflicting pair.
    assert seen[4] == [1, 2, 3, 4]
    assert seen[-1] == list(range(1, 11))
    assert len(seen) == 11 and result.rows == 16
    assert not journal.exists()


def test_a_resumed_run_writes_identical_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: bytes
) -> None:
    real = runner_module.predict_products_detailed
    calls = {"n": 0}

    def interrupt(reactants: Any, rules: Any, config: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 7:
            raise KeyboardInterrupt
        return real(reactants, rules, config)

    monkeypatch.setattr(runner_module, "predict_products_detailed", interrupt)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "resume")
    monkeypatch.setattr(runner_module, "predict_products_detailed", real)
    resumed = run(tmp_path, "resume", ExecutorConfig(kind="local", jobs=2, chunk_size=2))
    assert resumed.resumed_rows == 6
    assert untimed_bytes(resumed.rows_path) == reference


def test_an_out_of_order_journal_is_read_in_line_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: bytes
) -> None:
    """A journal from an older layout (rows not in line order) still gives the same bytes."""
    real = runner_module.predict_products_detailed
    calls = {"n": 0}

    def interrupt(reactants: Any, rules: Any, config: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 6:
            raise KeyboardInterrupt
        return real(reactants, rules, config)

    monkeypatch.setattr(runner_module, "predict_products_detailed", interrupt)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "shuffled")
    journal = tmp_path / "shuffled" / "rows.jsonl.journal"
    header, *rows = journal.read_bytes().splitlines(keepends=True)
    assert len(rows) == 5
    journal.write_bytes(header + b"".join(reversed(rows)))
    monkeypatch.setattr(runner_module, "predict_products_detailed", real)
    assert untimed_bytes(run(tmp_path, "shuffled").rows_path) == reference


def _combinatorial_corpus(path: Path, n: int) -> None:
    """``n`` distinct reactions built from a dozen strings (so the SMILES memo stays flat)."""
    pool = ["CCO", "CCN", "CCCl", "CC=O", "c1ccccc1", "CC(=O)O", "OCCO", "NCCN", "CCOC", "CS"]
    pool += ["C1CCCCC1", "CC#N"]
    combos = itertools.islice(itertools.combinations(pool, 3), n)
    with open(path, "w") as handle:
        for i, (a, b, c) in enumerate(combos):
            line = corpus_line(f"r{i}", [a, b], [[c]], group_key=f"g{i % 97}")
            handle.write(line + "\n")


def _peak_bytes(tmp_path: Path, name: str, size: int) -> int:
    corpus = tmp_path / f"{name}.in.jsonl"
    _combinatorial_corpus(corpus, size)
    tracemalloc.start()
    try:
        result = run(tmp_path, name, ExecutorConfig(kind="serial", jobs=1), corpus=corpus)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.rows == size
    return peak


def test_memory_does_not_grow_with_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten times the rows costs a few bytes a row (the compact aggregate table), not rows.

    A row is about 2 KB as a dict and a reaction about 1 KB: holding either would add well
    over 1,000 bytes a row.
    """

    def fake(reactants: Any, rules: Any, config: Any) -> Any:
        return report(["CCO", "CC=O", "CCN"])

    monkeypatch.setattr(runner_module, "predict_products_detailed", fake)
    _peak_bytes(tmp_path, "warm", 20)  # rules, caches and imports are paid for once
    small, large = 22, 220
    per_row = (_peak_bytes(tmp_path, "large", large) - _peak_bytes(tmp_path, "small", small)) / (
        large - small
    )
    assert per_row < 400, f"{per_row:.0f} bytes of peak memory per extra row"


def test_strict_rejects_a_bad_corpus_before_journaling_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemgauge.errors import DataQualityError

    calls = {"n": 0}
    real = runner_module.predict_products_detailed

    def count(reactants: Any, rules: Any, config: Any) -> Any:
        calls["n"] += 1
        return real(reactants, rules, config)

    monkeypatch.setattr(runner_module, "predict_products_detailed", count)
    with pytest.raises(DataQualityError, match="line 13"):
        run(tmp_path, "strict", strict=True)
    assert calls["n"] == 0 and not (tmp_path / "strict" / "rows.jsonl.journal").exists()
