"""``chemgauge retro``: single-step retrosynthesis evaluation (parses arguments, nothing more)."""

from __future__ import annotations

from typing import Any

import typer

from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import print_summary, rate_cell, summary_table
from chemgauge.errors import ConfigError
from chemgauge.families.retro import RetroEvalConfig, RetroRun
from chemgauge.families.retro.data import find_fold_file, load_targets
from chemgauge.families.retro.divergences import agreement_note, run_warnings
from chemgauge.families.retro.engine.registry import retro_model_names
from chemgauge.families.retro.syntheseus_options import SYNTHESEUS_FOLDS, SYNTHESEUS_KEYS
from chemgauge.families.retro.train_cli import train
from chemgauge.families.retro.unscored import MAX_UNSCORED_SHARE

app = typer.Typer(
    help="Single-step retrosynthesis evaluation (syntheseus-compatible).",
    no_args_is_help=True,
)


_EPILOG = (
    "syntheseus eval-single-step keys work as key=value in syntheseus's spelling: "
    + "; ".join(f"{key} -> {meaning}" for key, meaning in SYNTHESEUS_KEYS.items())
    + f". More than {100 * MAX_UNSCORED_SHARE:.0f}% of targets unscored (missing from a "
    "predictions file, failed model calls) exits non-zero unless --allow-missing."
)


def _options(pairs: list[str] | None, flags: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"expected key=value, got {pair!r}")
        key = key.strip().lstrip("-").replace("-", "_")
        if key in options and options[key] != value:
            raise ConfigError(f"option {key!r} given twice ({options[key]!r} and {value!r})")
        options[key] = value
    for key, value in flags.items():
        if value is None:
            continue
        if key in options and str(options[key]) != str(value):
            raise ConfigError(
                f"option {key!r} given as key=value and as --flag with different values"
            )
        options[key] = value
    return options


@app.command("eval", epilog=_EPILOG)
def eval_(
    pairs: list[str] | None = typer.Argument(
        None, help="Options as key=value (chemgauge's or syntheseus's keys)."
    ),
    data_dir: str | None = typer.Option(
        None, help="Folder with *{train,val,test}.{jsonl,csv,smi}."
    ),
    model: str | None = typer.Option(
        None,
        "--model",
        "-m",
        help="The model under test: predictions, templates, syntheseus:<Class> (or the bare "
        "syntheseus class); model_class= means the same.",
    ),
    model_dir: str | None = typer.Option(None, help="Model folder (or predictions file)."),
    model_kwargs: str | None = typer.Option(None, help="Extra model arguments (JSON object)."),
    fold: str | None = typer.Option(
        None, help="train, val or test, or TRAIN, VALIDATION, TEST (default test)."
    ),
    num_top_results: int | None = typer.Option(
        None, help="Outputs requested per target (100, as syntheseus)."
    ),
    k: str | None = typer.Option(None, help="Top-k values, e.g. 1,3,5,10."),
    matchers: str | None = typer.Option(None, help="Identity policies (exact,stereo_ignored)."),
    conventions: str | None = typer.Option(
        None, help="syntheseus,raw_slots (default), syntheseus_keep_repeats."
    ),
    out: str | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Run folder (default runs/retro); syntheseus's results_dir= means the same.",
    ),
    limit: int | None = typer.Option(None, help="Evaluate the first N data lines only."),
    batch_size: int | None = typer.Option(None, help="Products per model call."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", help="Worker processes (0 = all)."),
    executor: str | None = typer.Option(None, help="serial, local or ray."),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: 'auto', 'local' (start one here) or HOST:PORT.",
    ),
    ray_timeout: float | None = typer.Option(
        None, "--ray-timeout", help="Seconds to wait for the Ray cluster (60)."
    ),
    round_trip: str | None = typer.Option(None, help="Forward model for round trips."),
    round_trip_max_rank: int | None = typer.Option(None, help="Proposals re-predicted (10)."),
    strict: bool | None = typer.Option(
        None,
        "--strict",
        help="Rejected lines, targets missing from a predictions file, failed model calls: errors.",
    ),
    allow_missing: bool | None = typer.Option(
        None,
        "--allow-missing",
        help=f"Exit 0 even with more than {100 * MAX_UNSCORED_SHARE:.0f}% of targets unscored.",
    ),
    allow_in_sample: bool | None = typer.Option(
        None,
        "--allow-in-sample",
        help="Run a model trained on the evaluated fold (same file or shared reactions).",
    ),
    restart: bool | None = typer.Option(None, "--restart", help="Discard an earlier journal."),
    quiet: bool | None = typer.Option(None, "--quiet", "-q", help="No progress or summary."),
) -> None:
    """Evaluate a retro model on one fold; writes journal.jsonl, rows.jsonl, report.json and
    syntheseus_results.json (syntheseus's result fields). Warns about every target it could
    not score."""
    flags = {
        "data_dir": data_dir,
        "model": model,
        "model_dir": model_dir,
        "model_kwargs": model_kwargs,
        "fold": fold,
        "num_top_results": num_top_results,
        "k": k,
        "matchers": matchers,
        "conventions": conventions,
        "out": out,
        "limit": limit,
        "batch_size": batch_size,
        "jobs": jobs,
        "executor": executor,
        "ray_address": ray_address,
        "ray_timeout": ray_timeout,
        "round_trip": round_trip,
        "round_trip_max_rank": round_trip_max_rank,
        "strict": strict,
        "allow_missing": allow_missing,
        "allow_in_sample": allow_in_sample,
        "restart": restart,
        "quiet": quiet,
    }
    from chemgauge.families.retro import run as run_eval

    config = RetroEvalConfig.from_options(_options(pairs, flags))
    data_file = find_fold_file(config.data_dir, config.fold)
    label = f"retro eval ({config.model_class})"
    with progress_bar(label, config.limit, quiet=config.quiet) as advance:
        run = run_eval(config, progress=advance)
    if not config.quiet:
        _print_summary(run, config, data_file.path.name)
    for line in [*run.unscored.warnings(), *run_warnings(run.report["metrics"])]:
        # printed under --quiet too: never a silent gap
        typer.secho(line, err=True, fg=typer.colors.YELLOW)
    run.unscored.check(allow_missing=config.allow_missing, out=str(run.out))


def _percent(block: dict[str, Any]) -> str:
    return "n/a" if block["value"] is None else f"{block['value'] * 100:.1f}%"


def _print_summary(run: RetroRun, config: RetroEvalConfig, data_name: str) -> None:
    metrics = run.report["metrics"]
    lines = metrics["data"]["lines"]
    # Compact: the smallest and largest k, and 5 and 10 between them; report.json has all.
    ks = [k for k in config.k if k in (config.k[0], config.k[-1], 5, 10)]
    rows = []
    for convention in metrics["conventions"]:
        for matcher in metrics["matchers"]:
            block = metrics["accuracy"][convention][matcher]
            tops = {rate["k"]: rate for rate in block["top_k"]}
            mrr = block["mrr"]["value"]
            rows.append(
                (
                    convention,
                    matcher,
                    str(block["n"]),
                    *(rate_cell(tops[k]["value"], *tops[k]["interval"]) for k in ks),
                    "n/a" if mrr is None else f"{mrr:.4f}",
                )
            )
    outputs = metrics["outputs"]
    agreement = agreement_note(metrics)
    print_summary(
        summary_table(
            f"retro eval: {data_name}, {metrics['data']['targets']} targets "
            f"({lines['rejected']} lines rejected), model {metrics['model']['name']}",
            ("convention", "matcher", "n", *(f"top-{k} [95% CI]" for k in ks), "MRR"),
            rows,
            labels=2,
        ),
        notes=(
            f"outputs: {outputs['total']} raw, invalid {_percent(outputs['invalid_rate'])}, "
            f"duplicates {_percent(outputs['duplicate_rate'])}; results in {run.out} "
            f"(syntheseus's fields: {metrics['syntheseus_results']['file']})",
            *([agreement] if agreement else []),
        ),
    )


app.command("train")(train)


@app.command("models")
def models() -> None:
    """List retro model names (built-ins and plugins)."""
    for name in retro_model_names():
        typer.echo(name)


@app.command("targets")
def targets(
    data_dir: str = typer.Argument(..., help="Folder with fold files."),
    fold: str = typer.Option("test", help="train, val or test (or TRAIN, VALIDATION, TEST)."),
    strict: bool = typer.Option(False, "--strict", help="Data issues are errors."),
) -> None:
    """Scan a data folder and report how many lines of a fold become targets."""
    fold = SYNTHESEUS_FOLDS.get(fold, fold)
    target_set = load_targets(find_fold_file(data_dir, fold), strict=strict)
    stats = target_set.stats.to_dict()
    typer.echo(
        f"{target_set.file.path.name} ({target_set.file.format}): {stats['accepted']} targets, "
        f"{stats['rejected']} rejected {stats['rejections_by_reason']}"
    )
