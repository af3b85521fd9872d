"""The ``syntheseus:<ModelClass>`` models: a syntheseus backward model driven through chemgauge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chemgauge.engines.retro.base import RetroModel
from chemgauge.errors import ConfigError, MissingDependencyError

__all__ = [
    "SyntheseusModel",
]

#: syntheseus 0.9 extras per backward model class (torch and the model's own code).
_SYNTHESEUS_EXTRAS = {
    "Chemformer": "chemformer",
    "Graph2Edits": "graph2edits",
    "LocalRetro": "local-retro",
    "MEGAN": "megan",
    "MHNreact": "mhn-react",
    "RetroChimera": "retrochimera",
    "RetroChimeraDeNovo": "retrochimera",
    "RetroChimeraEdit": "retrochimera",
    "RetroKNN": "retro-knn",
    "RootAligned": "root-aligned",
}


class SyntheseusModel(RetroModel):
    """A syntheseus backward model; its outputs arrive already parsed and deduplicated."""

    prefiltered = True

    def __init__(self, model_class: str, model_dir: Path | None, **kwargs: Any) -> None:
        super().__init__()
        try:
            from syntheseus import Molecule
            from syntheseus.reaction_prediction.inference.config import BackwardModelClass
        except ImportError as exc:
            raise MissingDependencyError(
                "model_class=syntheseus:<ModelClass> needs syntheseus: "
                "pip install 'chemgauge[syntheseus]' (plus that model's own extras)"
            ) from exc
        known = [c.name for c in BackwardModelClass]
        if model_class not in known:
            import difflib

            close = difflib.get_close_matches(model_class, known, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ConfigError(
                f"unknown syntheseus model class {model_class!r}.{hint} Known: {', '.join(known)}"
            )
        self.name = f"syntheseus:{model_class}"
        self._molecule = Molecule
        self._kwargs = dict(kwargs)
        self._model_dir = model_dir
        try:
            cls = BackwardModelClass[model_class].value
            self._model = cls(model_dir=None if model_dir is None else str(model_dir), **kwargs)
        except ImportError as exc:
            extra = _SYNTHESEUS_EXTRAS.get(model_class, "all-single-step")
            raise MissingDependencyError(
                f"syntheseus model {model_class} needs its extras (and torch): "
                f"pip install 'syntheseus[{extra}]' ({exc})"
            ) from exc

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        inputs = [self._molecule(p) for p in products]
        results = self._model(inputs, num_results=num_results)
        return [[rxn.reactants_str for rxn in reactions] for reactions in results]

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "model_dir": None if self._model_dir is None else str(self._model_dir),
            "arguments": self._kwargs,
        }
