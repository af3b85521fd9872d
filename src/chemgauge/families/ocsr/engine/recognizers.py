"""The local recognizers: ``osra`` (Debian's OSRA program), ``command`` (any program given as
an argument list containing ``{image}``) and ``python`` (a registered callable).
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chemgauge.errors import BackendError, ConfigError
from chemgauge.families.ocsr.engine.base import (
    COMPLETED,
    DEFAULT_MAX_OUTPUT,
    FAILURE,
    PROVISIONAL,
    RECOGNIZERS,
    TIMEOUT,
    ProcessResult,
    Recognizer,
    RecognizerOutput,
    guess_format,
    parse_structured_answer,
    run_bounded,
    within_deadline,
)

__all__ = [
    "CommandRecognizer",
    "CommandSpec",
    "OsraRecognizer",
    "PythonRecognizer",
]


def _classify_process(result: ProcessResult, text: str, fmt: str) -> RecognizerOutput:
    has_graph = bool(text.strip())
    if result.timed_out:
        status = PROVISIONAL if has_graph else TIMEOUT
        message = "timed out" + (" after printing a graph" if has_graph else "")
    elif result.exit_code != 0:
        status = PROVISIONAL if has_graph else FAILURE
        message = f"exit code {result.exit_code}"
    elif not has_graph:
        status, message = FAILURE, "no structure in the output"
    else:
        status, message = COMPLETED, ""
    return RecognizerOutput(
        status,
        text=text,
        fmt=fmt,
        message=message,
        raw_output=result.stdout,
        stderr=result.stderr[-4000:],
        exit_code=result.exit_code,
        truncated=result.truncated,
    )


class OsraRecognizer(Recognizer):
    """OSRA (``apt-get install -y osra``), asked for SDF so layout and all records are kept."""

    name = "osra"
    bounded_by_default = False

    def __init__(self, executable: str = "osra", *, max_output_bytes: int = DEFAULT_MAX_OUTPUT):
        super().__init__(max_output_bytes=max_output_bytes)
        self.executable = executable

    def check(self) -> None:
        if shutil.which(self.executable) is None:
            raise BackendError(
                f"OSRA not found ({self.executable!r}); install it with `apt-get install -y osra`"
            )

    def program_files(self) -> tuple[str, ...]:
        return (self.executable,)

    def _detect_version(self) -> str:
        result = run_bounded([self.executable, "--version"], 30.0, 10_000)
        match = re.search(r"version:?\s*([0-9][\w.\-]*)", result.stdout + result.stderr)
        return f"osra {match.group(1)}" if match else "osra (version not reported)"

    def _recognize(self, image: Path, timeout: float) -> RecognizerOutput:
        result = run_bounded(
            [self.executable, "-f", "sdf", str(image)], timeout, self.max_output_bytes
        )
        return _classify_process(result, result.stdout, "molfile")


@dataclass(frozen=True)
class CommandSpec:
    """An external recognizer: argument list with ``{image}`` and how to read its output.

    ``fmt`` is ``smiles``, ``molfile``, ``auto`` (molfile if it looks like one) or ``json``
    (an object with ``status``, ``smiles`` or ``molfile``, and ``message``; this is how a
    program reports a clarification request).
    """

    args: tuple[str, ...]
    fmt: str = "auto"
    version: str = "unknown"
    env: Mapping[str, str] = field(default_factory=dict)


#: Arguments with these suffixes are scripts run by the program (an interpreter): hashed.
SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".pl", ".rb", ".js", ".jar", ".r", ".lua"})


class CommandRecognizer(Recognizer):
    """Any program that prints a structure for an image path; the program and any script
    argument (:data:`SCRIPT_SUFFIXES`) are hashed into its provenance."""

    name = "command"

    def __init__(self, spec: CommandSpec, *, max_output_bytes: int = DEFAULT_MAX_OUTPUT):
        super().__init__(max_output_bytes=max_output_bytes)
        if not spec.args:
            raise ConfigError("command back-end needs an argument list")
        if not any("{image}" in arg for arg in spec.args):
            raise ConfigError(f"command back-end arguments must contain {{image}}: {spec.args}")
        if spec.fmt not in ("smiles", "molfile", "auto", "json"):
            raise ConfigError(f"unknown command output format {spec.fmt!r}")
        self.spec = spec
        # A script the program runs is part of the recognizer: hashed with it. Other file
        # arguments (data, logs) are not, so a log the program appends to changes nothing.
        self._file_args = tuple(
            arg
            for arg in spec.args[1:]
            if Path(arg).suffix.lower() in SCRIPT_SUFFIXES and Path(arg).is_file()
        )

    def program_files(self) -> tuple[str, ...]:
        return (self.spec.args[0], *self._file_args)

    def check(self) -> None:
        program = self.spec.args[0]
        if shutil.which(program) is None and not Path(program).exists():
            raise BackendError(f"command back-end program not found: {program!r}")

    def _detect_version(self) -> str:
        return self.spec.version

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "args": list(self.spec.args), "format": self.spec.fmt}

    def _recognize(self, image: Path, timeout: float) -> RecognizerOutput:
        args = [arg.replace("{image}", str(image)) for arg in self.spec.args]
        result = run_bounded(args, timeout, self.max_output_bytes)
        if self.spec.fmt == "json":
            answer = replace(
                parse_structured_answer(result.stdout),
                raw_output=result.stdout,
                stderr=result.stderr[-4000:],
                exit_code=result.exit_code,
                truncated=result.truncated,
            )
            if result.timed_out or result.exit_code != 0:  # the process's end is a declaration
                cut = TIMEOUT if result.timed_out else FAILURE
                why = "timed out" if result.timed_out else f"exit code {result.exit_code}"
                status = PROVISIONAL if answer.text else cut
                answer = replace(answer, status=status, message=why)
            return answer
        fmt = self.spec.fmt if self.spec.fmt in ("smiles", "molfile") else "auto"
        if fmt == "auto":
            fmt = guess_format(result.stdout)
        return _classify_process(result, result.stdout, fmt)


class PythonRecognizer(Recognizer):
    """A Python callable ``(image: Path) -> str | RecognizerOutput | Mapping``.

    ``target`` is a name registered in :data:`RECOGNIZERS` (or the ``chemgauge.ocsr_recognizers``
    entry-point group) or ``module:function``. A string answer is read as SMILES or molfile;
    a mapping follows the JSON answer protocol. The callable runs on a thread of this process,
    cut on elapsed time: one still running at the limit is abandoned and recorded ``timeout``.
    """

    name = "python"
    bounded_by_default = False

    def __init__(self, target: str, *, max_output_bytes: int = DEFAULT_MAX_OUTPUT):
        super().__init__(max_output_bytes=max_output_bytes)
        self.target = target
        self.function = _resolve_callable(target)

    def _detect_version(self) -> str:
        module = getattr(self.function, "__module__", "") or ""
        root = importlib.import_module(module.split(".")[0]) if module else None
        version = getattr(root, "__version__", None) if root is not None else None
        return f"{self.target} {version}" if version else self.target

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "callable": self.target}

    def program_files(self) -> tuple[str, ...]:
        try:
            source = inspect.getsourcefile(self.function)
        except TypeError:  # a builtin or C function has no source file
            return ()
        return (source,) if source else ()

    def _recognize(self, image: Path, timeout: float) -> RecognizerOutput:
        done, answer = within_deadline(lambda: self.function(image), timeout)
        if not done:  # the callable is abandoned on its thread, never waited for
            return RecognizerOutput(TIMEOUT, message=f"no answer within {timeout:g} s; abandoned")
        if isinstance(answer, RecognizerOutput):
            return answer
        if isinstance(answer, Mapping):
            return parse_structured_answer(json.dumps(dict(answer)))
        if isinstance(answer, str):
            status = COMPLETED if answer.strip() else FAILURE
            message = "" if answer.strip() else "no structure in the answer"
            return RecognizerOutput(
                status, answer, guess_format(answer), message, raw_output=answer
            )
        return RecognizerOutput(
            FAILURE, message=f"callable returned {type(answer).__name__}, not a structure"
        )


def _resolve_callable(target: str) -> Callable[[Path], Any]:
    if ":" in target:
        module_name, _, attribute = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigError(f"cannot import recognizer module {module_name!r}: {exc}") from exc
        function = getattr(module, attribute, None)
        if not callable(function):
            raise ConfigError(f"{target!r} is not a callable")
        return function  # type: ignore[no-any-return]
    return RECOGNIZERS.get(target)
