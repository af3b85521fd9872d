"""SIGTERM, SIGHUP and Ctrl-C stop every family's run like Ctrl-C: children stopped (pool
workers, OPSIN JVMs, recognizer commands), journal closed, exit 128 + signal, and the same
command then resumes to a complete, verified run."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.conftest import require_module
from tests.reliability.stops import (
    Scenario,
    forward_scenario,
    names_scenario,
    ocsr_scenario,
    p2s_build_scenario,
    retro_scenario,
    stop_run,
)

pytestmark = pytest.mark.slow

SCENARIOS: dict[str, Callable[[Path], Scenario]] = {
    "forward": forward_scenario,
    "retro": retro_scenario,
    "names": names_scenario,
    "ocsr": ocsr_scenario,
    "p2s": p2s_build_scenario,
}


def _check(result: object, expected_code: int) -> None:
    returncode = getattr(result, "returncode", None)
    survivors = getattr(result, "survivors", None)
    stderr = getattr(result, "stderr", "")
    assert returncode == expected_code, stderr
    assert survivors == [], survivors
    assert "Traceback" not in stderr, stderr
    assert "interrupted (" in stderr and "rerun the same command to resume" in stderr, stderr
    assert getattr(result, "resumed", None) is True, stderr


@pytest.mark.parametrize("family", sorted(SCENARIOS))
def test_sigterm_stops_every_child_and_the_run_resumes(tmp_path: Path, family: str) -> None:
    scenario = SCENARIOS[family](tmp_path)
    result = stop_run(scenario, signal.SIGTERM)
    assert result.children_at_stop >= scenario.children
    _check(result, 143)


@pytest.mark.parametrize("family", sorted(SCENARIOS))
def test_sigkill_leaves_no_child_alive_and_the_run_resumes(tmp_path: Path, family: str) -> None:
    """A kill nothing can catch: every child (pool workers, OPSIN JVMs, recognizer commands,
    calculator children) dies with the run within seconds, and the journal still resumes."""
    scenario = SCENARIOS[family](tmp_path)
    result = stop_run(scenario, signal.SIGKILL)
    assert result.children_at_stop >= scenario.children
    assert result.returncode == -signal.SIGKILL
    assert result.survivors == []
    assert result.resumed is True, result.stderr


def test_sighup_is_129_and_ctrl_c_is_130(tmp_path: Path) -> None:
    _check(stop_run(forward_scenario(tmp_path / "hup"), signal.SIGHUP), 129)
    _check(stop_run(retro_scenario(tmp_path / "int"), signal.SIGINT), 130)


@pytest.mark.external
def test_sigterm_stops_a_local_ray_cluster(tmp_path: Path) -> None:
    require_module("ray")
    _check(stop_run(forward_scenario(tmp_path, executor="ray"), signal.SIGTERM), 143)


@pytest.mark.external
def test_sigkill_leaves_no_process_of_a_local_ray_cluster(tmp_path: Path) -> None:
    require_module("ray")
    result = stop_run(forward_scenario(tmp_path, executor="ray"), signal.SIGKILL)
    assert result.survivors == []
    assert result.resumed is True, result.stderr
