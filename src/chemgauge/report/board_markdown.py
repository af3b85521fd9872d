"""A leaderboard as Markdown, for pasting into papers and READMEs.

Per board: a line on what is ranked and how, the table (rank, run linked to its own report
page, system, value with interval, letter group, n, config hash, chemgauge version, date),
the notes (why a board stands apart, forced rankings), then one compact table per breakdown
dimension (each cell a bucket's value and its letters within that bucket); the runs left off
come last, each with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from chemgauge.report.board import Board, Leaderboard, Ranking
from chemgauge.report.board_json import interval_text, value_text
from chemgauge.report.entrants import relative_link, report_page
from chemgauge.report.formatting import md_cell
from chemgauge.report.standings import Standing

__all__ = ["ranking_caption", "render_board_markdown"]


def _cell(text: object) -> str:
    return md_cell(text)


def _count(standing: Standing, ranking: Ranking) -> str:
    if ranking.metric.kind == "mean":
        return f"{standing.value.n:,}"
    if standing.count is None or standing.total is None:
        return ""
    return f"{int(standing.count):,}/{int(standing.total):,}"


def ranking_caption(ranking: Ranking, runs: int) -> str:
    """How the values, intervals and letters of a ranking were obtained, in a sentence or two."""
    settings = ranking.standings.settings
    confidence = f"{100 * settings.confidence:g}%"
    bootstrap = f"{settings.resamples:,} resamples, seed {settings.seed}"
    intervals = {
        "hit": f"{confidence} Wilson intervals",
        "ratio": f"{confidence} Wilson intervals on each run's own denominator",
        "mean": f"{confidence} paired bootstrap intervals ({bootstrap})",
    }[ranking.metric.kind]
    if runs < 2:
        return f"{intervals}; one run, nothing to test."
    tests = (
        "exact McNemar tests on the items both runs take part in"
        if ranking.metric.kind == "hit"
        else f"paired bootstrap tests ({bootstrap})"
    )
    pairs = runs * (runs - 1) // 2
    return (
        f"{intervals}; {tests}, Holm-adjusted over the {pairs:,} pair{'s' if pairs != 1 else ''}. "
        f"Runs sharing a letter are not significantly different at alpha {settings.alpha:g}."
    )


def _board_table(
    board: Board, ranking: Ranking, base: Path, pages: Mapping[str, Path] | None
) -> list[str]:
    lines = [
        "| rank | run | system | "
        + _cell(ranking.metric.name)
        + " [CI] | group | n | config | chemgauge | date |",
        "|---:|---|---|---|:-:|---:|---|---|---|",
    ]
    for standing in ranking.standings.standings:
        entrant = board.entrants[standing.index]
        envelope = entrant.run.envelope
        link = relative_link(report_page(entrant, pages), base)
        value = value_text(standing.value, ranking.metric.kind)
        interval = interval_text(standing.value, ranking.metric.kind)
        cells = [
            "" if standing.rank is None else str(standing.rank),
            f"[{_cell(entrant.label)}]({quote(link, safe='/:')})",
            _cell(entrant.system),
            f"{value} {interval}".strip(),
            standing.letters,
            _count(standing, ranking),
            f"`{envelope.config_sha256[:8]}`",
            _cell(envelope.chemgauge_version),
            (envelope.created or "")[:10],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _breakdown_tables(board: Board, metric: str) -> list[str]:
    order = [s.index for s in board.rankings[0].standings.standings]
    for ranking in board.rankings:
        if ranking.metric.name == metric:
            order = [s.index for s in ranking.standings.standings]
    lines: list[str] = []
    dimensions: dict[str, list[tuple[str, Ranking]]] = {}
    for b in board.breakdowns:
        if b.ranking.metric.name == metric:
            dimensions.setdefault(b.dimension, []).append((b.bucket, b.ranking))
    for dimension, buckets in dimensions.items():
        lines += [
            "",
            f"By {_cell(dimension)} ({_cell(metric)}; letters compare runs within a bucket):",
            "",
            "| run | " + " | ".join(f"{_cell(b)} (n={r.items:,})" for b, r in buckets) + " |",
            "|---|" + "---|" * len(buckets),
        ]
        for index in order:
            cells = [_cell(board.entrants[index].label)]
            for _, ranking in buckets:
                standing = next(s for s in ranking.standings.standings if s.index == index)
                cells.append(
                    f"{value_text(standing.value, ranking.metric.kind)} {standing.letters}"
                )
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _board(board: Board, base: Path, pages: Mapping[str, Path] | None) -> list[str]:
    runs = len(board.entrants)
    lines = [
        f"## Board {board.number}: {board.family}, {runs} run{'s' if runs != 1 else ''} on "
        f"{board.items:,} items",
        "",
    ]
    lines += [f"> {_cell(note)}" for note in board.notes]
    if board.notes:
        lines.append("")
    for ranking in board.rankings:
        lines += [
            f"Ranked by `{ranking.metric.name}`: {_cell(ranking.metric.description)}.",
            "",
            *_board_table(board, ranking, base, pages),
            "",
            ranking_caption(ranking, runs),
        ]
        lines += _breakdown_tables(board, ranking.metric.name)
        lines.append("")
    return lines


def _refusals(leaderboard: Leaderboard) -> list[str]:
    if not leaderboard.refusals:
        return []
    lines = ["## Left off the board", ""]
    lines += [f"- {_cell(r.path)}: {_cell(r.reason)}" for r in leaderboard.refusals]
    return [*lines, ""]


def render_board_markdown(
    leaderboard: Leaderboard, base: Path, pages: Mapping[str, Path] | None = None
) -> str:
    """The Markdown page; links to run pages are relative to folder ``base``."""
    lines = ["# chemgauge board", ""]
    if not leaderboard.verified:
        lines += ["> Runs entered with --no-verify: their reports were not checked.", ""]
    for board in leaderboard.boards:
        lines += _board(board, base, pages)
    lines += _refusals(leaderboard)
    return "\n".join(lines).rstrip("\n") + "\n"
