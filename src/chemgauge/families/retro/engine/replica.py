"""A model's replica: what a worker process needs to build the same model for itself.

A model that predicts in Python (templates, NeuralSym, similarity) would otherwise predict in
the main process, one batch at a time, while the workers only score. With a replica each
worker builds the model once (from a picklable recipe: a model folder, a template set) and
predicts and scores its own batches, so prediction runs on the executor too. Batches are the
same whatever the executor, so outputs are the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chemgauge.eval.provenance import sha256_json

if TYPE_CHECKING:
    from chemgauge.families.retro.engine.base import RetroModel

__all__ = ["Replica", "forget_replicas", "replica_model", "seed_replica"]


@dataclass(frozen=True)
class Replica:
    """How to build a model again elsewhere.

    Attributes:
        key: the model's identity (a hash of its ``describe()``); a worker keeps the model it
            built for a key and builds again only for another key.
        build: a picklable callable returning the model (a ``functools.partial`` of a class).
    """

    key: str
    build: Callable[[], RetroModel]

    @classmethod
    def of(cls, model: RetroModel, build: Callable[[], RetroModel]) -> Replica:
        """The replica of ``model``, keyed by its description."""
        return cls(sha256_json(model.describe()), build)


#: The model built (or seeded) in this process, by replica key: at most one is kept.
_BUILT: dict[str, RetroModel] = {}


def replica_model(replica: Replica) -> RetroModel:
    """This process's model for ``replica``: built on first use, then reused."""
    model = _BUILT.get(replica.key)
    if model is None:
        _BUILT.clear()
        model = replica.build()
        _BUILT[replica.key] = model
    return model


def seed_replica(replica: Replica, model: RetroModel) -> None:
    """Use ``model`` itself for ``replica`` in this process (a serial run builds nothing)."""
    _BUILT.clear()
    _BUILT[replica.key] = model


def forget_replicas() -> None:
    """Drop this process's model (the end of a run: its memory is released)."""
    _BUILT.clear()
