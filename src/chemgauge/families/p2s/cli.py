"""``chemgauge p2s``: build, validate, run, score and claim property-grounded completion."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

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
from chemgauge.cli.summary import count_rate_cell, print_summary, rate_cell, summary_table
from chemgauge.errors import ConfigError
from chemgauge.eval.atomic import atomic_write_json
from chemgauge.eval.outputs import Output
from chemgauge.eval.stats import MAX_SEED
from chemgauge.families.p2s import CALCULATOR_SEED, combine
from chemgauge.families.p2s.audit import audit_dataset, format_audit
from chemgauge.families.p2s.build import MANIFEST, RECORDS, build_benchmark, load_secret
from chemgauge.families.p2s.claim import (
    claim_report,
    format_claim,
    prediction_paths,
    run_presentation,
)
from chemgauge.families.p2s.compute import PROPERTY_JOURNAL, ComputeExecution
from chemgauge.families.p2s.config import BuildConfig, ClaimConfig, RunConfig
from chemgauge.families.p2s.embedded import default_data
from chemgauge.families.p2s.engine.guard import DEFAULT_LIMITS, ComputeLimits
from chemgauge.families.p2s.release import SECRET_FILE, private_dir
from chemgauge.families.p2s.scoring import score_files
from chemgauge.families.p2s.spec import CONDITIONS
from chemgauge.families.p2s.taskfile import load_dataset
from chemgauge.families.p2s.validate import check_view

app = typer.Typer(
    help="Property-grounded masked completion: does a system use the property it is given?",
    no_args_is_help=True,
)


DATA_HELP = "Benchmark data folder (holds <property>/ folders; default: the embedded release)."


def _data(data: Path | None) -> Path:
    return default_data() if data is None else data


@app.command("tasks")
def tasks(
    data: Path | None = typer.Argument(None, help=DATA_HELP),
    chem: bool = typer.Option(True, "--chem/--no-chem", help="Also check candidates with RDKit."),
) -> None:
    """Load and validate every task file, then print the record counts."""
    dataset = load_dataset(_data(data))
    for directory, views in dataset.items():
        if chem:
            checked: set[tuple[str, tuple[str, ...]]] = set()
            for view in views.values():
                check_view(view, checked)
        counts = ", ".join(f"{c} {len(views[c].tasks)}" for c in CONDITIONS)
        typer.echo(f"{directory}: {counts}")
    total = sum(len(v.tasks) for views in dataset.values() for v in views.values())
    typer.echo(f"{len(dataset)} property directories, {total} task records, all valid")


def _audit_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    outputs = [] if args["out"] is None else [Output("--out", args["out"])]
    return outputs, [("DATA", args["data"])]


@app.command("audit")
@guarded(_audit_files)
def audit(
    data: Path | None = typer.Argument(None, help=DATA_HELP),
    alpha: float = typer.Option(0.05, "--alpha", help="Family-wise level of the Holm tests."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the audit JSON here."),
    as_json: bool = typer.Option(False, "--json", help="Print the audit JSON."),
    quiet: bool = QUIET,
) -> None:
    """Try to answer every view without its evidence (leaks and single-feature tells).

    Each answer-free strategy picks candidates from the task files alone; only then are the
    labels read. Exit 1 when a leak or a tell beats chance (Holm-adjusted p < alpha).
    """
    report = audit_dataset(_data(data), alpha)
    if out is not None:
        atomic_write_json(out, report)
    if as_json:
        typer.echo(json.dumps(report, sort_keys=True))
    if not quiet:
        print_summary(
            summary_table(
                f"p2s audit: {report['tests']} tests, Holm family-wise alpha {alpha}",
                ("view", "kind", "strategy", "answered", "accuracy", "chance", "p", "Holm p", ""),
                format_audit(report),
                labels=3,
            ),
            notes=("structure_only is the structural prior: it may beat chance, never a leak",),
        )
    if not as_json:
        verdict = "PASSED" if report["passed"] else "FAILED: " + "; ".join(report["failures"])
        typer.echo(f"audit {verdict}")
    if not report["passed"]:
        raise typer.Exit(1)


def _blind_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    return [Output("--out", args["out"], folder=True), Output("--key", args["key"])], [
        ("DATA", args["data"])
    ]


@app.command("blind")
@guarded(_blind_files)
def blind(
    data: Path | None = typer.Argument(None, help=DATA_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for <property>.jsonl streams."),
    key: Path = typer.Option(..., "--key", help="Private key file (never give it to a system)."),
    prop: list[str] = typer.Option([], "--property", "-p", help="Directory (repeat; default all)."),
) -> None:
    """Write blinded task streams (all views interleaved, opaque ids) for a system run
    outside chemgauge; score its answers with p2s score --blind-key."""
    from chemgauge.families.p2s.blindfile import write_blind

    counts = write_blind(_data(data), out, key, prop)
    for directory, n in counts.items():
        typer.echo(f"{directory}: {n} blinded tasks in {out / (directory + '.jsonl')}")


def _score_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    inputs = [("--data", args["data"]), ("--predictions", args["predictions"])]
    if args["out"] is None:
        return [], inputs
    return [Output("--out", args["out"], files=("rows.jsonl", "report.json"))], inputs


@app.command("score")
@guarded(_score_files)
def score(
    prop: str | None = typer.Option(None, "--property", help="Property directory, e.g. dipole."),
    condition: str | None = typer.Option(
        None, "--condition", help="correct, shuffled or counterfactual."
    ),
    predictions: Path | None = typer.Option(None, "--predictions", help="Prediction JSONL file."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Instead: a run folder; score every <property>/<condition>.jsonl in it into its "
        "rows.jsonl and report.json (for chemgauge report, verify and compare).",
    ),
    data: Path | None = typer.Option(None, "--data", help=DATA_HELP),
    blind_key: Path | None = typer.Option(
        None,
        "--blind-key",
        help="With --out and --predictions: the key of p2s blind; the predictions answer "
        "one directory's blinded stream (--property) and are mapped back into --out.",
    ),
    strict: bool = typer.Option(False, "--strict", help="Unattributable lines are errors."),
    as_json: bool = typer.Option(False, "--json", help="Print the counts (or report) as JSON."),
    quiet: bool = QUIET,
) -> None:
    """Score one prediction file against one property and view, or a whole run folder."""
    if blind_key is not None:
        if out is None or prop is None or predictions is None or condition is not None:
            raise ConfigError("--blind-key needs --out, --property and --predictions")
        from chemgauge.families.p2s.blindfile import split_predictions

        split = split_predictions(blind_key, {prop: predictions}, out)
        if split["unknown_lines"] and not quiet:
            typer.echo(f"{split['unknown_lines']} prediction lines not in the key (dropped)")
        predictions = None
        prop = None
    if out is not None:
        if prop or condition or predictions:
            raise ConfigError("give either --out or --property, --condition and --predictions")
        from chemgauge.families.p2s.report import write_run_report  # the run envelope

        written = write_run_report(_data(data), out, strict=strict)
        if as_json:
            typer.echo(json.dumps(written.report, sort_keys=True))
        elif not quiet:
            typer.echo(f"wrote {written.rows_path} and {written.report_path}")
        if not quiet and not as_json:
            _print_run_summary(written.report, str(out))
        return
    if prop is None or condition is None or predictions is None:
        raise ConfigError("give --property, --condition and --predictions (or --out FOLDER)")
    result = score_files(_data(data), prop, condition, predictions, strict=strict)
    typer.echo(json.dumps(result.to_dict(), sort_keys=True) if as_json else result.summary())
    if not quiet and not as_json:
        print_summary(
            summary_table(
                f"p2s score: {predictions}",
                ("view", "accuracy [95% CI]", "missing", "invalid", "out of range"),
                [
                    (
                        f"{result.directory}/{result.condition}",
                        count_rate_cell(result.hits, result.tasks),
                        str(result.count("missing")),
                        str(result.count("invalid")),
                        str(result.count("out_of_range")),
                    )
                ],
            )
        )


def _print_run_summary(report: dict[str, Any], label: str) -> None:
    """Accuracy per property and view, then the use claim where all three views were run."""
    properties = report["metrics"]["properties"]
    accuracy = []
    claims = []
    for directory, block in properties.items():
        for cond, view in block["views"].items():
            rate = view["accuracy"]
            statuses = view["statuses"]
            accuracy.append(
                (
                    directory,
                    cond,
                    f"{rate_cell(rate['value'], *rate['interval'])} ({rate['count']}/{rate['n']})",
                    "n/a" if view["chance"] is None else f"{100 * view['chance']:.1f}%",
                    str(statuses["missing"]),
                    str(statuses["invalid"]),
                    str(statuses["out_of_range"]),
                )
            )
        claim = block["claim"]
        if claim is not None:
            drop = claim["shuffle_drop"]
            flip = claim["counterfactual_flip"]
            claims.append(
                (
                    directory,
                    _difference_cell(drop["difference"]),
                    f"{drop['mcnemar']['p_value']:.3g}",
                    _difference_cell(flip["difference"]),
                    f"{flip['mcnemar']['p_value']:.3g}",
                    "YES" if claim["use_claim"] else "no",
                )
            )
    tables = [
        summary_table(
            f"p2s {label}: accuracy",
            (
                "property",
                "view",
                "accuracy [95% CI]",
                "chance",
                "missing",
                "invalid",
                "out of range",
            ),
            accuracy,
            labels=2,
        )
    ]
    if claims:
        tables.append(
            summary_table(
                "use claim (paired bootstrap 95% CI, exact McNemar p)",
                ("property", "shuffle drop", "p", "donor picks, cf - own", "p", "use claim"),
                claims,
            )
        )
    print_summary(*tables)


def _difference_cell(block: dict[str, Any]) -> str:
    """``+78.3 pp [+60.9, +91.3]`` from an Estimate."""

    def pp(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:+.1f}"

    low, high = block["interval"]
    return f"{pp(block['value'])} pp [{pp(low)}, {pp(high)}]"


def _claim_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    outputs = [] if args["out"] is None else [Output("--out", args["out"])]
    return outputs, [("--data", args["data"]), ("--run", args["run"])]


@app.command("claim")
@guarded(_claim_files)
def claim(
    prop: str = typer.Option(..., "--property", help="Property directory, e.g. dipole."),
    run: Path = typer.Option(..., "--run", help="A model's run folder (<run>/<property>/*.jsonl)."),
    data: Path | None = typer.Option(None, "--data", help=DATA_HELP),
    model: str | None = typer.Option(None, "--model", help="Model name shown (default: folder)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of both tests."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Bootstrap seed."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the JSON report here."),
) -> None:
    """Shuffle drop and counterfactual flip, with intervals and exact McNemar: the use claim."""
    config = ClaimConfig(alpha=alpha, seed=seed)
    report = claim_report(
        _data(data),
        prop,
        prediction_paths(run, prop),
        model=model or run.name,
        config=config,
        presentation=run_presentation(run),
    )
    if out is not None:
        atomic_write_json(out, report)
    typer.echo(format_claim(report))


PROVIDER_HELP = (
    "Property provider: xtb, mopac, nmr or table; repeat to combine (each property from the "
    "first that gives it, e.g. --provider xtb --provider mopac for 'electronic')."
)


def _execution(
    executor: str,
    jobs: int,
    ray_address: str | None,
    chunk_size: int | None,
    limits: ComputeLimits,
    restart: bool,
    ray_timeout: float,
) -> ComputeExecution:
    if ray_address is not None and executor != "ray":
        raise ConfigError("--ray-address needs --executor ray")
    config = executor_config(
        executor, jobs, ray_address, chunk_size, default_chunk=4, ray_timeout=ray_timeout
    )
    return ComputeExecution(executor=config, limits=limits, restart=restart)


def _build_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    private = args["private"] or private_dir(args["out"])
    written = Output("--out", args["out"], files=(MANIFEST,))
    hidden = Output("--private", private, files=(RECORDS, PROPERTY_JOURNAL, SECRET_FILE))
    return [written, hidden], [("SOURCES", args["sources"]), ("--table", args["table"])]


@app.command("build")
@guarded(_build_files)
def build(
    sources: Path = typer.Argument(..., help="SMILES file: SMILES and an optional name a line."),
    out: Path = typer.Option(Path("data"), "--out", "-o", help="Data folder to write."),
    prop: list[str] = typer.Option(..., "--property", "-p", help="Directory to build (repeat)."),
    provider: list[str] = typer.Option(["xtb"], "--provider", help=PROVIDER_HELP),
    table: Path | None = typer.Option(None, "--table", help="Property table for 'table'."),
    candidates: int = typer.Option(4, "--candidates", "-k", min=2, help="Candidates per task."),
    counterfactuals: int = typer.Option(2, "--counterfactuals", min=0, help="Per record, at most."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Seed of every hashed choice."),
    split: str | None = typer.Option(None, "--split", help="Keep one release: train/val/test."),
    max_records: int | None = typer.Option(
        None, "--max-records", min=0, help="Stop the selection after N records."
    ),
    records: int | None = typer.Option(
        None,
        "--records",
        min=1,
        help="Keep the first N records of each directory that have every view (exactly N "
        "when the sources allow).",
    ),
    draw_sources: bool = typer.Option(
        False,
        "--draw-sources",
        help="Each record's source drawn by the secret among its candidates (for sources "
        "from a public list, whose membership would name the answer).",
    ),
    private: Path | None = typer.Option(
        None,
        "--private",
        help="Folder for what never ships: build secret, answer-bearing build records, "
        "property journal (default: <out>.private).",
    ),
    secret_file: Path | None = typer.Option(
        None,
        "--secret-file",
        help="The build secret (donors, counterfactual ids, file orders); drawn and written "
        "there if absent (default: <private>/build_secret).",
    ),
    infrared: bool = typer.Option(False, "--infrared", help="xtb: numerical-Hessian IR."),
    raman: bool = typer.Option(False, "--raman", help="xtb: finite-field Raman activities."),
    max_heavy_atoms: int = typer.Option(
        DEFAULT_LIMITS.max_heavy_atoms or 0,
        "--max-heavy-atoms",
        help="Molecules with more heavy atoms are refused (counted as too_large); 0 = no limit.",
    ),
    time_limit: float = typer.Option(
        DEFAULT_LIMITS.time_limit or 0.0,
        "--time-limit",
        help="Seconds per molecule before its calculator is killed (counted as timeout); "
        "0 = no limit.",
    ),
    executor: str = EXECUTOR,
    jobs: int = JOBS,
    ray_address: str | None = RAY_ADDRESS,
    ray_timeout: float = RAY_TIMEOUT,
    chunk_size: int | None = CHUNK_SIZE,
    restart: bool = typer.Option(
        False, "--restart", help="Recompute every property (discard the build's journal)."
    ),
    strict: bool = typer.Option(False, "--strict", help="Stop at the first bad source line."),
    audit_alpha: float = typer.Option(
        0.05, "--audit-alpha", help="Refuse the release if a shortcut beats chance at this level."
    ),
    quiet: bool = QUIET,
) -> None:
    """Mask a group per source molecule and write correct, shuffled and counterfactual views.

    Each molecule's properties are journaled in the output folder as they are computed, so a
    build that was interrupted resumes where it stopped when run again (same files). Before
    writing, the release is audited (see p2s audit): a leak or a single-feature tell that
    beats chance stops the build and no view is written.
    """
    config = BuildConfig(
        audit_alpha=audit_alpha,
        directories=tuple(prop),
        candidates=candidates,
        counterfactuals_per_record=counterfactuals,
        seed=seed,
        split=split,
        max_records=max_records,
        records=records,
        draw_sources=draw_sources,
    )
    if max_heavy_atoms < 0 or time_limit < 0:
        raise ConfigError("--max-heavy-atoms and --time-limit must be >= 0 (0 = no limit)")
    limits = ComputeLimits(max_heavy_atoms=max_heavy_atoms or None, time_limit=time_limit or None)
    execution = _execution(executor, jobs, ray_address, chunk_size, limits, restart, ray_timeout)
    calculator = combine(provider, table, CALCULATOR_SEED, infrared, raman)
    with progress_bar("p2s build", None, quiet=quiet) as advance:
        result = build_benchmark(
            sources,
            out,
            calculator,
            config,
            strict=strict,
            progress=advance,
            execution=execution,
            private=private,
            secret=None if secret_file is None else load_secret(secret_file),
        )
    if not quiet:
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items()) if v)
        per = result.provider_seconds / max(1, result.provider_molecules)
        resumed = (
            f" ({result.resumed_molecules} from the journal)" if result.resumed_molecules else ""
        )
        print_summary(
            summary_table(
                f"p2s build: {result.records} records from {result.sources['accepted']} sources "
                f"({result.sources['rejected']} rejected)",
                ("property", *CONDITIONS),
                [
                    (directory, *(str(counts.get(c, 0)) for c in CONDITIONS))
                    for directory, counts in result.counts.items()
                ],
            ),
            notes=(
                f"skipped: {skipped or 'none'}; {result.provider_molecules} molecules"
                f"{resumed}, {per * 1000:.1f} ms each; written to {out}",
                f"audit passed: {result.audit['tests']} leak and tell tests, none beats chance "
                f"(Holm, alpha {config.audit_alpha})",
            ),
        )


def _run_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    inputs = [("DATA", args["data"]), ("--table", args["table"])]
    return [Output("--out", args["out"], folder=True)], inputs


@app.command("run")
@guarded(_run_files)
def run(
    data: Path | None = typer.Argument(None, help=DATA_HELP),
    model: str = typer.Option(
        ..., "--model", "-m", help="structure_only, random, property_oracle, chat."
    ),
    out: Path = typer.Option(Path("runs/p2s"), "--out", "-o", help="Run output folder."),
    prop: list[str] = typer.Option([], "--property", "-p", help="Directory (repeat; default all)."),
    condition: list[str] = typer.Option(
        [], "--condition", "-c", help="View (repeat; default all)."
    ),
    seed: int = typer.Option(
        0, "--seed", min=0, max=MAX_SEED, help="Seed for the random baseline."
    ),
    provider: list[str] = typer.Option(["xtb"], "--provider", help=PROVIDER_HELP),
    table: Path | None = typer.Option(None, "--table", help="Property table for 'table'."),
    infrared: bool = typer.Option(False, "--infrared", help="property_oracle, xtb: IR too."),
    raman: bool = typer.Option(False, "--raman", help="property_oracle, xtb: Raman too."),
    base_url: str | None = typer.Option(None, "--base-url", help="chat: OpenAI-compatible URL."),
    chat_model: str | None = typer.Option(None, "--chat-model", help="chat: model name to ask."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="chat: key variable."),
    omit_properties: bool = typer.Option(False, "--omit-properties", help="Structure-only input."),
    per_view: bool = typer.Option(
        False,
        "--per-view",
        help="Present each view's file in turn under its own ids (default: blind, every view "
        "of a directory interleaved under opaque ids, so the system cannot tell the view).",
    ),
    batch_size: int = typer.Option(16, "--batch-size", min=1, help="Tasks per model call."),
    restart: bool = typer.Option(False, "--restart", help="Discard journals and start over."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or summary."),
) -> None:
    """Run a system over the views and write prediction files (resumable)."""
    from chemgauge.families.p2s import run_system, total

    config = RunConfig(
        property=tuple(prop),
        condition=tuple(condition),
        seed=seed,
        provider=tuple(provider),
        table=table,
        infrared=infrared,
        raman=raman,
        base_url=base_url,
        chat_model=chat_model,
        api_key_env=api_key_env,
        omit_properties=omit_properties,
        batch_size=batch_size,
        restart=restart,
        per_view=per_view,
    )
    with progress_bar(
        f"p2s run ({model})", total(data, config), quiet=quiet, min_total=1
    ) as advance:
        manifest = run_system(data, model, out, config, progress=advance)
    if not quiet:
        typer.echo(f"wrote {manifest['folder']}: predictions, rows.jsonl and report.json")
        _print_run_summary(manifest["report"], model)
