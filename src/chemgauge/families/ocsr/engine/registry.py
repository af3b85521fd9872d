"""The systems under test of the OCSR family: recognizer back-ends by name, one factory shape.

Every back-end is a factory ``(RecognizerOptions) -> Recognizer`` registered in
:data:`OCSR_SYSTEMS` (kind ``ocsr system``); third-party packages add theirs through the
entry-point group ``chemgauge.ocsr_systems``. ``chemgauge ocsr run --model NAME`` and
:func:`chemgauge.families.ocsr.run` build the one named; an unknown name fails with "did you
mean", and a missing option with the flag to pass.
"""

from __future__ import annotations

from chemgauge.errors import ConfigError
from chemgauge.families.ocsr.config import RecognizerOptions
from chemgauge.families.ocsr.engine.base import Recognizer
from chemgauge.families.ocsr.engine.http import HttpRecognizer, HttpSpec
from chemgauge.families.ocsr.engine.recognizers import (
    CommandRecognizer,
    CommandSpec,
    OsraRecognizer,
    PythonRecognizer,
)
from chemgauge.registry import Systems

__all__ = ["OCSR_SYSTEMS", "build_recognizer"]

#: The OCSR back-ends: ``factory(options) -> Recognizer``.
OCSR_SYSTEMS: Systems[RecognizerOptions, Recognizer] = Systems("ocsr", Recognizer)


@OCSR_SYSTEMS.decorator("osra")
def osra(options: RecognizerOptions) -> Recognizer:
    """The OSRA executable (Debian's osra package); it takes no options."""
    return OsraRecognizer()


@OCSR_SYSTEMS.decorator("command")
def command(options: RecognizerOptions) -> Recognizer:
    """Any program: an argument list with ``{image}``; SMILES, molfile or JSON out."""
    if not options.command:
        raise ConfigError("--model command needs --command-arg (repeat it per argument)")
    return CommandRecognizer(CommandSpec(tuple(options.command), fmt=options.format))


@OCSR_SYSTEMS.decorator("http")
def http(options: RecognizerOptions) -> Recognizer:
    """An OpenAI-compatible vision endpoint (the key from ``api_key_env``)."""
    if not options.url or not options.endpoint_model:
        raise ConfigError("--model http needs --url and --endpoint-model")
    spec = HttpSpec(
        options.url,
        options.endpoint_model,
        api_key_env=options.api_key_env,
        reasoning_effort=options.reasoning_effort,
        accept_models=options.accept_models,
    )
    return HttpRecognizer(spec)


@OCSR_SYSTEMS.decorator("python")
def python(options: RecognizerOptions) -> Recognizer:
    """A registered callable (``ocsr recognizer``) or ``module:function``."""
    if not options.callable:
        raise ConfigError("--model python needs --callable (registered name or module:func)")
    return PythonRecognizer(options.callable)


def build_recognizer(model: str, options: RecognizerOptions | None = None) -> Recognizer:
    """The back-end ``model`` built from ``options`` (defaults: none given)."""
    return OCSR_SYSTEMS.build(model, options or RecognizerOptions())
