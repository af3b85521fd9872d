"""Executors: input order, identical results across kinds and worker counts, bounded retries."""

from __future__ import annotations

import os
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest
from tests.conftest import require_module

from chemgauge.chem import try_canonical_smiles
from chemgauge.eval.executors import (
    ExecutorConfig,
    ItemFailure,
    LocalExecutor,
    SerialExecutor,
    make_executor,
)


def canon_chunk(chunk: list[str]) -> list[str | None]:
    return [try_canonical_smiles(s) for s in chunk]


def fragile_chunk(chunk: list[str]) -> list[str]:
    """Fails for the poison item; a chunk holding it fails as a whole."""
    if "poison" in chunk:
        raise ValueError("poisoned item")
    return [s.upper() for s in chunk]


def crash_chunk(chunk: list[str]) -> list[str]:
    """Kills its worker process outright for the item 'crash' (simulates a segfault)."""
    if "crash" in chunk:
        os._exit(13)
    return list(chunk)


class FlakyOnce:
    """Fails the first call on each marker file, then succeeds: a transient fault."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __call__(self, chunk: list[str]) -> list[str]:
        marker = self.folder / f"seen-{chunk[0]}"
        if not marker.exists():
            marker.write_text("x")
            raise RuntimeError("transient")
        return chunk


def test_serial_and_local_agree_in_order(nci_smiles: list[str]) -> None:
    items = nci_smiles[:800]
    serial = list(SerialExecutor().map(canon_chunk, items, chunk_size=37))
    local = LocalExecutor(ExecutorConfig(kind="local", jobs=2, chunk_size=50))
    try:
        parallel = list(local.map(canon_chunk, items))
    finally:
        local.close()
    assert serial == parallel == canon_chunk(items)


def test_failing_item_is_isolated_not_lost() -> None:
    items = ["a", "b", "poison", "c", "d"]
    for executor in (
        SerialExecutor(ExecutorConfig(kind="serial", chunk_size=2, max_retries=1)),
        LocalExecutor(ExecutorConfig(kind="local", jobs=2, chunk_size=2, max_retries=1)),
    ):
        out = list(executor.map(fragile_chunk, items))
        executor.close()
        assert out[:2] == ["A", "B"] and out[3:] == ["C", "D"]
        failure = out[2]
        assert isinstance(failure, ItemFailure)
        assert failure.reason == "exception" and "poisoned" in failure.detail


def test_worker_crash_is_retried_then_recorded() -> None:
    items = [f"x{i}" for i in range(12)] + ["crash"] + [f"y{i}" for i in range(12)]
    executor = LocalExecutor(ExecutorConfig(kind="local", jobs=2, chunk_size=4, max_retries=1))
    try:
        out = list(executor.map(crash_chunk, items))
    finally:
        executor.close()
    assert len(out) == len(items)
    failures = [i for i, r in enumerate(out) if isinstance(r, ItemFailure)]
    assert failures == [12]
    crashed = out[12]
    assert isinstance(crashed, ItemFailure) and crashed.reason == "worker_crashed"
    assert [r for r in out if not isinstance(r, ItemFailure)] == items[:12] + items[13:]


def test_pool_broken_between_submits_is_replaced() -> None:
    """A worker that dies while the caller is elsewhere breaks the pool in the background;
    the next submit must replace it, not raise BrokenProcessPool out of map (a CI flake)."""
    executor = LocalExecutor(ExecutorConfig(kind="local", jobs=2, chunk_size=2, max_retries=1))
    try:
        pool = executor._ensure_pool()
        with pytest.raises(BrokenProcessPool):
            pool.submit(crash_chunk, ["crash"]).result()
        out = list(executor.map(crash_chunk, ["a", "b", "c"]))
    finally:
        executor.close()
    assert out == ["a", "b", "c"]


@pytest.mark.parametrize(("jobs", "in_flight"), [(1, 2), (1, 5), (2, 4)])
def test_chunks_in_flight_follow_the_config(jobs: int, in_flight: int) -> None:
    """The first result is awaited with ``in_flight`` chunks per worker submitted (results
    still in input order): a slow head chunk leaves the other workers that much work."""
    config = ExecutorConfig(kind="local", jobs=jobs, chunk_size=1, in_flight=in_flight)
    executor = LocalExecutor(config)
    submitted: list[list[str]] = []
    submit = executor._submit

    def counting(fn, chunk):  # type: ignore[no-untyped-def]
        submitted.append(chunk)
        return submit(fn, chunk)

    executor._submit = counting  # type: ignore[method-assign]
    items = [f"m{i}" for i in range(20)]
    try:
        results = executor.map(fragile_chunk, items)
        first = next(results)
        assert len(submitted) == max(2, jobs * in_flight)
        assert [first, *results] == [s.upper() for s in items]
    finally:
        executor.close()
    with pytest.raises(Exception, match="in_flight"):
        ExecutorConfig(in_flight=0)


def test_transient_failure_is_retried(tmp_path: Path) -> None:
    out = list(SerialExecutor().map(FlakyOnce(tmp_path), ["a", "b", "c"], chunk_size=1))
    assert out == ["a", "b", "c"]


def test_make_executor_and_bad_kind() -> None:
    assert isinstance(make_executor(ExecutorConfig(kind="local", jobs=1)), SerialExecutor)
    with pytest.raises(Exception, match="unknown executor"):
        make_executor(ExecutorConfig(kind="cluster"))  # type: ignore[arg-type]


@pytest.mark.external
def test_ray_executor_matches_serial(nci_smiles: list[str]) -> None:
    require_module("ray")
    items = [*nci_smiles[:300], "poison"]
    executor = make_executor(ExecutorConfig(kind="ray", jobs=2, chunk_size=40, max_retries=0))
    try:
        out = list(executor.map(canon_chunk, items[:-1]))
        assert out == canon_chunk(items[:-1])
        fragile = list(executor.map(fragile_chunk, ["a", "poison", "b"], chunk_size=2))
        assert fragile[0] == "A" and fragile[2] == "B"
        assert isinstance(fragile[1], ItemFailure)
    finally:
        executor.close()
