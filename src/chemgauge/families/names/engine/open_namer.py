"""An open namer driven in its own environment: one long-lived child process, one SMILES a
line in and one answer a line out, a timeout per molecule, a crash counted per molecule.

A molecule the child takes longer than the timeout on, or dies on, is that molecule's
failure (``timeout`` / ``crashed``: not emitted, inside every denominator); the child is
restarted for the next one. Abstentions are read the namer's own way (see
``namer_worker.py``).
"""

from __future__ import annotations

import importlib.resources
import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from chemgauge.errors import BackendError, ConfigError
from chemgauge.eval.lifeline import child_kwargs
from chemgauge.families.names.namer_envs import NamerEnv, find_env

if TYPE_CHECKING:
    from chemgauge.families.names.config import CoverageConfig

__all__ = ["NamerAnswer", "OpenNamer", "centres_jar", "open_namer"]

_START_TIMEOUT_S = 300.0
_CENTRES_JAR = "centres-cli-1.2.1.jar"
# Statuses of one molecule: a name, an abstention, or the namer's failure on it.
NAMED, ABSTAINED, RAISED, TIMEOUT, CRASHED = "named", "abstained", "raised", "timeout", "crashed"


@dataclass(frozen=True, slots=True)
class NamerAnswer:
    """What the namer did with one molecule."""

    name: str | None
    status: str
    detail: str | None = None


def centres_jar() -> Path:
    """The centres CIP labeller jar Orthonym needs offline: $ORTHONYM_CENTRES_JAR, else
    ``shared/tools/centres/`` beside or above the working folder or beside the source
    checkout; missing: a clear error."""
    explicit = os.environ.get("ORTHONYM_CENTRES_JAR")
    if explicit:
        if not Path(explicit).is_file():
            raise ConfigError(f"ORTHONYM_CENTRES_JAR names no file: {explicit}")
        return Path(explicit)
    here = Path.cwd().resolve()
    checkout = Path(__file__).resolve().parents[5]  # a source checkout: its ../shared
    for folder in (here, *here.parents, checkout):
        for candidate in (
            folder / "shared" / "tools" / "centres" / _CENTRES_JAR,
            folder / ".." / "shared" / "tools" / "centres" / _CENTRES_JAR,
        ):
            if candidate.is_file():
                return candidate.resolve()
    raise ConfigError(
        f"Orthonym needs the centres CIP labeller jar ({_CENTRES_JAR}) and may not download "
        "it: set ORTHONYM_CENTRES_JAR to its path (it is in shared/tools/centres/)"
    )


def _opsin_jar(env: NamerEnv) -> Path:
    found = sorted(env.path.glob("lib/python*/site-packages/py2opsin/opsin-cli-*.jar"))
    if not found:
        raise ConfigError(
            f"Orthonym needs OPSIN's jar (opsin-cli-*.jar from py2opsin) in {env.path}: "
            "reinstall with `chemgauge names namers install orthonym --force`"
        )
    return found[0]


def _worker_path() -> Path:
    resource = importlib.resources.files("chemgauge.families.names.engine") / "namer_worker.py"
    return Path(str(resource))


def _reader(stream: IO[bytes], lines: queue.SimpleQueue[bytes | None]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(None)


@dataclass
class OpenNamer:
    """A registered open namer in its environment (``chemgauge names namers install``)."""

    env: NamerEnv
    molecule_timeout_s: float = 60.0
    start_timeout_s: float = _START_TIMEOUT_S
    answers: list[NamerAnswer] = field(default_factory=list)
    version: str | None = None
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _lines: queue.SimpleQueue[bytes | None] | None = field(default=None, repr=False)
    _stderr: Any = field(default=None, repr=False)
    restarts: int = 0

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # chemgauge's packages never leak into the namer
        env.pop("PYTHONHOME", None)
        if self.env.spec.name == "orthonym":
            env["ORTHONYM_OPSIN_JAR"] = str(_opsin_jar(self.env))
            env["ORTHONYM_CENTRES_JAR"] = str(centres_jar())
            env["ORTHONYM_NO_DOWNLOAD"] = "1"
        return env

    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _stop)
        argv = [str(self.env.python), "-I", str(_worker_path()), self.env.spec.name]
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=self._environment(),
            **child_kwargs(),
        )
        assert self._proc.stdout is not None
        self._lines = queue.SimpleQueue()
        threading.Thread(target=_reader, args=(self._proc.stdout, self._lines), daemon=True).start()
        greeting = self._next(self.start_timeout_s)
        if greeting is None:
            tail = self._stderr_tail()
            self._stop()
            raise BackendError(f"namer {self.env.spec.name} did not start: {tail}")
        self.version = json.loads(greeting).get("version")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return str(self._stderr.read()[-800:].decode("utf-8", "replace"))

    def _next(self, timeout: float) -> bytes | None:
        assert self._lines is not None
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def _stop(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    stream.close()
        if self._stderr is not None:
            self._stderr.close()
        self._proc = self._lines = self._stderr = None

    def close(self) -> None:
        """Stop the child process."""
        self._stop()

    def _one(self, smiles: str) -> NamerAnswer:
        if self._proc is None:
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write((json.dumps(smiles) + "\n").encode())
            self._proc.stdin.flush()
        except OSError:
            pass  # the child died: its answer below is the end of its output
        began = time.monotonic()
        assert self._lines is not None
        try:
            line = self._lines.get(timeout=self.molecule_timeout_s)
        except queue.Empty:
            self._stop()
            self.restarts += 1
            waited = time.monotonic() - began
            return NamerAnswer(None, TIMEOUT, f"no answer within {waited:.3g} s")
        if line is None:  # the child closed its output: it died on this molecule
            self._proc.wait()
            code = self._proc.returncode
            tail = self._stderr_tail()
            self._stop()
            self.restarts += 1
            return NamerAnswer(None, CRASHED, f"exit code {code}: {tail[-300:]}")
        answer = json.loads(line)
        if "name" in answer:
            return NamerAnswer(str(answer["name"]), NAMED)
        if "abstained" in answer:
            return NamerAnswer(None, ABSTAINED, str(answer["abstained"]) or None)
        return NamerAnswer(None, RAISED, str(answer.get("raised")))

    def name(self, smiles: Sequence[str]) -> list[str | None]:
        """Names for a batch, one per structure; every failure is that molecule's alone."""
        bad = [s for s in smiles if "\n" in s or "\r" in s]
        if bad:
            raise ConfigError(f"SMILES with a line break cannot be sent to a namer: {bad[0]!r}")
        try:
            answers = [self._one(s) for s in smiles]
        finally:
            self.close()
        self.answers = answers
        return [a.name for a in answers]

    def statuses(self) -> list[str]:
        """Each molecule's status in the last batch (named, abstained, raised, timeout,
        crashed)."""
        return [a.status for a in self.answers]

    def provenance(self) -> dict[str, Any]:
        """Name, version, options and environment hash of the namer, and what it did."""
        return {
            **self.env.provenance(),
            "runtime_version": self.version,
            "options": {"molecule_timeout_s": self.molecule_timeout_s, "defaults": True},
            "outcomes": dict(sorted(Counter(self.statuses()).items())),
            "restarts": self.restarts,
        }


def open_namer(name: str, config: CoverageConfig) -> OpenNamer:
    """The open namer ``name`` of a run, from its installed environment."""
    return OpenNamer(find_env(name), config.molecule_timeout)


def orthonym(config: CoverageConfig) -> OpenNamer:
    """Orthonym (default tier) in its environment."""
    return open_namer("orthonym", config)


def openclatura(config: CoverageConfig) -> OpenNamer:
    """openclatura (defaults) in its environment."""
    return open_namer("openclatura", config)


def nispo(config: CoverageConfig) -> OpenNamer:
    """nispo (defaults) in its environment."""
    return open_namer("nispo", config)
