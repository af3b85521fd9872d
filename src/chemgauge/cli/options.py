"""Options shared by every family's commands, so execution flags mean the same everywhere."""

from __future__ import annotations

from typing import get_args

import typer

from chemgauge.errors import ConfigError
from chemgauge.eval.executors import ExecutorConfig, ExecutorKind

EXECUTOR = typer.Option(
    "local",
    "--executor",
    help="Where work runs: serial, local (process pool) or ray. Results are identical.",
)
JOBS = typer.Option(0, "--jobs", "-j", help="Worker processes (0 = all cores).")
RAY_ADDRESS = typer.Option(
    None,
    "--ray-address",
    help="Ray cluster to join: 'auto', 'local' (start one here) or HOST:PORT.",
)
CHUNK_SIZE = typer.Option(None, "--chunk-size", help="Items per task (default per family).")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar or summary table.")


def executor_config(
    executor: str,
    jobs: int,
    ray_address: str | None,
    chunk_size: int | None,
    *,
    default_chunk: int,
) -> ExecutorConfig:
    """Validate the shared execution flags and build the config they describe."""
    kinds = get_args(ExecutorKind)
    if executor not in kinds:
        raise ConfigError(f"--executor must be one of {', '.join(kinds)}, got {executor!r}")
    if jobs < 0:
        raise ConfigError(f"--jobs must be >= 0, got {jobs}")
    if chunk_size is not None and chunk_size < 1:
        raise ConfigError(f"--chunk-size must be >= 1, got {chunk_size}")
    return ExecutorConfig(
        kind=executor,  # type: ignore[arg-type]
        jobs=jobs,
        chunk_size=chunk_size or default_chunk,
        ray_address=ray_address,
    )
