"""The forward benchmark run: corpus -> predictions (on any executor) -> rows -> report.

Rows are journaled as they finish (keyed by source line, tied to the run's configuration,
corpus and rule content), so an interrupted run resumes where it stopped; the final rows
file and report are written atomically at the end and the journal is removed. Rows come
back from the executor in input order, so output is byte-identical whatever the executor
or worker count, except ``elapsed_ms``/``latency_ms``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chemgauge.benchmarks.forward.aggregate import aggregate, breakdowns, by_split
from chemgauge.benchmarks.forward.batch import RulesSpec, remember_rules, rules_for
from chemgauge.benchmarks.forward.corpus import (
    CORPUS_SCHEMA_VERSION,
    BenchReaction,
    Corpus,
    load_corpus,
)
from chemgauge.benchmarks.forward.provenance import (
    base_provenance,
    dependency_versions,
    rows_reproducibility_sha256,
)
from chemgauge.benchmarks.forward.rows import (
    ROW_SCHEMA_VERSION,
    error_row,
    invalid_row,
    scored_row,
)
from chemgauge.benchmarks.forward.sources import LoadedRules, load_rules_for_source
from chemgauge.engines.forward import SCORE_SCHEME, ForwardConfig, predict_products_detailed
from chemgauge.engines.rules import EMBEDDED_RULES_VERSION, RULES_CONTENT_HASH_SCHEME
from chemgauge.errors import ConfigError, DataQualityError
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.provenance import sha256_json
from chemgauge.eval.records import ResumableJsonlWriter, atomic_write_bytes
from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION, TRAIN_MAX_BUCKET, VAL_MAX_BUCKET

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "BenchmarkConfig",
    "BenchmarkResult",
    "PredictChunk",
    "run_benchmark",
]

REPORT_SCHEMA_VERSION = 2
DEFAULT_CHUNK = 16
_MAX_PRODUCTS = ForwardConfig().max_products_per_application


@dataclass(frozen=True)
class BenchmarkConfig:
    """Everything that decides a benchmark's rows (the executor never does).

    Attributes:
        corpus: schema-1 JSONL corpus file.
        output_rows: rows file (always a file, never stdout).
        template_source: ``embedded``, ``file``, ``train-extracted`` or ``scorer-conditioned``.
        templates: rule file for ``file``/``train-extracted``.
        template_manifest: manifest for ``train-extracted``.
        max_results: engine pool cap (``None``: no cap, so absence is always confirmed).
        strict: data-quality issues are hard errors (see the CLI help for the exact list).
        restart: discard an earlier journal instead of resuming it.
    """

    corpus: Path
    output_rows: Path
    template_source: str = "embedded"
    templates: Path | None = None
    template_manifest: Path | None = None
    max_results: int | None = None
    strict: bool = False
    restart: bool = False

    def deterministic_config(self) -> dict[str, Any]:
        """What ``config_sha256`` covers (no paths: content is hashed separately)."""
        return {
            "template_source": self.template_source,
            "split_protocol_version": SPLIT_PROTOCOL_VERSION,
            "train_max_bucket": TRAIN_MAX_BUCKET,
            "val_max_bucket": VAL_MAX_BUCKET,
            "max_results": self.max_results,
            "max_products_per_application": _MAX_PRODUCTS,
            "score_scheme": SCORE_SCHEME,
            "row_schema_version": ROW_SCHEMA_VERSION,
        }


@dataclass(frozen=True)
class BenchmarkResult:
    """The report (a plain mapping) and where the rows went."""

    report: dict[str, Any]
    rows_path: Path
    rows: int
    resumed_rows: int


@dataclass(frozen=True, slots=True)
class PredictChunk:
    """Picklable chunk function: predict and score reactions; a failure becomes an error row."""

    rules: RulesSpec
    max_results: int | None = None

    def __call__(self, items: list[BenchReaction]) -> list[dict[str, Any]]:
        rules = rules_for(self.rules)
        config = ForwardConfig(max_results=self.max_results)
        rows = []
        for reaction in items:
            start = time.perf_counter()
            try:
                report = predict_products_detailed(reaction.reactants_original, rules, config)
            except Exception as exc:  # any engine failure is this row's error, not the run's
                elapsed = (time.perf_counter() - start) * 1000
                rows.append(error_row(reaction, f"{type(exc).__name__}: {exc}", round(elapsed, 3)))
                continue
            elapsed = (time.perf_counter() - start) * 1000
            rows.append(scored_row(reaction, report, elapsed))
        return rows


def _journal_path(output_rows: Path) -> Path:
    return output_rows.with_name(output_rows.name + ".journal")


def _check_output(path: Path) -> None:
    if str(path) in ("-", ""):
        raise ConfigError("--output-rows must be a file path; rows are never printed to stdout")
    if path.is_dir():
        raise ConfigError(f"--output-rows {path} is a directory; give a file path")


def _strict_row_check(row: dict[str, Any], corpus: Corpus) -> None:
    status = row["proposal_status"]
    if status in ("error", "capped_unknown"):
        detail = row["prediction_error"] or "the candidate pool was capped before absence"
        raise DataQualityError(
            f"--strict: proposal_status {status} ({detail})",
            path=corpus.path,
            line=row["source_line"],
            value=row["reaction_id"],
        )


def _provenance(
    config: BenchmarkConfig, corpus: Corpus, loaded: LoadedRules, config_sha256: str
) -> dict[str, Any]:
    return base_provenance(
        {
            "template_source": loaded.template_source,
            "rules_file_sha256": loaded.rules_file_sha256,
            "rules_content_sha256": loaded.rules.content_sha256,
            "rules_content_hash_scheme": RULES_CONTENT_HASH_SCHEME,
            "embedded_rules_version": (
                EMBEDDED_RULES_VERSION if loaded.template_source == "embedded" else None
            ),
            "template_manifest_sha256": loaded.manifest_sha256,
            "split_protocol_version": SPLIT_PROTOCOL_VERSION,
            "score_scheme": SCORE_SCHEME,
            "row_schema_version": ROW_SCHEMA_VERSION,
            "config_sha256": config_sha256,
            "corpus_sha256": corpus.sha256,
        }
    )


def _diagnostics(
    rows: Sequence[dict[str, Any]], overall: dict[str, Any], corpus: Corpus
) -> dict[str, Any]:
    """Report-wide totals, each transcribed from an already computed source."""
    return {
        # corpus_stats counters (exact; the warnings list itself is bounded)
        "warning_counts_by_code": {k: v for k, v in corpus.stats.counters().items() if v},
        # row-wise sums of the identically named row fields
        "template_application_errors": sum(r["application_error_count"] for r in rows),
        "template_application_warnings": sum(r["application_warning_count"] for r in rows),
        "graph_rules_skipped": sum(r["graph_rules_skipped"] for r in rows),
        "templates_attempted": sum(r["templates_attempted"] for r in rows),
        "templates_matched": sum(r["templates_matched"] for r in rows),
        # overall aggregate (the numerators of invalid_product_rate / no_op_rate)
        "invalid_outcomes_rejected": overall["invalid_outcomes_rejected"],
        "no_op_outcomes_rejected": overall["no_op_outcomes_rejected"],
        "raw_outcomes": overall["n_raw_outcomes"],
        "prediction_errors": overall["prediction_errors"],
        "capped_unknown": overall["capped_unknown"],
        "input_invalid_by_reason": dict(
            sorted(
                Counter(
                    r["input_invalid_reason"] for r in rows if r["input_status"] == "invalid"
                ).items()
            )
        ),
        # the whole rule set loads or the run stops: no partial parse rejections exist
        "template_parse_rejections_by_reason": {},
    }


def run_benchmark(
    config: BenchmarkConfig,
    executor: ExecutorConfig | None = None,
    progress: Callable[[int], None] | None = None,
) -> BenchmarkResult:
    """Run the benchmark, write the rows file, return the report (the caller writes it)."""
    started = time.perf_counter()
    _check_output(config.output_rows)
    corpus = load_corpus(config.corpus, strict=config.strict)
    loaded = load_rules_for_source(
        config.template_source, config.templates, config.template_manifest, corpus.sha256
    )
    config_sha256 = sha256_json(config.deterministic_config())
    provenance = _provenance(config, corpus, loaded, config_sha256)
    if config.strict and (
        provenance["source_tree_sha256"] is None or provenance["dependency_lock_sha256"] is None
    ):
        raise ConfigError("--strict: reproducibility provenance is incomplete (package hash)")

    remember_rules(loaded.rules)
    paths = () if loaded.rules_file is None else (loaded.rules_file,)
    spec = RulesSpec(paths, loaded.rules_file is None, loaded.rules.content_sha256)
    journal_key = sha256_json(
        {
            "config_sha256": config_sha256,
            "corpus_sha256": corpus.sha256,
            "rules_content_sha256": loaded.rules.content_sha256,
            "chemgauge_version": provenance["chemgauge_version"],
        }
    )
    journal = ResumableJsonlWriter(
        _journal_path(config.output_rows),
        config_sha256=journal_key,
        key_field="source_line",
        restart=config.restart,
    )
    resumed = len(journal.existing)
    reactions = corpus.reactions
    todo = [r for r in reactions if not journal.done(str(r.source_line))]
    if progress is not None and resumed:
        progress(len(reactions) - len(todo))
    runner = make_executor(executor or ExecutorConfig(kind="serial", jobs=1))
    engine_start = time.perf_counter()
    try:
        results = runner.map(PredictChunk(spec, config.max_results), todo)
        for reaction, result in zip(todo, results, strict=True):
            if isinstance(result, ItemFailure):
                row = error_row(reaction, f"{result.reason}: {result.detail}", None)
            else:
                row = result
            if config.strict:
                _strict_row_check(row, corpus)
            journal.write(row)
            if progress is not None:
                progress(1)
    finally:
        runner.close()
        journal.close()
    predict_wall = time.perf_counter() - engine_start

    rows: list[dict[str, Any]] = []
    for entry in corpus.entries:
        if isinstance(entry, BenchReaction):
            row = dict(journal.existing[str(entry.source_line)])
            if config.strict:
                _strict_row_check(row, corpus)
        else:
            row = invalid_row(entry)
        row["provenance"] = provenance
        rows.append(row)
    provenance["reproducibility_sha256"] = rows_reproducibility_sha256(rows)
    lines = [orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n" for row in rows]
    atomic_write_bytes(config.output_rows, b"".join(lines))
    _journal_path(config.output_rows).unlink(missing_ok=True)

    overall = aggregate(rows)
    engine_ms = sum(float(r["elapsed_ms"] or 0.0) for r in rows)
    total_ms = (time.perf_counter() - started) * 1000
    executor_config = runner.config
    report: dict[str, Any] = {
        "report_schema_version": REPORT_SCHEMA_VERSION,
        "benchmark": "chemgauge-forward",
        "corpus": {
            "path": str(config.corpus),
            "sha256": corpus.sha256,
            "schema_version": CORPUS_SCHEMA_VERSION,
            "stats": corpus.stats.to_dict(),
            "warnings": [w.to_dict() for w in corpus.stats.warnings],
            "warnings_truncated": sum(corpus.stats.counts.values()) > len(corpus.stats.warnings),
        },
        "config": {
            **config.deterministic_config(),
            "strict": config.strict,
            "templates_file": loaded.rules_file,
            "template_manifest_file": loaded.manifest_file,
        },
        "rules": {
            "rules_loaded": len(loaded.rules),
            "graph_rules_skipped": loaded.rules.graph_rules_skipped,
            "rules_content_sha256": loaded.rules.content_sha256,
            "rules_file_sha256": loaded.rules_file_sha256,
        },
        "environment": {"dependency_versions": dependency_versions()},
        "provenance": provenance,
        "overall": overall,
        "by_split": by_split(rows),
        "breakdowns": breakdowns(rows),
        "diagnostics": _diagnostics(rows, overall, corpus),
        # Timing and execution facts: excluded from every determinism guarantee.
        "elapsed_ms": {
            "total": round(total_ms, 3),
            "prediction_phase": round(predict_wall * 1000, 3),
            "engine_calls_sum": round(engine_ms, 3),
            "resumed_rows": resumed,
            "executor": executor_config.kind,
            "jobs": executor_config.workers(),
        },
    }
    return BenchmarkResult(report, config.output_rows, len(rows), resumed)
