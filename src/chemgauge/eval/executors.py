"""One execution layer for every benchmark: serial, a local process pool, or a Ray cluster.

Work is split into chunks that run anywhere; results always come back in input order, so
rows are identical whatever the executor or worker count. A chunk that fails (an exception,
a crashed worker, a killed task) is retried a bounded number of times, then its items are
retried one by one, and an item that still fails comes back as an :class:`ItemFailure`
for the caller to record as an error row: nothing is silently lost.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from itertools import islice
from typing import Any, Generic, Literal, Protocol, TypeVar

from chemgauge.errors import BackendError, ConfigError, MissingDependencyError, RayStartDeadline
from chemgauge.eval import lifeline
from chemgauge.eval.interrupts import (
    Interrupted,
    interrupted,
    reinstall_handlers,
    reset_in_worker,
)

__all__ = [
    "DEFAULT_RAY_TIMEOUT_S",
    "ChunkFunction",
    "Executor",
    "ExecutorConfig",
    "ItemFailure",
    "LocalExecutor",
    "RayExecutor",
    "SerialExecutor",
    "describe_failure",
    "make_executor",
]

T = TypeVar("T")
R = TypeVar("R")
log = logging.getLogger(__name__)

ExecutorKind = Literal["serial", "local", "ray"]
#: Longest wait to join (or start) a Ray cluster before a clear error.
DEFAULT_RAY_TIMEOUT_S = 60.0
ChunkFunction = Callable[[list[T]], list[R]]


#: Most workers a run may start on this machine (four per core), and on a Ray cluster one
#: joins (whose CPU count this machine cannot see).
MAX_LOCAL_JOBS = 4 * (os.cpu_count() or 1)
MAX_CLUSTER_JOBS = 10_000


def check_jobs(jobs: int, *, flag: str = "--jobs", cluster: bool = False, zero: bool = True) -> int:
    """``jobs`` if it is in the allowed range, else a :class:`ConfigError` naming the flag as
    the user typed it and the range (0 means every core where ``zero``)."""
    ceiling = MAX_CLUSTER_JOBS if cluster else MAX_LOCAL_JOBS
    low = 0 if zero else 1
    if not low <= jobs <= ceiling:
        every = " (0 = every core)" if zero else ""
        where = "on a cluster" if cluster else f"on this machine ({os.cpu_count() or 1} cores)"
        raise ConfigError(f"{flag} must be between {low} and {ceiling}{every} {where}, got {jobs}")
    return jobs


@dataclass(frozen=True, slots=True)
class ExecutorConfig:
    """How to run chunked work; none of these settings may change a result, only its speed."""

    kind: ExecutorKind = "local"
    jobs: int = 0
    chunk_size: int = 64
    max_retries: int = 2
    #: Chunks in flight per worker. Results come back in input order, so a slow chunk at
    #: the head holds its results back; more in flight keeps the other workers busy behind it
    #: (at the cost of holding more chunks' results).
    in_flight: int = 2
    ray_address: str | None = None
    ray_timeout_s: float = DEFAULT_RAY_TIMEOUT_S

    def __post_init__(self) -> None:
        cluster = self.kind == "ray" and self.ray_address not in (None, "local")
        check_jobs(self.jobs, cluster=cluster)
        if self.in_flight < 1:
            raise ConfigError(f"in_flight must be at least 1, got {self.in_flight}")

    def workers(self) -> int:
        """Worker count: ``jobs`` or, when 0, every core."""
        return self.jobs if self.jobs > 0 else (os.cpu_count() or 1)

    def describe(self) -> dict[str, Any]:
        """Settings for provenance (timing-only: excluded from reproducibility hashes)."""
        return {"executor": self.kind, "jobs": self.workers(), "chunk_size": self.chunk_size}


@dataclass(frozen=True, slots=True)
class ItemFailure:
    """An item whose work failed after every retry; becomes an error row, never a gap."""

    reason: str
    detail: str
    attempts: int


class Executor(Protocol):
    """Runs a chunk function over items, yielding per-item results in input order."""

    config: ExecutorConfig

    def map(
        self, fn: ChunkFunction[T, R], items: Iterable[T], *, chunk_size: int | None = None
    ) -> Iterator[R | ItemFailure]:
        """Apply ``fn`` to chunks of ``items``; yield one result per item, in order."""
        ...

    def close(self) -> None:
        """Release workers."""
        ...


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _check(chunk: Sequence[object], out: Sequence[object]) -> None:
    if len(out) != len(chunk):
        raise RuntimeError(f"chunk function returned {len(out)} results for {len(chunk)} items")


def describe_failure(exc: BaseException) -> tuple[str, str]:
    """An item's failure as (reason, detail): a crashed worker, a killed task or an exception."""
    if isinstance(exc, BrokenProcessPool):
        return "worker_crashed", str(exc) or "a worker process died"
    name = type(exc).__name__
    if name in {"WorkerCrashedError", "RayActorError", "NodeDiedError"}:
        return "worker_crashed", str(exc)[:500]
    if name in {"TaskCancelledError", "GetTimeoutError"}:
        return "task_killed", str(exc)[:500]
    return "exception", f"{name}: {exc}"[:500]


class SerialExecutor:
    """Runs every chunk in this process; the reference every other executor must equal."""

    def __init__(self, config: ExecutorConfig | None = None) -> None:
        self.config = config or ExecutorConfig(kind="serial", jobs=1)

    def map(
        self, fn: ChunkFunction[T, R], items: Iterable[T], *, chunk_size: int | None = None
    ) -> Iterator[R | ItemFailure]:
        for chunk in _chunks(items, chunk_size or self.config.chunk_size):
            yield from _run_with_retries(lambda c: fn(c), chunk, self.config.max_retries)

    def close(self) -> None:
        return None


def _run_with_retries(
    call: Callable[[list[T]], list[R]], chunk: list[T], retries: int
) -> list[R | ItemFailure]:
    """Run a chunk, retry it, then isolate failing items one by one."""
    last: tuple[str, str] = ("exception", "")
    for _ in range(retries + 1):
        try:
            out = call(chunk)
            _check(chunk, out)
            return list(out)
        except Exception as exc:
            last = describe_failure(exc)
    if len(chunk) == 1:
        return [ItemFailure(last[0], last[1], retries + 1)]
    results: list[R | ItemFailure] = []
    for item in chunk:
        try:
            single = call([item])
            _check([item], single)
            results.append(single[0])
        except Exception as exc:
            results.append(ItemFailure(*describe_failure(exc), retries + 2))
    return results


class _Pending(Generic[T]):
    __slots__ = ("attempts", "chunk", "future", "pool")

    def __init__(self, chunk: list[T], submitted: tuple[Future[Any], ProcessPoolExecutor]) -> None:
        self.chunk = chunk
        self.future, self.pool = submitted
        self.attempts = 0


def _init_worker(group: int | None) -> None:
    """A pool worker: the parent handles signals for the run, and the worker dies with it
    (even on SIGKILL: the lifeline's group and the parent-death signal)."""
    reset_in_worker()
    lifeline.join_from_worker(group)


class LocalExecutor:
    """A process pool with a bounded window of chunks in flight (memory tracks chunk size)."""

    def __init__(self, config: ExecutorConfig) -> None:
        self.config = config
        self._pool: ProcessPoolExecutor | None = None

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.config.workers(),
                initializer=_init_worker,
                initargs=(lifeline.ensure(),),
            )
        return self._pool

    def _reset_pool(self, *, stop_workers: bool = False) -> None:
        """Drop the pool without waiting; ``stop_workers`` also ends chunks still running
        (an interrupt or a failure of the caller: nobody will read their results)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        running = getattr(pool, "_processes", None) or {}
        processes = list(running.values()) if stop_workers else []
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:  # ProcessPoolExecutor has no public way to stop a worker
            with contextlib.suppress(Exception):
                process.terminate()

    def _submit(
        self, fn: ChunkFunction[T, R], chunk: list[T]
    ) -> tuple[Future[Any], ProcessPoolExecutor]:
        """Submit on the current pool; a pool that broke in the background (a worker died
        while this thread was elsewhere) is replaced first. The chunks still in flight on the
        broken pool fail on collection and are resubmitted there."""
        pool = self._ensure_pool()
        try:
            return pool.submit(fn, chunk), pool
        except BrokenProcessPool:
            self._reset_pool()
            pool = self._ensure_pool()
            return pool.submit(fn, chunk), pool

    def map(
        self, fn: ChunkFunction[T, R], items: Iterable[T], *, chunk_size: int | None = None
    ) -> Iterator[R | ItemFailure]:
        size = chunk_size or self.config.chunk_size
        window = max(2, self.config.in_flight * self.config.workers())
        chunks = _chunks(items, size)
        pending: deque[_Pending[T]] = deque()
        try:
            for chunk in chunks:
                pending.append(_Pending(chunk, self._submit(fn, chunk)))
                if len(pending) >= window:
                    yield from self._collect(fn, pending)
            while pending:
                yield from self._collect(fn, pending)
        except BaseException:
            self._reset_pool(stop_workers=True)
            raise

    def _collect(
        self, fn: ChunkFunction[T, R], pending: deque[_Pending[T]]
    ) -> Iterator[R | ItemFailure]:
        head = pending.popleft()
        while True:
            try:
                out = head.future.result()
                _check(head.chunk, out)
                yield from out
                return
            except Exception as exc:
                head.attempts += 1
                reason = describe_failure(exc)
                log.warning("chunk failed (%s, attempt %d): %s", *reason[:1], head.attempts, exc)
                if isinstance(exc, BrokenProcessPool):
                    # Every future of the broken pool died with it: resubmit them on a new one
                    # (the pool may already have been replaced when a submit found it broken).
                    broken = head.pool
                    if self._pool is broken:
                        self._reset_pool()
                    for other in pending:
                        if other.pool is broken:
                            other.future, other.pool = self._submit(fn, other.chunk)
                if head.attempts <= self.config.max_retries:
                    head.future, head.pool = self._submit(fn, head.chunk)
                    continue
                yield from self._isolate(fn, head.chunk, reason)
                return

    def _isolate(
        self, fn: ChunkFunction[T, R], chunk: list[T], reason: tuple[str, str]
    ) -> Iterator[R | ItemFailure]:
        if len(chunk) == 1:
            yield ItemFailure(reason[0], reason[1], self.config.max_retries + 1)
            return
        for item in chunk:
            pool: ProcessPoolExecutor | None = None
            try:
                future, pool = self._submit(fn, [item])
                out = future.result()
                _check([item], out)
                yield out[0]
            except Exception as exc:
                # only the pool that broke is dropped (a submit may already have replaced it)
                if isinstance(exc, BrokenProcessPool) and pool is not None and self._pool is pool:
                    self._reset_pool()
                yield ItemFailure(*describe_failure(exc), self.config.max_retries + 2)

    def close(self) -> None:
        if interrupted() is not None:  # stopping: never wait for a chunk nobody will read
            self._reset_pool(stop_workers=True)
        elif self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class RayExecutor:
    """Chunks as Ray tasks on a local or existing cluster; same ordering and retry contract."""

    def __init__(self, config: ExecutorConfig) -> None:
        try:
            import ray
        except ImportError as exc:
            raise MissingDependencyError(
                "the Ray executor needs Ray: pip install 'chemgauge[ray]'"
            ) from exc
        self.config = config
        self._ray = ray
        self._owns_cluster = False
        if not ray.is_initialized():
            address = config.ray_address
            if address in (None, "local"):
                settings = {"num_cpus": config.workers(), "include_dashboard": False}
                _start_local_ray(ray, settings, config.ray_timeout_s)
                self._owns_cluster = True
            else:
                _probe_ray_address(address, config.ray_timeout_s)
                _join_ray(ray, {"address": address}, address, config.ray_timeout_s)
        self._remote = ray.remote(max_retries=config.max_retries)(_call_chunk)

    def map(
        self, fn: ChunkFunction[T, R], items: Iterable[T], *, chunk_size: int | None = None
    ) -> Iterator[R | ItemFailure]:
        ray = self._ray
        size = chunk_size or self.config.chunk_size
        fn_ref = ray.put(fn)
        window = max(2, self.config.in_flight * self.config.workers())
        pending: deque[tuple[list[T], Any]] = deque()
        for chunk in _chunks(items, size):
            pending.append((chunk, self._remote.remote(fn_ref, chunk)))
            if len(pending) >= window:
                yield from self._collect(fn_ref, pending)
        while pending:
            yield from self._collect(fn_ref, pending)

    def _collect(self, fn_ref: Any, pending: deque[tuple[list[T], Any]]) -> Iterator[Any]:
        chunk, ref = pending.popleft()
        attempts = 0
        while True:
            try:
                out = self._ray.get(ref)
                _check(chunk, out)
                yield from out
                return
            except Exception as exc:
                attempts += 1
                if attempts <= self.config.max_retries:
                    ref = self._remote.remote(fn_ref, chunk)
                    continue
                reason = describe_failure(exc)
                if len(chunk) == 1:
                    yield ItemFailure(reason[0], reason[1], attempts)
                    return
                for item in chunk:
                    try:
                        single = self._ray.get(self._remote.remote(fn_ref, [item]))
                        _check([item], single)
                        yield single[0]
                    except Exception as item_exc:
                        yield ItemFailure(*describe_failure(item_exc), attempts + 1)
                return

    def close(self) -> None:
        if self._owns_cluster and self._ray.is_initialized():
            self._ray.shutdown()


def _probe_ray_address(address: str, timeout_s: float) -> None:
    """Fail fast on a ``HOST:PORT`` nobody listens on (Ray itself retries for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # 'auto', 'ray://...': Ray resolves these itself (under the deadline below)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=min(timeout_s, 5.0)).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise BackendError(
            f"cannot reach the Ray cluster at {address} ({reason}); check --ray-address"
        ) from None


def _quiet_ray_logs() -> None:
    """Ray's own notices (token authentication, dashboard) are not the run's output: only
    its errors reach standard error, so ``-q`` leaves errors alone there."""
    import logging

    logging.getLogger("ray").setLevel(logging.ERROR)


def _start_local_ray(ray: Any, settings: dict[str, Any], timeout_s: float) -> None:
    """Start a local cluster in the main thread (Ray ties its processes' lives to the
    thread that starts them), under a SIGALRM deadline; Ray's own SIGTERM handler, which it
    installs here, is replaced by ours again afterwards."""
    main = threading.current_thread() is threading.main_thread()
    lifeline.ensure()  # its watcher notes the cluster's daemons, which Ray starts apart

    def expire(signum: int, frame: object) -> None:
        raise RayStartDeadline

    previous = signal.signal(signal.SIGALRM, expire) if main else None
    if main:
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        _quiet_ray_logs()
        ray.init(**settings, log_to_driver=False, configure_logging=False)
    except RayStartDeadline:
        raise BackendError(
            f"the local Ray cluster did not start within {timeout_s:g} s (--ray-timeout)"
        ) from None
    except SystemExit as exc:  # Ray's SIGTERM handler, active while it starts
        if exc.code == signal.SIGTERM:
            raise Interrupted(signal.SIGTERM) from None
        raise
    finally:
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if interrupted() is None:
                reinstall_handlers()


def _join_ray(ray: Any, settings: dict[str, Any], address: str, timeout_s: float) -> None:
    """Join an existing cluster under a deadline: ``ray.init`` runs in a helper thread (a
    driver that joins starts no process) while this thread waits in short steps, so
    SIGTERM and Ctrl-C still work while connecting and a cluster that never answers is a
    clear error instead of a silent hang."""
    outcome: list[BaseException | None] = []

    def connect() -> None:
        try:
            _quiet_ray_logs()
            ray.init(**settings, log_to_driver=False, configure_logging=False)
            outcome.append(None)
        except BaseException as exc:  # handed to the waiting thread
            outcome.append(exc)

    thread = threading.Thread(target=connect, name="ray-init", daemon=True)
    # Ray warns that it cannot set its own SIGTERM handler from a helper thread: intended.
    quiet = logging.getLogger("ray._private.worker")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        thread.start()
        deadline = time.monotonic() + timeout_s
        while thread.is_alive() and time.monotonic() < deadline:
            thread.join(0.1)
    finally:
        quiet.setLevel(level)
    if not outcome:
        raise BackendError(
            f"no Ray cluster answered at {address} within {timeout_s:g} s (--ray-timeout); "
            "check --ray-address, or start the cluster first"
        )
    if outcome[0] is not None:
        raise BackendError(f"cannot join the Ray cluster at {address}: {outcome[0]}") from None


def _call_chunk(fn: Callable[[list[Any]], list[Any]], chunk: list[Any]) -> list[Any]:
    return fn(chunk)


def make_executor(config: ExecutorConfig) -> Executor:
    """Build the executor a config names (``serial``, ``local`` or ``ray``)."""
    if config.kind == "serial" or (config.kind == "local" and config.workers() == 1):
        return SerialExecutor(config)
    if config.kind == "local":
        return LocalExecutor(config)
    if config.kind == "ray":
        return RayExecutor(config)
    raise ConfigError(f"unknown executor {config.kind!r}; choose serial, local or ray")
