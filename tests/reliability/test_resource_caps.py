"""Resource caps: a request that would grow without bound is refused at once, in one line."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path


def _cli(*args: str | Path, memory: int | None = None) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        assert memory is not None
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "chemgauge", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
        preexec_fn=None if memory is None else cap,
    )


def test_compare_resamples_are_capped(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        run = tmp_path / name
        done = _cli(
            "forward",
            "benchmark",
            "--out",
            run,
            "--executor",
            "serial",
            "-q",
        )
        assert done.returncode == 0, done.stderr
        runs.append(run)
    # before: 100,000,000 resamples grew to about 4 GB; capped here at 3 GB of address space
    done = _cli("compare", *runs, "--resamples", "100000000", "-q", memory=3 * 2**30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "error: --resamples must be between 100 and 1,000,000 (memory and time grow with it), "
        "got 100,000,000"
    )
    assert _cli("compare", *runs, "--resamples", "1000000", "-q").returncode == 0
