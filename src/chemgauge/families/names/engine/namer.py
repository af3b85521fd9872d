"""The ``command`` namer: an external structure-to-name tool driven as one batch over stdin,
never through a shell (``--namer-cmd``)."""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from chemgauge.errors import BackendError, ConfigError
from chemgauge.eval.lifeline import child_kwargs

if TYPE_CHECKING:
    from chemgauge.families.names.config import CoverageConfig

__all__ = ["CommandNamer", "command_namer"]

_MAX_OUTPUT_BYTES = 256 << 20
_STDERR_TAIL_BYTES = 4096
_READ_CHUNK = 1 << 16
_JOIN_S = 5.0


def _feed(stream: IO[bytes], payload: bytes) -> None:
    """Write the batch to the namer's stdin; a namer that stops reading is not an error here."""
    with contextlib.suppress(OSError):  # BrokenPipeError included
        stream.write(payload)
    with contextlib.suppress(OSError):
        stream.close()


class _Collector(threading.Thread):
    """Reads one pipe in chunks: everything up to a cap (stdout) or only a tail (stderr)."""

    def __init__(
        self, stream: IO[bytes], cap: int, *, tail: bool, on_overflow: Callable[[], object] | None
    ) -> None:
        super().__init__(daemon=True)
        self.stream, self.cap, self.tail = stream, cap, tail
        self.on_overflow = on_overflow
        self.data = bytearray()
        self.overflowed = False

    def run(self) -> None:
        read = getattr(self.stream, "read1", self.stream.read)
        while chunk := read(_READ_CHUNK):
            self.data += chunk
            if self.tail:
                del self.data[: -self.cap]
            elif len(self.data) > self.cap:
                self.overflowed = True
                del self.data[self.cap :]
                if self.on_overflow is not None:
                    self.on_overflow()
                return


@dataclass(frozen=True)
class CommandNamer:
    """Runs ``argv`` once per batch: SMILES in, one name per line out, checked one for one.

    A command string is split with shell rules into an argument list and executed directly,
    so metacharacters in it or in the SMILES are never interpreted by a shell.
    """

    argv: tuple[str, ...]
    timeout_s: float = 600.0
    max_output_bytes: int = _MAX_OUTPUT_BYTES

    @classmethod
    def from_string(cls, command: str, timeout_s: float = 600.0) -> CommandNamer:
        """Split a command line into an argument list (no shell is ever involved)."""
        try:
            argv = tuple(shlex.split(command))
        except ValueError as error:  # an unbalanced quote or a trailing escape
            raise ConfigError(
                f"--namer-cmd cannot be split into arguments ({error}): {command!r}"
            ) from None
        if not argv:
            raise ConfigError("--namer-cmd is empty")
        return cls(argv, timeout_s)

    def name(self, smiles: Sequence[str]) -> list[str]:
        """Names for a batch of SMILES, in order; a count mismatch fails the whole batch."""
        bad = [s for s in smiles if "\n" in s or "\r" in s]
        if bad:
            raise ConfigError(f"SMILES with a line break cannot be sent to a namer: {bad[0]!r}")
        payload = "".join(f"{s}\n" for s in smiles).encode()
        try:
            proc = subprocess.Popen(
                list(self.argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                **child_kwargs(),
            )
        except FileNotFoundError:
            raise BackendError(f"namer command not found: {self.argv[0]!r}") from None
        except OSError as exc:
            raise BackendError(f"namer command cannot start ({self.argv[0]!r}): {exc}") from None
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        # Output is read in bounded chunks while the batch is written, so a namer that prints
        # gigabytes is stopped at the cap instead of filling memory.
        out = _Collector(proc.stdout, self.max_output_bytes, tail=False, on_overflow=proc.kill)
        err = _Collector(proc.stderr, _STDERR_TAIL_BYTES, tail=True, on_overflow=None)
        feeder = threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True)
        for thread in (out, err, feeder):
            thread.start()
        began = time.monotonic()
        try:
            returncode = proc.wait(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise BackendError(
                f"namer command timed out after {self.timeout_s:g} s on {len(smiles)} structures"
            ) from None
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            # A grandchild may hold the pipes open: wait a little, never forever.
            left = max(0.0, self.timeout_s - (time.monotonic() - began))
            for thread in (out, err, feeder):
                thread.join(timeout=min(_JOIN_S, left) if left else 0.1)
        if out.overflowed:
            raise BackendError(f"namer printed more than {self.max_output_bytes} bytes")
        if returncode != 0:
            tail = bytes(err.data).decode(errors="replace")[-500:]
            raise BackendError(f"namer command exited with {returncode}: {tail}")
        if out.is_alive():
            raise BackendError("namer exited but its output stream stayed open")
        lines = bytes(out.data).decode("utf-8", errors="replace").splitlines()
        if len(lines) != len(smiles):
            raise BackendError(
                f"namer returned {len(lines)} lines for {len(smiles)} structures; "
                "it must print exactly one name per input line (an empty line to abstain)"
            )
        return lines


def command_namer(config: CoverageConfig) -> CommandNamer:
    """The ``command`` namer of a run: ``--namer-cmd``'s program, ``--namer-timeout``'s limit."""
    if config.namer_cmd is None:
        raise ConfigError("--model command needs --namer-cmd CMD (the program to run)")
    return CommandNamer.from_string(config.namer_cmd, config.namer_timeout)
