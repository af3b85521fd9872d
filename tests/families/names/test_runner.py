"""The streaming half of a coverage run: rows back from the journal in input order, and the
report folded from them in one pass, with a dict-backed fake OPSIN."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from chemgauge.eval.envelope import without_timing
from chemgauge.eval.journal import ResumableJsonlWriter
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.names import runner
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.inputs import NamePair
from chemgauge.families.names.metrics import OWN_LENSES
from chemgauge.families.names.runner import (
    ReadBack,
    RowSummary,
    build_report,
    confidently_wrong_rows,
    journal_rows,
    score_pairs,
)

FAKE_OPSIN = {"ethanol": "OCC", "methanol": "CO", "propane": "CCC", "benzene": "c1ccccc1"}
PAIRS = [
    NamePair("a", 2, "CCO", "ethanol"),
    NamePair("b", 3, "CCC", "methanol"),  # confidently wrong
    NamePair("c", 4, "c1ccccc1", "benzene"),
    NamePair("d", 5, "CCO", ""),  # abstained
    NamePair("e", 6, "CCCC", "propane"),  # confidently wrong
    NamePair("f", 7, "CO", "no such name"),  # unparseable
]


def resolve(names: Sequence[str]) -> list[ReadBack]:
    return [
        ReadBack(FAKE_OPSIN[n], "success") if n in FAKE_OPSIN else ReadBack(None, "failure")
        for n in names
    ]


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    return score_pairs(PAIRS, resolve, CoverageConfig())


def test_rows_come_back_in_input_order_whatever_the_journal_order(
    tmp_path: Path, rows: list[dict[str, Any]]
) -> None:
    path = tmp_path / "rows.jsonl.journal"
    journal = ResumableJsonlWriter(path, config_sha256="x", key_field="id", keep_rows=False)
    with journal:  # completed out of order, then the run was killed
        for index in (3, 0, 4):
            journal.write(rows[index])
    resumed = ResumableJsonlWriter(path, config_sha256="x", key_field="id", keep_rows=False)
    with resumed:  # the resumed run finishes the rest in its own order, and holds no rows
        assert resumed.keys == {"d", "a", "e"} and not resumed.existing
        for index in (5, 2, 1):
            resumed.write(rows[index])
        assert not resumed.existing
    keys = [p.item_id for p in PAIRS]
    assert list(journal_rows(path, keys)) == rows
    with pytest.raises(RuntimeError, match="no row was journaled for id 'z'"):
        list(journal_rows(path, [*keys, "z"]))


def test_report_is_folded_in_one_pass_over_a_stream(
    tmp_path: Path, rows: list[dict[str, Any]]
) -> None:
    source = tmp_path / "pairs.tsv"
    source.write_text("smiles\tname\n")

    def report(given: Iterable[dict[str, Any]]) -> dict[str, Any]:
        return build_report(
            given,
            config=CoverageConfig(pin_pct=95.0),
            input_path=source,
            input_stats=RejectionStats(),
            engine={"name": "fake-opsin"},
            timing={},
            rows_path=tmp_path / "rows.jsonl",
        )

    streamed = report(iter(rows))
    assert without_timing(streamed) == without_timing(report(rows))
    metrics = streamed["metrics"]
    assert (metrics["total"], metrics["emitted"], metrics["opsin_parsed"]) == (6, 5, 4)
    assert [r["id"] for r in metrics["confidently_wrong_rows"]] == ["b", "e"]
    assert metrics["confidently_wrong_listed_truncated"] is False
    assert streamed["counts"]["items"] == 6 and streamed["rows_file"] == "rows.jsonl"


def test_wrong_listing_is_bounded_while_every_wrong_row_counts(
    rows: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "MAX_WRONG_LISTED", 1)
    summary = RowSummary()
    assert list(summary.fold(rows)) == rows
    assert summary.wrong == confidently_wrong_rows(rows, OWN_LENSES)[:1]
    assert summary.wrong_total == 2
    assert summary.tally.result()["lenses"]["strict"]["counts"]["confidently_wrong"] == 2


def test_a_pair_whose_matching_crashes_is_unscorable_and_its_group_still_scores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = runner.classify_parsed

    def crashing(smiles: str, parsed: str, *args: Any) -> Any:
        if smiles == "CCCC":
            raise RuntimeError("RDKit blew up")
        return real(smiles, parsed, *args)

    monkeypatch.setattr(runner, "classify_parsed", crashing)
    rows = score_pairs(PAIRS, resolve, CoverageConfig())
    crashed = next(r for r in rows if r["id"] == "e")
    assert [crashed[lens] for lens in ("parity", "strict", "exact")] == ["unscorable"] * 3
    assert crashed["unscorable_reasons"] == dict.fromkeys(OWN_LENSES, "classification_failed")
    assert [r["strict"] for r in rows if r["id"] != "e"] == [
        "rt_valid", "confidently_wrong", "rt_valid", "abstained", "unparseable",
    ]  # fmt: skip


def test_balanced_groups_spread_large_pairs_and_keep_every_pair_once() -> None:
    peptide = ("C" * 900, "C" * 900)
    small = [(f"C{'C' * (i % 7)}", "CCO") for i in range(200)]
    pairs = [peptide, *small, peptide[::-1]]
    groups = runner.balanced_groups(pairs, 1000)
    assert sorted(p for g in groups for p in g) == sorted(pairs)
    loads = [sum(len(a) + len(b) for a, b in g) for g in groups]
    assert max(loads) <= 1800 + 20  # a peptide alone, not a peptide plus the small pairs
    assert sum(1 for g in groups if peptide in g or peptide[::-1] in g) == 2
    assert runner.balanced_groups(pairs, 1000) == groups, "deterministic"


def test_the_run_memo_reads_and_matches_a_repeated_pair_once_and_changes_no_row() -> None:
    from chemgauge.families.names.runner import ReadBack, RunMemo, score_pairs

    answers = {
        "ethanol": ReadBack("CCO", "success"),
        "(2E)-but-2-ene": ReadBack("C/C=C/C", "success"),
        "propan-2-one": ReadBack(None, "timeout", "OPSIN timed out"),
    }
    sent: list[str] = []

    def resolve(names: Sequence[str]) -> list[ReadBack]:
        sent.extend(names)
        return [answers[n] for n in names]

    def block(first: int) -> list[NamePair]:
        return [
            NamePair(f"p{first}", first + 1, "OCC", "ethanol"),
            NamePair(f"p{first + 1}", first + 2, "C/C=C/C", "(2E)-but-2-ene"),
            NamePair(f"p{first + 2}", first + 3, "CC(C)=O", "propan-2-one"),
        ]

    config = CoverageConfig()
    memo = RunMemo()
    with_memo = score_pairs(block(0), resolve, config, memo=memo)
    with_memo += score_pairs(block(3), resolve, config, memo=memo)
    # the OPSIN error is sent again (a later block may read it); the answers are not
    assert sent == ["ethanol", "(2E)-but-2-ene", "propan-2-one", "propan-2-one"]
    assert set(memo.matches) == {("OCC", "CCO"), ("C/C=C/C", "C/C=C/C")}
    sent.clear()
    without = score_pairs(block(0), resolve, config) + score_pairs(block(3), resolve, config)
    assert with_memo == without
    assert [r["strict"] for r in with_memo[:3]] == ["rt_valid", "rt_valid", "opsin_error"]


def test_a_full_run_memo_forgets_and_refills() -> None:
    from chemgauge.families.names.runner import ReadBack, RunMemo

    memo = RunMemo(limit=2)
    memo.keep_answers({n: ReadBack("C", "success") for n in ("methane", "carbane", "CH4")})
    assert list(memo.answers) == ["CH4"]


def test_balanced_groups_keep_the_pairs_of_one_input_together() -> None:
    # Two names of one structure read back two ways: one worker keys the input for both.
    pairs = [(f"C{'C' * i}O", read) for i in range(40) for read in ("OC" + "C" * i, "x")]
    groups = runner.balanced_groups(pairs, 400)
    assert len(groups) > 1
    assert sorted(p for g in groups for p in g) == sorted(pairs)
    home = {smiles: i for i, g in enumerate(groups) for smiles, _ in g}
    assert all(pair in groups[home[pair[0]]] for pair in pairs)
