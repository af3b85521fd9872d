"""Checks that need the whole corpus, made in one pass before anything is predicted.

* ``--strict``: every corpus data-quality problem, and any reactant set that occurs in more
  than one split (:mod:`~chemgauge.families.forward.leakage`), stops the run before a row
  is journaled (a journal left by a rejected corpus could never be resumed: fixing the corpus
  changes its hash).
* ``train-extracted``: the template manifest's ``included_split`` is the extractor's claim;
  this pass checks it. Every template must list the reactions it came from
  (``source_reaction_ids``, written by ``extract-templates``), and the split of every one of
  them is recomputed here from this corpus: a source that is not a valid reaction of this
  corpus's train split refuses the whole rule set, whatever the manifest says.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chemgauge.errors import TemplateProvenanceError
from chemgauge.families.forward.corpus import BenchReaction, open_corpus
from chemgauge.families.forward.engine.rules import RuleSet
from chemgauge.families.forward.leakage import LeakageAudit, strict_leakage_error
from chemgauge.families.forward.sources import LoadedRules

__all__ = ["TemplateProvenanceError", "preflight", "template_sources"]

_NOT_FOUND = "not a valid reaction of this corpus"
_REJECTED = "rejected in hindsight (conflicting group_key values)"


def template_sources(rules: RuleSet, path: str | None) -> dict[str, list[str]]:
    """reaction id -> ids of the templates that name it as a source; a template without a
    source list is refused (it cannot be checked)."""
    wanted: dict[str, list[str]] = {}
    for rule in rules:
        if not rule.source_reaction_ids:
            raise TemplateProvenanceError(
                f"{path}: template {rule.template_id!r} ({rule.location}) records no "
                "source_reaction_ids, so its split cannot be checked; extract the templates "
                "again with 'chemgauge forward extract-templates --split train'"
            )
        for reaction_id in rule.source_reaction_ids:
            wanted.setdefault(reaction_id, []).append(rule.template_id)
    return wanted


def _refuse(
    wanted: dict[str, list[str]], splits: dict[str, str], path: str | None
) -> dict[str, Any]:
    """The verified summary, or :class:`TemplateProvenanceError` naming the first bad source."""
    outside = {rid: splits.get(rid, _NOT_FOUND) for rid in wanted if splits.get(rid) != "train"}
    if outside:
        first = min(outside)
        where = outside[first]
        where = where if where in (_NOT_FOUND, _REJECTED) else f"in split {where!r}"
        templates = sorted({t for rid in outside for t in wanted[rid]})
        raise TemplateProvenanceError(
            f"{path}: template {wanted[first][0]!r} came from reaction {first!r}, which is "
            f"{where}; {len(templates)} template(s) name {len(outside)} source reaction(s) "
            "outside this corpus's train split, and train-extracted templates must come from "
            "train reactions only (the split is recomputed here, never read from the manifest)"
        )
    return {"verified": True, "source_reactions": len(wanted), "split": "train"}


def preflight(corpus: Path, loaded: LoadedRules, *, strict: bool) -> dict[str, Any] | None:
    """Run the checks above (a pass only when one applies); returns the template-source
    verification summary for ``train-extracted``, else ``None``."""
    check_sources = loaded.template_source == "train-extracted"
    if not strict and not check_sources:
        return None
    wanted = template_sources(loaded.rules, loaded.rules_file) if check_sources else {}
    splits: dict[str, str] = {}
    with open_corpus(corpus, strict=strict) as stream, LeakageAudit(max_examples=1) as audit:
        for entry in stream:
            if not isinstance(entry, BenchReaction):
                continue
            if strict:
                audit.add_reaction(entry)
            if entry.reaction_id in wanted:
                splits[entry.reaction_id] = entry.split
        for record in stream.overrides.values():
            if record.reaction_id in splits:
                splits[record.reaction_id] = _REJECTED
        if strict:
            error = strict_leakage_error(audit.result(), str(corpus))
            if error is not None:
                raise error
    if not check_sources:
        return None
    summary = _refuse(wanted, splits, loaded.rules_file)
    summary["templates"] = len(loaded.rules)
    return summary
