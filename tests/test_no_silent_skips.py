"""Every skip for a missing dependency goes through ``tests/conftest.py``'s :func:`missing`, which
fails under CI: a check against an outside reference cannot drop out of a green CI run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.conftest import missing, require_module, require_program, shared_path

TESTS = Path(__file__).resolve().parent
# Skipping calls other than the one helper (an xfail(strict=True) is a check, not a skip).
SKIPS = re.compile(r"pytest\.skip\(|importorskip\(|mark\.skip(if)?\b|pytest\.mark\.skip")


def test_no_skip_bypasses_the_helper() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{number}: {line.strip()}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in ("conftest.py", Path(__file__).name)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if SKIPS.search(line)
    ]
    assert offenders == [], "skip through tests.conftest.missing/require_*: " + "; ".join(offenders)


@pytest.mark.parametrize("ci", ["true", "1", "yes"])
def test_under_ci_a_missing_dependency_fails_naming_it(
    monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match=r"program 'no-such-program-xyz' is missing"):
        require_program("no-such-program-xyz")
    with pytest.raises(pytest.fail.Exception, match=r"module 'no_such_module_xyz' .*missing"):
        require_module("no_such_module_xyz")
    with pytest.raises(pytest.fail.Exception, match=r"shared data .*no-such-folder-xyz"):
        shared_path("no-such-folder-xyz")


@pytest.mark.parametrize("ci", [None, "", "0", "false"])
def test_outside_ci_a_missing_dependency_skips(
    monkeypatch: pytest.MonkeyPatch, ci: str | None
) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="the reason"):
        missing("the reason")
    assert require_program("sh").endswith("/sh")
