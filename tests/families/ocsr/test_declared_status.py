"""A recognizer's declared status wins over a graph it also sent, in every back-end.

A declared failure or clarification that carries a graph is a provisional preview (counted
only among provisional answers, never as a completed success); a clarification without a
graph is clarification-only; the declared status and message stay on the row.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.families.ocsr.conftest import ChatServer, chat_answer

from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import RECOGNIZERS, parse_structured_answer
from chemgauge.families.ocsr.engine.http import HttpRecognizer, HttpSpec
from chemgauge.families.ocsr.engine.recognizers import (
    CommandRecognizer,
    CommandSpec,
    PythonRecognizer,
)
from chemgauge.families.ocsr.evaluate import score_attempts
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.report import aggregate
from chemgauge.families.ocsr.runner import run_attempts
from chemgauge.families.ocsr.scoring import POLICIES

#: (declared status, graph sent?) -> (recorded status, declared status kept on the row)
COMBINATIONS = [
    ("failure", True, "provisional"),
    ("clarification", True, "provisional"),
    ("timeout", True, "provisional"),
    ("provisional", True, "provisional"),
    ("completed", True, "completed"),
    (None, True, "completed"),
    ("failure", False, "failure"),
    ("clarification", False, "clarification"),
    ("completed", False, "failure"),
    (None, False, "failure"),
]


def _answer(declared: str | None, graph: bool) -> dict[str, Any]:
    answer: dict[str, Any] = {"smiles": "CCO" if graph else None}
    if declared is not None:
        answer["status"] = declared
        answer["message"] = f"the program says {declared}"
    return answer


@pytest.mark.parametrize(("declared", "graph", "expected"), COMBINATIONS)
def test_parsed_answer(declared: str | None, graph: bool, expected: str) -> None:
    out = parse_structured_answer(json.dumps(_answer(declared, graph)))
    assert out.status == expected
    assert out.declared_status == (declared or "")
    if declared is not None:
        assert out.message == f"the program says {declared}"
    assert (out.text == "CCO") == graph


def test_a_clarification_field_beside_a_graph_is_a_declared_clarification() -> None:
    out = parse_structured_answer('{"smiles": "CCO", "clarification": "is the N charged?"}')
    assert (out.status, out.declared_status) == ("provisional", "clarification")
    assert out.message == "is the N charged?"
    out = parse_structured_answer('{"smiles": null, "clarification": "send a larger image"}')
    assert (out.status, out.message) == ("clarification", "send a larger image")


@pytest.mark.parametrize(("declared", "graph", "expected"), COMBINATIONS)
def test_command_backend(tmp_path: Path, declared: str | None, graph: bool, expected: str) -> None:
    script = tmp_path / "answer.py"
    script.write_text(f"print({json.dumps(json.dumps(_answer(declared, graph)))})")
    image = tmp_path / "input.png"
    image.write_bytes(b"\x89PNG")
    backend = CommandRecognizer(CommandSpec((sys.executable, str(script), "{image}"), fmt="json"))
    recognition = backend.recognize(image, 30)
    assert recognition.output.status == expected
    assert recognition.to_dict()["declared_status"] == (declared or None)


@pytest.mark.parametrize(("declared", "graph", "expected"), COMBINATIONS)
def test_http_backend(tmp_path: Path, declared: str | None, graph: bool, expected: str) -> None:
    image = tmp_path / "input.png"
    image.write_bytes(b"\x89PNG")
    content = json.dumps(_answer(declared, graph))
    with ChatServer(lambda body: chat_answer("vision-1", content)) as server:
        out = HttpRecognizer(HttpSpec(server.url, "vision-1")).recognize(image, 30).output
    assert (out.status, out.declared_status) == (expected, declared or "")


@pytest.mark.parametrize(("declared", "graph", "expected"), COMBINATIONS)
def test_python_backend(tmp_path: Path, declared: str | None, graph: bool, expected: str) -> None:
    RECOGNIZERS.register("declared_answer", lambda image: _answer(declared, graph), replace=True)
    image = tmp_path / "input.png"
    image.write_bytes(b"\x89PNG")
    out = PythonRecognizer("declared_answer").recognize(image, 30).output
    assert (out.status, out.declared_status) == (expected, declared or "")


def test_audit_case_counts_one_completed_exact_of_twelve(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    """Two exact graphs sent with a declared failure and clarification are previews: 1/12."""
    ethanol = {"smiles": "CCO"}
    declared_failure = {"status": "failure", "smiles": "NCC(=O)N[C@@H](C)C(=O)O",
                        "message": "structured output failed"}  # fmt: skip
    declared_clarification = {
        "status": "clarification",
        "smiles": "CC(C)(C)OC(=O)N[C@@H](C)C(=O)[O-].[Na+]",
        "message": "is the Boc group drawn collapsed?",
    }
    table = {
        small_cohort.by_id[case_id].sha256: answer
        for case_id, answer in (
            ("ethanol", ethanol),
            ("gly_l_ala", declared_failure),
            ("boc_l_ala_sodium", declared_clarification),
        )
    }
    seen: set[str] = set()

    def first_sight(image: Path) -> Any:
        """Answers each image the first time only (the second repeat gets nothing)."""
        digest = hashlib.sha256(image.read_bytes()).hexdigest()
        answer = table.get(digest, "") if digest not in seen else ""
        seen.add(digest)
        return answer

    RECOGNIZERS.register("first_sight", first_sight, replace=True)
    rows = run_attempts(
        small_cohort, PythonRecognizer("first_sight"), RunConfig(repeats=2), tmp_path / "run"
    )
    scored = score_attempts(small_cohort, rows)
    finite = aggregate(small_cohort, scored, POLICIES, {})["finite_reference"]
    assert finite["planned"] == 12
    exact = finite["policies"]["exact"]
    assert exact["completed_exact"] == 1
    assert exact["completed_exact_over_planned"]["count"] == 1
    assert exact["completed_exact_over_planned"]["n"] == 12
    assert exact["provisional_exact"] == 2
    kept = {row["case_id"]: row["recognition"] for row in scored if row["repeat"] == 1}
    assert kept["gly_l_ala"]["declared_status"] == "failure"
    assert kept["gly_l_ala"]["message"] == "structured output failed"
    assert kept["boc_l_ala_sodium"]["declared_status"] == "clarification"


def test_a_json_command_that_fails_keeps_its_graph_as_a_preview(tmp_path: Path) -> None:
    script = tmp_path / "answer.py"
    script.write_text('print(\'{"smiles": "CCO"}\'); raise SystemExit(2)')
    image = tmp_path / "input.png"
    image.write_bytes(b"\x89PNG")
    backend = CommandRecognizer(CommandSpec((sys.executable, str(script), "{image}"), fmt="json"))
    out = backend.recognize(image, 30).output
    assert (out.status, out.text, out.message) == ("provisional", "CCO", "exit code 2")
