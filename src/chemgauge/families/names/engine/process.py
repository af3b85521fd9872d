"""One persistent OPSIN JVM, fed names over stdin and read line by line over stdout.

Names are pipelined (many in flight) because a synchronous round trip per name
costs about twice the throughput. Alignment is never assumed: every answer
carries the echoed name (and, from the line server, a sequence number) and is
checked against what was sent. A name that stalls the JVM past the timeout is
recorded as a timeout and the JVM is restarted; a JVM that dies is restarted
and the name in flight is retried once. After ``_MAX_CONSECUTIVE_TIMEOUTS`` timeouts with no
answer in between (a timeout far too small for this machine), the rest of a batch is
recorded as skipped instead of paying a JVM restart per name; each later batch tries its
first name again.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import selectors
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from chemgauge.errors import BackendError, ProtocolError, StreamInterrupted
from chemgauge.eval.lifeline import child_kwargs

logger = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 120.0
_MAX_IN_FLIGHT = 256
_WRITE_CHUNK = 1 << 15
_MAX_LINE_BYTES = 4 << 20
_STDERR_TAIL_BYTES = 16 << 10
_CRASH_RETRIES = 1
_MAX_CONSECUTIVE_CRASHED = 3
_MAX_CONSECUTIVE_TIMEOUTS = 5


class OpsinStatus(enum.StrEnum):
    """How a name ended: OPSIN's own verdicts, then the runner's (refused, timeout, crashed)."""

    SUCCESS = "success"
    WARNING = "warning"
    FAILURE = "failure"
    EXCEPTION = "exception"
    REFUSED = "refused"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    SKIPPED = "skipped"  # not sent: the names before it timed out, one after another


@dataclass(frozen=True)
class OpsinResult:
    """OPSIN's answer for one name: a SMILES, or None with the reason in `error`.

    `warnings` holds OPSIN's warnings on a parsed name (for example stereo it
    ignored); they come only from the line server, not from the plain CLI.
    """

    name: str
    smiles: str | None
    error: str | None = None
    status: OpsinStatus = OpsinStatus.SUCCESS
    warnings: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when OPSIN returned a structure."""
        return self.smiles is not None


class LineProtocol(Protocol):
    """How to greet one kind of OPSIN process and read its answer lines."""

    kind: str
    probe: bytes

    def check_hello(self, line: bytes) -> str:
        """Validate the first line after start-up; return the OPSIN version it reports."""
        ...

    def parse(self, line: bytes, seq: int, name: str) -> OpsinResult:
        """Turn the answer line for the `seq`-th name since start-up into a result."""
        ...


@dataclass
class ProcessStats:
    """Counters for one process across its restarts (mutable, owned by one thread)."""

    answered: int = 0
    starts: int = 0
    timeouts: int = 0
    crashes: int = 0
    startup_s: list[float] = field(default_factory=list)


class OpsinProcess:
    """A restartable OPSIN JVM answering one line per name; used by one thread at a time."""

    def __init__(
        self, command: Sequence[str], protocol: LineProtocol, timeout_s: float, label: str
    ) -> None:
        self._command = list(command)
        self._protocol = protocol
        self._timeout_s = timeout_s
        self._label = label
        self._proc: subprocess.Popen[bytes] | None = None
        self._selector: selectors.BaseSelector | None = None
        self._rbuf = bytearray()
        self._stderr_tail = bytearray()
        self._seq = 0
        self._timeouts_in_a_row = 0  # across batches; any answer resets it
        self.runtime_version: str | None = None
        self.stats = ProcessStats()

    @property
    def pid(self) -> int | None:
        """The live JVM's process id, or None when not running."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def start(self) -> None:
        """Launch the JVM and wait for its greeting; raise BackendError if it never answers."""
        self.kill()
        began = time.monotonic()
        try:
            proc = subprocess.Popen(
                self._command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                **child_kwargs(),
            )
        except OSError as error:
            raise BackendError(f"cannot start OPSIN ({self._command[0]!r}): {error}") from error
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(stream.fileno(), False)
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        selector.register(proc.stderr, selectors.EVENT_READ)
        self._proc, self._selector = proc, selector
        self._rbuf.clear()
        self._stderr_tail.clear()
        self._seq = 0
        self.stats.starts += 1
        try:
            self._write_all(self._protocol.probe, began + STARTUP_TIMEOUT_S)
            line = self._next_line(began + STARTUP_TIMEOUT_S)
            self.runtime_version = self._protocol.check_hello(line)
        except (StreamInterrupted, ProtocolError) as error:
            tail = self.stderr_tail()
            self.kill()
            raise BackendError(
                f"OPSIN ({self._protocol.kind}) did not start: {error}; command "
                f"{self._command!r}; stderr: {tail[-2000:]!r}"
            ) from None
        elapsed = time.monotonic() - began
        self.stats.startup_s.append(elapsed)
        logger.debug("%s started in %.2f s (pid %d)", self._label, elapsed, proc.pid)

    def kill(self) -> None:
        """Kill the JVM (if any) and release its pipes."""
        proc = self._proc
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            logger.warning("%s: pid %d did not exit after SIGKILL", self._label, proc.pid)
        self._drain_stderr()
        self._proc = None
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def close(self) -> None:
        """Ask the JVM to finish (EOF on stdin), then kill it if it lingers."""
        proc = self._proc
        if proc is not None and proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def stderr_tail(self) -> str:
        """The last few KB the JVM wrote on stderr (diagnostics only)."""
        self._drain_stderr()
        return self._stderr_tail.decode("utf-8", "replace")

    def run(self, names: Sequence[str]) -> list[OpsinResult]:
        """Answer every name in order, restarting the JVM on timeouts and crashes.

        Names must already be validated (no newline or CR, UTF-8 encodable).
        """
        results: list[OpsinResult | None] = [None] * len(names)
        retries: dict[int, int] = {}
        crashed_in_a_row, last_crashed = 0, -2
        start = 0
        while start < len(names):
            if self.pid is None:
                self.start()
            try:
                self._stream(names, start, results)
                self._timeouts_in_a_row = 0
                break
            except StreamInterrupted as stop:
                self.kill()
                index, name = stop.index, names[stop.index]
                if index > start:  # some names were answered before this one stopped
                    self._timeouts_in_a_row = 0
                if stop.kind == "timeout":
                    self.stats.timeouts += 1
                    self._timeouts_in_a_row += 1
                    results[index] = OpsinResult(name, None, stop.detail, OpsinStatus.TIMEOUT)
                    start = index + 1
                    if self._timeouts_in_a_row >= _MAX_CONSECUTIVE_TIMEOUTS:
                        self._skip(names, start, results)
                        break
                    continue
                self.stats.crashes += 1
                logger.warning("%s: %s at name %r; restarting", self._label, stop.detail, name)
                if stop.kind != "overflow" and retries.get(index, 0) < _CRASH_RETRIES:
                    retries[index] = retries.get(index, 0) + 1
                    start = index
                    continue
                results[index] = OpsinResult(name, None, stop.detail, OpsinStatus.CRASHED)
                start = index + 1
                crashed_in_a_row = crashed_in_a_row + 1 if index == last_crashed + 1 else 1
                last_crashed = index
                if crashed_in_a_row >= _MAX_CONSECUTIVE_CRASHED:
                    raise BackendError(
                        f"OPSIN crashed on {crashed_in_a_row} names in a row (last {name!r}: "
                        f"{stop.detail}); stderr: {self.stderr_tail()[-2000:]!r}"
                    ) from None
            except BaseException:
                self.kill()  # answers may still be in flight: never reuse this JVM
                raise
        done = [r for r in results if r is not None]
        if len(done) != len(names):
            raise BackendError(f"OPSIN answered {len(done)} of {len(names)} names")
        return done

    def _skip(self, names: Sequence[str], start: int, results: list[OpsinResult | None]) -> None:
        """Record names[start:] as skipped after too many timeouts in a row."""
        detail = (
            f"not sent: OPSIN timed out on {self._timeouts_in_a_row} names in a row before "
            f"it (timeout {self._timeout_s:g} s)"
        )
        if start < len(names):
            logger.warning("%s: %s; skipping %d names", self._label, detail, len(names) - start)
        for index in range(start, len(names)):
            results[index] = OpsinResult(names[index], None, detail, OpsinStatus.SKIPPED)

    def _stream(self, names: Sequence[str], start: int, results: list[OpsinResult | None]) -> None:
        """Pipeline names[start:] through the live JVM, filling `results` in order."""
        assert self._proc is not None and self._proc.stdin is not None
        assert self._selector is not None
        stdin = self._proc.stdin
        pending = bytearray()
        next_send = answered = start
        last_progress = time.monotonic()
        watching_stdin = False
        while answered < len(names):
            while (
                next_send < len(names)
                and next_send - answered < _MAX_IN_FLIGHT
                and len(pending) < _WRITE_CHUNK
            ):
                pending += names[next_send].encode("utf-8") + b"\n"
                next_send += 1
            if pending:
                try:
                    written = os.write(stdin.fileno(), pending)
                except BlockingIOError:
                    written = 0
                except OSError as error:
                    raise StreamInterrupted("crash", answered, self._death(error)) from None
                if written:
                    del pending[:written]
                    last_progress = time.monotonic()
            if bool(pending) != watching_stdin:
                if pending:
                    self._selector.register(stdin, selectors.EVENT_WRITE)
                else:
                    self._selector.unregister(stdin)
                watching_stdin = bool(pending)
            remaining = self._timeout_s - (time.monotonic() - last_progress)
            if remaining <= 0:
                raise StreamInterrupted(
                    "timeout", answered, f"OPSIN gave no answer within {self._timeout_s:g} s"
                )
            for key, _ in self._selector.select(timeout=remaining):
                if key.fileobj is self._proc.stderr:
                    self._drain_stderr()
                elif key.fileobj is self._proc.stdout:
                    for line in self._read_lines(answered):
                        if answered >= next_send:  # more lines than names: redo the last one
                            suspect = max(answered - 1, start)
                            raise StreamInterrupted(
                                "misaligned", suspect, f"extra line {line[:200]!r}"
                            )
                        self._seq += 1
                        try:
                            result = self._protocol.parse(line, self._seq, names[answered])
                        except ProtocolError as error:
                            raise StreamInterrupted("misaligned", answered, str(error)) from None
                        results[answered] = result
                        answered += 1
                        self.stats.answered += 1
                        last_progress = time.monotonic()
        if watching_stdin:
            self._selector.unregister(stdin)

    def _read_lines(self, index: int) -> list[bytes]:
        """Read what stdout holds now and split off complete lines; EOF means the JVM died."""
        assert self._proc is not None and self._proc.stdout is not None
        try:
            data = os.read(self._proc.stdout.fileno(), 1 << 16)
        except BlockingIOError:
            return []
        if not data:
            raise StreamInterrupted("crash", index, self._death(None))
        self._rbuf += data
        *lines, rest = bytes(self._rbuf).split(b"\n")
        self._rbuf[:] = rest
        if len(self._rbuf) > _MAX_LINE_BYTES:
            raise StreamInterrupted(
                "overflow", index, f"OPSIN answer exceeded {_MAX_LINE_BYTES} bytes"
            )
        return lines

    def _next_line(self, deadline: float) -> bytes:
        """Block until one complete stdout line arrives (start-up greeting only)."""
        assert self._proc is not None and self._selector is not None
        while True:
            lines = self._read_lines(0)
            if lines:
                if len(lines) > 1 or self._rbuf:
                    raise ProtocolError(f"unexpected output after greeting: {lines[1:]!r}")
                return lines[0]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StreamInterrupted("timeout", 0, f"no greeting within {STARTUP_TIMEOUT_S:g} s")
            for key, _ in self._selector.select(timeout=remaining):
                if key.fileobj is self._proc.stderr:
                    self._drain_stderr()

    def _write_all(self, data: bytes, deadline: float) -> None:
        """Write a small greeting probe to stdin (start-up only)."""
        assert self._proc is not None and self._proc.stdin is not None
        view = memoryview(data)
        while view:
            if time.monotonic() > deadline:
                raise StreamInterrupted("timeout", 0, "stdin did not accept the probe")
            try:
                view = view[os.write(self._proc.stdin.fileno(), view) :]
            except BlockingIOError:
                time.sleep(0.001)
            except OSError as error:
                raise StreamInterrupted("crash", 0, self._death(error)) from None

    def _drain_stderr(self) -> None:
        """Move whatever stderr holds into the bounded tail (the JVM blocks if nobody reads)."""
        if self._proc is None or self._proc.stderr is None or self._proc.stderr.closed:
            return
        while True:
            try:
                data = os.read(self._proc.stderr.fileno(), 1 << 16)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self._stderr_tail += data
            del self._stderr_tail[:-_STDERR_TAIL_BYTES]

    def _death(self, error: OSError | None) -> str:
        """Describe how the JVM went away (exit code when it has one)."""
        assert self._proc is not None
        try:
            code = self._proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        cause = f" ({error.strerror})" if error is not None else ""
        self._drain_stderr()
        lines = self._stderr_tail.decode("utf-8", "replace").strip().splitlines()
        said = f"; stderr ends: {lines[-1][:300]!r}" if lines else ""
        return f"OPSIN process exited with code {code}{cause}{said}"
