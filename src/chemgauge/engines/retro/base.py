"""The retro model interface: one batch-first base class every back-end derives from.

A model maps a batch of product SMILES to ranked raw outputs (dot-separated reactant SMILES,
invalid ones included). The base class owns what every back-end would otherwise redo: input
deduplication, the output-count limit (extra outputs are cut and counted, never scored),
timing and call counting. A back-end implements one hook, ``_predict(products, n)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from chemgauge.errors import BackendError

__all__ = [
    "CallableRetroModel",
    "ModelOutput",
    "RetroModel",
    "RetroModelFactory",
]


@dataclass(frozen=True, slots=True)
class ModelOutput:
    """Ranked raw outputs for one product plus how many the model returned before the cut."""

    outputs: tuple[str, ...]
    returned: int
    seconds: float


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
        by_product: dict[str, ModelOutput] = {}
        for product, outputs in zip(distinct, raw, strict=True):
            if isinstance(outputs, str) or not all(isinstance(o, str) for o in outputs):
                raise BackendError(
                    f"model {self.name!r} must return a list of SMILES strings per product; "
                    f"got {type(outputs).__name__} for {product!r}"
                )
            by_product[product] = ModelOutput(tuple(outputs[:num_results]), len(outputs), share)
        return [by_product[p] for p in products]

    def describe(self) -> dict[str, Any]:
        """Name and arguments for provenance and the config hash (no timing)."""
        return {"name": self.name, "prefiltered": self.prefiltered}


class RetroModelFactory(Protocol):
    """Builds a model from its folder (or file) and keyword arguments."""

    def __call__(self, model_dir: Path | None, **kwargs: Any) -> RetroModel: ...


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
