"""``chemgauge forward``: the template forward engine and its benchmark (arguments only)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import typer
from rich.table import Table

from chemgauge.cli.options import (
    CHUNK_SIZE,
    EXECUTOR,
    JOBS,
    QUIET,
    RAY_ADDRESS,
    RAY_TIMEOUT,
    Inputs,
    executor_config,
    guarded,
)
from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import (
    count_rate_cell,
    print_summary,
    rate_cell,
    summary_table,
)
from chemgauge.eval.lines import check_input_file
from chemgauge.eval.outputs import Output
from chemgauge.eval.rejections import RejectionStats
from chemgauge.eval.stats import MAX_SEED
from chemgauge.families.forward import api
from chemgauge.families.forward.batch import report_to_dict
from chemgauge.families.forward.config import DEFAULT_OUT, REPORT_FILE, ROWS_FILE
from chemgauge.families.forward.engine.predictor import ForwardConfig, predict_products_detailed
from chemgauge.families.forward.engine.rules import load_rules
from chemgauge.families.forward.extraction import (
    MANIFEST_FILE,
    TEMPLATES_FILE,
    extract_split_templates,
)
from chemgauge.families.forward.uspto import write_uspto_corpus

app = typer.Typer(
    help="Template forward predictor (embedded rules) and the forward-prediction benchmark.",
    no_args_is_help=True,
)

TEMPLATES = typer.Option(
    None, "--templates", "-t", help="Extra rule file (JSONL); extends the embedded set."
)
MAX_RESULTS = typer.Option(None, "--max-results", "-n", help="Keep at most N candidates.")


def _outside_benchmark(
    corpus: Path | None,
    out: Path,
    model: str,
    options: dict[str, Any],
    *,
    as_json: bool,
    quiet: bool,
) -> None:
    """``forward benchmark`` of an outside system: every convention side by side."""
    report = api.benchmark(corpus, out, model=model, **options)
    if as_json:
        sys.stdout.buffer.write((out / REPORT_FILE).read_bytes())
        sys.stdout.flush()
        return
    if quiet:
        return
    conventions = report["metrics"]["conventions"]
    table = Table(title=f"forward {model}: headline {conventions['headline']}")
    for column in ("convention", "top-1", "top-5", "top-10", "MRR", "invalid", "duplicates"):
        table.add_column(column)
    for name, block in conventions["scores"].items():
        mark = " *" if name == conventions["headline"] else ""
        table.add_row(
            name + mark,
            _pct(block["top_k"]["1"]),
            _pct(block["top_k"]["5"]),
            _pct(block["top_k"]["10"]),
            f"{block['mrr']['value']:.3f}" if block["mrr"]["value"] is not None else "n/a",
            str(block["invalid_outputs"]),
            str(block["duplicate_outputs"]),
        )
    print_summary(table)


def _pct(block: dict[str, Any]) -> str:
    """A report rate as ``72.4% [65.1, 78.9]`` (``n/a`` over no items)."""
    low, high = block["interval"]
    return rate_cell(block["value"], low, high)


@app.command("predict")
def predict(
    reactants: list[str] = typer.Argument(..., help="Reactant SMILES (one or several)."),
    templates: list[Path] | None = TEMPLATES,
    max_results: int | None = MAX_RESULTS,
    report: bool = typer.Option(False, "--report", help="Print the full JSON with stats."),
) -> None:
    """Predict products of the reactants, ranked (score = templates that agree)."""
    rules = load_rules(templates or [], embedded=True)
    result = predict_products_detailed(reactants, rules, ForwardConfig(max_results=max_results))
    if report:
        typer.echo(orjson.dumps(report_to_dict(result), option=orjson.OPT_INDENT_2).decode())
        return
    if not result.candidates:
        typer.echo("no candidates", err=True)
    for c in result.candidates:
        balance = ""
        if c.balance is not None and not c.balance.balanced:
            missing = c.balance.missing_formula
            extra = c.balance.extra_formula
            balance = f"  missing {missing or '-'} extra {extra or '-'}"
        typer.echo(f"{c.rank}\t{c.smiles}\tscore={c.score}\t{','.join(c.template_ids)}{balance}")
    stats = result.stats
    typer.echo(
        f"{stats.rules_loaded} rules, {stats.templates_matched} matched, {stats.raw_outcomes} "
        f"outcomes ({stats.invalid_outcomes_rejected} invalid, {stats.no_op_outcomes_rejected} "
        f"no-op){', CAPPED' if stats.capped else ''}",
        err=True,
    )


@app.command("enumerate")
def enumerate_(
    input_path: Path = typer.Option(..., "--input", "-i", help="Reactants file: SMILES [id]."),
    out: Path = typer.Option(..., "--out", "-o", help="Candidates JSONL (written atomically)."),
    templates: list[Path] | None = TEMPLATES,
    max_results: int | None = MAX_RESULTS,
    strict: bool = typer.Option(False, "--strict", help="Stop at the first unreadable line."),
    executor: str = EXECUTOR,
    jobs: int = JOBS,
    ray_address: str | None = RAY_ADDRESS,
    ray_timeout: float = RAY_TIMEOUT,
    chunk_size: int | None = CHUNK_SIZE,
    quiet: bool = QUIET,
) -> None:
    """Predict candidates for every line (dot-separated reactants, optional id)."""

    def note(line: int, detail: str) -> None:
        typer.echo(f"{input_path}:{line}: {detail}", err=True)

    done = api.enumerate_candidates(
        input_path,
        out,
        templates=templates or (),
        max_results=max_results,
        strict=strict,
        executor=executor,
        jobs=jobs,
        ray_address=ray_address,
        ray_timeout=ray_timeout,
        chunk_size=chunk_size,
        progress=lambda total: progress_bar("forward enumerate", total, quiet=quiet, min_total=50),
        note=None if quiet else note,
    )
    if not quiet:
        n = done.reactions
        print_summary(
            summary_table(
                f"forward enumerate: {n} reactions, {done.with_errors} with errors",
                ("reactions", "with candidates [95% CI]", "with errors [95% CI]"),
                [
                    (
                        str(n),
                        count_rate_cell(done.with_candidates, n),
                        count_rate_cell(done.with_errors, n),
                    )
                ],
            ),
            notes=(f"candidates -> {out}",),
        )


def _extraction_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    written = Output("--out", args["out"], files=(TEMPLATES_FILE, MANIFEST_FILE))
    return [written], [("--corpus", args["corpus"])]


@app.command("extract-templates")
@guarded(_extraction_files)
def extract_templates(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus JSONL (mapped_reaction) or CSV."),
    split: str = typer.Option(..., "--split", help="train, val, test, or all (said so)."),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for templates.jsonl + manifest.json."
    ),
    strict: bool = typer.Option(False, "--strict", help="Corpus data issues are errors."),
    executor: str = EXECUTOR,
    jobs: int = JOBS,
    ray_address: str | None = RAY_ADDRESS,
    ray_timeout: float = RAY_TIMEOUT,
    chunk_size: int | None = CHUNK_SIZE,
    quiet: bool = QUIET,
) -> None:
    """Extract forward templates (rdchiral) from one leakage-safe split, with a manifest."""
    config = executor_config(
        executor, jobs, ray_address, chunk_size, default_chunk=32, ray_timeout=ray_timeout
    )
    run = extract_split_templates(corpus, split, out, config, strict=strict)
    if quiet:
        return
    summary = run.summary.to_dict()
    failures = ", ".join(f"{k} {v}" for k, v in summary["failures_by_reason"].items() if v)
    mismatched = run.manifest["reactions_with_mismatched_mapping"]
    if mismatched:
        first = run.manifest["mapping_mismatch_examples"][0]
        typer.echo(
            f"warning: {mismatched} reaction(s) excluded: mapped_reaction is not the row's own "
            f"reaction (first: {first['reaction_id']}, {first['detail']})",
            err=True,
        )
    typer.echo(
        f"{run.manifest['reactions_in_split']} reactions in split {split!r} "
        f"({run.manifest['reactions_without_mapping']} without mapping, {mismatched} with a "
        "mismatched mapping); "
        f"{summary['extracted']} extracted, {summary['failed']} failed ({failures or 'none'}); "
        f"{summary['distinct_templates']} distinct templates -> {run.templates_path}",
        err=True,
    )


def _uspto_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    return [Output("--out", args["out"])], [("CSV_FILES", path) for path in args["csv_files"]]


@app.command("corpus-from-uspto")
@guarded(_uspto_files)
def corpus_from_uspto(
    csv_files: list[Path] = typer.Argument(..., help="USPTO CSV files (id,class,rxn)."),
    out: Path = typer.Option(..., "--out", "-o", help="Corpus JSONL to write."),
    strict: bool = typer.Option(False, "--strict", help="Stop at the first unreadable line."),
    quiet: bool = QUIET,
) -> None:
    """Convert USPTO CSV layout into one schema-1 corpus (patent ids as group keys).

    A line that cannot be read (not UTF-8, bad quoting, wrong column count, not a reaction)
    is counted and listed on stderr (with -q only errors are printed), or with --strict
    stops the conversion.
    """
    for path in csv_files:
        check_input_file(path)
    stats = [RejectionStats(path=str(path), strict=strict) for path in csv_files]
    n = write_uspto_corpus(csv_files, out, stats)
    if quiet:
        return
    for tally in stats:
        for d in tally.diagnostics:
            typer.echo(f"{tally.path}:{d.line}: {d.reason}: {d.detail}", err=True)
    rejected = sum(tally.rejected for tally in stats)
    typer.echo(f"{n} records -> {out}; {rejected} lines rejected", err=True)


def _pairs_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    inputs: Inputs = [
        ("--input", args["input_csv"]),
        ("--src", args["src"]),
        ("--tgt", args["tgt"]),
    ]
    return [Output("--out", args["out"])], inputs


@app.command("corpus-from-pairs")
@guarded(_pairs_files)
def corpus_from_pairs(
    out: Path = typer.Option(..., "--out", "-o", help="Corpus JSONL to write."),
    input_csv: Path | None = typer.Option(
        None, "--input", help="input,target CSV (plain, .xz or .gz), e.g. USPTO-MIT test."
    ),
    src: Path | None = typer.Option(None, "--src", help="Tokenized reactants, one a line."),
    tgt: Path | None = typer.Option(None, "--tgt", help="Tokenized products, one a line."),
    quiet: bool = QUIET,
) -> None:
    """Convert src/tgt or input,target pairs into one schema-1 corpus.

    Consecutive lines that are one reaction (augmented spellings) become one record and are
    counted; reagents after '>' are left out, as the corpus schema asks.
    """
    from chemgauge.families.forward.pairs import write_pairs_corpus

    counts = write_pairs_corpus(out, input_csv=input_csv, src=src, tgt=tgt)
    if not quiet:
        c = counts
        typer.echo(
            f"{c.records} records -> {out}; {c.lines} lines, {c.merged} merged into an "
            f"earlier line's record, {c.reagents_left_out} with reagents left out",
            err=True,
        )


def _groups(metrics: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Summary rows in reading order: held-out rows first when train is in-sample."""
    splits = metrics["by_split"]
    if not metrics["headline"]["in_sample_splits"]:
        return [("overall", metrics["overall"]), *((f"split {k}", v) for k, v in splits.items())]
    return [
        ("held out (val + test)", metrics["held_out"]),
        ("split val", splits["val"]),
        ("split test", splits["test"]),
        ("split train", splits["train"]),
        ("overall (incl. in-sample rows)", metrics["overall"]),
    ]


def _mrr(block: dict[str, Any]) -> str:
    """An estimate as ``0.741 [0.643-0.838]`` (``n/a`` over no items)."""
    value, (low, high) = block["value"], block["interval"]
    if value is None:
        return "n/a"
    return f"{value:.3f} [{low:.3f}-{high:.3f}]"


def _summary_table(report: dict[str, Any]) -> Table:
    in_sample = bool(report["metrics"]["headline"]["in_sample_splits"])
    caption = "95% Wilson intervals (MRR: seeded bootstrap); e2e = over valid rows, a miss is 0"
    if in_sample:
        caption += (
            "; rows an applied template names as a source (or near-duplicates) are in-sample "
            "and left out of held out"
        )
    return summary_table(
        f"forward benchmark ({report['provenance']['template_source']} rules)",
        ("group", "rows", "valid", "coverage", "top-1 (e2e)", "top-10 (e2e)", "MRR (e2e)"),
        [
            (
                name,
                str(block["n_rows"]),
                str(block["n_valid"]),
                _pct(block["proposal_coverage"]),
                _pct(block["end_to_end"]["top1_hit_rate"]),
                _pct(block["end_to_end"]["top10_hit_rate"]),
                _mrr(block["end_to_end"]["mrr"]),
            )
            for name, block in _groups(report["metrics"])
        ],
        caption=caption,
    )


def _print_summary(report: dict[str, Any], rows_path: Path) -> None:
    metrics = report["metrics"]
    held = bool(metrics["headline"]["in_sample_splits"])
    cond = metrics["held_out" if held else "overall"]["conditional"]
    stereo = metrics["breakdowns"]["stereo_status"]
    reasons = metrics["breakdowns"]["failure_reason"]
    stats = metrics["corpus"]["stats"]
    counters = ", ".join(f"{k} {v}" for k, v in stats.items() if k not in ("lines_read",) and v)
    leakage = metrics["leakage"]
    shared = ", ".join(
        f"{kind.replace('_', ' ')} {leakage[kind]['shared_across_splits']}"
        for kind in ("reactant_sets", "products")
    )
    near = leakage["near_duplicates"]
    shared += "; near-duplicates (spectators removed, stereo ignored): " + ", ".join(
        f"{kind.replace('_', ' ')} {near[kind]['shared_across_splits']}"
        for kind in ("reactant_sets", "products")
    )
    print_summary(
        _summary_table(report),
        notes=(
            f"conditional on coverage{', held out' if held else ''} ({cond['n']} rows): top-1 "
            f"{_pct(cond['top1_hit_rate'])}, "
            f"top-10 {_pct(cond['top10_hit_rate'])}; stereo: "
            + ", ".join(f"{k} {v['n_rows']}" for k, v in stereo.items()),
            "failure_reason: " + ", ".join(f"{k} {v['n_rows']}" for k, v in reasons.items()),
            f"corpus: {counters}",
            f"leakage audit, shared across splits: {shared}",
            f"rows -> {rows_path}; reproducibility_sha256 "
            f"{report['reproducibility_sha256'][:16]}...",
        ),
    )


@app.command("benchmark")
def benchmark(
    corpus: Path | None = typer.Option(
        None, "--corpus", help="Schema-1 JSONL corpus (default: the bundled demo corpus)."
    ),
    out: Path = typer.Option(
        DEFAULT_OUT, "--out", "-o", help="Run folder: rows.jsonl and report.json inside."
    ),
    model: str = typer.Option(
        "templates", "--model", "-m", help="Forward system under test (chemgauge list forward)."
    ),
    template_source: str = typer.Option(
        "embedded",
        "--template-source",
        help="embedded | file | train-extracted | scorer-conditioned.",
    ),
    templates: Path | None = typer.Option(
        None, "--templates", help="Rule file for file / train-extracted (never merged)."
    ),
    template_manifest: Path | None = typer.Option(
        None, "--template-manifest", help="Manifest attesting train-extracted templates."
    ),
    max_results: int | None = typer.Option(
        None, "--max-results", min=1, help="Cap the pool (misses become capped_unknown)."
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help=(
            "Hard error on malformed JSON, wrong schema version, unparseable SMILES, empty "
            "reactants/products, conflicting group_key or reaction_id, a reactant set in two "
            "splits (exact or near-duplicate), a train-extracted template that fails "
            "recomputation, a prediction error, capped_unknown, or incomplete provenance. "
            "Never on a real miss."
        ),
    ),
    restart: bool = typer.Option(False, "--restart", help="Discard an earlier journal."),
    seed: int = typer.Option(
        0,
        "--seed",
        min=0,
        max=MAX_SEED,
        help="Seed of the MRR and nDCG@10 bootstrap intervals (recorded).",
    ),
    executor: str = EXECUTOR,
    jobs: int = JOBS,
    ray_address: str | None = RAY_ADDRESS,
    ray_timeout: float = RAY_TIMEOUT,
    chunk_size: int | None = CHUNK_SIZE,
    quiet: bool = QUIET,
    as_json: bool = typer.Option(
        False, "--json", help="Print the report (report.json) on stdout instead of the summary."
    ),
    predictions: Path | None = typer.Option(
        None,
        "--predictions",
        help="--model predictions: the outside model's outputs (.jsonl, .csv, or MT tgt).",
    ),
    src: Path | None = typer.Option(
        None, "--src", help="Molecular Transformer source file paired with --predictions."
    ),
    command: str | None = typer.Option(
        None, "--command", help="--model command: the program and its arguments (no shell)."
    ),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Reactions per command call."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds per command call."),
    allow_missing: bool = typer.Option(
        False, "--allow-missing", help="Reactions an outside system did not answer: no error."
    ),
    convention: str = typer.Option(
        "deduplicated", "--convention", help="Headline ranking: as_given | deduplicated | pooled."
    ),
    output_identity: str = typer.Option(
        "exact", "--output-identity", help="Outside outputs keyed by: exact | as_written."
    ),
) -> None:
    """Benchmark a forward system on a corpus: rows.jsonl and report.json to a run folder."""
    if model != "templates":
        _outside_benchmark(
            corpus,
            out,
            model,
            {
                "predictions": predictions,
                "src": src,
                "command": tuple(shlex.split(command)) if command else (),
                "batch_size": batch_size,
                "timeout": timeout,
                "allow_missing": allow_missing,
                "convention": convention,
                "output_identity": output_identity,
                "strict": strict,
                "seed": seed,
                "restart": restart,
                "chunk_size": chunk_size,
            },
            as_json=as_json,
            quiet=quiet,
        )
        return
    with progress_bar("forward benchmark", None, quiet=quiet) as advance:
        report = api.benchmark(
            corpus,
            out,
            model=model,
            template_source=template_source,
            templates=templates,
            template_manifest=template_manifest,
            max_results=max_results,
            strict=strict,
            restart=restart,
            seed=seed,
            executor=executor,
            jobs=jobs,
            ray_address=ray_address,
            ray_timeout=ray_timeout,
            chunk_size=chunk_size,
            progress=advance,
        )
    if as_json:
        sys.stdout.buffer.write((out / REPORT_FILE).read_bytes())
        sys.stdout.flush()
    if not quiet:
        for warning in report["metrics"]["leakage"]["warnings"]:
            typer.echo(f"warning: leakage: {warning}", err=True)
        for warning in report["metrics"]["headline"]["warnings"]:
            typer.echo(f"warning: in-sample: {warning}", err=True)
        sources = report["metrics"]["rules"]["template_sources"]
        if sources is not None and sources["templates_refused"]:
            first = sources["refused"][0]
            typer.echo(
                f"warning: templates: {sources['templates_refused']} of {sources['templates']} "
                f"refused by recomputation ({first['template_id']}: {first['reason']}, "
                f"{first['detail']}); the run applied the other {sources['templates_accepted']}",
                err=True,
            )
        if not as_json:
            _print_summary(report, out / ROWS_FILE)
