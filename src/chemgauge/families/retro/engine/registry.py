"""The retro systems under test: one registry, one factory shape, open to plugins.

Every model is built by a factory registered in :data:`RETRO_SYSTEMS` and called with one
:class:`~chemgauge.families.retro.engine.base.RetroModelOptions`: ``predictions``
(precomputed outputs from a JSONL file), ``templates`` (rdchiral template baseline),
``neuralsym`` (a trained template classifier), ``similarity`` (nearest training products'
templates) and ``syntheseus`` (a syntheseus backward
model, named ``syntheseus:<ModelClass>``: the part after the colon reaches the factory as
``options.variant``). Third-party packages register ``factory(options) -> RetroModel``
under the entry-point group ``chemgauge.retro_systems``; any Python callable works through
:class:`~chemgauge.families.retro.engine.base.CallableRetroModel`.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import replace
from pathlib import Path

from chemgauge.errors import ConfigError, UnknownNameError
from chemgauge.families.retro.engine.base import RetroModel, RetroModelOptions
from chemgauge.families.retro.engine.syntheseus_model import SYNTHESEUS_BACKWARD_CLASSES
from chemgauge.registry import Systems

__all__ = [
    "RETRO_SYSTEMS",
    "SYNTHESEUS_PREFIX",
    "build_retro_model",
    "resolve_model_class",
    "retro_model_names",
]

log = logging.getLogger(__name__)

SYNTHESEUS = "syntheseus"
SYNTHESEUS_PREFIX = f"{SYNTHESEUS}:"

#: Retro models by name (kind ``retro system``, entry-point group ``chemgauge.retro_systems``).
RETRO_SYSTEMS: Systems[RetroModelOptions, RetroModel] = Systems("retro", RetroModel)


def _no_variant(name: str, options: RetroModelOptions) -> None:
    if options.variant is not None:
        raise ConfigError(f"model {name!r} has no variants, got {name}:{options.variant}")


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


def _predictions_factory(options: RetroModelOptions) -> RetroModel:
    """Precomputed ranked outputs from a JSONL file (``model_dir``)."""
    from chemgauge.families.retro.engine.predictions import PredictionsFileModel

    _no_variant("predictions", options)
    kwargs = dict(options.model_kwargs)
    strict = bool(kwargs.pop("strict", False))
    jobs = int(kwargs.pop("jobs", 0))
    if kwargs:
        raise ConfigError(
            f"model 'predictions' takes only strict and jobs arguments, got {sorted(kwargs)}"
        )
    path = _resolve_predictions_file(options.model_dir)
    return PredictionsFileModel(path, strict=strict, jobs=jobs)


def _templates_factory(options: RetroModelOptions) -> RetroModel:
    """rdchiral template baseline from a training fold or a templates file (``model_dir``)."""
    from chemgauge.families.retro.engine.templates import TemplateRetroModel

    _no_variant("templates", options)
    return TemplateRetroModel.from_dir(options.model_dir, **dict(options.model_kwargs))


def _neuralsym_factory(options: RetroModelOptions) -> RetroModel:
    """NeuralSym from a folder written by ``chemgauge retro train neuralsym`` (``model_dir``)."""
    from chemgauge.families.retro.engine.neuralsym import NeuralSymRetroModel

    _no_variant("neuralsym", options)
    return NeuralSymRetroModel.from_options(options.model_dir, **dict(options.model_kwargs))


def _similarity_factory(options: RetroModelOptions) -> RetroModel:
    """Templates of the most similar training products (``model_dir``: the training files)."""
    from chemgauge.families.retro.engine.similarity import SimilarityRetroModel

    _no_variant("similarity", options)
    return SimilarityRetroModel.from_options(options.model_dir, **dict(options.model_kwargs))


def _syntheseus_factory(options: RetroModelOptions) -> RetroModel:
    """A syntheseus backward model, ``syntheseus:<ModelClass>``."""
    from chemgauge.families.retro.engine.syntheseus_model import SyntheseusModel

    if not options.variant:
        raise ConfigError(
            f"model {SYNTHESEUS!r} needs its model class: {SYNTHESEUS_PREFIX}<ModelClass> "
            f"(one of {', '.join(SYNTHESEUS_BACKWARD_CLASSES)})"
        )
    return SyntheseusModel(
        options.variant,
        options.model_dir,
        num_gpus=options.num_gpus,
        **dict(options.model_kwargs),
    )


RETRO_SYSTEMS.register("predictions", _predictions_factory)
RETRO_SYSTEMS.register("templates", _templates_factory)
RETRO_SYSTEMS.register("neuralsym", _neuralsym_factory)
RETRO_SYSTEMS.register("similarity", _similarity_factory)
RETRO_SYSTEMS.register(SYNTHESEUS, _syntheseus_factory)


def retro_model_names() -> list[str]:
    """Registered model names, the syntheseus factory shown as ``syntheseus:<ModelClass>``."""
    return [
        f"{SYNTHESEUS_PREFIX}<ModelClass>" if name == SYNTHESEUS else name
        for name in RETRO_SYSTEMS.names()
    ]


def resolve_model_class(model_class: str) -> str:
    """The model name a ``model_class`` value means: a syntheseus model class given bare, as
    syntheseus's own command line takes it (``LocalRetro``), is ``syntheseus:LocalRetro``
    unless a chemgauge model is registered under that name (which then wins, with a warning).
    Any other name is returned unchanged (a typo fails when the model is built)."""
    if model_class not in SYNTHESEUS_BACKWARD_CLASSES:
        return model_class
    if model_class in RETRO_SYSTEMS:
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
    suggestions = [
        *(s for s in exc.suggestions if s != SYNTHESEUS),
        *(syntheseus_names[c] for c in close),
    ]
    return UnknownNameError(RETRO_SYSTEMS.kind, model_class, suggestions, retro_model_names())


def build_retro_model(model_class: str, options: RetroModelOptions | None = None) -> RetroModel:
    """Build a model by name ("did you mean" on a typo): ``name:variant`` builds the factory
    registered as ``name`` with ``options.variant`` set (``syntheseus:LocalRetro``)."""
    options = options or RetroModelOptions()
    name, sep, variant = resolve_model_class(model_class).partition(":")
    if sep:
        options = replace(options, variant=variant)
    try:
        return RETRO_SYSTEMS.build(name, options)
    except UnknownNameError as exc:
        if exc.kind != RETRO_SYSTEMS.kind or exc.name != name:
            raise
        raise _unknown_model(model_class, exc) from None
