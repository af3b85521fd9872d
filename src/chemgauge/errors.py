"""The chemgauge error hierarchy: every user-fixable failure names the offending value."""

from __future__ import annotations

from pathlib import Path

# Longest excerpt of input text shown in a diagnostic or an error message (characters).
EXCERPT_CHARS = 200


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut (no 5 MB echo)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit:,} more characters]"


_CONTROL = {c: f"\\x{c:02x}" for c in [*range(32), *range(127, 160)] if chr(c) not in "\n\t"}


def printable(text: str) -> str:
    """``text`` with control characters other than newline and tab (an escape sequence or a
    carriage return in a file name) written as ``\\xNN``: a terminal never receives an
    escape sequence from a file name or value."""
    return text.translate(_CONTROL)


_CONTROL_ALL = {c: f"\\x{c:02x}" for c in [*range(32), *range(127, 160)]}


def file_label(path: str | Path) -> str:
    """A file name as a diagnostic shows it: every control character, newline and tab
    included, written as ``\\xNN``, so a name holding a newline cannot split a line in two."""
    return str(path).translate(_CONTROL_ALL)


class ChemgaugeError(Exception):
    """Base of every error chemgauge raises on purpose; the CLI prints these without a traceback.

    ``exit_code`` is the CLI's exit status for it (2: usage or input error).
    """

    exit_code = 2


class ConfigError(ChemgaugeError):
    """A run option or configuration value is invalid."""


class UnknownNameError(ConfigError):
    """A registry lookup failed; the message carries close matches ("did you mean")."""

    def __init__(self, kind: str, name: str, suggestions: list[str], known: list[str]) -> None:
        hint = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"unknown {kind} {name!r}.{hint} Known: {', '.join(known) or '(none)'}")
        self.kind = kind
        self.name = name
        self.suggestions = suggestions


class MissingDependencyError(ConfigError):
    """An optional dependency is not installed; the message says exactly what to install."""


class SmilesError(ChemgaugeError):
    """A SMILES string could not be parsed or processed."""

    def __init__(self, smiles: str, reason: str = "unparsable SMILES") -> None:
        super().__init__(f"{reason}: {excerpt(smiles)!r}")
        self.smiles = smiles
        self.reason = reason


class InputFileError(ChemgaugeError):
    """A data file is missing, unreadable or holds a bad value; names the file, line and value."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        value: str | None = None,
    ) -> None:
        where = ""
        if path is not None:
            where = file_label(path)
            if line is not None:
                where += f", line {line}"
            where += ": "
        shown = f" (value: {excerpt(value)!r})" if value is not None else ""
        super().__init__(f"{where}{excerpt(message, 4 * EXCERPT_CHARS)}{shown}")
        self.path = None if path is None else str(path)
        self.line = line
        self.value = value


class MissingInputError(InputFileError):
    """An input file a command needs does not exist (exit status 3)."""

    exit_code = 3


class DataQualityError(InputFileError):
    """A counted data-quality issue that `--strict` turned into a hard error."""


class AuditError(ChemgaugeError):
    """A benchmark release can be answered without the task's evidence (a shortcut audit)."""


class BackendError(ChemgaugeError):
    """An external system under test (OPSIN, OSRA, a model) failed or is unavailable."""


class RuleFileError(InputFileError):
    """A reaction rule file is missing, unreadable, empty or holds an unparsable rule."""


class StereoFlattenError(SmilesError):
    """Stereo could not be flattened; the comparison is ``unsupported``, never a fallback."""


class ProtocolError(Exception):
    """An answer line that does not match what was sent (misalignment or garbage)."""


class StreamInterrupted(Exception):
    """The stream stopped at `index`: a timeout, a dead process or a bad answer."""

    def __init__(self, kind: str, index: int, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.index = index
        self.detail = detail


class TransientHttpError(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class CalculatorStartError(RuntimeError):
    """The calculator child died or hung before it could take a molecule."""


class RunRefused(Exception):
    """A run that is read but may not be ranked (the message is the reason)."""


class OutputFileError(ChemgaugeError):
    """An output file or folder cannot be written (read-only, full, missing permission)."""

    def __init__(
        self, path: str | Path, exc: OSError, *, kept: str = "no partial file was left"
    ) -> None:
        reason = exc.strerror or type(exc).__name__
        super().__init__(f"{path}: cannot write output ({reason}); {kept}")
        self.path = str(path)


class RayStartDeadline(Exception):
    """The Ray deadline passed while starting a local cluster."""


class RunLockedError(ConfigError):
    """Another live chemgauge run holds the lock on one of this run's outputs."""


class OutputPathError(ConfigError):
    """An output path would clobber an input or another output, or cannot be written."""


class ImageRefusedError(InputFileError):
    """An image is unreadable, not an image, or larger than the limits; it was not decoded.

    ``reason`` is the message without the file name, for rows that must not carry paths.
    """

    def __init__(self, reason: str, *, path: str | Path) -> None:
        super().__init__(reason, path=path)
        self.reason = reason


class RoundTripError(Exception):
    """Raised by a ``name_to_smiles`` callable when the round trip itself failed (timeout,
    crash, refusal): the pair is ``opsin_error``, not the namer's ``unparseable``."""


class Reject(Exception):
    """A line-level rejection: the counter, and whether the line still yields a row.

    ``reason`` is the row's ``input_invalid_reason`` (the counter's name unless given).
    """

    def __init__(
        self, code: str, message: str, reaction_id: str | None = None, *, reason: str = ""
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reaction_id = reaction_id
        self.reason = reason or code


class RowConsistencyError(ChemgaugeError):
    """A row whose statuses contradict each other (a harness bug, never a data problem)."""


class ManifestError(ConfigError):
    """A template manifest is missing, malformed, or does not attest what the run needs."""


class JournalOrderError(Exception):
    """The journal is not in source-line order (it was resumed from an older layout)."""


class TemplateProvenanceError(ManifestError):
    """A train-extracted template whose recorded sources are not all train reactions."""
