"""Batch prediction on any executor: the rule set travels as a spec and loads once per worker.

Used by ``chemgauge forward enumerate`` (:mod:`~chemgauge.families.forward.enumeration`) and
by the benchmark runner. Chunk functions are
frozen dataclasses (picklable for process pools and Ray); each worker process keeps the rule
sets it loaded in a cache keyed by their content hash, and checks the hash on load so a rule
file edited mid-run is an error rather than a silent mix.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from chemgauge.errors import ChemgaugeError, ConfigError
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.families.forward.engine.predictor import (
    ForwardConfig,
    ForwardReport,
    predict_products_detailed,
)
from chemgauge.families.forward.engine.rules import RuleSet, load_rules

__all__ = [
    "EnumerateChunk",
    "EnumerateItem",
    "RulesSpec",
    "iter_enumerated",
    "remember_rules",
    "report_to_dict",
    "rules_for",
]

_WORKER_RULES: dict[str, RuleSet] = {}


@dataclass(frozen=True, slots=True)
class RulesSpec:
    """How a worker rebuilds a rule set: the embedded set and/or files, plus the content hash."""

    paths: tuple[str, ...]
    embedded: bool
    content_sha256: str

    @classmethod
    def of(cls, rules: RuleSet, paths: tuple[str, ...], embedded: bool) -> RulesSpec:
        """Spec of an already loaded rule set (and remember it for this process)."""
        remember_rules(rules)
        return cls(paths, embedded, rules.content_sha256)


def remember_rules(rules: RuleSet) -> None:
    """Seed this process's cache (forked workers inherit it)."""
    _WORKER_RULES[rules.content_sha256] = rules


def rules_for(spec: RulesSpec) -> RuleSet:
    """The rule set a spec names, loaded once per process and checked against its hash."""
    cached = _WORKER_RULES.get(spec.content_sha256)
    if cached is not None:
        return cached
    rules = load_rules(spec.paths, embedded=spec.embedded)
    if rules.content_sha256 != spec.content_sha256:
        raise ConfigError(f"rule files {spec.paths} changed during the run (content hash differs)")
    _WORKER_RULES[spec.content_sha256] = rules
    return rules


def report_to_dict(report: ForwardReport, *, issues: bool = True) -> dict[str, Any]:
    """A prediction report as plain JSON-ready data (candidates, stats, diagnostics)."""
    candidates = []
    for c in report.candidates:
        balance = c.balance
        candidates.append(
            {
                "rank": c.rank,
                "products": list(c.products),
                "smiles": c.smiles,
                "score": c.score,
                "template_ids": list(c.template_ids),
                "outcome_count": c.outcome_count,
                "balance": None
                if balance is None
                else {
                    "balanced": balance.balanced,
                    "missing": balance.missing_formula,
                    "extra": balance.extra_formula,
                    "charge_delta": balance.charge_delta,
                    "template_id": balance.template_id,
                },
            }
        )
    out: dict[str, Any] = {
        "reactants": list(report.reactants),
        "score_scheme": report.score_scheme,
        "rules_content_sha256": report.rules_content_sha256,
        "stats": {**report.stats.as_dict(), "pool_complete": report.stats.pool_complete},
        "candidates": candidates,
    }
    if issues:
        out["issues"] = [
            {"kind": i.kind, "template_id": i.template_id, "message": i.message}
            for i in report.issues
        ]
    return out


@dataclass(frozen=True, slots=True)
class EnumerateItem:
    """One input line: where it came from, its id (if any) and its reactant SMILES."""

    line: int
    item_id: str | None
    reactants: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EnumerateChunk:
    """Picklable chunk function: one output record per input line, errors included."""

    rules: RulesSpec
    max_results: int | None = None

    def __call__(self, items: list[EnumerateItem]) -> list[dict[str, Any]]:
        rules = rules_for(self.rules)
        config = ForwardConfig(max_results=self.max_results)
        out = []
        for item in items:
            record: dict[str, Any] = {"line": item.line, "id": item.item_id}
            start = time.perf_counter()
            try:
                report = predict_products_detailed(item.reactants, rules, config)
            except ChemgaugeError as exc:
                record.update(reactants=list(item.reactants), error=str(exc), candidates=[])
            else:
                record.update(report_to_dict(report, issues=False), error=None)
            record["elapsed_ms"] = round((time.perf_counter() - start) * 1000, 3)
            out.append(record)
        return out


def iter_enumerated(
    items: list[EnumerateItem],
    spec: RulesSpec,
    executor: ExecutorConfig,
    max_results: int | None = None,
) -> Generator[dict[str, Any], None, None]:
    """Records for every item, in input order; a crashed worker becomes an error record
    (closing the generator releases the workers)."""
    runner = make_executor(executor)
    try:
        results = runner.map(EnumerateChunk(spec, max_results), items)
        for item, result in zip(items, results, strict=True):
            if isinstance(result, ItemFailure):
                yield {
                    "line": item.line,
                    "id": item.item_id,
                    "reactants": list(item.reactants),
                    "error": f"{result.reason}: {result.detail}",
                    "candidates": [],
                    "elapsed_ms": None,
                }
            else:
                yield result
    finally:
        runner.close()
