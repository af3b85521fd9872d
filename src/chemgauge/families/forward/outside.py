"""Outside forward systems: any model's ranked outputs, read from a file or a command.

Every outside system is batch-first with one hook, :meth:`OutsideSystem._answer`: a batch of
reactions in, one :class:`Answer` per reaction out (its lists of raw product SMILES, several
when the model ran on augmented inputs). The base class owns what every back-end would
redo: batching, the output-count check and turning a failed batch into counted error answers
(one bad batch never ends the run).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemgauge.chem import Canonicalizer
from chemgauge.errors import ConfigError
from chemgauge.families.forward.corpus import BenchReaction
from chemgauge.families.forward.predictions_file import (
    PredictionsFile,
    load_predictions,
    reactant_set_key,
)

__all__ = ["Answer", "CommandSystem", "OutsideSystem", "PredictionsSystem"]

#: Bytes of a command's output read at most per batch (bounded output).
MAX_COMMAND_OUTPUT = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Answer:
    """One reaction's raw outputs, or why the system gave none.

    ``status``: ``answered``; ``missing`` (a predictions file has no line for it); ``error``
    (the back-end failed on its batch; ``detail`` says how).
    """

    lists: tuple[tuple[str, ...], ...] = ()
    status: str = "answered"
    detail: str = ""


class OutsideSystem:
    """Base class of outside systems (see the module doc)."""

    name = "outside"
    batch_size = 64

    def _answer(self, batch: Sequence[BenchReaction]) -> list[Answer]:
        raise NotImplementedError

    def answer(self, reactions: Sequence[BenchReaction]) -> list[Answer]:
        """Answers for every reaction, in order; a batch that raises or returns the wrong
        number of answers becomes error answers for that batch only."""
        out: list[Answer] = []
        for start in range(0, len(reactions), self.batch_size):
            batch = reactions[start : start + self.batch_size]
            try:
                answers = self._answer(batch)
                if len(answers) != len(batch):
                    raise RuntimeError(f"{len(answers)} answers for {len(batch)} reactions")
            except Exception as exc:  # the back-end's failure is this batch's, not the run's
                detail = f"{type(exc).__name__}: {exc}"[:500]
                answers = [Answer((), "error", detail) for _ in batch]
            out.extend(answers)
        return out

    def describe(self) -> dict[str, Any]:
        """What the report records of this system."""
        return {"name": self.name}


class PredictionsSystem(OutsideSystem):
    """Precomputed outputs from a predictions file (JSONL, CSV or the MT src/tgt pair)."""

    name = "predictions"

    def __init__(self, path: Path, *, src: Path | None = None, strict: bool = False) -> None:
        self.file: PredictionsFile = load_predictions(path, src=src, strict=strict)
        self._canon = Canonicalizer("exact")
        self.used: set[str] = set()

    def _answer(self, batch: Sequence[BenchReaction]) -> list[Answer]:
        answers = []
        for reaction in batch:
            key = self.mark_used(reaction.reaction_id, reaction.reactants_canonical)
            lists = self.file.lists_for(reaction.reaction_id, key)
            answers.append(Answer(lists) if lists else Answer((), "missing"))
        return answers

    def mark_used(self, reaction_id: str, reactants_canonical: Sequence[str]) -> str:
        """Note the file's key a corpus reaction asks for; return its reactant-set key."""
        key = reactant_set_key(tuple(reactants_canonical), self._canon) or ""
        if reaction_id in self.file.by_id:
            self.used.add(f"id:{reaction_id}")
        elif key in self.file.by_reactants:
            self.used.add(f"reactants:{key}")
        return key

    def unmatched(self) -> int:
        """Keys of the file no corpus reaction asked for (a wrong corpus, or extra lines)."""
        return self.file.keys - len(self.used)

    def describe(self) -> dict[str, Any]:
        found = self.file
        return {
            "name": self.name,
            "file": found.path.name,
            "file_sha256": found.sha256,
            "layout": found.layout,
            "lines": found.stats.to_dict(),
        }


class CommandSystem(OutsideSystem):
    """A command reading reactant sets on stdin (one dot-joined set a line) and writing one
    line per input on stdout: the ranked products, tab-separated. Run per batch with an
    argument list (never a shell), a timeout and bounded output."""

    name = "command"

    def __init__(self, argv: Sequence[str], *, batch_size: int = 64, timeout: float = 60.0):
        if not argv:
            raise ConfigError("--model command needs --command (the program and its arguments)")
        if batch_size < 1 or not timeout > 0:
            raise ConfigError("--batch-size must be >= 1 and --timeout > 0")
        self.argv = list(argv)
        self.batch_size = batch_size
        self.timeout = timeout

    def _answer(self, batch: Sequence[BenchReaction]) -> list[Answer]:
        stdin = "".join(".".join(r.reactants_original) + "\n" for r in batch)
        done = subprocess.run(  # an argument list, never a shell string
            self.argv,
            input=stdin.encode(),
            capture_output=True,
            timeout=self.timeout,
            check=False,
        )
        if done.returncode != 0:
            tail = done.stderr[-300:].decode(errors="replace").strip()
            raise RuntimeError(f"exit status {done.returncode}: {tail}")
        if len(done.stdout) > MAX_COMMAND_OUTPUT:
            raise RuntimeError(f"more than {MAX_COMMAND_OUTPUT} bytes of output")
        lines = done.stdout.decode(errors="replace").splitlines()
        return [Answer((tuple(p for p in line.split("\t") if p.strip()),)) for line in lines]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "argv": self.argv,
            "batch_size": self.batch_size,
            "timeout_s": self.timeout,
        }
