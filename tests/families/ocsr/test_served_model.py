"""The ``http`` back-end against a real local chat server: the requested model must answer.

A server answering as another model, refusing the key, missing the endpoint or out of quota
stops the run at the first answer: that attempt fails, every other one is ``not_run`` with
the reason, and no further request is sent (the first attempt runs alone, so this holds with
several attempts in flight).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest
from tests.families.ocsr.conftest import ChatServer, Reply, chat_answer
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.http import HttpRecognizer, HttpSpec, served_as_requested
from chemgauge.families.ocsr.evaluate import score_attempts
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.report import aggregate
from chemgauge.families.ocsr.runner import run_attempts
from chemgauge.families.ocsr.scoring import POLICIES

ANSWER = '{"smiles": "CCO", "clarification": null}'


def _run(
    manifest: Manifest,
    url: str,
    tmp_path: Path,
    *,
    jobs: int = 1,
    effort: str | None = None,
    accept: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    spec = HttpSpec(url, "vision-1", reasoning_effort=effort, accept_models=accept)
    recognizer = HttpRecognizer(spec)
    return run_attempts(manifest, recognizer, RunConfig(jobs=jobs), tmp_path / "run")


def _statuses(rows: list[dict[str, Any]]) -> list[str]:
    return [row["status"] for row in rows]


def test_cli_run_answered_by_another_model_completes_nothing(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    with ChatServer(lambda body: chat_answer("some-other-model", ANSWER)) as server:
        result = CliRunner().invoke(
            app,
            [
                "ocsr", "run", "--manifest", str(small_cohort.root / "manifest.json"),
                "--model", "http", "--url", server.url, "--endpoint-model", "vision-1",
                "-o", str(tmp_path / "out"), "--run", "--jobs", "3", "--quiet",
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 1  # the probe ran alone; nobody else was sent
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    statuses = report["metrics"]["all_attempts"]["statuses"]
    assert statuses["completed"] == 0
    assert (statuses["failure"], statuses["not_run"]) == (1, len(small_cohort.cases) - 1)
    reason = "served model 'some-other-model' is not the requested 'vision-1'"
    assert report["metrics"]["served"] == {
        "models": {"some-other-model": 1},
        "reasoning_efforts": {},
        "service_tiers": {},
        "stop_reason": reason,
        "requested_effort": None,
        "effort_unverified": 0,
    }
    rows = [
        json.loads(line) for line in (tmp_path / "out" / "scored.jsonl").read_text().splitlines()
    ]
    failed = [row for row in rows if row["status"] == "failure"]
    assert failed[0]["recognition"]["served"]["model"] == "some-other-model"
    assert failed[0]["recognition"]["message"] == reason
    assert failed[0]["candidate"]["present"] is False  # the wrong model's answer is not scored
    page = html.unescape((tmp_path / "out" / "report.html").read_text())
    assert "served by: some-other-model (1)" in page and f"stopped the run: {reason}" in page
    not_run = {row["not_run_reason"] for row in rows if row["status"] == "not_run"}
    assert not_run == {f"backend stopped the run: {reason}"}


@pytest.mark.parametrize(
    ("reply", "stop"),
    [
        ((404, {"error": {"message": "model not found"}}), "endpoint or model not found"),
        ((401, {"error": {"message": "invalid api key"}}), "authentication refused (HTTP 401)"),
        ((403, {"error": {"message": "forbidden"}}), "authentication refused (HTTP 403)"),
        ((402, {"error": {"message": "payment required"}}), "quota exhausted (HTTP 402)"),
        (
            (429, {"error": {"code": "insufficient_quota", "message": "check your plan"}}),
            "quota exhausted (HTTP 429)",
        ),
    ],
)
def test_a_refusing_server_gets_exactly_one_request(
    small_cohort: Manifest, tmp_path: Path, reply: Reply, stop: str
) -> None:
    with ChatServer(lambda body: reply) as server:
        rows = _run(small_cohort, server.url, tmp_path, jobs=2)
    assert len(server.requests) == 1
    assert _statuses(rows) == ["failure"] + ["not_run"] * (len(rows) - 1)
    assert stop in rows[0]["recognition"]["stop_reason"]
    assert all(row["not_run_reason"].startswith("backend stopped the run: ") for row in rows[1:])


def test_a_rate_limit_or_server_error_fails_only_its_attempt(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    replies = iter([(429, {"error": {"message": "rate limit reached, slow down"}})] * 3)

    def respond(body: dict[str, Any]) -> Reply:
        return next(replies, (500, {"error": {"message": "internal"}}))

    with ChatServer(respond) as server:
        rows = _run(small_cohort, server.url, tmp_path)
    assert len(server.requests) == len(rows)  # no stop: every attempt was tried once
    assert set(_statuses(rows)) == {"failure"}
    assert [row["recognition"]["message"] for row in rows[:4]] == ["HTTP 429"] * 3 + ["HTTP 500"]


def test_the_requested_model_and_effort_are_recorded_per_attempt(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        assert body["model"] == "vision-1" and body["reasoning_effort"] == "high"
        return chat_answer(
            "vision-1-2026-01-31", ANSWER, reasoning_effort="high", service_tier="default"
        )

    with ChatServer(respond) as server:
        rows = _run(
            small_cohort, server.url, tmp_path, effort="high", accept=("vision-1-2026-01-31",)
        )
    assert set(_statuses(rows)) == {"completed"}
    assert rows[0]["recognition"]["served"] == {
        "model": "vision-1-2026-01-31",
        "reasoning_effort": "high",
        "service_tier": "default",
        "requested_effort": "high",
        "effort_verified": True,
    }
    report = aggregate(small_cohort, score_attempts(small_cohort, rows), POLICIES, {})
    assert report["served"] == {
        "models": {"vision-1-2026-01-31": len(rows)},
        "reasoning_efforts": {"high": len(rows)},
        "service_tiers": {"default": len(rows)},
        "stop_reason": None,
        "requested_effort": "high",
        "effort_unverified": 0,
    }


def test_a_dated_snapshot_is_another_model_unless_accepted(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    with ChatServer(lambda body: chat_answer("vision-1-2026-01-31", ANSWER)) as server:
        rows = _run(small_cohort, server.url, tmp_path)
    assert len(server.requests) == 1
    assert _statuses(rows) == ["failure"] + ["not_run"] * (len(rows) - 1)
    assert (
        "served model 'vision-1-2026-01-31' is not the requested 'vision-1'"
        in (rows[0]["recognition"]["stop_reason"])
    )


@pytest.mark.parametrize(
    ("served", "stop"),
    [
        ({"reasoning_effort": "low"}, "served reasoning effort 'low' is not the requested 'high'"),
        ({"reasoning": {"effort": "minimal"}}, "effort 'minimal' is not the requested 'high'"),
        ({"model": None}, "the answer does not name the model that served it"),
    ],
)
def test_another_effort_or_no_model_named_stops_the_run(
    small_cohort: Manifest, tmp_path: Path, served: dict[str, Any], stop: str
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        code, payload = chat_answer("vision-1", ANSWER)
        return code, {**payload, **served}

    with ChatServer(respond) as server:
        rows = _run(small_cohort, server.url, tmp_path, jobs=2, effort="high")
    assert len(server.requests) == 1
    assert stop in rows[0]["recognition"]["message"]
    assert _statuses(rows)[1:] == ["not_run"] * (len(rows) - 1)


def test_an_effort_the_server_does_not_echo_is_unverified_in_report_and_headline(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    with ChatServer(lambda body: chat_answer("vision-1", ANSWER)) as server:
        result = CliRunner().invoke(
            app,
            [
                "ocsr", "run", "--manifest", str(small_cohort.root / "manifest.json"),
                "--model", "http", "--url", server.url, "--endpoint-model", "vision-1",
                "--reasoning-effort", "high", "-o", str(tmp_path / "out"), "--run",
                "--max-requests", "3", "--no-html",
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (tmp_path / "out" / "scored.jsonl").open()]
    ran = [row for row in rows if row["status"] != "not_run"]
    assert len(ran) == 3 and {row["status"] for row in ran} == {"completed"}
    assert ran[0]["recognition"]["served"]["reasoning_effort"] is None
    assert ran[0]["recognition"]["served"]["effort_verified"] is False
    served = json.loads((tmp_path / "out" / "report.json").read_text())["metrics"]["served"]
    assert (served["requested_effort"], served["effort_unverified"]) == ("high", 3)
    # The table's title (the headline) says it, not only a note below it.
    assert "attempted; reasoning effort 'high' unverified" in " ".join(result.output.split())


def test_only_the_requested_model_or_one_accepted_by_name_counts() -> None:
    assert served_as_requested("gpt-x", "gpt-x")
    assert not served_as_requested("gpt-x-2026-01-31", "gpt-x")
    assert served_as_requested("gpt-x-2026-01-31", "gpt-x", ("gpt-x-2026-01-31",))
    assert not served_as_requested("gpt-x-2026-02-01", "gpt-x", ("gpt-x-2026-01-31",))
    assert not served_as_requested("gpt-x-mini", "gpt-x")
    assert not served_as_requested("gpt-x-mini-2026-01-31", "gpt-x")
    assert not served_as_requested("gpt-x", "gpt-x-2026-01-31")
    assert not served_as_requested("GPT-X", "gpt-x")
