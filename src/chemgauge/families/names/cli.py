"""``chemgauge names``: structure -> name -> OPSIN -> structure coverage (parses arguments;
the run is :func:`chemgauge.families.names.score_coverage`, the Python API's)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from chemgauge.cli.options import QUIET, Inputs, guarded
from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import print_summary, rate_cell, summary_table
from chemgauge.eval.outputs import Output
from chemgauge.families.names import (
    DEFAULT_MAX_OPSIN_ERRORS,
    CoverageConfig,
    check_opsin_errors,
    check_source,
    run_outputs,
    score_coverage,
)
from chemgauge.families.names.inputs import count_lines
from chemgauge.report.runs import ROWS_NAME

app = typer.Typer(help="Name round-trip coverage with the real OPSIN.", no_args_is_help=True)


_CLASSES = ("rt_valid", "confidently_wrong", "unparseable", "abstained", "unscorable")


def _rejected_note(stats: dict[str, Any]) -> str:
    rejected = int(stats.get("rejected", 0))
    reasons = stats.get("rejections_by_reason") or {}
    detail = ", ".join(f"{reason}: {count}" for reason, count in sorted(reasons.items()))
    lines = "input line" if rejected == 1 else "input lines"
    return f"{rejected} {lines} rejected" + (f" ({detail})" if detail else "")


def _print_summary(report: dict[str, Any], rows_file: str) -> None:
    """Every class per lens (each lens adds up to the total), the namer's rates, rejected
    lines, and where the complete lists of wrong rows and OPSIN errors are."""
    metrics = report["metrics"]
    rows, rates = [], []
    for lens, values in metrics["lenses"].items():
        counts = values["counts"]
        cells = [str(counts[c]) for c in (*_CLASSES, "opsin_error")]
        rows.append((lens, *cells, str(metrics["total"])))
        rate = values["of_emitted_rt"]
        low, high = rate["interval"]
        rates.append(f"{lens} {rate_cell(rate['value'], low, high)}")
    notes = [
        "round-trip valid / names emitted (95% Wilson): " + ", ".join(rates),
        _rejected_note(metrics["input_stats"]),
    ]
    for lens, values in metrics["lenses"].items():
        reasons = values.get("unscorable_reasons") or {}
        if reasons:
            detail = ", ".join(f"{reason}: {count}" for reason, count in reasons.items())
            notes.append(f"unscorable under {lens} (never credited): {detail}")
    wrong = metrics.get("confidently_wrong_total", 0)
    if wrong:
        listed = len(metrics["confidently_wrong_rows"])
        notes.append(
            f"{wrong} {'row' if wrong == 1 else 'rows'} confidently wrong under a lens: "
            f"the report lists {listed}, {rows_file} holds all of them"
        )
    print_summary(
        summary_table(
            f"name round trip: {metrics['total']} structures",
            ("lens", *_CLASSES, "opsin_error", "total"),
            rows,
            caption=(
                f"{metrics['opsin_error']} OPSIN errors (timeout, crash on a well-formed name): "
                "inside every denominator, never credited"
            ),
        ),
        notes=notes,
    )


def _config(args: Mapping[str, Any]) -> CoverageConfig:
    """The run's config from the command's arguments (one place, for the guard and the run)."""
    return CoverageConfig(
        model=args["model"],
        namer_cmd=args["namer_cmd"],
        namer_timeout=args["namer_timeout"],
        molecule_timeout=args["molecule_timeout"],
        jobs=args["jobs"],
        radicals=args["radicals"],
        lenient_stereo=args["lenient_stereo"],
        abstain_marker=tuple(args["abstain_marker"]),
        pin_pct=args["pin_pct"],
        timeout=args["timeout"],
        strict=args["strict"],
        max_opsin_errors=args["max_opsin_errors"],
        restart=args["restart"],
        reference_lenses=args["reference_lenses"],
    )


def _coverage_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    check_source(args["input_path"], args["smiles_file"], _config(args))
    return run_outputs(args["out"]), [
        ("--input", args["input_path"]),
        ("--smiles", args["smiles_file"]),
    ]


@app.command("coverage")
@guarded(_coverage_files)
def coverage(
    input_path: Path | None = typer.Option(
        None, "--input", "-i", help="Pairs file (.tsv, .csv or .jsonl) with smiles and name."
    ),
    model: str | None = typer.Option(
        None,
        "--namer",
        "--model",
        "-m",
        help=(
            "Namer to score on --smiles (chemgauge list names: orthonym, openclatura, nispo, "
            "each installed by `chemgauge names namers install NAME`); --namer-cmd means "
            "command."
        ),
    ),
    namer_cmd: str | None = typer.Option(
        None,
        "--namer-cmd",
        help="The command namer's program: SMILES on stdin, one name a line on stdout.",
    ),
    smiles_file: Path | None = typer.Option(
        None, "--smiles", help="SMILES file for the namer to name."
    ),
    out: Path = typer.Option(
        Path("runs/names"), "--out", "-o", help="Run folder: rows.jsonl and report.json."
    ),
    jobs: int = typer.Option(
        2,
        "--jobs",
        "-j",
        help=(
            "OPSIN JVMs (the second and later start once 2,000 names were answered) and "
            "matching workers; results keep input order."
        ),
    ),
    radicals: bool = typer.Option(False, "--radicals", help="OPSIN -r: allow radicals."),
    lenient_stereo: bool = typer.Option(
        False, "--lenient-stereo", help="OPSIN -s: ignore uninterpretable stereo."
    ),
    abstain_marker: list[str] = typer.Option(
        [], "--abstain-marker", help="A namer output that means 'no name' (repeatable)."
    ),
    pin_pct: float | None = typer.Option(
        None, "--pin-pct", help="Curated gold-gate pass rate, carried verbatim."
    ),
    timeout: float = typer.Option(30.0, "--timeout", help="Seconds OPSIN may take per name."),
    namer_timeout: float = typer.Option(
        600.0, "--namer-timeout", help="Seconds the command namer may take for the batch."
    ),
    molecule_timeout: float = typer.Option(
        60.0,
        "--molecule-timeout",
        help="Seconds an open namer may take on one molecule (over it: that molecule's timeout).",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Any bad input line, or any OPSIN error, is a hard error."
    ),
    max_opsin_errors: float = typer.Option(
        DEFAULT_MAX_OPSIN_ERRORS,
        "--max-opsin-errors",
        help=(
            "Largest share of names OPSIN may fail on (timeout, crash, refusal) before the "
            "run exits non-zero; the rows and report are written either way."
        ),
    ),
    restart: bool = typer.Option(
        False, "--restart", help="Discard rows kept from an interrupted run instead of resuming."
    ),
    reference_lenses: bool = typer.Option(
        False,
        "--reference-lenses",
        help=(
            "Also score under reference_parity and reference_strict (orthonym.metrics."
            "coverage_metrics's matchers as written: a canonical-tautomer search per "
            "structure, most of a run's CPU) and list where parity and reference_parity differ."
        ),
    ),
    quiet: bool = QUIET,
) -> None:
    """Score a structure-to-name generator: a name counts only if OPSIN reads it back right."""
    config = _config(locals())
    source = input_path if input_path is not None else smiles_file
    lines = count_lines(source) if source is not None and source.is_file() else None
    with progress_bar("names", lines, quiet=quiet, min_total=2000) as bar:
        done = [0]  # input lines reported, so the bar ends full (resumed, rejected lines too)

        def advance(n: int) -> None:
            done[0] += n
            bar(n)

        report = score_coverage(
            input=input_path,
            smiles=smiles_file,
            out=out,
            config=config,
            progress=advance,
            notice=None if quiet else lambda text: typer.echo(text, err=True),
        )
        bar(max(0, (lines or 0) - done[0]))
    if not quiet:
        _print_summary(report, ROWS_NAME)
    check_opsin_errors(report, ROWS_NAME, config, lambda text: typer.echo(text, err=True))


namers_app = typer.Typer(
    help="The open structure-to-name generators, each in a virtual environment of its own.",
    no_args_is_help=True,
)
app.add_typer(namers_app, name="namers")


@namers_app.command("install")
def namers_install(
    names: list[str] = typer.Argument(..., help="orthonym, openclatura and/or nispo."),
    force: bool = typer.Option(False, "--force", help="Reinstall even if installed."),
) -> None:
    """Create (or reuse) each namer's environment under the cache (never chemgauge's)."""
    from chemgauge.families.names.namer_envs import install_env

    for name in names:
        env = install_env(name, force=force)
        typer.echo(f"{name} {env.spec.version}: {env.path} (env sha256 {env.sha256[:12]})")


@namers_app.command("list")
def namers_list() -> None:
    """The registered open namers and whether each is installed."""
    from chemgauge.errors import ConfigError
    from chemgauge.families.names.namer_envs import NAMER_SPECS, find_env

    for name, spec in NAMER_SPECS.items():
        try:
            where = str(find_env(name).path)
        except ConfigError:
            where = "not installed"
        typer.echo(f"{name}\t{spec.version}\t{where}")
