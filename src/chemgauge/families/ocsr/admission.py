"""Admission of attempts against a run's budgets, shared by every worker of the run.

A request budget counts attempts started (the journal's and this invocation's); the overall
time budget counts recognition seconds already journaled plus wall time since this
invocation began, and caps each attempt's timeout at what is left. The first attempt of an
invocation runs alone (a probe; callers run it first, in plan order, so which attempt it is
never depends on thread timing): an answer that stops the run (another model served it, the
key or endpoint is refused) is then seen before any other request is sent, whatever the
number of attempts in flight. After a stop every attempt is refused with the stop's reason.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from chemgauge.families.ocsr.config import RunConfig

__all__ = ["Admission", "Admitted", "stopped_reason"]


@dataclass(frozen=True, slots=True)
class Admitted:
    """An attempt allowed to start: its timeout, and the seconds left in the overall budget
    when it was admitted (``None`` when the budget is unbounded)."""

    timeout: float
    remaining: float | None


def stopped_reason(reason: str) -> str:
    """The ``not_run`` reason of an attempt refused after a back-end stopped the run."""
    return f"backend stopped the run: {reason}"


class Admission:
    """Thread-safe admission (see the module docstring); call :meth:`finished` once for every
    admitted attempt, whatever happened to it."""

    def __init__(self, config: RunConfig, used_requests: int, used_seconds: float) -> None:
        self.config = config
        self.requests = used_requests
        self.start = time.monotonic() - used_seconds
        self._condition = threading.Condition()
        self._probing = False
        self._probed = False
        self.stop_reason = ""

    @property
    def probed(self) -> bool:
        """True once the first admitted attempt has ended."""
        with self._condition:
            return self._probed

    def admit(self) -> Admitted | str:
        """Admit one attempt, or say why not (blocks while the probe is in flight)."""
        with self._condition:
            while self._probing:
                self._condition.wait()
            if self.stop_reason:
                return stopped_reason(self.stop_reason)
            config = self.config
            if config.max_requests is not None and self.requests >= config.max_requests:
                return f"max_requests ({config.max_requests}) reached"
            timeout = config.per_workflow_seconds
            remaining: float | None = None
            if config.budget_seconds is not None:
                remaining = config.budget_seconds - (time.monotonic() - self.start)
                if remaining <= 0:
                    return f"overall budget ({config.budget_seconds:g} s) exhausted"
                timeout = min(timeout, remaining)
            self.requests += 1
            if not self._probed:
                self._probing = True
            return Admitted(round(timeout, 3), remaining)

    def finished(self, stop_reason: str = "") -> None:
        """An admitted attempt ended; a non-empty ``stop_reason`` stops the run."""
        with self._condition:
            if stop_reason and not self.stop_reason:
                self.stop_reason = stop_reason
            self._probing = False
            self._probed = True
            self._condition.notify_all()
