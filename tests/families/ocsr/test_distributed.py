"""``ocsr run --executor ray`` on a real local Ray cluster: the rows of a local ``--jobs 2`` run.

The recognizer is a real external program (a Python script answering from a table keyed by
the image's hash, logging each call), run by the ``command`` back-end on the Ray workers.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_module
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.eval.provenance import strip_fields
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.runner import TIMING_FIELDS

pytestmark = [pytest.mark.slow, pytest.mark.external]

GLY_ALA = "NCC(=O)N[C@@H](C)C(=O)O"
SCRIPT = """
import hashlib, json, sys
table = json.load(open(sys.argv[1]))
digest = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
with open(sys.argv[3], "a") as log:
    log.write(digest + "\\n")
print(json.dumps(table.get(digest, {"smiles": None, "clarification": "unknown image"})))
"""


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """One local two-CPU Ray cluster for the module's runs (each run joins it)."""
    ray = require_module("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


def _recognizer(small_cohort: Manifest, folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    table: dict[str, Any] = {}
    for case in small_cohort.cases:
        if case.id.startswith("ethanol_"):
            table[case.sha256] = {"smiles": None, "clarification": "too small"}
        elif case.id.startswith("gly_l_ala"):
            table[case.sha256] = {"smiles": GLY_ALA}
        elif case.id.startswith("ethanol"):
            table[case.sha256] = {"smiles": "CCO"}
    (folder / "table.json").write_text(json.dumps(table))
    (folder / "recognize.py").write_text(SCRIPT)
    args = [sys.executable, str(folder / "recognize.py"), str(folder / "table.json")]
    return [*args, "{image}", str(folder / "calls.log")]


def _run(manifest: Manifest, command: list[str], out: Path, *extra: str) -> dict[str, Any]:
    args = ["ocsr", "run", "--manifest", str(manifest.root / "manifest.json"), "--model", "command"]
    args.append("--unbounded")  # the whole plan runs: no bounded-policy request cap
    for arg in command:
        args += ["--command-arg", arg]
    result = CliRunner().invoke(
        app, [*args, "--format", "json", "-o", str(out), "--run", "--quiet", "--no-html", *extra]
    )
    assert result.exit_code == 0, result.output
    return dict(json.loads((out / "report.json").read_text()))


def _rows(out: Path) -> list[dict[str, Any]]:
    lines = (out / "scored.jsonl").read_text().splitlines()
    return [strip_fields(json.loads(line), TIMING_FIELDS) for line in lines]


def _calls(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_ray_run_gives_the_rows_and_hash_of_a_local_jobs_2_run(
    ray_cluster: None, small_cohort: Manifest, tmp_path: Path
) -> None:
    command = _recognizer(small_cohort, tmp_path / "recognizer")
    log = tmp_path / "recognizer" / "calls.log"
    local = _run(small_cohort, command, tmp_path / "local", "--jobs", "2", "--repeats", "2")
    assert len(_calls(log)) == 2 * len(small_cohort.cases)
    on_ray = _run(
        small_cohort,
        command,
        tmp_path / "ray",
        *("--jobs", "2", "--repeats", "2", "--executor", "ray"),
    )
    assert len(_calls(log)) == 4 * len(small_cohort.cases)  # each attempt once, no retry
    assert on_ray["reproducibility_sha256"] == local["reproducibility_sha256"]
    assert _rows(tmp_path / "ray") == _rows(tmp_path / "local")  # same rows, in plan order
    assert on_ray["timing"]["execution"] == {
        "executor": "ray",
        "ship_images": True,
        "jobs": 2,
    }
    assert on_ray["config_sha256"] == local["config_sha256"]


def test_ray_enforces_the_request_budget_for_the_whole_run(
    ray_cluster: None, small_cohort: Manifest, tmp_path: Path
) -> None:
    command = _recognizer(small_cohort, tmp_path / "recognizer")
    log = tmp_path / "recognizer" / "calls.log"
    limited = ("--jobs", "2", "--repeats", "2", "--max-requests", "5")
    on_ray = _run(
        small_cohort, command, tmp_path / "ray", *limited, "--executor", "ray", "--shared-images"
    )
    assert len(_calls(log)) == 5  # across both workers
    local = _run(small_cohort, command, tmp_path / "local", *limited)
    assert on_ray["reproducibility_sha256"] == local["reproducibility_sha256"]
    rows = _rows(tmp_path / "ray")
    assert [row["status"] for row in rows].count("not_run") == len(rows) - 5
    # the five attempts that ran are the first five of the plan, whatever finished first
    assert all(row["status"] != "not_run" for row in rows[:5])
    # Extending the budget on Ray runs only what was not run.
    _run(small_cohort, command, tmp_path / "ray", *limited[:-1], "7", "--executor", "ray")
    assert len(_calls(log)) == 5 + 5 + 2  # the local run's five, then two more on Ray
    images = {case.sha256 for case in small_cohort.cases}
    assert set(_calls(log)) <= images
    assert hashlib.sha256(b"").hexdigest() not in _calls(log)


def _task(manifest: Manifest, *, deadline: float | None = None, image: bytes | None = None) -> Any:
    from chemgauge.families.ocsr.attempts import PlannedAttempt
    from chemgauge.families.ocsr.distributed import AttemptTask

    case = manifest.cases[0]
    data = manifest.image_path(case).read_bytes() if image is None else image
    planned = PlannedAttempt(0, f"{case.id}#r1", case.id, 1)
    return AttemptTask(planned, 10.0, deadline, ".png", case.sha256, data, None)


def test_a_worker_whose_recognizer_differs_runs_nothing(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    """The driver hashed the script; a node whose copy differs refuses rather than answers."""
    from chemgauge.families.ocsr.distributed import RemoteAttempts
    from chemgauge.families.ocsr.engine.recognizers import CommandRecognizer, CommandSpec

    command = _recognizer(small_cohort, tmp_path / "recognizer")
    recognizer = CommandRecognizer(CommandSpec(tuple(command), fmt="json"))
    expected = recognizer.programs()
    assert str(tmp_path / "recognizer" / "recognize.py") in expected
    (tmp_path / "recognizer" / "recognize.py").write_text(SCRIPT + "\n# changed on this node\n")
    (row,) = RemoteAttempts(recognizer, expected, None)([_task(small_cohort)])
    assert row["status"] == "not_run"
    assert "recognizer differs on this worker node" in row["not_run_reason"]
    assert "recognize.py" in row["not_run_reason"]
    assert not _calls(tmp_path / "recognizer" / "calls.log")


def test_a_worker_checks_the_deadline_and_the_image_before_starting(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    """A task that waited past the overall budget, or got other bytes, never starts."""
    import time

    from chemgauge.families.ocsr.distributed import RemoteAttempts
    from chemgauge.families.ocsr.engine.recognizers import CommandRecognizer, CommandSpec

    command = _recognizer(small_cohort, tmp_path / "recognizer")
    recognizer = CommandRecognizer(CommandSpec(tuple(command), fmt="json"))
    function = RemoteAttempts(recognizer, recognizer.programs(), 30.0)
    late, other, fine = function(
        [
            _task(small_cohort, deadline=time.time() - 1),
            _task(small_cohort, image=b"\x89PNG other bytes"),
            _task(small_cohort, deadline=time.time() + 60),
        ]
    )
    assert (late["status"], late["not_run_reason"]) == (
        "not_run",
        "overall budget (30 s) exhausted",
    )
    assert other["status"] == "not_run"
    assert other["not_run_reason"].startswith("image on the worker differs from the manifest")
    assert fine["status"] == "completed" and fine["timeout_seconds"] <= 10.0
    assert len(_calls(tmp_path / "recognizer" / "calls.log")) == 1
