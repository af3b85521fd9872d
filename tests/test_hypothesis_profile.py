"""The property tests' profile: fixed under CI, so a red run replays the same examples."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = (
    "import conftest; from hypothesis import settings; "
    "print(conftest.HYPOTHESIS_PROFILE, settings.default.derandomize, settings.default.deadline)"
)


def _profile(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO / "tests",
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_ci_derandomizes_and_local_runs_draw_afresh() -> None:
    assert _profile(CI="true") == "ci True None"
    assert _profile() == "dev False None"
    assert _profile(CI="true", HYPOTHESIS_PROFILE="nightly") == "nightly False None"
