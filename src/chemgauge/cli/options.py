"""Options shared by every family's commands, so execution flags mean the same everywhere."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, get_args

import typer

from chemgauge.errors import ConfigError
from chemgauge.eval.executors import (
    DEFAULT_RAY_TIMEOUT_S,
    ExecutorConfig,
    ExecutorKind,
    check_jobs,
)
from chemgauge.eval.outputs import Output, claim_outputs

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
RAY_TIMEOUT = typer.Option(
    DEFAULT_RAY_TIMEOUT_S,
    "--ray-timeout",
    help="Seconds to wait for the Ray cluster to answer before giving up with an error.",
)
CHUNK_SIZE = typer.Option(None, "--chunk-size", help="Items per task (default per family).")
QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar or summary table.")
STDOUT = Path("-")


def report_path(rows: Path, report: Path | None) -> Path | None:
    """Where a run's report goes: ``report.json`` beside its rows unless named, ``None``
    (standard output) for ``-``; so a run folder always holds what ``chemgauge report``
    reads."""
    if report is None:
        return rows.with_name("report.json")
    return None if report == STDOUT else report


def executor_config(
    executor: str,
    jobs: int,
    ray_address: str | None,
    chunk_size: int | None,
    *,
    default_chunk: int,
    ray_timeout: float = DEFAULT_RAY_TIMEOUT_S,
) -> ExecutorConfig:
    """Validate the shared execution flags and build the config they describe."""
    kinds = get_args(ExecutorKind)
    if executor not in kinds:
        raise ConfigError(f"--executor must be one of {', '.join(kinds)}, got {executor!r}")
    check_jobs(jobs, cluster=executor == "ray" and ray_address not in (None, "local"))
    if chunk_size is not None and chunk_size < 1:
        raise ConfigError(f"--chunk-size must be >= 1, got {chunk_size}")
    if not ray_timeout > 0:
        raise ConfigError(f"--ray-timeout must be > 0 seconds, got {ray_timeout}")
    return ExecutorConfig(
        kind=executor,  # type: ignore[arg-type]
        jobs=jobs,
        chunk_size=chunk_size or default_chunk,
        ray_address=ray_address,
        ray_timeout_s=ray_timeout,
    )


Inputs = Sequence[tuple[str, Path | None]]
Describe = Callable[[Mapping[str, Any]], tuple[Sequence[Output], Inputs]]
F = TypeVar("F", bound=Callable[..., Any])


def guarded(describe: Describe) -> Callable[[F], F]:
    """Decorate a command so that, before its body runs, its outputs are checked against
    its inputs and each other and locked for the run (:func:`~chemgauge.eval.outputs.
    claim_outputs`). ``describe`` maps the command's arguments to ``(outputs, inputs)``."""

    def decorate(command: F) -> F:
        signature = inspect.signature(command)

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            outputs, inputs = describe(bound.arguments)
            with claim_outputs(outputs, inputs):
                return command(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
