"""The forward systems under test: one :class:`~chemgauge.registry.Systems` registry.

A factory takes :class:`SystemOptions` and returns a :class:`TemplatePredictor`; the
benchmark builds its predictor by name (``--model``, default ``templates``), and third-party
packages add theirs through the entry-point group ``chemgauge.forward_systems``. The one
built-in systems are chemgauge's template engine (options: the template source, its rule file
and manifest, the pool cap) and two outside-model back-ends, ``predictions`` (a file of
ranked outputs) and ``command`` (a program run batch by batch), both returning
:class:`~chemgauge.families.forward.outside.OutsideSystem` objects scored by
:mod:`~chemgauge.families.forward.outside_run` under every ranking convention.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chemgauge.errors import ConfigError
from chemgauge.families.forward.batch import RulesSpec, remember_rules
from chemgauge.families.forward.outside import OutsideSystem
from chemgauge.families.forward.sources import LoadedRules, load_rules_for_source
from chemgauge.registry import Systems

__all__ = [
    "FORWARD_SYSTEMS",
    "SYSTEM_LINES",
    "SystemOptions",
    "TemplatePredictor",
    "build_system",
    "template_predictor",
]


@dataclass(frozen=True)
class SystemOptions:
    """What a forward system is built from (the benchmark's flags of the same names).

    Attributes:
        template_source: ``embedded``, ``file``, ``train-extracted`` or ``scorer-conditioned``.
        templates: the rule file of ``file`` / ``train-extracted``.
        template_manifest: the manifest attesting ``train-extracted`` templates.
        max_results: cap on the candidate pool (``None``: no cap).
        corpus_sha256: the corpus the run scores (a manifest must name this very corpus).
        predictions: an outside model's predictions file (``predictions``).
        src: the Molecular Transformer source file paired with ``predictions``.
        command: an outside model's argument list (``command``).
        batch_size: reactions per command call.
        timeout: seconds a command call may take.
        strict: a rejected predictions-file line is an error.
    """

    template_source: str = "embedded"
    templates: Path | None = None
    template_manifest: Path | None = None
    max_results: int | None = None
    corpus_sha256: str = ""
    predictions: Path | None = None
    src: Path | None = None
    command: tuple[str, ...] = ()
    batch_size: int = 64
    timeout: float = 60.0
    strict: bool = False


@dataclass(frozen=True)
class TemplatePredictor:
    """chemgauge's template forward predictor over one loaded rule set."""

    loaded: LoadedRules
    max_results: int | None = None

    def rules_spec(self) -> RulesSpec:
        """How a worker rebuilds this rule set; seeds this process's cache with it (forked
        workers inherit the loaded rules)."""
        remember_rules(self.loaded.rules)
        rules_file = self.loaded.rules_file
        paths = () if rules_file is None else (rules_file,)
        return RulesSpec(paths, rules_file is None, self.loaded.rules.content_sha256)


def template_predictor(options: SystemOptions) -> TemplatePredictor:
    """The template engine with the rule set the template source names (every misuse of
    the source, its file or its manifest is refused before any rule loads)."""
    loaded = load_rules_for_source(
        options.template_source,
        options.templates,
        options.template_manifest,
        options.corpus_sha256,
    )
    return TemplatePredictor(loaded, options.max_results)


def predictions_system(options: SystemOptions) -> OutsideSystem:
    """An outside model's precomputed outputs (``--predictions``, with ``--src`` for the
    Molecular Transformer pair)."""
    from chemgauge.families.forward.outside import PredictionsSystem

    if options.predictions is None:
        raise ConfigError("--model predictions needs --predictions FILE")
    return PredictionsSystem(options.predictions, src=options.src, strict=options.strict)


def command_system(options: SystemOptions) -> OutsideSystem:
    """An outside model run as a command, batch by batch (``--command``)."""
    from chemgauge.families.forward.outside import CommandSystem

    return CommandSystem(options.command, batch_size=options.batch_size, timeout=options.timeout)


FORWARD_SYSTEMS: Systems[SystemOptions, TemplatePredictor | OutsideSystem] = Systems(
    "forward", (TemplatePredictor, OutsideSystem)
)
FORWARD_SYSTEMS.register("templates", template_predictor)
FORWARD_SYSTEMS.register("predictions", predictions_system)
FORWARD_SYSTEMS.register("command", command_system)

#: ``chemgauge list`` lines of the built-in systems (a factory says little of itself).
SYSTEM_LINES = {
    "templates": "chemgauge's template forward predictor (embedded, file or train-extracted rules)",
    "predictions": "an outside model's ranked outputs from --predictions (JSONL, CSV "
    "target_1..k, or MT src/tgt with --src); several lists per reaction allowed",
    "command": "an outside model run as --command: reactant sets on stdin, ranked products "
    "on stdout (tab-separated), batched, with a timeout",
}


def build_system(name: str, options: SystemOptions) -> TemplatePredictor | OutsideSystem:
    """The forward system ``name`` built from ``options`` (unknown names: "did you mean")."""
    return FORWARD_SYSTEMS.build(name, options)
