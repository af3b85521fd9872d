"""The retro model registry: built-in models by name, open to plugins.

Built-ins: ``predictions`` (precomputed outputs from a JSONL file), ``templates`` (rdchiral
template baseline) and ``syntheseus:<ModelClass>`` (a syntheseus backward model, when
syntheseus and that model's extras are installed). Third-party packages register factories
under the entry-point group ``chemgauge.retro_models``; any Python callable works through
:class:`~chemgauge.engines.retro.base.CallableRetroModel`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chemgauge.engines.retro.base import RetroModel, RetroModelFactory
from chemgauge.engines.retro.predictions import PredictionsFileModel
from chemgauge.engines.retro.syntheseus_model import SyntheseusModel
from chemgauge.errors import ConfigError
from chemgauge.registry import Registry

__all__ = [
    "RETRO_MODELS",
    "build_retro_model",
    "retro_model_names",
]

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
    from chemgauge.engines.retro.templates import TemplateRetroModel

    return TemplateRetroModel.from_dir(model_dir, **kwargs)


RETRO_MODELS.register("predictions", _predictions_factory)


RETRO_MODELS.register("templates", _templates_factory)


def retro_model_names() -> list[str]:
    """Registered model names plus the ``syntheseus:<ModelClass>`` family."""
    return [*RETRO_MODELS.names(), "syntheseus:<ModelClass>"]


def build_retro_model(
    model_class: str, model_dir: str | Path | None = None, **kwargs: Any
) -> RetroModel:
    """Build a model by registry name ("did you mean" on a typo)."""
    path = None if model_dir is None or model_dir == "" else Path(model_dir)
    if model_class.startswith("syntheseus:"):
        return SyntheseusModel(model_class.split(":", 1)[1], path, **kwargs)
    factory = RETRO_MODELS.get(model_class)
    model = factory(path, **kwargs)
    if not isinstance(model, RetroModel):
        raise ConfigError(f"retro model factory {model_class!r} did not return a RetroModel")
    return model
