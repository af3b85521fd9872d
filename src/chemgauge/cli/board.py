"""``chemgauge board``: many runs, ranked per family and item set with honest statistics."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from chemgauge.cli.options import QUIET, Inputs, guarded
from chemgauge.cli.report import run_inputs
from chemgauge.cli.summary import print_table
from chemgauge.errors import ConfigError
from chemgauge.eval.outputs import Output
from chemgauge.eval.stats import MAX_SEED
from chemgauge.report.formatting import md_cell

if TYPE_CHECKING:
    from chemgauge.report.board import Leaderboard

__all__ = ["board"]


def _print(leaderboard: Leaderboard) -> None:
    from chemgauge.report.board_json import interval_text, value_text

    console = Console(highlight=False)
    for board in leaderboard.boards:
        for note in board.notes:
            if sys.stdout.isatty():
                console.print(f"note: {note}", style="yellow", markup=False, soft_wrap=True)
            else:
                sys.stdout.write(f"note: {md_cell(note)}\n")
        for ranking in board.rankings:
            table = Table(
                title=escape(
                    f"board {board.number}: {board.family}, {len(board.entrants)} runs on "
                    f"{board.items:,} items, by {ranking.metric.name}"
                ),
                caption=escape(
                    "letters: runs sharing one are not significantly different "
                    f"(Holm over all pairs, alpha {ranking.standings.settings.alpha:g})"
                ),
            )
            for column in ("rank", "run", "system", "value [95% CI]", "group", "n"):
                left = column in ("run", "system")
                table.add_column(column, justify="left" if left else "right")
            for standing in ranking.standings.standings:
                entrant = board.entrants[standing.index]
                kind = ranking.metric.kind
                table.add_row(
                    "" if standing.rank is None else str(standing.rank),
                    escape(entrant.label),
                    escape(entrant.system),
                    escape(
                        f"{value_text(standing.value, kind)} {interval_text(standing.value, kind)}"
                    ),
                    standing.letters,
                    f"{standing.value.n:,}"
                    if kind == "mean" or standing.count is None
                    else f"{int(standing.count):,}/{standing.value.n:,}",
                )
            print_table(table)


#: What ``board --out DIR`` writes there (run pages go to ``DIR/runs/`` with --run-pages).
BOARD_FILES = ("board.html", "board.md", "board.json")
RUN_PAGES = "runs"


def _board_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    outputs = [Output("--out", args["out"], files=BOARD_FILES)] if args.get("out") else []
    if args.get("run_pages") and args.get("out"):
        outputs.append(Output("--run-pages", args["out"] / RUN_PAGES, folder=True))
    inputs: list[tuple[str, Path | None]] = []
    for run in args["runs"]:
        inputs += run_inputs("RUN_OR_FOLDER", run)
    return outputs, inputs


@guarded(_board_files)
def board(
    runs: list[Path] = typer.Argument(
        ...,
        metavar="RUN_OR_FOLDER",
        help="Run folders, report files, or folders to search for run folders.",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Write the board into this folder: board.html, board.md and board.json.",
    ),
    metric: list[str] = typer.Option(
        [],
        "--metric",
        help="Metric to rank by (repeat for several); default: each family's headline "
        "(retro top-1, forward top1, names rt_valid[exact], ocsr exact[...], p2s hit[correct]).",
    ),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the letter groups."),
    seed: int = typer.Option(
        0, "--seed", min=0, max=MAX_SEED, help="Seed of the paired bootstrap (recorded)."
    ),
    resamples: int = typer.Option(2000, "--resamples", help="Bootstrap resamples."),
    force: bool = typer.Option(
        False, "--force", help="Rank runs over different items together, on the items shared."
    ),
    no_verify: bool = typer.Option(
        False, "--no-verify", help="Enter runs without checking them (said on the board)."
    ),
    breakdowns: bool = typer.Option(
        True, "--breakdowns/--no-breakdowns", help="Also board each breakdown bucket."
    ),
    run_pages: bool = typer.Option(
        False,
        "--run-pages",
        help="Also write each run's own HTML report into OUT/runs/ and link the board to it "
        "(default: link to report.html beside each run's report, else to its report).",
    ),
    quiet: bool = QUIET,
) -> None:
    """Rank many runs on one board per family and item set, with honest statistics.
    Each RUN is a run folder, a report file, or a folder searched for run folders. Runs are
    verified first: a run that fails `chemgauge verify` is left off, with its reason. Runs
    over different items (another data file, fold, limit or corpus) go to separate boards
    unless --force. For each board: every run's value with its 95% interval (Wilson for
    rates, a seeded paired bootstrap for MRR and nDCG), its rank, and letter groups from all
    pairwise tests on the shared items (exact McNemar for hits, paired bootstrap otherwise),
    Holm-adjusted over all pairs: runs sharing a letter are not significantly different.
    Then the same per bucket of each breakdown (reaction class, split, property...).
    """
    from chemgauge.cli.progress import progress_bar
    from chemgauge.eval.atomic import atomic_write_json, atomic_write_text
    from chemgauge.report.board import BoardConfig, build_leaderboard
    from chemgauge.report.board_html import render_board_html
    from chemgauge.report.board_json import leaderboard_to_dict
    from chemgauge.report.board_markdown import render_board_markdown
    from chemgauge.report.entrants import enter_runs, find_reports
    from chemgauge.report.standings import StatSettings

    if run_pages and out is None:
        raise ConfigError("--run-pages writes into OUT/runs/: give --out")
    outputs = [] if out is None else [out / name for name in BOARD_FILES]
    try:
        stats = StatSettings(alpha=alpha, seed=seed, resamples=resamples)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    config = BoardConfig(metrics=tuple(metric), stats=stats, force=force, breakdowns=breakdowns)
    reports = find_reports(runs)
    with progress_bar("reading and verifying runs", len(reports), quiet=quiet, min_total=2) as step:
        entry = enter_runs(reports, verify=not no_verify, progress=step)
    leaderboard = build_leaderboard(entry, config)
    pages = _write_run_pages(leaderboard, out / RUN_PAGES) if run_pages and out else None
    if out is not None:
        html, md, json_out = (out / name for name in BOARD_FILES)
        atomic_write_json(json_out, leaderboard_to_dict(leaderboard))
        atomic_write_text(md, render_board_markdown(leaderboard, out, pages))
        atomic_write_text(html, render_board_html(leaderboard, out, pages))
    err = Console(stderr=True, highlight=False)
    for refusal in leaderboard.refusals:
        err.print(
            f"left off: {refusal.path}: {refusal.reason}",
            style="yellow",
            markup=False,
            soft_wrap=True,
        )
    if not quiet:
        _print(leaderboard)
        for path in outputs:
            Console().print(f"wrote {path}", markup=False)
    if not leaderboard.boards:
        raise ConfigError("no run could be ranked (every run was left off; reasons above)")


def _write_run_pages(leaderboard: Leaderboard, folder: Path) -> dict[str, Path]:
    """Each run's own HTML report in ``folder`` (``<label>.html``), by label."""
    from chemgauge.eval.atomic import atomic_write_text
    from chemgauge.report.html import render_run_html
    from chemgauge.report.registry import get_adapter
    from chemgauge.report.verify import verify_run

    folder.mkdir(parents=True, exist_ok=True)
    pages: dict[str, Path] = {}
    for board_ in leaderboard.boards:
        for entrant in board_.entrants:
            run = entrant.run
            verification = entrant.verification or verify_run(run)
            page = folder / (entrant.label.replace("/", "__") + ".html")
            atomic_write_text(page, render_run_html(run, get_adapter(run.family), verification))
            pages[entrant.label] = page
    return pages
