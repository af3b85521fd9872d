"""The forward systems under test: one :class:`~chemgauge.registry.Systems` registry.

A factory takes :class:`SystemOptions` and returns a :class:`TemplatePredictor`; the
benchmark builds its predictor by name (``--model``, default ``templates``), and third-party
packages add theirs through the entry-point group ``chemgauge.forward_systems``. The one
built-in system is chemgauge's template engine, whose options are the template source, its
rule file and manifest, and the pool cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chemgauge.families.forward.batch import RulesSpec, remember_rules
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
    """

    template_source: str = "embedded"
    templates: Path | None = None
    template_manifest: Path | None = None
    max_results: int | None = None
    corpus_sha256: str = ""


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


FORWARD_SYSTEMS: Systems[SystemOptions, TemplatePredictor] = Systems("forward", TemplatePredictor)
FORWARD_SYSTEMS.register("templates", template_predictor)

#: ``chemgauge list`` lines of the built-in systems (a factory says little of itself).
SYSTEM_LINES = {
    "templates": "chemgauge's template forward predictor (embedded, file or train-extracted rules)"
}


def build_system(name: str, options: SystemOptions) -> TemplatePredictor:
    """The forward system ``name`` built from ``options`` (unknown names: "did you mean")."""
    return FORWARD_SYSTEMS.build(name, options)
