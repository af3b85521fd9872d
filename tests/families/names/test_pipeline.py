"""Blocks scored as one stream (:func:`score_blocks`): the same rows as block by block, each
pair matched once across blocks, and the next block read back while the current one is
matched; the first blocks of a run are short."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from chemgauge.eval.executors import ExecutorConfig, LocalExecutor, SerialExecutor
from chemgauge.eval.journal import ResumableJsonlWriter
from chemgauge.families.names import api, runner
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.inputs import NamePair
from chemgauge.families.names.metrics import classify_parsed
from chemgauge.families.names.pipeline import score_blocks
from chemgauge.families.names.runner import ReadBack, RunMemo, score_pairs

OPSIN = {
    "ethanol": "OCC",
    "propan-2-ol": "CC(C)O",
    "(2E)-but-2-ene": "C/C=C/C",
    "pyridin-2(1H)-one": "O=c1cccc[nH]1",
    "benzene": "c1ccccc1",
    "butane": "CCCC",
}
TIMED_OUT = "propan-2-one"


def resolve(names: Sequence[str]) -> list[ReadBack]:
    return [
        ReadBack(OPSIN[n], "success")
        if n in OPSIN
        else ReadBack(None, "timeout", "OPSIN timed out")
        if n == TIMED_OUT
        else ReadBack(None, "failure")
        for n in names
    ]


def _blocks() -> list[list[NamePair]]:
    """Five blocks: repeats across blocks (a pair queued by an earlier block), a block with
    nothing to match (abstentions, an unreadable name, a timeout), a wrong name."""
    rows = [
        [("CCO", "ethanol"), ("CC(C)O", "propan-2-ol"), ("Oc1ccccn1", "pyridin-2(1H)-one")],
        [("CCO", "ethanol"), ("C/C=C/C", "(2E)-but-2-ene"), ("CCC", "butane")],
        [("CCO", ""), ("CO", "no such name"), ("CC(C)=O", TIMED_OUT)],
        [("Oc1ccccn1", "pyridin-2(1H)-one"), ("c1ccccc1", "benzene"), ("CCC", "butane")],
        [("CC(C)O", "propan-2-ol"), ("c1ccccc1", "benzene")],
    ]
    blocks, line = [], 2
    for block in rows:
        pairs = []
        for smiles, name in block:
            pairs.append(NamePair(f"p{line}", line, smiles, name))
            line += 1
        blocks.append(pairs)
    return blocks


def _block_by_block(config: CoverageConfig) -> list[list[dict[str, Any]]]:
    return [score_pairs(block, resolve, config) for block in _blocks()]


@pytest.mark.parametrize("reference", [False, True])
def test_the_stream_gives_the_rows_of_block_by_block_scoring(reference: bool) -> None:
    config = CoverageConfig(reference_lenses=reference)
    expected = _block_by_block(config)
    for executor in (
        SerialExecutor(),
        LocalExecutor(ExecutorConfig(kind="local", jobs=2, in_flight=8)),
    ):
        try:
            out = list(score_blocks(_blocks(), resolve, config, executor, RunMemo()))
        finally:
            executor.close()
        assert [[p.item_id for p in block] for block, _ in out] == [
            [p.item_id for p in block] for block in _blocks()
        ]
        assert [rows for _, rows in out] == expected
    classes = [row["strict"] for block in expected for row in block]
    assert classes.count("confidently_wrong") == 2  # butane for propane, twice
    assert {"abstained", "unparseable", "opsin_error"} <= set(classes)


class _Recording(LocalExecutor):
    """A one-worker pool holding eight groups in flight (every block here is read back
    before the first result), keeping every pair it was given to match."""

    def __init__(self) -> None:
        super().__init__(ExecutorConfig(kind="local", jobs=1, in_flight=8))
        self.matched: list[tuple[str, str]] = []

    def map(self, fn: Any, items: Any, *, chunk_size: int | None = None) -> Iterator[Any]:
        def seen(groups: Any) -> Iterator[Any]:
            for group in groups:
                self.matched.extend(group)
                yield group

        return super().map(fn, seen(items), chunk_size=chunk_size)


def test_a_pair_queued_by_an_earlier_block_is_matched_once() -> None:
    executor = _Recording()
    try:
        out = list(score_blocks(_blocks(), resolve, CoverageConfig(), executor, RunMemo()))
    finally:
        executor.close()
    assert len(executor.matched) == len(set(executor.matched)) == 6
    assert ("CCO", "OCC") in executor.matched and ("CCC", "CCCC") in executor.matched
    assert [rows for _, rows in out] == _block_by_block(CoverageConfig())


def test_a_pair_queued_earlier_is_handed_over_though_the_memo_forgot_it() -> None:
    # A memo of one entry forgets nearly every pair: the rows still match the reference.
    config = CoverageConfig()
    for executor in (SerialExecutor(), _Recording()):
        try:
            out = list(score_blocks(_blocks(), resolve, config, executor, RunMemo(limit=1)))
        finally:
            executor.close()
        assert [rows for _, rows in out] == _block_by_block(config)


def test_a_crashing_pair_is_unscorable_in_every_block_that_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = classify_parsed

    def crashing(smiles: str, parsed: str, *args: Any) -> Any:
        if smiles == "CCC":
            raise RuntimeError("RDKit blew up")
        return real(smiles, parsed, *args)

    monkeypatch.setattr(runner, "classify_parsed", crashing)
    out = list(score_blocks(_blocks(), resolve, CoverageConfig(), SerialExecutor(), RunMemo()))
    crashed = [row for _, rows in out for row in rows if row["smiles"] == "CCC"]
    assert len(crashed) == 2
    assert all(row["strict"] == "unscorable" for row in crashed)
    assert all(row["unscorable_reasons"]["strict"] == "classification_failed" for row in crashed)
    others = [row["strict"] for _, rows in out for row in rows if row["smiles"] != "CCC"]
    assert "unscorable" not in others


def test_the_next_block_is_read_back_before_the_current_one_is_handed_back() -> None:
    events: list[str] = []

    def logging_resolve(names: Sequence[str]) -> list[ReadBack]:
        events.append(f"read {len(events)}")
        return resolve(names)

    executor = LocalExecutor(ExecutorConfig(kind="local", jobs=1, in_flight=8))
    try:
        stream = score_blocks(_blocks(), logging_resolve, CoverageConfig(), executor, RunMemo())
        for block, _rows in stream:
            events.append(f"rows {block[0].item_id}")
    finally:
        executor.close()
    # Every block fits in the chunks in flight: all five are read before the first rows.
    assert [e.split()[0] for e in events] == ["read"] * 5 + ["rows"] * 5


def test_a_run_starts_with_short_blocks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(api, "_FIRST_BLOCK", 3)
    monkeypatch.setattr(api, "_BLOCK", 10)
    pairs = [NamePair(f"p{i}", i + 2, "C", "methane") for i in range(40)]
    journal = ResumableJsonlWriter(
        tmp_path / "rows.jsonl.journal", config_sha256="x", key_field="id", keep_rows=False
    )
    order: list[str] = []
    sizes = [len(block) for block in api._blocks(pairs, journal, order)]
    assert sizes == [3, 6, 10, 10, 10, 1]
    assert order == [p.item_id for p in pairs]
