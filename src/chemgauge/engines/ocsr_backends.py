"""Optical structure recognizers (image -> graph) behind one interface.

A back-end implements one hook, ``_recognize(image, timeout)``; the base class owns timing,
call counting, output bounds and turning exceptions into a ``failure`` record, so a broken
back-end costs one attempt, never the run. Built-ins: ``osra`` (the Debian ``osra`` program),
``command`` (any program given as an argument list containing ``{image}``), ``http`` (an
OpenAI-compatible vision endpoint) and ``python`` (a registered callable). External programs
run from an argument list (never a shell string) with a timeout and bounded output.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import re
import select
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chemgauge.errors import BackendError, ConfigError
from chemgauge.registry import Registry

__all__ = [
    "BACKEND_NAMES",
    "RECOGNIZERS",
    "CommandRecognizer",
    "HttpRecognizer",
    "OsraRecognizer",
    "PythonRecognizer",
    "Recognition",
    "Recognizer",
    "RecognizerOutput",
    "guess_format",
    "run_bounded",
]

COMPLETED = "completed"
PROVISIONAL = "provisional"
CLARIFICATION = "clarification"
FAILURE = "failure"
TIMEOUT = "timeout"
BACKEND_STATUSES = (COMPLETED, PROVISIONAL, CLARIFICATION, FAILURE, TIMEOUT)
BACKEND_NAMES = ("osra", "command", "http", "python")
DEFAULT_MAX_OUTPUT = 1 << 20

#: Python recognizers: callables ``(image: Path) -> str | RecognizerOutput | Mapping``.
RECOGNIZERS: Registry[Callable[[Path], Any]] = Registry(
    "ocsr_recognizer", group="chemgauge.ocsr_recognizers"
)


@dataclass(frozen=True)
class RecognizerOutput:
    """What a back-end answered, before any chemistry: status, graph text and raw output."""

    status: str
    text: str = ""
    fmt: str = "smiles"
    message: str = ""
    raw_output: str = ""
    stderr: str = ""
    exit_code: int | None = None
    truncated: bool = False
    usage: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.status not in BACKEND_STATUSES:
            raise ValueError(f"unknown recognizer status {self.status!r}")
        if self.fmt not in ("smiles", "molfile"):
            raise ValueError(f"unknown graph format {self.fmt!r}")


@dataclass(frozen=True)
class Recognition:
    """One attempt as recorded: the output plus timing and back-end identity."""

    output: RecognizerOutput
    backend: str
    backend_version: str
    elapsed_seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping for rows."""
        out = self.output
        return {
            "status": out.status,
            "candidate_text": out.text,
            "candidate_format": out.fmt,
            "message": out.message,
            "raw_output": out.raw_output,
            "stderr": out.stderr,
            "exit_code": out.exit_code,
            "output_truncated": out.truncated,
            "usage": dict(out.usage) if out.usage is not None else "unavailable",
            "backend": self.backend,
            "backend_version": self.backend_version,
            "elapsed_seconds": self.elapsed_seconds,
        }


def guess_format(text: str) -> str:
    """``molfile`` if the text looks like a molfile/SDF, else ``smiles``."""
    return "molfile" if ("M  END" in text or "V2000" in text or "V3000" in text) else "smiles"


class Recognizer(ABC):
    """Base of every back-end: one ``_recognize`` hook, everything else shared."""

    name = "recognizer"

    def __init__(self, *, max_output_bytes: int = DEFAULT_MAX_OUTPUT) -> None:
        self.max_output_bytes = max_output_bytes
        self.calls = 0
        self._version: str | None = None

    def version(self) -> str:
        """Back-end version string (cached; ``unknown`` when it cannot be told)."""
        if self._version is None:
            try:
                self._version = self._detect_version()
            except Exception as exc:  # version detection must never stop a run
                self._version = f"unknown ({exc})"
        return self._version

    def _detect_version(self) -> str:
        return "unknown"

    def describe(self) -> dict[str, Any]:
        """Configuration recorded in the run provenance (no secrets)."""
        return {"backend": self.name, "version": self.version()}

    def check(self) -> None:  # noqa: B027 - optional hook, most back-ends need no check
        """Raise :class:`BackendError` if the back-end cannot run at all (before a run)."""

    @abstractmethod
    def _recognize(self, image: Path, timeout: float) -> RecognizerOutput:
        """Recognize one image within ``timeout`` seconds."""

    def recognize(self, image: Path, timeout: float) -> Recognition:
        """Run one attempt; exceptions become a ``failure`` with the reason kept."""
        self.calls += 1
        start = time.perf_counter()
        try:
            output = self._recognize(image, timeout)
        except Exception as exc:  # a back-end bug costs one attempt, not the run
            output = RecognizerOutput(FAILURE, message=f"{type(exc).__name__}: {exc}")
        elapsed = time.perf_counter() - start
        if len(output.raw_output) > self.max_output_bytes:
            output = replace(
                output, raw_output=output.raw_output[: self.max_output_bytes], truncated=True
            )
        return Recognition(output, self.name, self.version(), round(elapsed, 4))


@dataclass(frozen=True)
class ProcessResult:
    """A finished (or killed) child process with its bounded output."""

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    truncated: bool


def run_bounded(args: Sequence[str], timeout: float, max_bytes: int) -> ProcessResult:
    """Run an argument list with a wall-time limit, keeping at most ``max_bytes`` per stream.

    Output beyond the bound is drained and dropped (the child is not blocked on a full pipe);
    on timeout the child is killed and whatever it printed so far is returned.
    """
    try:
        process = subprocess.Popen(
            list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except FileNotFoundError as exc:
        raise BackendError(f"program not found: {args[0]!r}") from exc
    assert process.stdout is not None and process.stderr is not None
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    buffers: dict[int, bytearray] = {out_fd: bytearray(), err_fd: bytearray()}
    open_fds = {out_fd, err_fd}
    truncated = False
    timed_out = False
    deadline = time.monotonic() + timeout
    while open_fds:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(list(open_fds), [], [], remaining)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
                continue
            room = max_bytes - len(buffers[fd])
            if len(chunk) > room:
                truncated = True
            buffers[fd].extend(chunk[: max(room, 0)])
    if timed_out:
        process.kill()
    try:
        exit_code = process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        exit_code = process.wait()
    process.stdout.close()
    process.stderr.close()
    return ProcessResult(
        stdout=bytes(buffers[out_fd]).decode("utf-8", errors="replace"),
        stderr=bytes(buffers[err_fd]).decode("utf-8", errors="replace"),
        exit_code=None if timed_out else exit_code,
        timed_out=timed_out,
        truncated=truncated,
    )


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

    def __init__(self, executable: str = "osra", *, max_output_bytes: int = DEFAULT_MAX_OUTPUT):
        super().__init__(max_output_bytes=max_output_bytes)
        self.executable = executable

    def check(self) -> None:
        if shutil.which(self.executable) is None:
            raise BackendError(
                f"OSRA not found ({self.executable!r}); install it with `apt-get install -y osra`"
            )

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


class CommandRecognizer(Recognizer):
    """Any program that prints a structure for an image path."""

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
        if self.spec.fmt == "json" and not result.timed_out and result.exit_code == 0:
            return replace(
                parse_structured_answer(result.stdout),
                raw_output=result.stdout,
                stderr=result.stderr[-4000:],
                exit_code=result.exit_code,
                truncated=result.truncated,
            )
        fmt = self.spec.fmt if self.spec.fmt in ("smiles", "molfile") else "auto"
        if fmt == "auto":
            fmt = guess_format(result.stdout)
        return _classify_process(result, result.stdout, fmt)


def _json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (models often wrap JSON in prose or code fences)."""
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[start:])
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        return obj if isinstance(obj, dict) else None
    return None


def parse_structured_answer(text: str) -> RecognizerOutput:
    """Read the JSON answer protocol: ``{"smiles"|"molfile": ..., "clarification": ...}``.

    A ``status`` field may say ``provisional`` (a draft the program did not finish); a
    clarification with no graph is ``clarification``; anything unreadable is ``failure``.
    """
    obj = _json_object(text)
    if obj is None:
        return RecognizerOutput(FAILURE, message="no JSON object in the answer", raw_output=text)
    molfile = obj.get("molfile")
    smiles = obj.get("smiles")
    graph, fmt = ("", "smiles")
    if isinstance(molfile, str) and molfile.strip():
        graph, fmt = molfile, "molfile"
    elif isinstance(smiles, str) and smiles.strip():
        graph = smiles.strip()
    clarification = obj.get("clarification") or obj.get("message") or ""
    clarification = str(clarification) if clarification else ""
    declared = str(obj.get("status", "")).lower()
    if declared == PROVISIONAL and graph:
        status = PROVISIONAL
    elif graph:
        status = COMPLETED
    elif clarification or declared == CLARIFICATION:
        status = CLARIFICATION
    else:
        status = FAILURE
        clarification = clarification or "answer holds no structure"
    return RecognizerOutput(status, text=graph, fmt=fmt, message=clarification, raw_output=text)


HTTP_PROMPT = (
    "You are an optical chemical structure recognizer. Read the chemical structure drawn in "
    "the image and answer with one JSON object only: "
    '{"smiles": "<isomeric SMILES of everything drawn>", "clarification": null}. '
    "Expand abbreviations into atoms. If the image cannot be read reliably, answer "
    '{"smiles": null, "clarification": "<what you need, e.g. a higher-resolution image>"}.'
)


@dataclass(frozen=True)
class HttpSpec:
    """An OpenAI-compatible ``/chat/completions`` endpoint; the key is read from ``api_key_env``."""

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    prompt: str = HTTP_PROMPT
    max_tokens: int = 2048


class HttpRecognizer(Recognizer):
    """A vision model behind an OpenAI-compatible API; the image is sent as a data URL only."""

    name = "http"

    def __init__(self, spec: HttpSpec, *, max_output_bytes: int = DEFAULT_MAX_OUTPUT):
        super().__init__(max_output_bytes=max_output_bytes)
        if not spec.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"http back-end URL must start with http:// or https://: {spec.base_url!r}"
            )
        self.spec = spec
        self.served_models: set[str] = set()

    def _detect_version(self) -> str:
        return self.spec.model

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "base_url": self.spec.base_url,
            "model": self.spec.model,
            "prompt_sha256": _sha256_text(self.spec.prompt),
        }

    def _request(self, image: Path) -> urllib.request.Request:
        mime = "image/png" if image.suffix.lower() == ".png" else "image/jpeg"
        data_url = f"data:{mime};base64,{base64.b64encode(image.read_bytes()).decode()}"
        body = {
            "model": self.spec.model,
            "max_tokens": self.spec.max_tokens,
            "temperature": 0,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": self.spec.prompt},
                        {"type": "image_url", "image_url": {"url": data_url}},
                    ],
                }
            ],
        }
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.spec.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.spec.base_url.rstrip("/") + "/chat/completions"
        return urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")

    def _recognize(self, image: Path, timeout: float) -> RecognizerOutput:
        request = self._request(image)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read(self.max_output_bytes + 1)
        except urllib.error.HTTPError as exc:
            detail = exc.read(2000).decode("utf-8", errors="replace")
            return RecognizerOutput(FAILURE, message=f"HTTP {exc.code}", raw_output=detail)
        except TimeoutError:
            return RecognizerOutput(TIMEOUT, message=f"no answer within {timeout:g} s")
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                return RecognizerOutput(TIMEOUT, message=f"no answer within {timeout:g} s")
            return RecognizerOutput(FAILURE, message=f"connection failed: {exc.reason}")
        text = raw[: self.max_output_bytes].decode("utf-8", errors="replace")
        try:
            payload = json.loads(text)
            choice = payload["choices"][0]
            content = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            return RecognizerOutput(FAILURE, message="malformed chat completion", raw_output=text)
        served = payload.get("model")
        if isinstance(served, str):
            self.served_models.add(served)
        answer = parse_structured_answer(str(content))
        if choice.get("finish_reason") == "length":
            status = PROVISIONAL if answer.text else FAILURE
            answer = replace(answer, status=status, message="answer cut at max_tokens")
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else None
        return replace(answer, raw_output=str(content), usage=usage)


def _sha256_text(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


class PythonRecognizer(Recognizer):
    """A Python callable ``(image: Path) -> str | RecognizerOutput | Mapping``.

    ``target`` is a name registered in :data:`RECOGNIZERS` (or the ``chemgauge.ocsr_recognizers``
    entry-point group) or ``module:function``. A string answer is read as SMILES or molfile;
    a mapping follows the JSON answer protocol. The callable runs in process, so the timeout
    is recorded as exceeded after the fact rather than enforced.
    """

    name = "python"

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

    def _recognize(self, image: Path, timeout: float) -> RecognizerOutput:
        start = time.perf_counter()
        answer = self.function(image)
        elapsed = time.perf_counter() - start
        if isinstance(answer, RecognizerOutput):
            output = answer
        elif isinstance(answer, Mapping):
            output = parse_structured_answer(json.dumps(dict(answer)))
        elif isinstance(answer, str):
            status = COMPLETED if answer.strip() else FAILURE
            message = "" if answer.strip() else "no structure in the answer"
            output = RecognizerOutput(
                status, answer, guess_format(answer), message, raw_output=answer
            )
        else:
            output = RecognizerOutput(
                FAILURE, message=f"callable returned {type(answer).__name__}, not a structure"
            )
        if elapsed > timeout:
            status = PROVISIONAL if output.text else TIMEOUT
            return replace(output, status=status, message=f"exceeded {timeout:g} s")
        return output


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
