"""A leaderboard as one self-contained HTML page (no script, nothing external).

Per board and metric: the table (rank, run linked to its own report page, system, value with
interval, a forest plot of every interval on one axis, letter group, n), the pairwise
Holm-adjusted p-values as a heat map (runs in rank order; the p-value is written in each
cell, so the colour is never the only cue), the runs' identity (config hash, chemgauge
version, date, how the run was checked), then one table per breakdown dimension. The forest
plot is drawn with percentages of the column's width, so it scales with the page and no
label sits on the plot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from chemgauge.report.board import Board, Leaderboard, Ranking
from chemgauge.report.board_json import difference_text, interval_text, value_text
from chemgauge.report.board_markdown import ranking_caption
from chemgauge.report.entrants import relative_link, report_page
from chemgauge.report.formatting import fmt_p
from chemgauge.report.html import _e, _page
from chemgauge.report.standings import Kind, PairResult

__all__ = ["render_board_html"]

#: Breakdown buckets shown side by side in one table (more go to the next table).
BUCKETS_PER_TABLE = 6

_CSS = """
td.forest, th.forest { width: 28%; min-width: 240px; padding-left: 14px; padding-right: 14px; }
table.board th { white-space: normal; vertical-align: bottom; }
svg.ci, svg.axis { display: block; width: 100%; overflow: visible; }
svg.ci line.grid, svg.axis line { stroke: var(--line); stroke-width: 1; }
svg.ci line.bar { stroke: var(--accent); stroke-width: 2; }
svg.ci circle { fill: var(--accent); }
svg.axis text { font-size: 11px; fill: var(--muted); }
td.letters { font-family: ui-monospace, "DejaVu Sans Mono", monospace; text-align: center; }
td.system { white-space: normal; overflow-wrap: anywhere; min-width: 12em; max-width: 22em;
  text-align: left; }
td.run { text-align: left; white-space: normal; overflow-wrap: anywhere; min-width: 8em;
  max-width: 16em; }
table.heat { font-size: 0.8rem; }
table.heat td { text-align: center; min-width: 3.4em; padding: 4px 5px; }
table.heat th[scope="row"] { text-align: left; font-weight: normal; }
table.heat td.p0, .swatch.p0 { background: #08306b; color: #fff; }
table.heat td.p1, .swatch.p1 { background: #2171b5; color: #fff; }
table.heat td.p2, .swatch.p2 { background: #6baed6; color: #000; }
table.heat td.p3, .swatch.p3 { background: #c6dbef; color: #000; }
table.heat td.p4, .swatch.p4 { background: #f7fbff; color: #000; }
table.heat td.self { background: var(--panel); color: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 0.8rem; color: var(--muted); }
.legend span.swatch { display: inline-block; width: 1.2em; height: 0.9em; vertical-align: middle;
  border: 1px solid var(--line); margin-right: 4px; }
.bucket-cell .letters { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.bucket-cell .ci { display: block; font-size: 0.75rem; color: var(--muted); }
"""

#: Heat-map classes by Holm-adjusted p-value (upper bounds), darkest first.
_P_BINS = ((0.001, "p0", "p ≤ 0.001"), (0.01, "p1", "≤ 0.01"), (0.05, "p2", "≤ 0.05"))
_P_BINS_HIGH = ((0.2, "p3", "≤ 0.2"), (math.inf, "p4", "> 0.2"))


def _ticks(low: float, high: float) -> list[float]:
    """Evenly spaced round ticks covering [low, high], at most five of them."""
    power = 10.0 ** math.floor(math.log10((high - low) / 4))
    for multiple in (1, 2, 2.5, 5, 10, 20, 25, 50, 100):
        step = multiple * power
        start, stop = math.floor(low / step), math.ceil(high / step)
        if stop - start <= 4:
            return [i * step for i in range(start, stop + 1)]
    raise AssertionError("unreachable: a step of 100x a quarter of the span covers it")


def _axis(ranking: Ranking) -> tuple[float, float, list[float]]:
    """The plotted range (low, high) and its ticks: every interval inside, at most five ticks
    (their labels stay apart on the column's smallest width)."""
    points: list[float] = []
    for s in ranking.standings.standings:
        points += [v for v in (s.value.low, s.value.high, s.value.estimate) if v is not None]
    if not points:
        return 0.0, 1.0, [0.0, 0.5, 1.0]
    low, high = min(points), max(points)
    if high - low < 1e-9:
        low, high = low - 0.05, high + 0.05
    # Every step divides 1 (0.1, 0.2, 0.25, 0.5...), so a rate's ticks stay within 0..100%.
    ticks = _ticks(low, high)
    return ticks[0], ticks[-1], ticks


def _tick_text(value: float, kind: Kind) -> str:
    return f"{100 * value:g}%" if kind != "mean" else f"{value:g}"


def _at(value: float, low: float, high: float) -> str:
    return f"{100 * (value - low) / (high - low):.2f}%"


def _axis_svg(low: float, high: float, ticks: Sequence[float], kind: Kind) -> str:
    texts = []
    for i, tick in enumerate(ticks):
        anchor = "start" if i == 0 else ("end" if i == len(ticks) - 1 else "middle")
        texts.append(
            f'<text x="{_at(tick, low, high)}" y="12" text-anchor="{anchor}">'
            f"{_e(_tick_text(tick, kind))}</text>"
        )
    return f'<svg class="axis" height="16" role="img" aria-label="axis">{"".join(texts)}</svg>'


def _interval_svg(ranking: Ranking, index: int, axis: tuple[float, float, list[float]]) -> str:
    low, high, ticks = axis
    standing = ranking.standings.standings[index]
    value = standing.value
    kind = ranking.metric.kind
    grid = "".join(
        f'<line class="grid" x1="{_at(t, low, high)}" x2="{_at(t, low, high)}" y1="0" y2="18"/>'
        for t in ticks
    )
    marks = ""
    if value.low is not None and value.high is not None:
        marks += (
            f'<line class="bar" x1="{_at(value.low, low, high)}" '
            f'x2="{_at(value.high, low, high)}" y1="9" y2="9"/>'
        )
    if value.estimate is not None:
        marks += f'<circle cx="{_at(value.estimate, low, high)}" cy="9" r="4"/>'
    label = f"{value_text(value, kind)} {interval_text(value, kind)}".strip()
    return f'<svg class="ci" height="18" role="img" aria-label="{_e(label)}">{grid}{marks}</svg>'


def _count(ranking: Ranking, index: int) -> str:
    standing = ranking.standings.standings[index]
    if ranking.metric.kind == "mean":
        return f"{standing.value.n:,}"
    if standing.count is None or standing.total is None:
        return ""
    return f"{int(standing.count):,}/{int(standing.total):,}"


def _table(board: Board, ranking: Ranking, base: Path, pages: Mapping[str, Path] | None) -> str:
    kind = ranking.metric.kind
    axis = _axis(ranking)
    head = (
        '<th scope="col">rank</th><th scope="col" class="key">run</th>'
        '<th scope="col" class="key">system</th>'
        f'<th scope="col">{_e(ranking.metric.name)} [95% CI]</th>'
        f'<th scope="col" class="forest">{_axis_svg(*axis, kind)}</th>'
        '<th scope="col">group</th><th scope="col">n</th>'
    )
    rows = []
    for i, standing in enumerate(ranking.standings.standings):
        entrant = board.entrants[standing.index]
        link = relative_link(report_page(entrant, pages), base)
        value = f"{value_text(standing.value, kind)} {interval_text(standing.value, kind)}"
        rows.append(
            f"<tr><td>{'' if standing.rank is None else standing.rank}</td>"
            f'<td class="run"><a href="{_e(link)}">{_e(entrant.label)}</a></td>'
            f'<td class="system">{_e(entrant.system)}</td><td>{_e(value.strip())}</td>'
            f'<td class="forest">{_interval_svg(ranking, i, axis)}</td>'
            f'<td class="letters">{_e(standing.letters)}</td><td>{_count(ranking, i)}</td></tr>'
        )
    caption = ranking_caption(ranking, len(board.entrants))
    return (
        f'<div class="table-wrap"><table class="board"><thead><tr>{head}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table><p class="caption">{_e(caption)}</p></div>'
    )


def _p_short(p: float) -> str:
    """A p-value in at most six characters: ``<.001``, ``0.0078``, ``0.48``, ``1``."""
    if p < 0.001:
        return "<.001"
    return "1" if p >= 0.995 else f"{p:.2g}"


def _p_class(p: float) -> str:
    return next(name for bound, name, _ in (*_P_BINS, *_P_BINS_HIGH) if p <= bound)


def _heat_cell(board: Board, pair: PairResult, kind: Kind, alpha: float) -> str:
    a, b = board.entrants[pair.a].label, board.entrants[pair.b].label
    detail = f"{a} - {b}: {difference_text(pair.difference, kind)}; n {pair.n:,}"
    if pair.only_a is not None:
        detail += f"; only {a} {pair.only_a:,}, only {b} {pair.only_b:,}"
    detail += f"; raw p {fmt_p(pair.p_value)}; Holm p {fmt_p(pair.p_holm)}"
    text = _p_short(pair.p_holm) + ("*" if pair.significant(alpha) else "")
    bold = "<strong>{}</strong>" if pair.significant(alpha) else "{}"
    return f'<td class="{_p_class(pair.p_holm)}" title="{_e(detail)}">{bold.format(_e(text))}</td>'


def _heat_map(board: Board, ranking: Ranking) -> str:
    standings = ranking.standings
    order = [s.index for s in standings.standings]
    if len(order) < 2:
        return ""
    alpha = standings.settings.alpha
    head = "".join(f'<th scope="col">#{i + 1}</th>' for i in range(len(order)))
    rows = []
    for i, a in enumerate(order):
        cells = []
        for j, b in enumerate(order):
            if i == j:
                cells.append('<td class="self">·</td>')
            else:
                cells.append(_heat_cell(board, standings.pair(a, b), ranking.metric.kind, alpha))
        label = board.entrants[a].label
        rows.append(f'<tr><th scope="row">#{i + 1} {_e(label)}</th>{"".join(cells)}</tr>')
    legend = "".join(
        f'<span><span class="swatch {name}"></span>{_e(text)}</span>'
        for _, name, text in (*_P_BINS, *_P_BINS_HIGH)
    )
    return (
        f"<h4>Pairwise Holm-adjusted p-values ({_e(ranking.metric.name)})</h4>"
        f'<div class="table-wrap"><table class="heat"><thead><tr><th scope="col">run</th>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f'<p class="caption">Row and column #k is the run ranked k-th; * marks a significant '
        f"pair (Holm p ≤ {alpha:g}). Hover a cell for the difference and the discordant "
        f'counts.</p><div class="legend">{legend}</div></div>'
    )


def _identity(board: Board, base: Path, pages: Mapping[str, Path] | None) -> str:
    rows = []
    for entrant in board.entrants:
        envelope = entrant.run.envelope
        link = relative_link(report_page(entrant, pages), base)
        rows.append(
            f'<tr><td class="run"><a href="{_e(link)}">{_e(entrant.label)}</a></td>'
            f'<td class="system">{_e(entrant.system)}</td>'
            f'<td><code title="{_e(envelope.config_sha256)}">{_e(envelope.config_sha256[:12])}'
            f"</code></td><td>{_e(envelope.chemgauge_version)}</td>"
            f"<td>{_e((envelope.created or '')[:10])}</td>"
            f'<td class="system">{_e(entrant.check)}</td></tr>'
        )
    head = "".join(
        f'<th scope="col"{cls}>{_e(name)}</th>'
        for name, cls in (
            ("run", ' class="key"'),
            ("system", ' class="key"'),
            ("config sha256", ""),
            ("chemgauge", ""),
            ("date", ""),
            ("check", ' class="key"'),
        )
    )
    return (
        "<h4>Runs</h4>"
        f'<div class="table-wrap"><table class="identity"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _breakdowns(board: Board, ranking: Ranking) -> str:
    order = [s.index for s in ranking.standings.standings]
    dimensions: dict[str, list[tuple[str, Ranking]]] = {}
    for b in board.breakdowns:
        if b.ranking.metric.name == ranking.metric.name:
            dimensions.setdefault(b.dimension, []).append((b.bucket, b.ranking))
    parts = []
    for dimension, buckets in dimensions.items():
        parts.append(f"<h4>By {_e(dimension)}</h4>")
        for start in range(0, len(buckets), BUCKETS_PER_TABLE):
            chunk = buckets[start : start + BUCKETS_PER_TABLE]
            head = '<th scope="col" class="key">run</th>' + "".join(
                f'<th scope="col">{_e(bucket)}<br><span class="note">n={r.items:,}</span></th>'
                for bucket, r in chunk
            )
            rows = []
            for index in order:
                cells = []
                for _, sub in chunk:
                    standing = next(s for s in sub.standings.standings if s.index == index)
                    kind = sub.metric.kind
                    cells.append(
                        f'<td class="bucket-cell">{_e(value_text(standing.value, kind))} '
                        f'<span class="letters">{_e(standing.letters)}</span>'
                        f'<span class="ci">{_e(interval_text(standing.value, kind))}</span></td>'
                    )
                label = board.entrants[index].label
                rows.append(f'<tr><td class="run">{_e(label)}</td>{"".join(cells)}</tr>')
            parts.append(
                f'<div class="table-wrap"><table class="buckets"><thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table></div>"
            )
    if not parts:
        return ""
    return (
        '<p class="note">Letters compare the runs within one bucket (each bucket\'s pairs '
        "are their own Holm family); read n first: a handful of items says little.</p>"
        + "".join(parts)
    )


def _board(board: Board, base: Path, pages: Mapping[str, Path] | None) -> str:
    runs = len(board.entrants)
    parts = [
        f'<section id="board-{board.number}"><h2>Board {board.number}: {_e(board.family)}, '
        f"{runs} run{'s' if runs != 1 else ''} on {board.items:,} items</h2>"
    ]
    for note in board.notes:
        parts.append(f'<div class="banner bad" role="note">{_e(note)}</div>')
    protocol = "; ".join(f"{k} {v}" for k, v in sorted(board.protocol.items()))
    parts.append(
        f'<p class="note">Item set: {board.items:,} items (sha256 '
        f"<code>{_e(board.items_sha256[:12])}</code>); protocol: {_e(protocol)}.</p>"
    )
    for ranking in board.rankings:
        parts.append(f"<h3>{_e(ranking.metric.name)}</h3><p>{_e(ranking.metric.description)}.</p>")
        parts.append(_table(board, ranking, base, pages))
        parts.append(_heat_map(board, ranking))
        parts.append(_breakdowns(board, ranking))
    parts.append(_identity(board, base, pages))
    parts.append("</section>")
    return "".join(parts)


def _refusals(leaderboard: Leaderboard) -> str:
    if not leaderboard.refusals:
        return ""
    items = "".join(
        f"<li><code>{_e(r.path)}</code>: {_e(r.reason)}</li>" for r in leaderboard.refusals
    )
    return (
        '<section id="left-off"><h2>Left off the board</h2>'
        f'<div class="banner bad" role="alert"><ul>{items}</ul></div></section>'
    )


def render_board_html(
    leaderboard: Leaderboard, base: Path, pages: Mapping[str, Path] | None = None
) -> str:
    """The HTML page; links to run pages are relative to folder ``base``."""
    nav = [(f"board-{b.number}", f"Board {b.number} ({b.family})") for b in leaderboard.boards]
    if leaderboard.refusals:
        nav.append(("left-off", "Left off"))
    body = [_board(b, base, pages) for b in leaderboard.boards]
    if not leaderboard.verified:
        body.insert(
            0,
            '<div class="banner bad" role="alert">Runs entered with --no-verify: their reports '
            "were not checked against their rows.</div>",
        )
    body.append(_refusals(leaderboard))
    runs = sum(len(b.entrants) for b in leaderboard.boards)
    subtitle = (
        f"{len(leaderboard.boards)} board{'s' if len(leaderboard.boards) != 1 else ''}, "
        f"{runs} run{'s' if runs != 1 else ''} ranked, {len(leaderboard.refusals)} left off"
    )
    return _page("chemgauge board", _e(subtitle), nav, body, css=_CSS)
