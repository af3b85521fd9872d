"""The one config of ``chemgauge names coverage``: its flags, as the command line and the
Python API both take them (``CoverageConfig(jobs=2)`` is ``--jobs 2``).

Only :meth:`CoverageConfig.describe` goes into the run's config hash: the abstention markers,
the carried ``pin_pct`` and the lenses decide a row's class, and
``--max-opsin-errors`` whether the run is complete; everything else (workers, timeouts,
resuming, which namer named the structures) changes speed or how a run ends, never a class.
Every check names the flag it is about.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from chemgauge.errors import ConfigError, UnknownNameError
from chemgauge.eval.executors import check_jobs
from chemgauge.families.names.metrics import LENSES, run_lenses

__all__ = ["COMMAND_NAMER", "DEFAULT_MAX_OPSIN_ERRORS", "CoverageConfig"]

# Default largest share of emitted names OPSIN may fail on (timeouts, crashes, refusals)
# before the run fails: beyond it the rates describe a different set of names.
DEFAULT_MAX_OPSIN_ERRORS = 0.01
#: The built-in namer ``--namer-cmd`` selects: any program, SMILES in, one name a line out.
COMMAND_NAMER = "command"


def _positive(flag: str, value: float) -> None:
    if not (value > 0 and math.isfinite(value)):
        raise ConfigError(f"{flag} must be a positive number of seconds, got {value}")


@dataclass(frozen=True)
class CoverageConfig:
    """How a coverage run names, reads and scores (each field is the flag of that name).

    Attributes:
        model: the registered namer that names the ``--smiles`` structures (``chemgauge
            list names``); ``None`` with ``namer_cmd`` means ``command``, ``None`` without
            it means a pairs file is scored.
        namer_cmd: the ``command`` namer's program and arguments, split with shell rules and
            run without a shell.
        namer_timeout: seconds the ``command`` namer may take for the whole batch.
        molecule_timeout: seconds an open namer (orthonym, openclatura, nispo) may take on
            one molecule; over it the molecule is the namer's ``timeout`` (not emitted).
        jobs: OPSIN JVMs (the second and later start once 2,000 names were answered) and
            matching workers.
        radicals: OPSIN ``-r``: allow radicals.
        lenient_stereo: OPSIN ``-s``: ignore stereo OPSIN cannot interpret.
        abstain_marker: namer outputs that mean "no name" (the flag is repeatable).
        pin_pct: a curated gold-gate pass rate, carried into the report verbatim.
        timeout: seconds OPSIN may take per name.
        strict: any bad input line, or any OPSIN error, is a hard error.
        max_opsin_errors: largest share of names OPSIN may fail on before the run exits
            non-zero (the rows and report are written either way).
        restart: discard rows kept from an interrupted run instead of resuming.
        reference_lenses: also compute the reference lenses (``reference_parity``,
            ``reference_strict``: orthonym.metrics.coverage_metrics's matchers as written,
            a canonical-tautomer search per structure); off, the rows and report hold
            ``parity``, ``strict`` and ``exact`` only.
    """

    model: str | None = None
    namer_cmd: str | None = None
    namer_timeout: float = 600.0
    molecule_timeout: float = 60.0
    jobs: int = 2
    radicals: bool = False
    lenient_stereo: bool = False
    abstain_marker: tuple[str, ...] = ()
    pin_pct: float | None = None
    timeout: float = 30.0
    strict: bool = False
    max_opsin_errors: float = DEFAULT_MAX_OPSIN_ERRORS
    restart: bool = False
    reference_lenses: bool = False

    def __post_init__(self) -> None:
        """Refuse values that cannot work, naming the flag."""
        if not 0.0 <= self.max_opsin_errors <= 1.0:
            raise ConfigError(
                f"--max-opsin-errors must be between 0 and 1, got {self.max_opsin_errors}"
            )
        check_jobs(self.jobs, zero=False)
        _positive("--timeout", self.timeout)
        _positive("--namer-timeout", self.namer_timeout)
        _positive("--molecule-timeout", self.molecule_timeout)
        if self.namer_cmd is not None and self.model not in (None, COMMAND_NAMER):
            raise ConfigError(
                f"--namer-cmd runs the {COMMAND_NAMER!r} namer; it cannot go with "
                f"--model {self.model}"
            )
        if self.model == COMMAND_NAMER and self.namer_cmd is None:
            raise ConfigError(f"--model {COMMAND_NAMER} needs --namer-cmd CMD (the program)")

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any]) -> CoverageConfig:
        """The config of the flags given by name, as the Python API takes them (an unknown
        name fails with "did you mean"; one ``abstain_marker`` may be a single string)."""
        known = [f.name for f in fields(cls)]
        flags = dict(flags)
        if "namer" in flags:  # ``namer=`` is ``--namer``, the same field as ``model``
            if "model" in flags:
                raise ConfigError("give namer= or model=, not both (they are one option)")
            flags["model"] = flags.pop("namer")
        for name in flags:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
                raise UnknownNameError("names coverage option", name, close, known)
        values = dict(flags)
        markers = values.get("abstain_marker", ())
        values["abstain_marker"] = (markers,) if isinstance(markers, str) else tuple(markers)
        return cls(**values)

    @property
    def namer(self) -> str | None:
        """The namer this run drives (``--model``, or ``command`` for ``--namer-cmd``), or
        ``None`` when a pairs file brings its names."""
        if self.model is not None:
            return self.model
        return COMMAND_NAMER if self.namer_cmd is not None else None

    @property
    def namer_flag(self) -> str:
        """How the user chose the namer, for messages (``--model X`` or ``--namer-cmd``)."""
        return "--namer-cmd" if self.model is None else f"--model {self.model}"

    @property
    def lenses(self) -> tuple[str, ...]:
        """The lenses this run computes, in report order."""
        return run_lenses(self.reference_lenses)

    def describe(self) -> dict[str, Any]:
        """What decides a row's class, for the run's config and its hash."""
        return {
            "abstain_markers": sorted(set(self.abstain_marker)),
            "pin_pct": self.pin_pct,
            "lenses": {lens: LENSES[lens] for lens in self.lenses},
            "reference_lenses": self.reference_lenses,
            "max_opsin_errors": self.max_opsin_errors,
        }
