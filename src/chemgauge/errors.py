"""The chemgauge error hierarchy: every user-fixable failure names the offending value."""

from __future__ import annotations

from pathlib import Path


class ChemgaugeError(Exception):
    """Base of every error chemgauge raises on purpose; the CLI prints these without a traceback."""


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
        super().__init__(f"{reason}: {smiles!r}")
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
        shown = f" (value: {value[:200]!r})" if value is not None else ""
        super().__init__(f"{where}{message}{shown}")
        self.path = None if path is None else str(path)
        self.line = line
        self.value = value


class DataQualityError(InputFileError):
    """A counted data-quality issue that `--strict` turned into a hard error."""


class AuditError(ChemgaugeError):
    """A benchmark release can be answered without the task's evidence (a shortcut audit)."""


class BackendError(ChemgaugeError):
    """An external system under test (OPSIN, OSRA, a model) failed or is unavailable."""


class RuleFileError(InputFileError):
    """A reaction rule file is missing, unreadable, empty or holds an unparsable rule."""
