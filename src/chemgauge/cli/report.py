"""``chemgauge report``, ``compare`` and ``verify``: look at runs, compare two, check one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from chemgauge.cli.options import QUIET, Inputs, guarded
from chemgauge.cli.summary import print_table
from chemgauge.eval.atomic import atomic_write_json, atomic_write_text
from chemgauge.eval.outputs import Output
from chemgauge.eval.stats import MAX_SEED

__all__ = ["compare", "register", "report", "verify"]

RUN_DIR = typer.Argument(
    None,
    help="Run folder holding report.json and rows.jsonl (or the report file itself).",
    show_default=False,
)
REPORT = typer.Option(None, "--report", help="Report JSON (default: RUN_DIR/report.json).")
ROWS = typer.Option(None, "--rows", help="Row file (default: RUN_DIR/rows.jsonl).")
FAMILY = typer.Option(
    None, "--family", help="Benchmark family, for a report that does not name its own."
)


# Files a run folder's readers may open (an output must never be one of them).
_RUN_FILES = ("report.json", "rows.jsonl", "scored.jsonl")


def run_inputs(label: str, run: Path | None) -> list[tuple[str, Path | None]]:
    """A run folder (or report file) as guarded inputs: itself and the run files in it."""
    if run is None:
        return []
    return [(label, run), *((f"{label} ({name})", run / name) for name in _RUN_FILES)]


#: What ``compare --out DIR`` writes there.
COMPARE_FILES = ("compare.json", "compare.html")


def _report_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    outputs = [Output("--out", args["out"])] if args.get("out") else []
    inputs = run_inputs("RUN_DIR", args["run_dir"])
    inputs += [("--report", args["report_path"]), ("--rows", args["rows_path"])]
    return outputs, inputs


def _compare_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    outputs = [Output("--out", args["out"], files=COMPARE_FILES)] if args.get("out") else []
    return outputs, run_inputs("RUN_A", args["run_a"]) + run_inputs("RUN_B", args["run_b"])


def _console(err: bool = False) -> Console:
    return Console(stderr=err, highlight=False)


@guarded(_report_files)
def report(
    run_dir: Path | None = RUN_DIR,
    report_path: Path | None = REPORT,
    rows_path: Path | None = ROWS,
    family: str | None = FAMILY,
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write the run's self-contained HTML report to this file."
    ),
    max_failures: int = typer.Option(
        24, "--max-failures", min=0, help="Failure cases drawn per section in the HTML."
    ),
    quiet: bool = QUIET,
) -> None:
    """Headline numbers with intervals for one run, and an HTML report with plots and drawings."""
    from chemgauge.report.formatting import fmt_count, fmt_rate
    from chemgauge.report.loading import load_run
    from chemgauge.report.registry import get_adapter
    from chemgauge.report.verify import verify_run

    run = load_run(run_dir, report_path=report_path, rows_path=rows_path, family=family)
    run.require_clean_rows()
    adapter = get_adapter(run.family)
    verification = verify_run(run)
    if not verification.ok:
        _console(err=True).print(
            f"warning: {run.report_path} disagrees with its rows in "
            f"{len(verification.differences)} places (numbers shown are recomputed from rows; "
            "run `chemgauge verify` for details)",
            style="yellow",
        )
    if out is not None:
        from chemgauge.report.html import render_run_html

        page = render_run_html(run, adapter, verification, max_failures=max_failures)
        atomic_write_text(out, page)
    if not quiet:
        table = Table(title=escape(f"{run.family}: {run.label} ({len(run.rows)} rows)"))
        table.add_column("metric")
        table.add_column("value [95% CI]", justify="right")
        table.add_column("count", justify="right")
        for rate in adapter.headline(run):
            table.add_row(escape(rate.label), escape(fmt_rate(rate)), fmt_count(rate))
        print_table(table)
        if out is not None:
            _console(err=True).print(f"wrote {out}", markup=False)


def _compare_table(result: dict[str, Any]) -> Table:
    from chemgauge.report.formatting import fmt_p, fmt_pct, fmt_signed_pct

    a, b = result["run_a"]["label"], result["run_b"]["label"]
    table = Table(
        title=escape(
            f"{result['family']}: A={a} vs B={b} on {result['items']['shared']} shared items"
        ),
        caption="A - B with a paired bootstrap 95% CI; exact McNemar p, Holm-adjusted over metrics",
    )
    for column in ("metric", "n", "A", "B", "A - B [95% CI]", "only A", "only B", "p", "Holm p"):
        is_metric = column == "metric"
        table.add_column(column, justify="left" if is_metric else "right", no_wrap=is_metric)
    for r in result["overall"]:
        d = r["difference"]
        low, high = d["interval"]
        table.add_row(
            escape(r["metric"]),
            str(r["n"]),
            fmt_pct(r["rate_a"]["value"]),
            fmt_pct(r["rate_b"]["value"]),
            escape(f"{fmt_signed_pct(d['value'])} [{fmt_signed_pct(low)}, {fmt_signed_pct(high)}]"),
            str(r["only_a"]),
            str(r["only_b"]),
            fmt_p(r["mcnemar_p"]),
            fmt_p(r["holm_p"]),
            style="bold" if r["holm_p"] <= 0.05 else None,
        )
    return table


@guarded(_compare_files)
def compare(
    run_a: Path = typer.Argument(..., help="Run folder A (or its report file)."),
    run_b: Path = typer.Argument(..., help="Run folder B (or its report file)."),
    force: bool = typer.Option(
        False, "--force", help="Compare shared items even if corpus or split protocol differ."
    ),
    seed: int = typer.Option(
        0, "--seed", min=0, max=MAX_SEED, help="Seed of the paired bootstrap (recorded)."
    ),
    resamples: int = typer.Option(
        2000, "--resamples", help="Bootstrap resamples (100 to 1,000,000)."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Write the comparison into this folder: compare.json and compare.html.",
    ),
    max_items: int = typer.Option(
        12, "--max-items", min=0, help="Discordant items drawn per list in the HTML."
    ),
    quiet: bool = QUIET,
) -> None:
    """Paired comparison of two runs on the same items: McNemar, bootstrap CI, Holm."""
    from chemgauge.report.compare import compare_runs
    from chemgauge.report.loading import load_run
    from chemgauge.report.registry import get_adapter

    a, b = load_run(run_a), load_run(run_b)
    result = compare_runs(a, b, force=force, seed=seed, resamples=resamples)
    if out is not None:
        from chemgauge.report.html import render_compare_html

        atomic_write_json(out / COMPARE_FILES[0], result)
        page = render_compare_html(result, get_adapter(a.family), a, b, max_items=max_items)
        atomic_write_text(out / COMPARE_FILES[1], page)
    for warning in result["warnings"]:
        _console(err=True).print(f"warning: {warning}", style="yellow", markup=False)
    if not result["protocol"]["match"]:
        _console(err=True).print(
            "warning: --force: the runs differ in corpus or protocol; only shared items compared",
            style="yellow",
        )
    if not quiet:
        print_table(_compare_table(result))


@guarded(_report_files)
def verify(
    run_dir: Path | None = RUN_DIR,
    report_path: Path | None = REPORT,
    rows_path: Path | None = ROWS,
    family: str | None = FAMILY,
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write the verification as JSON to this file."
    ),
    show: int = typer.Option(20, "--show", min=0, help="Differences printed (the first ones)."),
    no_inputs: bool = typer.Option(
        False, "--no-inputs", help="Do not look for the recorded input files (no exit 3)."
    ),
    quiet: bool = QUIET,
) -> None:
    """Recompute every aggregate, the counts, the row hash and the config hash, check the
    recorded input files and the family's cross-checks.

    Exit 0: verified. 1: the report disagrees with its rows, its inputs or itself. 2: usage
    error (or no readable run). 3: nothing disagrees, but a recorded input file was not
    found, as given or beside the report (pass --no-inputs to check the rest only).
    """
    from chemgauge.report.loading import load_run
    from chemgauge.report.verify import verify_run

    run = load_run(run_dir, report_path=report_path, rows_path=rows_path, family=family)
    result = verify_run(run, check_inputs=not no_inputs)
    if out is not None:
        atomic_write_json(out, result.to_dict())
    console = _console()
    if not quiet:
        for check in result.checks:
            mark = {True: "ok  ", False: "FAIL", None: "skip"}[check.ok]
            console.print(f"{mark} {check.name}: {check.detail}", soft_wrap=True, markup=False)
    if result.exit_code == 3:
        _console(err=True).print(
            f"{run.report_path}: recorded inputs not found ({', '.join(result.missing_inputs)}); "
            "everything else verified (pass --no-inputs to skip the input check)",
            style="yellow",
            soft_wrap=True,
            markup=False,
        )
        raise typer.Exit(3)
    if result.ok:
        if not quiet:
            console.print(f"verified: {run.report_path} matches {run.rows_path}", markup=False)
        return
    err = _console(err=True)
    err.print(
        f"{run.report_path}: disagrees in {len(result.differences)} places; first ones:",
        style="red",
    )
    for difference in result.differences[:show]:
        err.print(f"  {difference.describe()}", soft_wrap=True, markup=False)
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the three commands at the top level of the ``chemgauge`` app."""
    app.command("report")(report)
    app.command("compare")(compare)
    app.command("verify")(verify)
