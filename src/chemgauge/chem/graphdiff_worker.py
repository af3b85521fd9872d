"""Run graph diffs in a separate worker process with a wall-time and a memory limit.

rdFMCS has known memory blow-ups and can outlive its own timeout, so the search never runs in
the benchmark's process. The worker is a plain ``python -m`` child speaking length-prefixed
pickles over its standard streams (no ``multiprocessing`` re-import of the caller's script).
A pair over the time limit is reported as ``timeout`` and the worker replaced; a worker that
dies is reported as ``memory_limit``. Every such outcome is kept in the row, never dropped.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import struct
import subprocess
import sys
import time
from typing import IO, Any

from rdkit import Chem

from chemgauge.chem.graphdiff import DiffSettings, GraphDiff, diff_graphs
from chemgauge.errors import BackendError
from chemgauge.eval.lifeline import child_kwargs

__all__ = ["GraphDiffer"]

_HEADER = struct.Struct(">I")
_PICKLE_PROPS = Chem.PropertyPickleOptions.AllProps
_STARTUP_SECONDS = 120.0


def _write(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes | None:
    """Read ``size`` bytes from ``fd``; ``None`` on timeout, ``EOFError`` on a closed pipe."""
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                return None
        chunk = os.read(fd, remaining)
        if not chunk:
            raise EOFError("worker closed its output")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _serve(memory_mb: int) -> None:
    import resource

    limit = memory_mb * 1024 * 1024
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    fd_in = sys.stdin.buffer.fileno()
    out = sys.stdout.buffer
    _write(out, "ready")
    while True:
        try:
            header = _read_exact(fd_in, _HEADER.size, None)
        except EOFError:
            return
        assert header is not None
        (size,) = _HEADER.unpack(header)
        payload = _read_exact(fd_in, size, None)
        assert payload is not None
        ref_bytes, pred_bytes, settings = pickle.loads(payload)
        try:
            result = diff_graphs(Chem.Mol(ref_bytes), Chem.Mol(pred_bytes), settings)
        except MemoryError:
            result = GraphDiff("memory_limit", detail=f"worker exceeded {memory_mb} MB")
        except Exception as exc:  # one bad pair must not stop the worker
            result = GraphDiff("error", detail=f"{type(exc).__name__}: {exc}")
        _write(out, result)


class GraphDiffer:
    """Compare graphs in one reusable worker process; use as a context manager."""

    def __init__(self, settings: DiffSettings | None = None) -> None:
        self.settings = settings or DiffSettings()
        self._process: subprocess.Popen[bytes] | None = None
        self.timeouts = 0
        self.crashes = 0

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(self.settings.memory_mb)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                **child_kwargs(),
            )
            # Start-up (importing RDKit) must not eat into the first pair's time limit.
            assert self._process.stdout is not None
            fd = self._process.stdout.fileno()
            header = _read_exact(fd, _HEADER.size, time.monotonic() + _STARTUP_SECONDS)
            if header is None:
                self._kill()
                raise BackendError(f"graph-diff worker did not start in {_STARTUP_SECONDS} s")
            _read_exact(fd, _HEADER.unpack(header)[0], time.monotonic() + _STARTUP_SECONDS)
        return self._process

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                if stream is not None:
                    stream.close()
            self._process = None

    def diff(self, ref: Chem.Mol, pred: Chem.Mol) -> GraphDiff:
        """Localize differences within the configured time and memory limits."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        payload = (ref.ToBinary(_PICKLE_PROPS), pred.ToBinary(_PICKLE_PROPS), self.settings)
        deadline = time.monotonic() + self.settings.wall_seconds
        try:
            _write(process.stdin, payload)
            fd = process.stdout.fileno()
            header = _read_exact(fd, _HEADER.size, deadline)
            if header is not None:
                body = _read_exact(fd, _HEADER.unpack(header)[0], deadline + 5.0)
                if body is not None:
                    result: GraphDiff = pickle.loads(body)
                    return result
        except (EOFError, OSError):
            self._kill()
            self.crashes += 1
            return GraphDiff(
                "memory_limit",
                detail=f"worker died (memory limit {self.settings.memory_mb} MB or crash)",
            )
        self._kill()
        self.timeouts += 1
        return GraphDiff("timeout", detail=f"no result within {self.settings.wall_seconds:g} s")

    def close(self) -> None:
        """Stop the worker (closing its input ends it)."""
        if self._process is not None:
            if self._process.stdin is not None:
                with contextlib.suppress(OSError):
                    self._process.stdin.close()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._process = None

    def __enter__(self) -> GraphDiffer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    _serve(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
