"""An external structure-to-name tool driven as one batch over stdin, never through a shell."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from chemgauge.errors import BackendError, ConfigError

__all__ = ["CommandNamer"]

_MAX_OUTPUT_BYTES = 256 << 20


@dataclass(frozen=True)
class CommandNamer:
    """Runs ``argv`` once per batch: SMILES in, one name per line out, checked one for one.

    A command string is split with shell rules into an argument list and executed directly,
    so metacharacters in it or in the SMILES are never interpreted by a shell.
    """

    argv: tuple[str, ...]
    timeout_s: float = 600.0

    @classmethod
    def from_string(cls, command: str, timeout_s: float = 600.0) -> CommandNamer:
        """Split a command line into an argument list (no shell is ever involved)."""
        argv = tuple(shlex.split(command))
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
            proc = subprocess.run(
                list(self.argv),
                input=payload,
                capture_output=True,
                timeout=self.timeout_s,
                check=False,
            )
        except FileNotFoundError:
            raise BackendError(f"namer command not found: {self.argv[0]!r}") from None
        except subprocess.TimeoutExpired:
            raise BackendError(
                f"namer command timed out after {self.timeout_s:g} s on {len(smiles)} structures"
            ) from None
        if proc.returncode != 0:
            tail = proc.stderr.decode(errors="replace")[-500:]
            raise BackendError(f"namer command exited with {proc.returncode}: {tail}")
        if len(proc.stdout) > _MAX_OUTPUT_BYTES:
            raise BackendError(f"namer printed more than {_MAX_OUTPUT_BYTES} bytes")
        lines = proc.stdout.decode("utf-8", errors="replace").splitlines()
        if len(lines) != len(smiles):
            raise BackendError(
                f"namer returned {len(lines)} lines for {len(smiles)} structures; "
                "it must print exactly one name per input line (an empty line to abstain)"
            )
        return lines
