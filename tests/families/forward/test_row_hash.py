"""Forward's row hash covers every row field but timing (``top_candidates`` included): a
forward run's recorded hash is its rows' own, and dropping or editing any promised field
moves it (the check shared with every family, run here on forward's own benchmark)."""

from __future__ import annotations

from pathlib import Path

from tests.reliability.commands import forward_benchmark, run_cli
from tests.report.test_row_hash_fields import check_row_hash_fields


def test_a_forward_runs_hash_moves_with_every_promised_field(tmp_path: Path) -> None:
    done = run_cli(forward_benchmark(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    check_row_hash_fields(tmp_path / "run", "forward")
