"""Streaming OCSR runs: rows in plan order whatever the completion order, resume, re-score."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from chemgauge.eval.journal import iter_journal
from chemgauge.eval.provenance import strip_fields
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.families.ocsr.engine.recognizers import PythonRecognizer
from chemgauge.families.ocsr.evaluate import iter_scored
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.report import iter_rows_file, write_report
from chemgauge.families.ocsr.runner import (
    JOURNAL_NAME,
    TIMING_FIELDS,
    iter_attempt_rows,
    journal_attempts,
    plan_attempts,
    read_attempts,
    run_attempts,
    scan_attempts,
)
from chemgauge.families.ocsr.scoring import POLICIES

GLY_ALA = "NCC(=O)N[C@@H](C)C(=O)O"


def _last_first(manifest: Manifest, journal: Path, planned: int) -> str:
    """A recognizer that answers the first case's second attempt last, by an event, not a
    sleep: that call waits until the journal holds every other planned row (the first call,
    the run's probe, answers at once). A bound of 120 s turns a stuck run into a failure."""
    first = manifest.cases[0].sha256
    calls = 0

    def rows_written() -> int:
        return journal.read_bytes().count(b"\n") - 1 if journal.exists() else 0  # - header

    def recognize(image: Path) -> str:
        nonlocal calls
        if hashlib.sha256(image.read_bytes()).hexdigest() != first:
            return GLY_ALA
        calls += 1
        deadline = time.monotonic() + 120
        while calls > 1 and rows_written() < planned - 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        return "CCO"

    RECOGNIZERS.register("test_last_first", recognize, replace=True)
    return "test_last_first"


def _ids(rows: Any) -> list[str]:
    return [row["attempt_id"] for row in rows]


def test_rows_follow_the_plan_not_completion_order(small_cohort: Manifest, tmp_path: Path) -> None:
    config = RunConfig(repeats=2, jobs=3)
    plan = [p.attempt_id for p in plan_attempts(small_cohort, config)]
    name = _last_first(small_cohort, tmp_path / JOURNAL_NAME, len(plan))
    journal = journal_attempts(small_cohort, PythonRecognizer(name), config, tmp_path)
    finished = _ids(iter_journal(journal))
    assert sorted(finished) == sorted(plan)
    first = small_cohort.cases[0].id
    assert finished[-1] == f"{first}#r2" != plan[-1]  # the first case's second attempt, last
    assert _ids(iter_attempt_rows(journal, small_cohort, config)) == plan
    rows = iter_scored(small_cohort, iter_attempt_rows(journal, small_cohort, config))
    report = write_report(tmp_path, small_cohort, rows, POLICIES, {})
    assert _ids(iter_rows_file(tmp_path / "scored.jsonl")) == plan
    assert report["metrics"]["all_attempts"]["planned"] == len(plan)
    # Re-scoring the out-of-order journal reads it back in plan order too.
    assert _ids(scan_attempts(journal, small_cohort).rows()) == plan
    assert _ids(read_attempts(journal, small_cohort)) == plan


def test_resumed_journal_in_any_order_gives_the_uninterrupted_rows(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers({"gly_l_ala": GLY_ALA, "ethanol": "CCO", "boc_l_ala_sodium": "CC"})
    config = RunConfig(repeats=2)
    whole = run_attempts(small_cohort, PythonRecognizer(name), config, tmp_path / "whole")
    # An interrupted run whose journal holds some rows, in reverse completion order.
    partial = tmp_path / "partial"
    journal_attempts(small_cohort, PythonRecognizer(name), config, partial)
    lines = (partial / JOURNAL_NAME).read_bytes().splitlines(keepends=True)
    kept = lines[1:][::3][::-1]
    (partial / JOURNAL_NAME).write_bytes(lines[0] + b"".join(kept))
    again = PythonRecognizer(name)
    resumed = run_attempts(small_cohort, again, config, partial)
    assert again.calls == len(whole) - len(kept)  # nothing repeated, nothing lost
    untimed = [strip_fields(r, TIMING_FIELDS) for r in resumed]
    assert untimed == [strip_fields(r, TIMING_FIELDS) for r in whole]
    journaled = _ids(iter_journal(partial / JOURNAL_NAME))
    assert len(journaled) == len(set(journaled)) == len(whole)


def test_scored_rows_are_written_as_the_report_reads_them(
    small_cohort: Manifest, answers: Callable[[dict[str, Any]], str], tmp_path: Path
) -> None:
    name = answers({"gly_l_ala": GLY_ALA, "gly_l_ala_lowres": "NCC(=O)NCC(=O)O"})
    rows = run_attempts(small_cohort, PythonRecognizer(name), RunConfig(), tmp_path)
    held = list(iter_scored(small_cohort, rows))
    report = write_report(tmp_path, small_cohort, iter(held), POLICIES, {})
    written = (tmp_path / "scored.jsonl").read_bytes().splitlines()
    assert written == [orjson.dumps(r, option=orjson.OPT_SORT_KEYS) for r in held]
    assert report["metrics"]["finite_reference"]["policies"]["exact"]["completed_exact"] == 1
