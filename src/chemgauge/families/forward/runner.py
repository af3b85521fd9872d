"""The forward benchmark run: corpus -> predictions (on any executor) -> rows -> report.

Everything streams, so peak memory tracks the chunk size, not the corpus: the corpus is read
line by line, reactions go to the executor as they are read, and every row (invalid inputs
included) is journaled as it finishes, in source-line order (executors return results in
input order). The journal is keyed by source line and tied to the run's configuration, corpus
and rule content, so an interrupted run resumes where it stopped. At the end the journal is
read twice: once for the reproducibility hash and the compact per-row numbers the aggregates
need (:class:`~chemgauge.families.forward.aggregate.RowFacts`), once to write the final
rows file atomically with that hash in every row; then the journal is removed. Output is
byte-identical whatever the executor or worker count, except ``elapsed_ms``/``latency_ms``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from chemgauge.errors import ConfigError, DataQualityError, JournalOrderError
from chemgauge.eval.atomic import atomic_write_rows
from chemgauge.eval.envelope import RunEnvelope
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.journal import ResumableJsonlWriter, iter_journal
from chemgauge.eval.provenance import sha256_file, sha256_json
from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION
from chemgauge.families.forward.batch import RulesSpec, rules_for
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.corpus import (
    CORPUS_SCHEMA_VERSION,
    BenchReaction,
    CorpusStream,
    InvalidRecord,
    open_corpus,
)
from chemgauge.families.forward.engine.predictor import (
    SCORE_SCHEME,
    ForwardConfig,
    predict_products_detailed,
)
from chemgauge.families.forward.engine.rules import (
    EMBEDDED_RULES_VERSION,
    RULES_CONTENT_HASH_SCHEME,
)
from chemgauge.families.forward.extraction import extract_split_templates
from chemgauge.families.forward.insample import InSampleEvidence, InSampleMarker, applied_source_ids
from chemgauge.families.forward.outside import OutsideSystem
from chemgauge.families.forward.outside_run import (
    OutsideChunk,
    outside_conventions,
    outside_loaded,
)
from chemgauge.families.forward.preflight import preflight
from chemgauge.families.forward.provenance import base_provenance, rows_reproducibility_sha256
from chemgauge.families.forward.report import (
    ForwardReport,
    check_metrics,
    forward_envelope,
)
from chemgauge.families.forward.rows import (
    ROW_SCHEMA_VERSION,
    error_row,
    invalid_row,
    scored_row,
)
from chemgauge.families.forward.sources import LoadedRules
from chemgauge.families.forward.summary import RowSummary
from chemgauge.families.forward.systems import SystemOptions, TemplatePredictor, build_system

#: Where ``train-extracted`` without files writes the templates it extracts (in the run folder).
IN_RUN_TEMPLATES = "templates"

__all__ = [
    "IN_RUN_TEMPLATES",
    "BenchmarkResult",
    "PredictChunk",
    "check_answered",
    "run_benchmark",
]


@dataclass(frozen=True)
class BenchmarkResult:
    """The report (a run envelope) and where the rows went."""

    envelope: RunEnvelope
    rows_path: Path
    rows: int
    resumed_rows: int

    @property
    def report(self) -> dict[str, Any]:
        """The report as a plain mapping (what ``report.json`` holds)."""
        return self.envelope.model_dump(mode="json")


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


def _check_output(config: BenchmarkConfig) -> None:
    if str(config.out) in ("-", ""):
        raise ConfigError("--out must be a folder; rows are never printed to stdout")
    if config.out.exists() and not config.out.is_dir():
        raise ConfigError(f"--out {config.out} is a file; give a folder")
    if config.rows_path.is_dir():
        raise ConfigError(f"--out {config.out}: {config.rows_path} is a directory")


def _strict_row_check(row: dict[str, Any], path: str) -> None:
    status = row["proposal_status"]
    if status in ("error", "capped_unknown"):
        detail = row["prediction_error"] or "the candidate pool was capped before absence"
        raise DataQualityError(
            f"--strict: proposal_status {status} ({detail})",
            path=path,
            line=row["source_line"],
            value=row["reaction_id"],
        )


def _provenance(loaded: LoadedRules, corpus_sha256: str, config_sha256: str) -> dict[str, Any]:
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
            "corpus_sha256": corpus_sha256,
        }
    )


def _metrics(
    corpus: CorpusStream,
    loaded: LoadedRules,
    template_sources: dict[str, Any] | None,
    config: BenchmarkConfig,
    results: dict[str, Any],
) -> dict[str, Any]:
    """The report's ``metrics``: the corpus and rule facts, the bootstrap, then the sections
    folded from the rows (``results``)."""
    stats = corpus.stats
    return {
        "corpus": {
            "schema_version": CORPUS_SCHEMA_VERSION,
            "stats": stats.to_dict(),
            "warnings": [w.to_dict() for w in stats.warnings],
            "warnings_truncated": sum(stats.counts.values()) > len(stats.warnings),
        },
        "rules": {
            "rules_loaded": len(loaded.rules),
            "graph_rules_skipped": loaded.rules.graph_rules_skipped,
            "rules_content_sha256": loaded.rules.content_sha256,
            "rules_file_sha256": loaded.rules_file_sha256,
            "template_sources": template_sources,
        },
        "bootstrap": config.bootstrap.to_dict(),
        **results,
    }


def _journal_in_order(path: Path) -> Iterator[dict[str, Any]]:
    """Journal rows in file order, which is source-line order for every run this runner
    writes; raises :class:`JournalOrderError` at the first row that breaks it."""
    last = -1
    for row in iter_journal(path):
        line = row["source_line"]
        if line <= last:
            raise JournalOrderError
        last = line
        yield row


def _journal_by_line(path: Path) -> Iterator[dict[str, Any]]:
    """Journal rows in source-line order whatever the file order (the last row of a line
    wins, as when resuming); holds one offset per row, only on this rare path."""
    offsets: dict[int, int] = {}
    with open(path, "rb") as handle:
        handle.readline()
        offset = handle.tell()
        for raw in handle:
            offsets[orjson.loads(raw)["source_line"]] = offset
            offset += len(raw)
        for line in sorted(offsets):
            handle.seek(offsets[line])
            yield orjson.loads(handle.readline())


@dataclass
class _Predicted:
    """What the prediction phase leaves for the final pass."""

    resumed: int
    wall_s: float
    executor: ExecutorConfig


def _predict_into_journal(
    corpus: CorpusStream,
    journal: ResumableJsonlWriter,
    chunk: Callable[[list[BenchReaction]], list[dict[str, Any]]],
    executor: ExecutorConfig,
    strict: bool,
    progress: Callable[[int], None] | None,
) -> _Predicted:
    """Stream the corpus through the executor; journal every row in source-line order.

    Valid reactions go to the executor; an invalid record waits in ``in_flight`` behind the
    reactions before it, so it is journaled exactly where it belongs. ``in_flight`` holds at
    most the executor's window of chunks: memory tracks the chunk size, not the corpus.
    """
    resumed = 0
    in_flight: deque[BenchReaction | InvalidRecord] = deque()

    def feed() -> Iterator[BenchReaction]:
        nonlocal resumed
        for entry in corpus:
            if journal.done(str(entry.source_line)):
                if isinstance(entry, BenchReaction):
                    resumed += 1
                    if progress is not None:
                        progress(1)
                continue
            in_flight.append(entry)
            if isinstance(entry, BenchReaction):
                yield entry

    def flush_invalid() -> None:
        while in_flight and isinstance(head := in_flight[0], InvalidRecord):
            in_flight.popleft()
            journal.write(invalid_row(head))

    runner = make_executor(executor)
    start = time.perf_counter()
    pending = feed()
    try:
        for result in runner.map(chunk, pending):
            flush_invalid()
            reaction = in_flight.popleft()
            if not isinstance(reaction, BenchReaction):  # the executor broke input order
                raise RuntimeError("executor results are out of step with the corpus")
            if isinstance(result, ItemFailure):
                row = error_row(reaction, f"{result.reason}: {result.detail}", None)
            else:
                row = result
            if strict:
                _strict_row_check(row, corpus.path)
            journal.write(row)
            if progress is not None:
                progress(1)
        if next(pending, None) is not None:
            raise RuntimeError("the executor stopped before the end of the corpus")
        flush_invalid()
    finally:
        runner.close()
        journal.close()
    if in_flight or not corpus.exhausted:
        raise RuntimeError("the corpus was not read to the end; no rows were written")
    return _Predicted(resumed, time.perf_counter() - start, runner.config)


def _extract_in_run(config: BenchmarkConfig) -> tuple[Path, Path] | None:
    """``train-extracted`` with neither file: extract from this corpus's own train split into
    the run folder (``templates/``) and use that; otherwise nothing."""
    if config.template_source != "train-extracted" or config.templates is not None:
        return None
    if config.template_manifest is not None:
        return None  # the missing --templates is the source loader's error to name
    run = extract_split_templates(
        config.corpus,
        "train",
        config.out / IN_RUN_TEMPLATES,
        config.execution(),
        strict=config.strict,
    )
    if not run.summary.templates:
        manifest = run.manifest
        raise ConfigError(
            f"--template-source train-extracted without --templates: no template could be "
            f"extracted from {config.corpus}'s train split ({manifest['reactions_in_split']} "
            f"reactions, {manifest['reactions_without_mapping']} without a mapped_reaction, "
            f"{manifest['reactions_with_mismatched_mapping']} whose mapped_reaction is not "
            "their own reaction)"
        )
    return run.templates_path, run.manifest_path


def run_benchmark(
    config: BenchmarkConfig, progress: Callable[[int], None] | None = None
) -> BenchmarkResult:
    """Run the benchmark, write the rows file, return the report (the caller writes it).

    Three streaming passes, none holding rows: predict (corpus -> executor -> journal, in
    source-line order), summarize (journal -> reproducibility hash, :class:`RowFacts` and
    report totals) and write (journal -> rows file with the hash in every row's provenance).
    """
    started = time.perf_counter()
    _check_output(config)
    # The system first: a misused template source is refused before the corpus is read.
    options = SystemOptions(
        template_source=config.template_source,
        templates=config.templates,
        template_manifest=config.template_manifest,
        max_results=config.max_results,
        corpus_sha256=sha256_file(config.corpus),
        predictions=config.predictions,
        src=config.src,
        command=config.command,
        batch_size=config.batch_size,
        timeout=config.timeout,
        strict=config.strict,
    )
    extracted_here = _extract_in_run(config)
    if extracted_here is not None:
        options = replace(options, templates=extracted_here[0], template_manifest=extracted_here[1])
    system = build_system(config.model, options)
    if isinstance(system, OutsideSystem):
        return _run_outside(config, system, progress, started)
    if not isinstance(system, TemplatePredictor):
        raise ConfigError(f"--model {config.model} is neither the template engine nor outside")
    # Whole-corpus checks (--strict, train-extracted templates recomputed) before any prediction.
    checked = preflight(
        config.corpus,
        system.loaded,
        strict=config.strict,
        executor=config.execution(),
        out_dir=config.out,
        extracted_here=extracted_here is not None,
    )
    system = replace(system, loaded=checked.loaded)
    template_sources = checked.template_sources
    corpus = open_corpus(config.corpus, strict=config.strict)
    try:
        chunk = PredictChunk(system.rules_spec(), system.max_results)
        return _run(
            config,
            corpus,
            system.loaded,
            chunk,
            config.execution(),
            template_sources,
            progress,
            started,
        )
    finally:
        corpus.close()


def _run_outside(
    config: BenchmarkConfig,
    system: OutsideSystem,
    progress: Callable[[int], None] | None,
    started: float,
) -> BenchmarkResult:
    """An outside system through the same run: journal, resume, rows, envelope. Its chunks
    run in this process (a predictions file or a command is already outside Python's GIL),
    in the run's chunk size."""
    corpus = open_corpus(config.corpus, strict=config.strict)
    try:
        loaded = outside_loaded(corpus.sha256)
        chunk = OutsideChunk(system, config.output_identity, config.convention)
        executor = replace(config.execution(), kind="serial")
        return _run(
            config, corpus, loaded, chunk, executor, None, progress, started, outside=system
        )
    finally:
        corpus.close()


def _run(
    config: BenchmarkConfig,
    corpus: CorpusStream,
    loaded: LoadedRules,
    chunk: Callable[[list[BenchReaction]], list[dict[str, Any]]],
    executor: ExecutorConfig,
    template_sources: dict[str, Any] | None,
    progress: Callable[[int], None] | None,
    started: float,
    outside: OutsideSystem | None = None,
) -> BenchmarkResult:
    if corpus.sha256 != loaded.corpus_sha256:
        raise ConfigError(f"{config.corpus} changed while the run started; run it again")
    config_sha256 = sha256_json(config.deterministic_config())
    provenance = _provenance(loaded, corpus.sha256, config_sha256)
    if outside is not None:
        provenance["outside_system"] = outside.describe()
    if config.strict and (
        provenance["source_tree_sha256"] is None or provenance["dependency_lock_sha256"] is None
    ):
        raise ConfigError("--strict: reproducibility provenance is incomplete (package hash)")

    journal_facts = {
        "config_sha256": config_sha256,
        "corpus_sha256": corpus.sha256,
        "rules_content_sha256": loaded.rules.content_sha256,
        "chemgauge_version": provenance["chemgauge_version"],
    }
    if outside is not None:  # another predictions file or command never resumes this one
        journal_facts["outside_system"] = outside.describe()
    journal_key = sha256_json(journal_facts)
    journal_file = config.journal_path
    journal = ResumableJsonlWriter(
        journal_file,
        config_sha256=journal_key,
        key_field="source_line",
        restart=config.restart,
        keep_rows=False,
    )
    predicted = _predict_into_journal(
        corpus, journal, chunk, executor, config.strict and outside is None, progress
    )

    marker: InSampleMarker | None = None

    def final_rows(read: Callable[[Path], Iterator[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
        for row in read(journal_file):
            record = corpus.overrides.get(row["source_line"])
            if record is not None:  # rejected in hindsight (a duplicate's conflicting key)
                row = invalid_row(record)
            elif config.strict and outside is None and row["input_status"] == "valid":
                _strict_row_check(row, corpus.path)
            if marker is not None:
                marker.mark(row)
            row["provenance"] = provenance
            yield row

    read: Callable[[Path], Iterator[dict[str, Any]]] = _journal_in_order
    evidence = InSampleEvidence(applied_source_ids(loaded.rules))
    try:
        for row in final_rows(read):
            evidence.add(row)
    except JournalOrderError:
        read, evidence = _journal_by_line, InSampleEvidence(evidence.source_ids)
        for row in final_rows(read):
            evidence.add(row)
    marker = evidence.marker()
    summary = RowSummary(config.bootstrap)
    try:
        digest = rows_reproducibility_sha256(summary.folded(final_rows(read)))
        results = summary.metrics(corpus.stats)
    finally:
        summary.close()
    totals = summary.totals
    if totals.rows != corpus.entries:
        raise RuntimeError(
            f"the journal holds {totals.rows} rows for {corpus.entries} corpus entries"
        )
    metrics = _metrics(corpus, loaded, template_sources, config, results)
    if outside is not None:
        metrics["conventions"] = outside_conventions(final_rows(read), config, outside)
    check_metrics(metrics)  # before the rows are written: no run ends with an off-schema report
    provenance["reproducibility_sha256"] = digest
    atomic_write_rows(config.rows_path, final_rows(read))
    journal_file.unlink(missing_ok=True)

    total_ms = (time.perf_counter() - started) * 1000
    executor_config = predicted.executor
    # Timing and execution facts: excluded from every determinism guarantee.
    timing = {
        "elapsed_ms": {
            "total": round(total_ms, 3),
            "prediction_phase": round(predicted.wall_s * 1000, 3),
            "engine_calls_sum": round(totals.engine_ms, 3),
        },
        "resumed_rows": predicted.resumed,
        "executor": executor_config.kind,
        "jobs": executor_config.workers(),
        "strict": config.strict,
    }
    envelope = forward_envelope(
        ForwardReport(config, corpus, loaded, provenance, digest, summary.counts),
        metrics,
        timing,
    )
    return BenchmarkResult(envelope, config.rows_path, totals.rows, predicted.resumed)


def check_answered(result: BenchmarkResult, config: BenchmarkConfig) -> None:
    """Unless ``allow_missing``: a reaction an outside system did not answer (missing from a
    predictions file, or in a crashed batch) is a :class:`DataQualityError`, raised after
    the rows and report are written (every one is a counted miss there)."""
    answers = result.report["metrics"].get("conventions", {}).get("answers")
    if not answers or config.allow_missing:
        return
    if answers["missing"] or answers["error"]:
        raise DataQualityError(
            f"{answers['missing']} reactions have no predictions and {answers['error']} "
            "failed in the system (rows and report written; every one is a miss); "
            "pass --allow-missing to accept",
            path=str(config.corpus),
        )
