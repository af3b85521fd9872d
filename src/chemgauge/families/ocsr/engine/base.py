"""The recognizer interface: one base class every image-to-structure back-end derives from.

A back-end implements one hook, ``_recognize(image, timeout)``; the base class owns timing,
call counting, output bounds and turning exceptions into a ``failure`` record, so a broken
back-end costs one attempt, never the run. External programs run from an argument list
(never a shell string) with a timeout and bounded output (:func:`run_bounded`).
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from chemgauge.errors import BackendError
from chemgauge.eval.lifeline import child_kwargs
from chemgauge.registry import Registry

__all__ = [
    "BACKEND_STATUSES",
    "CLARIFICATION",
    "COMPLETED",
    "DEFAULT_MAX_OUTPUT",
    "FAILURE",
    "PROVISIONAL",
    "RECOGNIZERS",
    "TIMEOUT",
    "ProcessResult",
    "Recognition",
    "Recognizer",
    "RecognizerOutput",
    "guess_format",
    "labelled_graph",
    "parse_structured_answer",
    "program_hashes",
    "run_bounded",
    "sha256_text",
    "within_deadline",
]

T = TypeVar("T")

COMPLETED = "completed"


PROVISIONAL = "provisional"


CLARIFICATION = "clarification"


FAILURE = "failure"


TIMEOUT = "timeout"


BACKEND_STATUSES = (COMPLETED, PROVISIONAL, CLARIFICATION, FAILURE, TIMEOUT)


DEFAULT_MAX_OUTPUT = 1 << 20


#: Python recognizers: callables ``(image: Path) -> str | RecognizerOutput | Mapping``.
RECOGNIZERS: Registry[Callable[[Path], Any]] = Registry(
    "ocsr recognizer", group="chemgauge.ocsr_recognizers"
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
    #: What the back-end says served the answer (model, reasoning effort, service tier), as it
    #: echoed them; ``None`` for back-ends that echo nothing.
    served: Mapping[str, Any] | None = None
    #: Non-empty when this answer shows the run cannot go on as configured (another model
    #: answered, the key was refused, the endpoint or quota is gone): the runner records every
    #: remaining attempt ``not_run`` with this reason instead of switching or retrying.
    stop_reason: str = ""
    #: The status the back-end itself declared (``status`` in a JSON answer, or a
    #: ``clarification`` it asked), "" when it declared none; kept on the row beside the
    #: status chemgauge recorded, which a declared failure always decides.
    declared_status: str = ""
    #: The back-end's own visual review of its answer, when it returns one: stored and
    #: reported in its own section, never used as ground truth.
    review: str = ""

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
            "served": dict(out.served) if out.served is not None else None,
            "stop_reason": out.stop_reason or None,
            "declared_status": out.declared_status or None,
            "model_review": out.review or None,
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
    #: Whether a run gets the protocol's bounded budgets by default
    #: (:meth:`~chemgauge.families.ocsr.config.RunConfig.bounded`): true for back-ends that
    #: ask a model or program; local, deterministic ones (osra, python) say false.
    bounded_by_default = True

    def __init__(self, *, max_output_bytes: int = DEFAULT_MAX_OUTPUT) -> None:
        self.max_output_bytes = max_output_bytes
        self.calls = 0
        self._version: str | None = None
        self._programs: dict[str, str] | None = None

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
        """Configuration recorded in the run provenance (no secrets), with the SHA-256 of each
        program the back-end runs (:meth:`programs`), so a changed recognizer is seen."""
        out: dict[str, Any] = {"backend": self.name, "version": self.version()}
        programs = self.programs()
        if programs:
            out["programs"] = programs
        return out

    def program_files(self) -> tuple[str, ...]:
        """Programs and files this back-end runs, as given (a bare name is looked up on
        ``PATH``); hashed by :meth:`programs`."""
        return ()

    def programs(self, *, fresh: bool = False) -> dict[str, str]:
        """SHA-256 of each of :meth:`program_files` (``missing`` when it cannot be read);
        cached unless ``fresh`` (a worker node checks its own copy against the driver's)."""
        if self._programs is None or fresh:
            self._programs = program_hashes(self.program_files())
        return dict(self._programs)

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
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            **child_kwargs(),
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


def within_deadline(work: Callable[[], T], timeout: float) -> tuple[bool, T | None]:
    """Run ``work`` on a daemon thread for at most ``timeout`` seconds of elapsed time:
    ``(True, result)``, or ``(False, None)`` when it is still running (it is abandoned, never
    waited for); an exception it raises is raised here."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="chemgauge-ocsr-attempt", daemon=True)
    worker.start()
    worker.join(max(0.0, timeout))
    if worker.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box["result"]


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
    """Read the JSON answer protocol: ``{"smiles"|"molfile": ..., "status": ...,
    "clarification"|"message": ..., "review": ...}``.

    The declared status wins over a graph sent with it: a graph with a declared ``failure``,
    ``clarification`` (a non-empty ``clarification`` field declares one), ``timeout`` or
    ``provisional`` is a ``provisional`` preview, never a completed answer; without a graph a
    declared or asked clarification is ``clarification`` and anything else ``failure``.
    Only a graph declared ``completed`` (or with no status at all) is ``completed``.
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
    problem = ""
    labels = obj.get("abbreviations")
    if graph and fmt == "smiles" and isinstance(labels, list) and labels:
        labelled, problem = labelled_graph(graph, labels)
        if labelled:
            graph, fmt = labelled, "molfile"
    asked = obj.get("clarification")
    asked = str(asked) if asked else ""
    message = asked or (str(obj["message"]) if obj.get("message") else "")
    declared = str(obj.get("status") or "").strip().lower()
    if not declared and asked:
        declared = CLARIFICATION
    if graph:
        status = COMPLETED if declared in ("", COMPLETED) else PROVISIONAL
        if status == PROVISIONAL and not message:
            message = f"the back-end declared {declared!r} and sent a graph: a preview"
    elif declared == CLARIFICATION:
        status = CLARIFICATION
    else:
        status = FAILURE
        message = message or "answer holds no structure"
    if problem:
        message = "; ".join(part for part in (message, problem) if part)
    review = obj.get("review") or obj.get("visual_review") or ""
    if not isinstance(review, str):
        review = json.dumps(review, sort_keys=True)
    return RecognizerOutput(
        status,
        text=graph,
        fmt=fmt,
        message=message,
        raw_output=text,
        declared_status=declared,
        review=review,
    )


def labelled_graph(smiles: str, labels: list[Any]) -> tuple[str, str]:
    """A molfile of ``smiles`` with each ``{"label", "atoms"}`` (0-based SMILES atom order) as
    a superatom group and ""; or "" and why the labels could not be placed (the SMILES
    answer is then kept as it is)."""
    from rdkit import Chem

    from chemgauge.chem.molfile import add_abbreviation, mol_to_molfile

    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return "", ""  # the graph is scored (and refused) as the SMILES it is
    for item in labels:
        label = item.get("label") if isinstance(item, dict) else None
        atoms = item.get("atoms") if isinstance(item, dict) else None
        if not isinstance(label, str) or not label.strip() or not isinstance(atoms, list):
            return "", "abbreviation labels unreadable: each needs a label and atom indices"
        if not atoms or not all(
            isinstance(a, int) and not isinstance(a, bool) and 0 <= a < mol.GetNumAtoms()
            for a in atoms
        ):
            return "", f"abbreviation {label!r}: atom indices outside the SMILES"
        mol = add_abbreviation(mol, label.strip(), atoms)
    return mol_to_molfile(mol), ""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def program_hashes(files: Sequence[str]) -> dict[str, str]:
    """SHA-256 of each program or file, keyed as given; a bare name is found on ``PATH``."""
    out: dict[str, str] = {}
    for given in files:
        found = given if os.sep in given else shutil.which(given)
        digest = hashlib.sha256()
        try:
            with open(found or given, "rb") as handle:
                while block := handle.read(1 << 20):
                    digest.update(block)
        except OSError:
            out[given] = "missing"
            continue
        out[given] = digest.hexdigest()
    return out
