"""The retro model registry: built-in models by name, open to plugins.

Built-ins: ``predictions`` (precomputed outputs from a JSONL file), ``templates`` (rdchiral
template baseline) and ``syntheseus:<ModelClass>`` (a syntheseus backward model, when
syntheseus and that model's extras are installed). Third-party packages register factories
under the entry-point group ``chemgauge.retro_models``; any Python callable works through
:class:`~chemgauge.families.retro.engine.base.CallableRetroModel`.
"""

from __future__ import annotations

import difflib
import logging
from pathlib import Path
from typing import Any

from chemgauge.errors import ConfigError, UnknownNameError
from chemgauge.families.retro.engine.base import RetroModel, RetroModelFactory
from chemgauge.families.retro.engine.predictions import PredictionsFileModel
from chemgauge.families.retro.engine.syntheseus_model import (
    SYNTHESEUS_BACKWARD_CLASSES,
    SyntheseusModel,
)
from chemgauge.registry import Registry

__all__ = [
    "RETRO_MODELS",
    "SYNTHESEUS_PREFIX",
    "build_retro_model",
    "resolve_model_class",
    "retro_model_names",
]

log = logging.getLogger(__name__)

SYNTHESEUS_PREFIX = "syntheseus:"

RETRO_MODELS: Registry[RetroModelFactory] = Registry("retro_model")


def _resolve_predictions_file(model_dir: Path | None) -> Path:
    if model_dir is None:
        raise ConfigError("model_class=predictions needs model_dir (a JSONL file or its folder)")
    if model_dir.is_file():
        return model_dir
    if not model_dir.is_dir():
        raise ConfigError(f"model_dir {str(model_dir)!r} does not exist")
    candidates = sorted(model_dir.glob("*.jsonl"))
    if len(candidates) != 1:
        names = ", ".join(p.name for p in candidates) or "none"
        raise ConfigError(
            f"model_dir {str(model_dir)!r} must hold exactly one *.jsonl predictions file "
            f"(found: {names}); or pass the file itself"
        )
    return candidates[0]


def _predictions_factory(model_dir: Path | None, **kwargs: Any) -> RetroModel:
    strict = bool(kwargs.pop("strict", False))
    jobs = int(kwargs.pop("jobs", 0))
    if kwargs:
        raise ConfigError(
            f"model 'predictions' takes only strict and jobs arguments, got {sorted(kwargs)}"
        )
    return PredictionsFileModel(_resolve_predictions_file(model_dir), strict=strict, jobs=jobs)


def _templates_factory(model_dir: Path | None, **kwargs: Any) -> RetroModel:
    from chemgauge.families.retro.engine.templates import TemplateRetroModel

    return TemplateRetroModel.from_dir(model_dir, **kwargs)


RETRO_MODELS.register("predictions", _predictions_factory)


RETRO_MODELS.register("templates", _templates_factory)


def retro_model_names() -> list[str]:
    """Registered model names plus the ``syntheseus:<ModelClass>`` family."""
    return [*RETRO_MODELS.names(), f"{SYNTHESEUS_PREFIX}<ModelClass>"]


def resolve_model_class(model_class: str) -> str:
    """The model name a ``model_class`` value means: a syntheseus model class given bare, as
    syntheseus's own command line takes it (``LocalRetro``), is ``syntheseus:LocalRetro``
    unless a chemgauge model is registered under that name (which then wins, with a warning).
    Any other name is returned unchanged (a typo fails when the model is built)."""
    if model_class not in SYNTHESEUS_BACKWARD_CLASSES:
        return model_class
    if model_class in RETRO_MODELS:
        log.warning(
            "model_class=%s is a registered chemgauge model; for the syntheseus model class "
            "of that name write model_class=%s%s",
            model_class,
            SYNTHESEUS_PREFIX,
            model_class,
        )
        return model_class
    return f"{SYNTHESEUS_PREFIX}{model_class}"


def _unknown_model(model_class: str, exc: UnknownNameError) -> ConfigError:
    """The registry's "did you mean", with syntheseus model classes among the candidates
    (case-insensitive: ``localretro`` suggests ``syntheseus:LocalRetro``)."""
    syntheseus_names = {c.lower(): f"{SYNTHESEUS_PREFIX}{c}" for c in SYNTHESEUS_BACKWARD_CLASSES}
    close = difflib.get_close_matches(model_class.lower(), list(syntheseus_names), n=2, cutoff=0.7)
    suggestions = [*exc.suggestions, *(syntheseus_names[c] for c in close)]
    known = [*RETRO_MODELS.names(), f"{SYNTHESEUS_PREFIX}<ModelClass>"]
    return UnknownNameError("retro model", model_class, suggestions, known)


def build_retro_model(
    model_class: str,
    model_dir: str | Path | None = None,
    *,
    num_gpus: int | None = None,
    **kwargs: Any,
) -> RetroModel:
    """Build a model by name ("did you mean" on a typo). ``num_gpus`` places a syntheseus
    model as syntheseus does (0: CPU, 1: ``cuda:0``); chemgauge's own models use no GPU."""
    path = None if model_dir is None or model_dir == "" else Path(model_dir)
    model_class = resolve_model_class(model_class)
    if model_class.startswith(SYNTHESEUS_PREFIX):
        name = model_class.removeprefix(SYNTHESEUS_PREFIX)
        return SyntheseusModel(name, path, num_gpus=num_gpus, **kwargs)
    try:
        factory = RETRO_MODELS.get(model_class)
    except UnknownNameError as exc:
        raise _unknown_model(model_class, exc) from None
    model = factory(path, **kwargs)
    if not isinstance(model, RetroModel):
        raise ConfigError(f"retro model factory {model_class!r} did not return a RetroModel")
    return model
