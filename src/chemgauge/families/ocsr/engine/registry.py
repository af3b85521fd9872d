"""The recognizer back-ends by name, and the one function that builds them from options."""

from __future__ import annotations

from dataclasses import dataclass

from chemgauge.errors import ConfigError
from chemgauge.families.ocsr.engine.base import Recognizer
from chemgauge.families.ocsr.engine.http import HttpRecognizer, HttpSpec
from chemgauge.families.ocsr.engine.recognizers import (
    CommandRecognizer,
    CommandSpec,
    OsraRecognizer,
    PythonRecognizer,
)

__all__ = ["BACKEND_NAMES", "RecognizerOptions", "build_recognizer"]

BACKEND_NAMES = ("osra", "command", "http", "python")


@dataclass(frozen=True, slots=True)
class RecognizerOptions:
    """What a back-end needs beyond its name (each back-end reads only its own fields)."""

    command: tuple[str, ...] = ()
    fmt: str = "auto"
    url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    reasoning_effort: str | None = None
    target: str | None = None


def build_recognizer(backend: str, options: RecognizerOptions | None = None) -> Recognizer:
    """The recognizer named ``backend``; a missing option is an error saying which flag to pass."""
    options = options or RecognizerOptions()
    if backend == "osra":
        return OsraRecognizer()
    if backend == "command":
        if not options.command:
            raise ConfigError("--backend command needs --command-arg (repeat it per argument)")
        return CommandRecognizer(CommandSpec(tuple(options.command), fmt=options.fmt))
    if backend == "http":
        if not options.url or not options.model:
            raise ConfigError("--backend http needs --url and --model")
        spec = HttpSpec(
            options.url,
            options.model,
            api_key_env=options.api_key_env,
            reasoning_effort=options.reasoning_effort,
        )
        return HttpRecognizer(spec)
    if backend == "python":
        if not options.target:
            raise ConfigError("--backend python needs --callable (registered name or module:func)")
        return PythonRecognizer(options.target)
    raise ConfigError(f"unknown backend {backend!r}; known: {', '.join(BACKEND_NAMES)}")
