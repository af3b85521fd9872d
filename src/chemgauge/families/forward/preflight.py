"""Checks that need the whole corpus, made in one pass before anything is predicted.

* ``--strict``: every corpus data-quality problem, and any reactant set that occurs in more
  than one split, exactly or as a near-duplicate (:mod:`~chemgauge.families.forward.leakage`),
  stops the run before a row is journaled (a journal left by a rejected corpus could never be
  resumed: fixing the corpus changes its hash).
* ``train-extracted``: the manifest and the rule file are the extractor's claims; this pass
  checks every template by recomputation. Each template must list the reactions it came from
  (``source_reaction_ids``); each of them must be a valid reaction of this corpus's train split
  (the split recomputed here, never read from the manifest) whose ``mapped_reaction`` is its
  own reaction (:mod:`~chemgauge.families.forward.mapping`); and extracting a template from at
  least one of them must give the template again, SMARTS for SMARTS. A template that fails is
  refused, named and counted by reason, and the run goes on with the others (written to
  ``verified_templates.jsonl`` in the run folder, the rule file the run then applies);
  ``--strict`` refuses the run instead, and so does a rule set with no template left.
  Templates this run extracted itself are checked for their sources only (they were derived
  here).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from chemgauge.errors import DataQualityError, TemplateProvenanceError
from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.eval.provenance import sha256_file
from chemgauge.families.forward.corpus import BenchReaction, open_corpus
from chemgauge.families.forward.engine.extraction import extract_each
from chemgauge.families.forward.engine.rules import Rule, load_rule_file
from chemgauge.families.forward.leakage import LeakageAudit, strict_leakage_error
from chemgauge.families.forward.mapping import mapping_mismatch
from chemgauge.families.forward.sources import LoadedRules

__all__ = [
    "REFUSAL_REASONS",
    "VERIFIED_TEMPLATES_FILE",
    "Preflight",
    "TemplateProvenanceError",
    "preflight",
]

VERIFIED_TEMPLATES_FILE = "verified_templates.jsonl"
REFUSAL_REASONS = (
    "no_source_reaction_ids",  # nothing to check it against
    "source_not_in_corpus",  # a named source is not a valid reaction of this corpus
    "source_rejected",  # a named source was rejected in hindsight (conflicting group keys)
    "source_not_train",  # a named source is in val or test
    "source_mapping_mismatch",  # a named source's mapped_reaction is not its own reaction
    "not_rederived",  # no named source gives this template when extracted again
)
MAX_REFUSED_LISTED = 20
_REJECTED = "rejected"


@dataclass(frozen=True)
class Preflight:
    """The rule set the run applies (refused templates removed) and the check's summary."""

    loaded: LoadedRules
    template_sources: dict[str, Any] | None


@dataclass(frozen=True)
class _Source:
    split: str
    mismatch: str | None
    mapped: str


def _source_problem(rule: Rule, sources: dict[str, _Source]) -> tuple[str, str] | None:
    """The first reason a template's sources fail, with its detail."""
    if not rule.source_reaction_ids:
        return REFUSAL_REASONS[0], "the template records no source_reaction_ids"
    for rid in rule.source_reaction_ids:
        found = sources.get(rid)
        if found is None:
            return REFUSAL_REASONS[1], f"{rid!r}, which is not a valid reaction of this corpus"
        if found.split == _REJECTED:
            return REFUSAL_REASONS[
                2
            ], f"{rid!r}, which is rejected in hindsight (conflicting group_key values)"
        if found.split != "train":
            return REFUSAL_REASONS[3], f"{rid!r}, which is in split {found.split!r}"
        if found.mismatch is not None:
            return REFUSAL_REASONS[
                4
            ], f"{rid!r}, whose mapped_reaction is not its own reaction ({found.mismatch})"
    return None


def _rederive(
    rules: list[Rule], sources: dict[str, _Source], executor: ExecutorConfig | None
) -> set[str]:
    """Ids of the templates that extracting one of their sources gives again: the first
    source of every template at once (on the executor), then the others of those left."""
    done: set[str] = set()
    pending = list(rules)
    attempt = 0
    while pending:
        tried = [(r, (r.source_reaction_ids or ())[attempt]) for r in pending]
        results = extract_each([sources[rid].mapped for _, rid in tried], executor)
        for (rule, _), result in zip(tried, results, strict=True):
            if result.smirks == rule.smirks:
                done.add(rule.template_id)
        attempt += 1
        pending = [
            r
            for r in pending
            if r.template_id not in done and attempt < len(r.source_reaction_ids or ())
        ]
    return done


def _read_sources(
    corpus: Path, wanted: set[str], *, strict: bool
) -> tuple[dict[str, _Source], DataQualityError | None]:
    """The split, mapping verdict and mapped text of every wanted reaction, and the strict
    leakage refusal (raised after the template checks, which name a more specific fault)."""
    sources: dict[str, _Source] = {}
    error = None
    with open_corpus(corpus, strict=strict) as stream, LeakageAudit(max_examples=1) as audit:
        for entry in stream:
            if not isinstance(entry, BenchReaction):
                continue
            if strict:
                audit.add_reaction(entry)
            if entry.reaction_id in wanted:
                sources[entry.reaction_id] = _Source(
                    entry.split, mapping_mismatch(entry), entry.mapped_reaction or ""
                )
        for record in stream.overrides.values():
            if record.reaction_id in sources:
                sources[record.reaction_id] = _Source(_REJECTED, None, "")
        if strict:
            error = strict_leakage_error(audit.result(), str(corpus))
    return sources, error


def _refusal_error(path: str | None, refused: list[dict[str, str]], total: int) -> str:
    first = refused[0]
    return (
        f"{path}: template {first['template_id']!r} is refused ({first['reason']}: "
        f"{first['detail']}); {len(refused)} of {total} template(s) fail the recomputed "
        "checks (every source a train reaction of this corpus whose mapped_reaction is its own "
        "reaction, and the template extracted again from one of them)"
    )


def _subset(loaded: LoadedRules, kept: set[str], out_dir: Path) -> LoadedRules:
    """The rule file with only the kept templates, written to the run folder and loaded."""
    assert loaded.rules_file is not None
    lines = []
    for raw in Path(loaded.rules_file).read_bytes().splitlines():
        if raw.strip() and orjson.loads(raw).get("template_id") in kept:
            lines.append(raw + b"\n")
    path = atomic_write_bytes(out_dir / VERIFIED_TEMPLATES_FILE, b"".join(lines))
    return replace(
        loaded,
        rules=load_rule_file(path),
        rules_file=str(path),
        rules_file_sha256=sha256_file(path),
    )


def _check_templates(
    corpus: Path,
    loaded: LoadedRules,
    *,
    strict: bool,
    executor: ExecutorConfig | None,
    extracted_here: bool,
) -> tuple[list[dict[str, str]], set[str], int, DataQualityError | None]:
    rules = list(loaded.rules)
    wanted = {rid for rule in rules for rid in rule.source_reaction_ids or ()}
    sources, leakage = _read_sources(corpus, wanted, strict=strict)
    refused: list[dict[str, str]] = []
    sound = []
    for rule in rules:
        problem = _source_problem(rule, sources)
        if problem is None:
            sound.append(rule)
        else:
            refused.append(
                {"template_id": rule.template_id, "reason": problem[0], "detail": problem[1]}
            )
    rederived = (
        {r.template_id for r in sound} if extracted_here else _rederive(sound, sources, executor)
    )
    for rule in sound:
        if rule.template_id not in rederived:
            refused.append(
                {
                    "template_id": rule.template_id,
                    "reason": REFUSAL_REASONS[5],
                    "detail": "extracting it again from its named sources gives another template",
                }
            )
    used = {
        rid
        for rule in sound
        if rule.template_id in rederived
        for rid in rule.source_reaction_ids or ()
    }
    return refused, rederived, len(used), leakage


def preflight(
    corpus: Path,
    loaded: LoadedRules,
    *,
    strict: bool,
    executor: ExecutorConfig | None = None,
    out_dir: Path | None = None,
    extracted_here: bool = False,
) -> Preflight:
    """Run the checks above (a pass only when one applies)."""
    if loaded.template_source != "train-extracted":
        if strict:
            _, leakage = _read_sources(corpus, set(), strict=True)
            if leakage is not None:
                raise leakage
        return Preflight(loaded, None)
    refused, kept, used, leakage = _check_templates(
        corpus, loaded, strict=strict, executor=executor, extracted_here=extracted_here
    )
    total = len(loaded.rules)
    if refused and (strict or not kept):
        why = "--strict: " if strict else "no template is left: "
        raise TemplateProvenanceError(why + _refusal_error(loaded.rules_file, refused, total))
    if leakage is not None:
        raise leakage
    summary: dict[str, Any] = {
        "verified": not refused,
        "method": "extracted_in_run" if extracted_here else "rederived",
        "source_reactions": used,
        "split": "train",
        "templates": total,
        "templates_accepted": len(kept),
        "templates_refused": len(refused),
        "refused_by_reason": dict(sorted(Counter(r["reason"] for r in refused).items())),
        "refused": refused[:MAX_REFUSED_LISTED],
        "checked_rules_file_sha256": loaded.rules_file_sha256,
    }
    if refused:
        if out_dir is None:
            raise TemplateProvenanceError(_refusal_error(loaded.rules_file, refused, total))
        loaded = _subset(loaded, kept, out_dir)
    return Preflight(loaded, summary)
