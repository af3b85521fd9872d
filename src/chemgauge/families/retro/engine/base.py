"""The retro model interface: one batch-first base class every back-end derives from.

A model maps a batch of product SMILES to ranked raw outputs (dot-separated reactant SMILES,
invalid ones included). The base class owns what every back-end would otherwise redo: input
deduplication, the output-count limit (extra outputs are cut and counted, never scored),
timing and call counting. A back-end implements one hook, ``_predict(products, n)``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chemgauge.errors import BackendError

if TYPE_CHECKING:
    from chemgauge.families.retro.engine.replica import Replica

__all__ = [
    "CallableRetroModel",
    "ModelFailure",
    "ModelOutput",
    "RetroModel",
    "RetroModelFactory",
    "RetroModelOptions",
]


@dataclass(frozen=True, slots=True)
class ModelOutput:
    """Ranked raw outputs for one product plus how many the model returned before the cut.

    ``seconds`` is this product's share of the back-end call, ``post_seconds`` its share of
    the checks and cut after it (syntheseus's ``time_model_call`` / ``time_post_processing``).
    """

    outputs: tuple[str, ...]
    returned: int
    seconds: float
    post_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class ModelFailure:
    """A product the model could not answer: the exception's type and message."""

    reason: str
    detail: str


log = logging.getLogger(__name__)


class RetroModel:
    """Base of every retro model: batching, dedup of inputs, output limit, timing, counting.

    Attributes:
        name: registry name (recorded in reports).
        prefiltered: the back-end already drops invalid and duplicate outputs itself, so the
            ``raw_slots`` convention cannot see them (reported, never hidden).
    """

    name = "retro-model"
    prefiltered = False

    def __init__(self) -> None:
        self.calls = 0
        self.products_predicted = 0

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        """Back-end hook: ranked raw outputs for each distinct product, best first."""
        raise NotImplementedError

    def expect_product(self, product: str) -> None:
        """Hint before predicting: this canonical product will be asked for (a back-end may
        use it to skip work; answers never depend on it)."""

    def prepare(self) -> None:
        """Called after every product was announced and before the first prediction."""

    def close(self) -> None:
        """Release what the run held (files, processes); the model may be used again."""

    def predict(self, products: Sequence[str], num_results: int) -> list[ModelOutput]:
        """Ranked raw outputs for each product (in input order), cut at ``num_results``."""
        distinct = list(dict.fromkeys(products))
        start = time.perf_counter()
        raw = self._predict(distinct, num_results) if distinct else []
        elapsed = time.perf_counter() - start
        if len(raw) != len(distinct):
            raise BackendError(
                f"model {self.name!r} returned {len(raw)} output lists for {len(distinct)} products"
            )
        self.calls += 1
        self.products_predicted += len(distinct)
        share = elapsed / max(1, len(distinct))
        checked: dict[str, tuple[tuple[str, ...], int]] = {}
        for product, outputs in zip(distinct, raw, strict=True):
            if isinstance(outputs, str) or not all(isinstance(o, str) for o in outputs):
                raise BackendError(
                    f"model {self.name!r} must return a list of SMILES strings per product; "
                    f"got {type(outputs).__name__} for {product!r}"
                )
            checked[product] = (tuple(outputs[:num_results]), len(outputs))
        post = (time.perf_counter() - start - elapsed) / max(1, len(distinct))
        by_product = {
            product: ModelOutput(outputs, returned, share, post)
            for product, (outputs, returned) in checked.items()
        }
        return [by_product[p] for p in products]

    def predict_isolating(
        self, products: Sequence[str], num_results: int
    ) -> list[ModelOutput | ModelFailure]:
        """:meth:`predict`, except that a call that raises is retried product by product, so
        a product the back-end cannot handle does not lose the rest of its batch; a product
        that still fails gets a :class:`ModelFailure`."""
        try:
            return list(self.predict(products, num_results))
        except Exception as exc:  # a back-end may raise anything; keep what can be kept
            log.warning("model %r failed on a batch of %d: %s", self.name, len(products), exc)
            if len(products) == 1:
                return [ModelFailure(type(exc).__name__, str(exc)[:500])]
        out: list[ModelOutput | ModelFailure] = []
        for product in products:
            try:
                out.append(self.predict([product], num_results)[0])
            except Exception as exc:  # as above, one product at a time
                out.append(ModelFailure(type(exc).__name__, str(exc)[:500]))
        return out

    def describe(self) -> dict[str, Any]:
        """Name and arguments for provenance and the config hash (no timing)."""
        return {"name": self.name, "prefiltered": self.prefiltered}

    def replica(self) -> Replica | None:
        """How a worker builds this same model, so it predicts on the run's executor (None:
        it predicts in the main process; a back-end holding a process, a file lookup or a
        caller's function cannot be rebuilt elsewhere)."""
        return None

    def class_name(self) -> str:
        """The model class as syntheseus's results file names it (``eval_args.model_class``)."""
        return type(self).__name__

    def parameter_counts(self) -> tuple[int | None, int | None]:
        """Parameters and trainable parameters, when the model has any to count."""
        return None, None


@dataclass(frozen=True)
class RetroModelOptions:
    """What every retro model factory is given: the one options object of the family's systems.

    Attributes:
        model_dir: the model's folder (or file: a predictions file, a templates file).
        num_gpus: device of a ``syntheseus:<Class>`` model, as syntheseus places it (0: CPU,
            1: ``cuda:0``); chemgauge's own models use no GPU.
        model_kwargs: the model's own keyword arguments (``model_kwargs=`` on the command
            line); a factory refuses keys it does not take.
        variant: the part of the name after ``:`` (``LocalRetro`` in ``syntheseus:LocalRetro``),
            for a factory that serves a family of models under one registered name.
    """

    model_dir: Path | None = None
    num_gpus: int | None = None
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)
    variant: str | None = None


#: A retro model factory: the registered name's options to the model (see
#: :data:`~chemgauge.families.retro.engine.registry.RETRO_SYSTEMS`).
RetroModelFactory = Callable[[RetroModelOptions], RetroModel]


class CallableRetroModel(RetroModel):
    """Wrap any callable ``products -> ranked outputs`` (the Python API for a model)."""

    def __init__(
        self,
        fn: Callable[[list[str]], Sequence[Sequence[str]]],
        name: str = "callable",
        *,
        arguments: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._fn = fn
        self.name = name
        self._arguments = dict(arguments or {})

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        result: list[list[str]] = []
        for outputs in self._fn(products):
            if isinstance(outputs, str):
                raise BackendError(
                    f"model {self.name!r} must return a list of SMILES strings per product; "
                    f"got a bare string {outputs[:80]!r}"
                )
            result.append(list(outputs))
        return result

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "arguments": self._arguments}
