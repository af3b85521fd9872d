"""Systems that answer p2s tasks: the base adapter, the model registry and three baselines.

A model receives task objects exactly as written in a task file (``record_id``,
``masked_smiles``, ``mask``, ``properties``, ``candidate_completed_smiles``) and returns one
prediction object per task in the benchmark's answer format. The base class owns output-count
and identity checks, call counting and timing; a back-end implements ``_predict(batch)``.

Baselines:

* ``structure_only`` never reads ``properties``: it prefers the candidate with the fewest
  heteroatoms, then the fewest charged atoms, then the shortest SMILES, then the first index
  (a structural prior, not a coin).
* ``random`` picks ``sha256(seed:record_id) mod K``: seeded per record, so the pick does not
  depend on batch order or on which other tasks are present.
* ``property_oracle`` computes every candidate's properties with the provider that built the
  data and picks the one nearest the supplied evidence: a model that uses the property.
"""

from __future__ import annotations

import hashlib
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chemgauge.chem import try_canonical_smiles
from chemgauge.chem.properties import structure_counts
from chemgauge.errors import BackendError, SmilesError
from chemgauge.families.p2s.engine.distance import combined_distances
from chemgauge.families.p2s.engine.properties import PropertyProvider

__all__ = [
    "ModelOptions",
    "P2SModel",
    "PropertyOracle",
    "RandomBaseline",
    "StructureOnlyBaseline",
    "invalid_prediction",
    "prediction",
]

Task = Mapping[str, Any]
Messages = list[dict[str, str]]


def prediction(record_id: str, index: int, reasoning: str) -> dict[str, Any]:
    """A valid answer object."""
    return {"record_id": record_id, "selected_candidate_index": index, "reasoning": reasoning}


def invalid_prediction(record_id: str, reason: str) -> dict[str, Any]:
    """An answer that did not parse: marked invalid, no index, the reason kept."""
    return {"record_id": record_id, "invalid": True, "reasoning": reason}


@dataclass(frozen=True)
class ModelOptions:
    """What a model factory may need: a seed, a property provider, a chat set-up."""

    seed: int = 0
    provider: PropertyProvider | None = None
    chat: Any = (
        None  # chemgauge.families.p2s.engine.chat.ChatConfig, typed loosely to avoid a cycle
    )
    render: Callable[[Task], Messages] | None = None


class P2SModel(ABC):
    """Batch-first adapter with one hook, ``_predict``."""

    name: str = "model"

    def __init__(self) -> None:
        self.calls = 0
        self.seconds = 0.0

    def describe(self) -> dict[str, Any]:
        """Name and settings that determine the answers (goes into the run's config hash)."""
        return {"name": self.name}

    def predict(self, tasks: Sequence[Task]) -> list[dict[str, Any]]:
        """One prediction per task, in order; a back-end that loses or swaps one is an error."""
        self.calls += 1
        start = time.perf_counter()
        out = self._predict(list(tasks))
        self.seconds += time.perf_counter() - start
        if len(out) != len(tasks):
            raise BackendError(f"model {self.name!r} returned {len(out)} answers for {len(tasks)}")
        for task, pred in zip(tasks, out, strict=True):
            if pred.get("record_id") != task["record_id"]:
                raise BackendError(
                    f"model {self.name!r} answered {pred.get('record_id')!r} "
                    f"for task {task['record_id']!r}"
                )
        return out

    @abstractmethod
    def _predict(self, batch: list[Task]) -> list[dict[str, Any]]:
        """Answer each task of the batch."""


class StructureOnlyBaseline(P2SModel):
    """A structural prior that never looks at the supplied properties."""

    name = "structure_only"

    def _predict(self, batch: list[Task]) -> list[dict[str, Any]]:
        out = []
        for task in batch:
            scores: list[tuple[float, float, float, int]] = []
            for i, smiles in enumerate(task["candidate_completed_smiles"]):
                try:
                    counts = structure_counts(smiles)
                except SmilesError:  # an unparsable candidate is never preferred
                    scores.append((math.inf, math.inf, math.inf, i))
                    continue
                scores.append((counts.heteroatoms, counts.charged_atoms, len(smiles), i))
            best = min(scores)[-1]
            out.append(prediction(task["record_id"], best, "fewest heteroatoms (structure only)"))
        return out


class RandomBaseline(P2SModel):
    """A seeded uniform pick per masked graph and candidate list (the same in every view)."""

    name = "random"

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.seed = seed

    def describe(self) -> dict[str, Any]:
        """Name and seed."""
        return {"name": self.name, "seed": self.seed}

    def _predict(self, batch: list[Task]) -> list[dict[str, Any]]:
        out = []
        for task in batch:
            # keyed by what every view of a record shares, not by its id (which a blind run
            # draws afresh), so the pick is the same whichever way the task is presented
            graph = "\x1f".join([task["masked_smiles"], *task["candidate_completed_smiles"]])
            digest = hashlib.sha256(f"{self.seed}:{graph}".encode()).digest()
            index = int.from_bytes(digest[:8], "big") % len(task["candidate_completed_smiles"])
            out.append(prediction(task["record_id"], index, f"random (seed {self.seed})"))
        return out


class PropertyOracle(P2SModel):
    """Recomputes each candidate's properties and picks the nearest to the evidence."""

    name = "property_oracle"

    def __init__(self, provider: PropertyProvider) -> None:
        super().__init__()
        self.provider = provider

    def describe(self) -> dict[str, Any]:
        """Name and the provider it recomputes with."""
        return {"name": self.name, "provider": self.provider.describe()}

    def _predict(self, batch: list[Task]) -> list[dict[str, Any]]:
        keys = [
            [try_canonical_smiles(s) or s for s in task["candidate_completed_smiles"]]
            for task in batch
        ]
        results = self.provider.compute([k for row in keys for k in row])
        out, offset = [], 0
        for task, row in zip(batch, keys, strict=True):
            values = [
                r.values if r.error is None else None for r in results[offset : offset + len(row)]
            ]
            offset += len(row)
            supplied = task["properties"]
            if not supplied:
                out.append(invalid_prediction(task["record_id"], "no property supplied"))
                continue
            distances = combined_distances(supplied, values)
            best = min(range(len(row)), key=lambda i: (distances[i], i))
            if not math.isfinite(distances[best]):
                out.append(invalid_prediction(task["record_id"], "no candidate has a value"))
                continue
            out.append(
                prediction(task["record_id"], best, f"nearest property (d={distances[best]:.4g})")
            )
        return out
