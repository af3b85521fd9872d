"""Resource guards for property calculators: a size limit and a killable time limit.

Quantum-chemistry back-ends (tblite, MOPAC, PySCF) spend their time in native code that a
Python signal cannot interrupt, so a per-molecule time limit needs a process boundary: each
worker process keeps one calculator child, hands it one molecule at a time and kills it
(SIGKILL) when the molecule's time is up; the next molecule starts a fresh child. The size
limit is checked on the RDKit graph before any work. Every refusal is a result with a counted
reason (``too_large``, ``timeout``, ``calculator_crashed``), never a hang and never a gap.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any

from chemgauge.chem.smiles import heavy_atom_count, try_parse_smiles
from chemgauge.errors import CalculatorStartError, ConfigError
from chemgauge.eval.lifeline import set_parent_death_signal
from chemgauge.families.p2s.engine.properties import PropertyProvider, PropertyResult

__all__ = [
    "DEFAULT_LIMITS",
    "CalculatorProcess",
    "ComputeLimits",
    "GuardedCompute",
    "close_calculators",
    "size_refusal",
]

_PR_SET_PDEATHSIG = 1
_READY = "ready"
# A fresh child imports RDKit and the back-end before its first molecule; that start-up is
# not charged to the molecule's time limit, but it has a deadline of its own.
START_TIMEOUT = 300.0


@dataclass(frozen=True, slots=True)
class ComputeLimits:
    """Per-molecule limits of a property calculation (``None``: no limit).

    ``max_heavy_atoms`` applies to every provider (and a provider may set a lower ceiling of
    its own); ``time_limit`` applies to isolated providers, in wall seconds per molecule.
    """

    max_heavy_atoms: int | None = 100
    time_limit: float | None = 600.0

    def __post_init__(self) -> None:
        if self.max_heavy_atoms is not None and self.max_heavy_atoms < 1:
            raise ConfigError(f"the heavy-atom limit must be >= 1, got {self.max_heavy_atoms}")
        if self.time_limit is not None and not self.time_limit > 0:
            raise ConfigError(f"the time limit must be > 0 seconds, got {self.time_limit}")

    def heavy_atom_limit(self, provider: PropertyProvider) -> int | None:
        """The lower of this limit and the provider's own ceiling."""
        limits = [x for x in (self.max_heavy_atoms, provider.max_heavy_atoms) if x is not None]
        return min(limits) if limits else None

    def describe(self) -> dict[str, Any]:
        """The limits as recorded in a build's config (they decide which molecules get values)."""
        return {"max_heavy_atoms": self.max_heavy_atoms, "time_limit_seconds": self.time_limit}


DEFAULT_LIMITS = ComputeLimits()


def size_refusal(smiles: str, limit: int | None) -> PropertyResult | None:
    """A ``too_large`` result when the molecule has more heavy atoms than ``limit``."""
    if limit is None:
        return None
    heavy = heavy_atom_count(smiles)
    if heavy is not None and heavy > limit:
        return PropertyResult({}, "", f"too_large: {heavy} heavy atoms (limit {limit})")
    if try_parse_smiles(smiles) is None:
        return PropertyResult({}, "", "unparsable SMILES")
    return None


def _serve(conn: Connection, payload: bytes) -> None:
    """Child loop: receive a SMILES, send back its result, until the pipe closes."""
    set_parent_death_signal()
    # One thread per calculator: the parent already runs one child per worker process.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    provider: PropertyProvider = pickle.loads(payload)
    conn.send(_READY)
    while True:
        try:
            smiles = conn.recv()
        except (EOFError, OSError):
            return
        try:
            result = provider.compute_one(smiles)
        except Exception as exc:  # a provider bug becomes a counted failure, not a dead child
            result = PropertyResult({}, "", f"provider_error: {type(exc).__name__}: {exc}"[:500])
        conn.send(result)


class CalculatorProcess:
    """A child process that computes one provider's molecules, killed when one overruns."""

    def __init__(self, provider: PropertyProvider) -> None:
        self._payload = pickle.dumps(provider)
        self._context = multiprocessing.get_context("spawn")
        self._process: Any = None
        self._conn: Connection | None = None
        self.restarts = 0

    def _start(self) -> Connection:
        parent, child = self._context.Pipe()
        process = self._context.Process(
            target=_serve, args=(child, self._payload), daemon=True, name="chemgauge-calculator"
        )
        process.start()
        child.close()
        self._process, self._conn = process, parent
        try:
            ready = parent.poll(START_TIMEOUT) and parent.recv() == _READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            code = self._stop()
            raise CalculatorStartError(f"the calculator process did not start (exit code {code})")
        return parent

    def compute(self, smiles: str, time_limit: float | None) -> PropertyResult:
        """The molecule's result, or a ``timeout``/``calculator_crashed`` refusal."""
        try:
            conn = self._conn or self._start()
        except CalculatorStartError as exc:
            return PropertyResult({}, "", f"calculator_crashed: {exc}")
        try:
            conn.send(smiles)
            ready = conn.poll(time_limit)
            result = conn.recv() if ready else None
        except (EOFError, OSError, pickle.UnpicklingError):
            code = self._stop()
            return PropertyResult({}, "", f"calculator_crashed: exit code {code}")
        if result is None:
            self._stop()
            return PropertyResult({}, "", f"timeout: over {time_limit:g} s")
        if not isinstance(result, PropertyResult):
            self._stop()
            return PropertyResult({}, "", "calculator_crashed: unexpected reply")
        return result

    def _stop(self) -> int | None:
        """Kill the child now (a timed-out native call never returns on its own)."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is None:
            return None
        if process.is_alive():
            process.kill()
        process.join(5)
        self.restarts += 1
        return process.exitcode  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the child (it also exits on its own when the pipe closes)."""
        self._stop()


_CHILDREN: dict[str, CalculatorProcess] = {}


def _child_for(provider: PropertyProvider) -> CalculatorProcess:
    child = _CHILDREN.get(provider.token)
    if child is None:
        child = _CHILDREN[provider.token] = CalculatorProcess(provider)
    return child


@atexit.register
def close_calculators() -> None:
    """Stop this process's calculator children (at the end of a stage and at exit)."""
    for child in _CHILDREN.values():
        child.close()
    _CHILDREN.clear()


@dataclass(frozen=True)
class GuardedCompute:
    """The chunk function a build hands to an executor: limits first, then the provider.

    Picklable (the provider travels as a small reference when it defines ``arguments``), so
    it runs the same in this process, a local worker pool or a Ray task. Results come back
    in input order with the seconds each molecule took.
    """

    provider: PropertyProvider
    limits: ComputeLimits = DEFAULT_LIMITS

    def __call__(self, batch: Sequence[str]) -> list[PropertyResult]:
        limit = self.limits.heavy_atom_limit(self.provider)
        isolate = self.provider.isolated and self.limits.time_limit is not None
        out = []
        for smiles in batch:
            start = time.perf_counter()
            result = size_refusal(smiles, limit)
            if result is None:
                if isolate:
                    result = _child_for(self.provider).compute(smiles, self.limits.time_limit)
                else:
                    result = self.provider.compute_one(smiles)
            out.append(replace(result, seconds=time.perf_counter() - start))
        return out
