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
            where = f"{path}"
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
