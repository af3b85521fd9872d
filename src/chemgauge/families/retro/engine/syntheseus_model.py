"""The ``syntheseus:<ModelClass>`` models: a syntheseus backward model driven through chemgauge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chemgauge.errors import ConfigError, MissingDependencyError
from chemgauge.families.retro.engine.base import RetroModel

__all__ = [
    "SYNTHESEUS_BACKWARD_CLASSES",
    "SyntheseusModel",
    "syntheseus_device",
]

#: syntheseus 0.9's backward model classes (``BackwardModelClass``), known without importing
#: syntheseus (a bare ``model_class=LocalRetro`` resolves to ``syntheseus:LocalRetro``); the
#: installed syntheseus's own list is checked when a model is built.
SYNTHESEUS_BACKWARD_CLASSES = (
    "Chemformer",
    "GLN",
    "Graph2Edits",
    "LocalRetro",
    "MEGAN",
    "MHNreact",
    "RetroChimeraDeNovo",
    "RetroChimeraEdit",
    "RetroChimera",
    "RetroKNN",
    "RootAligned",
)

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


def syntheseus_device(num_gpus: int | None) -> str | None:
    """The device syntheseus's ``eval-single-step`` gives a model for ``num_gpus`` (``None``:
    the model's own default)."""
    if num_gpus is None:
        return None
    if num_gpus == 0:
        return "cpu"
    if num_gpus == 1:
        return "cuda:0"
    raise ConfigError(
        f"num_gpus={num_gpus}: chemgauge drives a syntheseus model on one device; use "
        "num_gpus=0 (CPU) or num_gpus=1, and --jobs for parallel scoring"
    )


class SyntheseusModel(RetroModel):
    """A syntheseus backward model. Its wrappers drop outputs they cannot parse (so it is
    ``prefiltered``); it is built with ``remove_duplicates=False`` unless told otherwise, so
    repeats reach chemgauge and every convention, ``syntheseus_keep_repeats`` included, is
    derived from the same outputs."""

    prefiltered = True

    def __init__(
        self,
        model_class: str,
        model_dir: Path | None,
        *,
        num_gpus: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        device = syntheseus_device(num_gpus)
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
        arguments = {"remove_duplicates": False, **kwargs}
        if device is not None:
            arguments["device"] = device
        try:
            cls = BackwardModelClass[model_class].value
            self._model = cls(model_dir=None if model_dir is None else str(model_dir), **arguments)
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

    def class_name(self) -> str:
        return type(self._model).__name__

    def parameter_counts(self) -> tuple[int | None, int | None]:
        try:
            parameters = list(self._model.get_parameters())
        except NotImplementedError:
            return None, None
        total = sum(int(p.numel()) for p in parameters)
        trainable = sum(int(p.numel()) for p in parameters if getattr(p, "requires_grad", False))
        return total, trainable

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "model_dir": None if self._model_dir is None else str(self._model_dir),
            "arguments": self._kwargs,
        }
