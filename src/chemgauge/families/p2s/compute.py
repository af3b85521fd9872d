"""The property stage of a p2s build: every distinct molecule computed once, journaled,
resumable and parallel.

Molecules go through the shared executor (serial, a local process pool or Ray) under the
resource guards of :mod:`chemgauge.families.p2s.engine.guard`; each result is appended to a journal
in the output folder as soon as it arrives, keyed by the molecule and tied to the provider's
fingerprint and the limits. A killed build rerun with the same provider skips what the journal
holds, and the views are built from the journal read back by offset, so the written files are
the same bytes whether a build ran once, resumed, or ran on any number of workers, and memory
does not hold the property values of the whole build.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

import orjson

from chemgauge import __version__
from chemgauge.errors import ConfigError
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.journal import ResumableJsonlWriter, index_journal, iter_journal
from chemgauge.eval.provenance import sha256_json
from chemgauge.families.p2s.engine.guard import (
    DEFAULT_LIMITS,
    ComputeLimits,
    GuardedCompute,
    close_calculators,
)
from chemgauge.families.p2s.engine.properties import PropertyProvider, PropertyResult

__all__ = [
    "PROPERTY_JOURNAL",
    "ComputeExecution",
    "ComputeStats",
    "JournaledProperties",
    "compute_properties",
    "failure_reason",
]

PROPERTY_JOURNAL = "build_properties.jsonl"
COMPUTE_SCHEME_VERSION = 1


@dataclass(frozen=True)
class ComputeExecution:
    """How the property stage runs: where (executor), under which limits, resumed or not.

    Only ``limits`` can change a value (it decides which molecules are refused); the executor
    settings change speed only.
    """

    executor: ExecutorConfig = field(
        default_factory=lambda: ExecutorConfig(kind="serial", jobs=1, chunk_size=4)
    )
    limits: ComputeLimits = DEFAULT_LIMITS
    restart: bool = False


@dataclass
class ComputeStats:
    """What the stage did: molecules computed now, taken from the journal, and their cost."""

    molecules: int = 0
    computed: int = 0
    resumed: int = 0
    provider_seconds: float = 0.0
    failures: Counter[str] = field(default_factory=Counter)


def failure_reason(error: str) -> str:
    """The counted reason of an error text (``"timeout: over 5 s"`` -> ``"timeout"``)."""
    return error.split(":", 1)[0].strip() or "unknown"


def _row(smiles: str, result: PropertyResult) -> dict[str, Any]:
    row = {
        "smiles": smiles,
        "values": dict(result.values),
        "origin": result.origin,
        "error": result.error,
        "seconds": round(result.seconds, 6),
    }
    if result.member_errors:
        row["member_errors"] = dict(result.member_errors)
    return row


def _result(row: Mapping[str, Any]) -> PropertyResult:
    return PropertyResult(
        row["values"],
        row["origin"],
        row["error"],
        row["seconds"],
        row.get("member_errors", {}),
    )


class JournaledProperties(Mapping[str, PropertyResult]):
    """The journal's results by canonical SMILES, read back by byte offset on demand."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offsets = index_journal(path, "smiles")
        self._handle = open(path, "rb")  # noqa: SIM115 - closed by close() / the context

    def __getitem__(self, smiles: str) -> PropertyResult:
        self._handle.seek(self._offsets[smiles])
        return _result(orjson.loads(self._handle.readline()))

    def __iter__(self) -> Iterator[str]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    def close(self) -> None:
        """Close the journal file."""
        self._handle.close()

    def __enter__(self) -> JournaledProperties:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Outcomes of the run, not of the molecule: computed again when a build resumes.
TRANSIENT_FAILURES = frozenset(
    {"timeout", "calculator_crashed", "worker_crashed", "task_killed", "exception"}
)


def _transient_failures(path: Path) -> set[str]:
    """Molecules whose latest journaled result is a timeout or a crash (to be retried)."""
    latest: dict[str, bool] = {}
    for row in iter_journal(path):
        error = row.get("error")
        latest[str(row["smiles"])] = (
            error is not None and failure_reason(str(error)) in TRANSIENT_FAILURES
        )
    return {smiles for smiles, transient in latest.items() if transient}


def journal_config(provider: PropertyProvider, limits: ComputeLimits) -> dict[str, Any]:
    """What a journaled value depends on: chemgauge's version (provider code), the provider's
    fingerprint and the limits."""
    return {
        "compute_scheme_version": COMPUTE_SCHEME_VERSION,
        "chemgauge": __version__,
        "provider": provider.fingerprint(),
        "limits": limits.describe(),
    }


def compute_properties(
    molecules: Iterable[str],
    provider: PropertyProvider,
    out_dir: Path,
    execution: ComputeExecution,
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[JournaledProperties, ComputeStats]:
    """Compute (or resume) every molecule's properties into the journal; read it back.

    ``molecules`` may be a lazy stream (repeats are computed once): it is consumed as the
    workers ask for work, so whatever produces it runs while the first molecules compute.
    Raises :class:`ConfigError` when the folder's journal was written by another provider
    or other limits (``restart`` discards it).
    """
    stats = ComputeStats()
    path = out_dir / PROPERTY_JOURNAL
    config_sha256 = sha256_json(journal_config(provider, execution.limits))
    try:
        writer = ResumableJsonlWriter(
            path,
            config_sha256=config_sha256,
            key_field="smiles",
            restart=execution.restart,
            keep_rows=False,
        )
    except ConfigError as exc:
        if "another configuration" not in str(exc):
            raise
        raise ConfigError(
            f"{path}: this folder's property journal was computed by another provider or under "
            "other limits; pass --restart to recompute, or build into another folder"
        ) from None
    distinct: dict[str, None] = {}
    with writer:
        retry = _transient_failures(path) if writer.keys else set()

        def todo() -> Iterator[str]:
            for smiles in molecules:
                if smiles in distinct:
                    continue
                distinct[smiles] = None
                if writer.done(smiles) and smiles not in retry:
                    stats.resumed += 1
                    if progress is not None:
                        progress(1)
                    continue
                yield smiles

        pending = todo()
        first = next(pending, None)
        if first is not None:  # no executor (no pool, no cluster) for a fully resumed build
            _run(chain([first], pending), provider, execution, writer, stats, progress)
    stats.molecules = len(distinct)
    properties = JournaledProperties(path)
    missing = [m for m in distinct if m not in properties]
    if missing:  # pragma: no cover - the journal is written by the loop above
        properties.close()
        raise ConfigError(f"{path}: no journaled result for {missing[0]!r}")
    for smiles in distinct:
        result = properties[smiles]
        stats.provider_seconds += result.seconds
        if result.error is not None:
            stats.failures[failure_reason(result.error)] += 1
        for member, error in result.member_errors.items():
            stats.failures[f"{failure_reason(error)} ({member})"] += 1
    return properties, stats


def _run(
    todo: Iterable[str],
    provider: PropertyProvider,
    execution: ComputeExecution,
    writer: ResumableJsonlWriter,
    stats: ComputeStats,
    progress: Callable[[int], None] | None,
) -> None:
    executor = make_executor(execution.executor)
    work = GuardedCompute(provider, execution.limits)
    taken: deque[str] = deque()  # molecules handed out, oldest first: results come in order

    def handed_out() -> Iterator[str]:
        for smiles in todo:
            taken.append(smiles)
            yield smiles

    try:
        for outcome in executor.map(work, handed_out()):
            smiles = taken.popleft()
            result = (
                PropertyResult({}, "", f"{outcome.reason}: {outcome.detail}"[:500])
                if isinstance(outcome, ItemFailure)
                else outcome
            )
            writer.write(_row(smiles, result))
            stats.computed += 1
            if progress is not None:
                progress(1)
    finally:
        executor.close()
        close_calculators()
