"""The real OPSIN engine: name -> SMILES through persistent JVMs, with checked alignment.

Starting Java per name costs ~1 s; a persistent JVM answers in well under a
millisecond. By default chemgauge runs its own small line server
(`server/OpsinLineServer.java`, compiled once with `javac`) on the OPSIN
jar bundled by py2opsin, because OPSIN's CLI reports failures and warnings on
stderr where, once names are pipelined, they cannot be tied to a name. When the
server cannot be built (no JDK, no writable cache), `mode="auto"` falls back to
the plain CLI, whose failures carry a generic reason.

Example:
    with OpsinRunner(OpsinConfig(jvms=2)) as opsin:
        results = opsin.names_to_smiles(["ethanol", "L-alanine"])
"""

from __future__ import annotations

import logging
import math
import os
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from chemgauge.errors import BackendError, ConfigError, ProtocolError
from chemgauge.families.names.engine.java import (
    SERVER_CLASS,
    JavaTools,
    OpsinJar,
    build_server,
    find_java,
    locate_jar,
    server_source_sha256,
)
from chemgauge.families.names.engine.process import OpsinProcess, OpsinResult, OpsinStatus

__all__ = ["OpsinConfig", "OpsinResult", "OpsinRunner", "OpsinStats", "OpsinStatus"]

logger = logging.getLogger(__name__)

OpsinMode = Literal["auto", "server", "cli"]
_MODES = ("auto", "server", "cli")
_MAX_NAME_CHARS = 100_000
_MAX_JVMS = 64
# Measured on 2 cores: C1-only JIT and the serial GC start about twice as fast as the
# default tiered C2 and parse OPSIN's test names faster over ~15k names; a deep stack
# lets heavily nested names parse instead of overflowing.
_JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss16m")
_SERVER_PROTOCOL = "1"
_SERVER_GREETING = "#chemgauge-opsin-server"
_CLI_PROBE = "methane"
_CLI_NO_MESSAGE = "OPSIN could not parse the name (the plain CLI gives no per-name reason)"
_UNESCAPE = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


@dataclass(frozen=True)
class OpsinConfig:
    """How OPSIN reads names and how the runner drives it.

    Attributes:
        allow_radicals: interpret substituent names such as "methyl" as radicals
            (OPSIN `-r`); off by default, as in OPSIN.
        allow_uninterpretable_stereo: warn instead of failing when stereo cannot
            be interpreted (OPSIN `-s`); the structure then lacks that stereo.
        detailed_failure_analysis: slower, more precise failure messages (`-f`).
        timeout_s: longest wait for one name's answer before the JVM is killed,
            restarted and the name recorded as a timeout.
        jvms: number of JVMs sharing a batch (results stay in input order).
        extra_jvms_after: start the JVMs beyond the first only once this many names
            were answered (0: all at start). Each JVM costs about a second of start-up
            and a cold JIT, which pays back only on long runs.
        java: the `java` executable, by name on PATH or by path.
        mode: "server" (line server, needs javac once), "cli" (OPSIN's own
            CLI) or "auto" (server when it can be built, else cli).
    """

    allow_radicals: bool = False
    allow_uninterpretable_stereo: bool = False
    detailed_failure_analysis: bool = False
    timeout_s: float = 30.0
    jvms: int = 1
    java: str = "java"
    mode: OpsinMode = "auto"
    extra_jvms_after: int = 0

    def __post_init__(self) -> None:
        """Reject values that cannot work, naming them."""
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            raise ConfigError(f"OpsinConfig.timeout_s must be a positive number: {self.timeout_s}")
        if not 1 <= self.jvms <= _MAX_JVMS:
            raise ConfigError(f"OpsinConfig.jvms must be between 1 and {_MAX_JVMS}: {self.jvms}")
        if self.mode not in _MODES:
            raise ConfigError(f"OpsinConfig.mode must be one of {_MODES}: {self.mode!r}")
        if self.extra_jvms_after < 0:
            raise ConfigError(f"OpsinConfig.extra_jvms_after must be >= 0: {self.extra_jvms_after}")


@dataclass(frozen=True)
class OpsinStats:
    """What the runner's JVMs did so far: answers, starts, timeouts, crashes, start-up times."""

    answered: int
    starts: int
    timeouts: int
    crashes: int
    startup_s: tuple[float, ...]


@dataclass(frozen=True)
class _Setup:
    """What a runner resolved once: the jar, Java, the mode and (server) the class directory."""

    jar: OpsinJar
    tools: JavaTools
    mode: Literal["server", "cli"]
    server_dir: Path | None


def _unescape(text: str) -> str:
    """Undo the line server's escaping of backslash, tab, LF and CR."""
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append(_UNESCAPE.get(following, "\\" + following))
        else:
            out.append(char)
    return "".join(out)


class _ServerProtocol:
    """Answers of OpsinLineServer: seq, status, SMILES, message, echoed name, warnings."""

    kind = "server"
    probe = b""

    def check_hello(self, line: bytes) -> str:
        """Check the greeting and protocol version; return OPSIN's runtime version."""
        fields = line.decode("utf-8", "replace").split("\t")
        if len(fields) != 3 or fields[0] != _SERVER_GREETING or fields[1] != _SERVER_PROTOCOL:
            raise ProtocolError(f"unexpected greeting {line[:200]!r}")
        return _unescape(fields[2])

    def parse(self, line: bytes, seq: int, name: str) -> OpsinResult:
        """Check sequence number and echo, then map OPSIN's status onto a result."""
        try:
            fields = line.decode("utf-8").split("\t")
        except UnicodeDecodeError as error:
            raise ProtocolError(f"answer is not UTF-8: {line[:200]!r}") from error
        if len(fields) < 5 or fields[0] != str(seq):
            raise ProtocolError(f"answer {line[:200]!r} is not answer number {seq}")
        echoed = _unescape(fields[4])
        if echoed != name:
            raise ProtocolError(f"answer echoes {echoed[:200]!r} but {name[:200]!r} was sent")
        status, smiles, message = fields[1], _unescape(fields[2]), _unescape(fields[3])
        warnings = tuple(_unescape(w) for w in fields[5:])
        if status in ("SUCCESS", "WARNING") and smiles:
            kind = OpsinStatus.SUCCESS if status == "SUCCESS" else OpsinStatus.WARNING
            return OpsinResult(name, smiles, None, kind, warnings)
        if status == "EXCEPTION":
            return OpsinResult(name, None, message or "OPSIN raised", OpsinStatus.EXCEPTION)
        if status in ("SUCCESS", "WARNING", "FAILURE"):
            reason = message or "OPSIN returned no structure"
            return OpsinResult(name, None, reason, OpsinStatus.FAILURE, warnings)
        raise ProtocolError(f"unknown status {status!r} in {line[:200]!r}")


class _CliProtocol:
    """Answers of OPSIN's CLI with `-osmi -n`: SMILES (empty on failure), tab, the name."""

    kind = "cli"
    probe = (_CLI_PROBE + "\n").encode()

    def check_hello(self, line: bytes) -> str:
        """The CLI has no greeting: check the answer to the probe name instead."""
        if line != b"C\t" + _CLI_PROBE.encode():
            raise ProtocolError(f"unexpected answer to probe {_CLI_PROBE!r}: {line[:200]!r}")
        return "unknown"

    def parse(self, line: bytes, seq: int, name: str) -> OpsinResult:
        """Check the echoed name; an empty SMILES is a failure without a reason."""
        try:
            smiles, tab, echoed = line.decode("utf-8").partition("\t")
        except UnicodeDecodeError as error:
            raise ProtocolError(f"answer is not UTF-8: {line[:200]!r}") from error
        if not tab or echoed != name:
            raise ProtocolError(f"answer {line[:200]!r} does not echo {name[:200]!r}")
        if smiles:
            return OpsinResult(name, smiles, None, OpsinStatus.SUCCESS)
        return OpsinResult(name, None, _CLI_NO_MESSAGE, OpsinStatus.FAILURE)


class OpsinRunner:
    """Persistent OPSIN JVMs turning names into SMILES; a context manager, thread-safe.

    JVMs start on `start()` (or entering the `with` block, or first use) and
    stop on `close()`; if the caller never closes them they exit on their own
    when this Python process ends and their stdin closes.
    """

    def __init__(self, config: OpsinConfig | None = None) -> None:
        self.config = config if config is not None else OpsinConfig()
        self._lock = threading.Lock()
        self._setup: _Setup | None = None
        self._processes: list[OpsinProcess] = []
        self._executor: ThreadPoolExecutor | None = None

    def __enter__(self) -> Self:
        """Start the JVMs so their start-up is not charged to the first batch."""
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the JVMs."""
        self.close()

    def start(self) -> None:
        """Resolve Java and the jar, build the server if needed, and launch every JVM."""
        with self._lock:
            self._start_locked()

    def close(self) -> None:
        """Stop every JVM; the runner can be started again afterwards."""
        with self._lock:
            for process in self._processes:
                process.close()
            self._processes = []
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None

    @property
    def pids(self) -> tuple[int | None, ...]:
        """Process ids of the JVMs (None for one not running); for diagnostics and tests."""
        return tuple(process.pid for process in self._processes)

    def stats(self) -> OpsinStats:
        """A snapshot of the JVM counters summed over all processes."""
        processes = list(self._processes)
        return OpsinStats(
            answered=sum(p.stats.answered for p in processes),
            starts=sum(p.stats.starts for p in processes),
            timeouts=sum(p.stats.timeouts for p in processes),
            crashes=sum(p.stats.crashes for p in processes),
            startup_s=tuple(s for p in processes for s in p.stats.startup_s),
        )

    def provenance(self) -> dict[str, object]:
        """What a report records to reproduce these answers: jar, hashes, versions, options."""
        with self._lock:
            setup = self._resolve()
        jar, tools, mode = setup.jar, setup.tools, setup.mode
        runtime = sorted(
            v for p in self._processes if (v := p.runtime_version) not in (None, "unknown")
        )
        record: dict[str, object] = {
            "engine": "opsin",
            "mode": mode,
            "opsin_version": jar.opsin_version,
            "opsin_runtime_version": runtime[0] if len(set(runtime)) == 1 else None,
            "py2opsin_version": jar.py2opsin_version,
            "jar_path": str(jar.path),
            "jar_sha256": jar.sha256,
            "java": tools.java,
            "java_version": tools.java_version,
            "options": asdict(self.config),
        }
        if mode == "server":
            record["server_source_sha256"] = server_source_sha256()
        return record

    def name_to_smiles(self, name: str) -> str | None:
        """SMILES for one name, or None when OPSIN cannot parse it (or it was refused)."""
        return self.names_to_smiles([name])[0].smiles

    def names_to_smiles(self, names: Sequence[str]) -> list[OpsinResult]:
        """One result per input name, in input order; bad names are refused, never sent."""
        results: list[OpsinResult | None] = [None] * len(names)
        unique: dict[str, list[int]] = {}
        with self._lock:
            self._start_locked()
            for index, name in enumerate(names):
                refusal = self._refusal(name)
                if refusal is not None:
                    results[index] = OpsinResult(str(name), None, refusal, OpsinStatus.REFUSED)
                else:
                    unique.setdefault(name, []).append(index)
            answers = self._dispatch(list(unique)) if unique else []
        for answer in answers:
            for index in unique[answer.name]:
                results[index] = answer
        done = [r for r in results if r is not None]
        if len(done) != len(names):
            raise BackendError(f"OPSIN runner produced {len(done)} results for {len(names)} names")
        return done

    def _refusal(self, name: object) -> str | None:
        """Why a name must not be sent (it would break one-name-per-line), or None."""
        if not isinstance(name, str):
            return f"not a string: {type(name).__name__}"
        if "\n" in name or "\r" in name:
            return "name contains a line break; sending it would shift every later answer"
        if len(name) > _MAX_NAME_CHARS:
            return f"name longer than {_MAX_NAME_CHARS} characters"
        if self._setup is not None and self._setup.mode == "cli" and "\t" in name:
            return "name contains a tab, where OPSIN's CLI would cut it"
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            return "name is not encodable as UTF-8 (lone surrogate)"
        return None

    def _resolve(self) -> _Setup:
        """Find the jar and Java, pick the mode and build the server (once); raise if impossible."""
        if self._setup is None:
            jar, tools = locate_jar(), find_java(self.config.java)
            server_dir: Path | None = None
            if self.config.mode != "cli":
                try:
                    server_dir = build_server(jar, tools)
                except BackendError as error:
                    if self.config.mode == "server":
                        raise
                    logger.warning("using OPSIN's CLI (failures carry no reason): %s", error)
            mode: Literal["server", "cli"] = "cli" if server_dir is None else "server"
            self._setup = _Setup(jar, tools, mode, server_dir)
        return self._setup

    def _new_process(self, index: int) -> OpsinProcess:
        setup = self._resolve()
        protocol = _ServerProtocol() if setup.mode == "server" else _CliProtocol()
        label = f"opsin-{setup.mode}-{index}"
        return OpsinProcess(self._command(setup), protocol, self.config.timeout_s, label)

    def _start_locked(self) -> None:
        """Launch the JVMs due at start in parallel (caller holds the lock)."""
        if self._processes:
            return
        due = 1 if self.config.extra_jvms_after else self.config.jvms
        processes = [self._new_process(i) for i in range(due)]
        executor = ThreadPoolExecutor(self.config.jvms, thread_name_prefix="opsin")
        try:
            for future in [executor.submit(p.start) for p in processes]:
                future.result()
        except BaseException:
            for process in processes:
                process.kill()
            executor.shutdown(wait=True)
            raise
        self._processes, self._executor = processes, executor

    def _command(self, setup: _Setup) -> list[str]:
        """The argument list launching one JVM in the chosen mode with the configured flags."""
        config = self.config
        if setup.server_dir is None:
            flags = {"-r": config.allow_radicals, "-s": config.allow_uninterpretable_stereo}
            flags["-f"] = config.detailed_failure_analysis
            head = ["-jar", str(setup.jar.path), "-osmi", "-n"]
        else:
            flags = {
                "--allow-radicals": config.allow_radicals,
                "--allow-uninterpretable-stereo": config.allow_uninterpretable_stereo,
                "--detailed-failure-analysis": config.detailed_failure_analysis,
            }
            head = ["-cp", f"{setup.server_dir}{os.pathsep}{setup.jar.path}", SERVER_CLASS]
        on = (flag for flag, wanted in flags.items() if wanted)
        return [setup.tools.java, *_JVM_OPTIONS, *head, *on]

    def _dispatch(self, names: list[str]) -> list[OpsinResult]:
        """Spread names over the JVMs in chunks; answers come back in input order."""
        answered = sum(p.stats.answered for p in self._processes)
        if len(self._processes) < self.config.jvms and answered >= self.config.extra_jvms_after:
            # The new JVMs start in their own drain threads while the first keeps answering.
            count = len(self._processes)
            self._processes += [self._new_process(i) for i in range(count, self.config.jvms)]
        processes = self._processes
        if len(processes) == 1 or len(names) < 2 * len(processes):
            return processes[0].run(names)
        assert self._executor is not None
        size = max(16, min(512, math.ceil(len(names) / (8 * len(processes)))))
        chunks: queue.SimpleQueue[int] = queue.SimpleQueue()
        for begin in range(0, len(names), size):
            chunks.put(begin)
        results: list[OpsinResult | None] = [None] * len(names)

        def drain(process: OpsinProcess) -> None:
            while True:
                try:
                    begin = chunks.get_nowait()
                except queue.Empty:
                    return
                results[begin : begin + size] = process.run(names[begin : begin + size])

        futures: list[Future[None]] = [self._executor.submit(drain, p) for p in processes]
        errors = [f.exception() for f in futures]
        for error in errors:
            if error is not None:
                raise error
        done = [r for r in results if r is not None]
        if len(done) != len(names):
            raise BackendError(f"OPSIN JVMs answered {len(done)} of {len(names)} names")
        return done
