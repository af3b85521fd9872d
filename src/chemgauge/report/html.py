"""Self-contained HTML pages: one run's report, and the comparison of two runs.

No script, no external resource: CSS, plots (SVG) and structure drawings (SVG) are inline, so
the file opens offline and mails as one attachment. The same inputs give the same bytes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from chemgauge.report.adapter import (
    FailureCase,
    FamilyAdapter,
    Plot,
    Rate,
    RatePlot,
    Section,
    Structure,
    Table,
)
from chemgauge.report.formatting import fmt_count, fmt_p, fmt_pct, fmt_rate
from chemgauge.report.runs import Run
from chemgauge.report.verify import Verification

__all__ = [
    "CSP",
    "PAGE_CSS",
    "page_end",
    "page_start",
    "rate_cards",
    "render_compare_html",
    "render_run_html",
    "table_html",
]

PAGE_CSS = """
:root { --ink: #1b1b1b; --muted: #5a5a5a; --line: #d9d9d9; --bg: #ffffff; --panel: #f6f7f9;
  --ok: #009E73; --bad: #D55E00; --accent: #0072B2; --mol-width: 240px; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans",
  sans-serif; color: var(--ink); background: var(--bg); }
header, main, nav { max-width: 1120px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 24px; }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
h2 { font-size: 1.25rem; margin: 32px 0 8px; padding-bottom: 4px;
  border-bottom: 2px solid var(--line); }
h3 { font-size: 1.05rem; margin: 20px 0 6px; }
.sub, .note, figcaption, .caption { color: var(--muted); font-size: 0.9rem; }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.85rem;
  overflow-wrap: anywhere; }
nav { display: flex; flex-wrap: wrap; gap: 6px 16px; padding-top: 8px; padding-bottom: 8px;
  border-bottom: 1px solid var(--line); }
nav a { color: var(--accent); text-decoration: none; }
nav a:hover, nav a:focus { text-decoration: underline; }
.banner { margin: 16px 0; padding: 10px 14px; border-left: 6px solid; background: var(--panel); }
.banner.ok { border-color: var(--ok); }
.banner.bad { border-color: var(--bad); }
.banner ul { margin: 6px 0 0; padding-left: 20px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 12px; }
.card { background: var(--panel); border-radius: 8px; padding: 12px 14px; }
.card .label { font-size: 0.85rem; color: var(--muted); }
.card .value { font-size: 1.7rem; font-weight: 650; line-height: 1.2; }
.card .interval, .card .count { font-size: 0.85rem; color: var(--muted); }
.table-wrap { overflow-x: auto; margin: 8px 0 16px; }
table { border-collapse: collapse; font-size: 0.9rem; min-width: 50%; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: right;
  vertical-align: top; white-space: nowrap; }
th:first-child, td:first-child, td.key, thead th.key { text-align: left; }
td.wrap { white-space: normal; overflow-wrap: anywhere; text-align: left; min-width: 16em; }
td.key { white-space: normal; overflow-wrap: anywhere; min-width: 6em; }
td .ci { display: block; font-size: 0.78rem; color: var(--muted); white-space: normal; }
td .ci > span { white-space: nowrap; }
thead th { background: var(--panel); position: sticky; top: 0; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: 4px 0; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(420px, 100%), 1fr));
  gap: 16px; }
figure { margin: 0; }
svg.plot { width: 100%; height: auto; display: block; }
.failures { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(520px, 100%), 1fr));
  gap: 16px; }
.failure { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
.failure h4 { margin: 0 0 6px; font-size: 0.95rem; overflow-wrap: anywhere; }
.mols { display: flex; flex-wrap: wrap; gap: 8px; }
/* One size for every drawing: with the drawings' fixed bond length, one scale. */
.mols figure { flex: 0 0 var(--mol-width); width: var(--mol-width); }
.mols figcaption { overflow-wrap: anywhere; }
svg.mol { width: 100%; height: auto; display: block; border: 1px solid var(--line);
  border-radius: 4px; }
/* Frames drawn outside the box (outline, shadow): a framed drawing keeps its size. */
.mols figure.mark-chosen svg.mol { outline: 3px dashed var(--bad); outline-offset: 1px; }
.mols figure.mark-true svg.mol { box-shadow: 0 0 0 3px var(--ok); }
.mols figure.mark-true.mark-chosen svg.mol { outline: 3px dashed var(--accent);
  outline-offset: 4px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0 0;
  font-size: 0.85rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.sig { font-weight: 650; }
.pos { color: #005a8c; }
.neg { color: #a33f00; }
footer { max-width: 1120px; margin: 40px auto 24px; padding: 0 20px; color: var(--muted);
  font-size: 0.8rem; }
@media (max-width: 640px) { .failures { grid-template-columns: 1fr; }
  .plots { grid-template-columns: 1fr; } }
"""


#: The page may load nothing: a browser blocks (and reports) any external resource.
CSP = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "style-src 'unsafe-inline'; img-src data:\">"
)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def page_start(title: str, subtitle: str, nav: Sequence[tuple[str, str]], css: str = "") -> str:
    """A page up to its body: the shared style (plus ``css``), header and section links
    (``subtitle`` is HTML)."""
    links = "".join(f'<a href="#{_e(anchor)}">{_e(text)}</a>' for anchor, text in nav)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"{CSP}\n"
        f"<title>{_e(title)}</title>\n<style>{PAGE_CSS}{css}</style>\n</head>\n<body>\n"
        f'<header><h1 id="top">{_e(title)}</h1><p class="sub">{subtitle}</p></header>\n'
        f'<nav aria-label="sections">{links}</nav>\n<main>\n'
    )


def page_end(note: str = "every number is recomputed from the row file.") -> str:
    """The end of a page: its footer (``note`` completes the sentence on intervals)."""
    return (
        f"\n</main>\n<footer>Written by chemgauge. Intervals are 95%; {_e(note)}</footer>\n"
        "</body>\n</html>\n"
    )


def _page(
    title: str,
    subtitle: str,
    nav: Sequence[tuple[str, str]],
    body: Iterable[str],
    css: str = "",
) -> str:
    """A whole page: the shared style (plus ``css``), header, section links, body, footer."""
    return page_start(title, subtitle, nav, css) + "\n".join(body) + page_end()


_INTERVAL = re.compile(r"^(\S+) (\[[^\]]*\])(?: (.+))?$")


def _cell(text: str) -> str:
    """A cell's text, with a value's interval and count (``72.4% [65.1, 78.9] (21/29)``) on a
    line under it, split in two where the column is narrow: tables of rates stay narrow
    enough to show every column."""
    match = _INTERVAL.match(text)
    if match is None:
        return _e(text)
    value, interval, rest = match.groups()
    parts = " ".join(f"<span>{_e(part)}</span>" for part in (interval, rest) if part)
    return f'{_e(value)} <span class="ci">{parts}</span>'


def _key(text: str) -> str:
    """A key cell's text with break points after ``[`` and ``,`` (long metric names wrap)."""
    return re.sub(r"([\[,])", r"\1<wbr>", _e(text))


#: Characters from which a cell's text with spaces is prose that may wrap.
_PROSE = 40


def table_html(table: Table, *, wrap_columns: Sequence[int] = ()) -> str:
    """A titled table in its scroll container; the first column is the row's key."""
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in table.columns)
    body = []
    for row in table.rows:
        cells = []
        for i, cell in enumerate(row):
            if i in wrap_columns:
                cells.append(f'<td class="wrap">{_e(cell)}</td>')
            elif i == 0:
                cells.append(f'<td class="key">{_key(cell)}</td>')
            elif _INTERVAL.match(cell) is None and len(cell) > _PROSE and " " in cell:
                # Prose (a policy's claim) wraps; numbers and short labels stay on a line.
                cells.append(f'<td class="wrap">{_e(cell)}</td>')
            else:
                cells.append(f"<td>{_cell(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = f'<p class="caption">{_e(table.caption)}</p>' if table.caption else ""
    return (
        f'<div class="table-wrap"><table><caption>{_e(table.title)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{caption}</div>"
    )


def _plots(plots: Sequence[Plot], salt: str) -> str:
    if not plots:
        return ""
    from chemgauge.report.plots import render_plot

    figures = [
        f"<figure>{render_plot(p, f'{salt}-{i}')}<figcaption>{_e(p.title)}</figcaption></figure>"
        for i, p in enumerate(plots)
    ]
    return f'<div class="plots">{"".join(figures)}</div>'


def _structures(structures: Sequence[Structure]) -> str:
    from chemgauge.report.drawings import structure_svg

    figures = []
    for s in structures:
        note = f"<br>{_e(s.note)}" if s.note else ""
        marks = " ".join(f"mark-{m}" for m in s.mark.split())
        cls = f' class="{_e(marks)}"' if marks else ""
        figures.append(
            f"<figure{cls}>{structure_svg(s.smiles, s.label)}<figcaption>{_e(s.label)}{note}"
            "</figcaption></figure>"
        )
    return f'<div class="mols">{"".join(figures)}</div>'


def _failure(case: FailureCase) -> str:
    details = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in case.details)
    return (
        f'<article class="failure"><h4>{_e(case.title)} <span class="note">({_e(case.item)})'
        f"</span></h4>{_structures(case.structures)}<dl>{details}</dl></article>"
    )


def _section(section: Section, index: int) -> str:
    anchor = section.anchor or _slug(section.title)
    parts = [f'<section id="{_e(anchor)}"><h2>{_e(section.title)}</h2>']
    if section.intro:
        parts.append(f"<p>{_e(section.intro)}</p>")
    parts.extend(table_html(t) for t in section.tables)
    parts.append(_plots(section.plots, f"s{index}"))
    if section.failures_total is not None:
        shown = len(section.failures)
        parts.append(
            f'<p class="note">{section.failures_total} '
            f"{'item' if section.failures_total == 1 else 'items'}; showing {shown}.</p>"
            if section.failures_total
            else '<p class="note">None.</p>'
        )
    if section.failures:
        parts.append(
            f'<div class="failures">{"".join(_failure(c) for c in section.failures)}</div>'
        )
    parts.append("</section>")
    return "".join(parts)


def rate_cards(rates: Sequence[Rate]) -> str:
    """Headline rates as cards: value, interval, count."""
    cards = []
    for r in rates:
        interval = (
            f"95% CI {fmt_pct(r.low)} to {fmt_pct(r.high)}" if r.low is not None else "no items"
        )
        cards.append(
            f'<div class="card"><div class="label">{_e(r.label)}</div>'
            f'<div class="value">{_e(fmt_pct(r.estimate))}</div>'
            f'<div class="interval">{_e(interval)}</div>'
            f'<div class="count">{_e(fmt_count(r))}</div></div>'
        )
    return f'<div class="cards">{"".join(cards)}</div>'


def _verification(result: Verification, limit: int = 10) -> str:
    if result.ok:
        return (
            '<div class="banner ok" role="status"><strong>Verified.</strong> Every aggregate '
            "and the reproducibility hash in the report match the row file.</div>"
        )
    items = "".join(f"<li><code>{_e(d.describe())}</code></li>" for d in result.differences[:limit])
    return (
        '<div class="banner bad" role="alert"><strong>The report disagrees with its rows.</strong> '
        f"{len(result.differences)} differences; the numbers below are recomputed from the rows."
        f"<ul>{items}</ul></div>"
    )


def _flatten(prefix: str, value: Any) -> Iterable[tuple[str, str]]:
    if isinstance(value, Mapping):
        for key in sorted(value, key=str):
            yield from _flatten(f"{prefix}.{key}" if prefix else str(key), value[key])
    else:
        yield prefix, "null" if value is None else str(value)


def _provenance(run: Run) -> str:
    envelope = run.envelope
    block = {
        "report": str(run.report_path),
        "rows": str(run.rows_path),
        "family": f"{envelope.family} (schema {envelope.family_schema_version})",
        "read from": f"run envelope v{envelope.schema_version}",
        "chemgauge_version": envelope.chemgauge_version,
        "created": envelope.created,
        "config_sha256": envelope.config_sha256,
        "inputs": {i.role: f"{i.path} (sha256 {i.sha256})" for i in envelope.inputs},
        "provenance": envelope.provenance.model_dump(),
        "reproducibility_sha256": envelope.reproducibility_sha256,
        "counts": envelope.counts.model_dump(),
    }
    rows = tuple(_flatten("", block))
    return (
        '<section id="provenance"><h2>Provenance</h2>'
        + table_html(Table("What produced this run", ("field", "value"), rows), wrap_columns=(1,))
        + "</section>"
    )


def render_run_html(
    run: Run, adapter: FamilyAdapter, verification: Verification, *, max_failures: int = 24
) -> str:
    """The HTML report of one run."""
    sections = adapter.sections(run, max_failures=max_failures)
    nav = [("headline", "Headline"), *((s.anchor or _slug(s.title), s.title) for s in sections)]
    nav.append(("provenance", "Provenance"))
    body = [
        _verification(verification),
        '<section id="headline"><h2>Headline</h2>',
        rate_cards(adapter.headline(run)),
        "</section>",
        *(_section(s, i) for i, s in enumerate(sections)),
        _provenance(run),
    ]
    subtitle = f"run <code>{_e(run.label)}</code> · {len(run.rows)} rows"
    return _page(f"chemgauge {run.family} report: {run.label}", subtitle, nav, body)


def _rate_from(d: Mapping[str, Any]) -> Rate:
    low, high = d["interval"]
    return Rate(d["label"], d["count"], d["n"], d["value"], low, high, d["method"])


def _pp(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}"


def _signif(p: float) -> str:
    return ' class="sig"' if p <= 0.05 else ""


def _paired_rows(results: Sequence[Mapping[str, Any]], *firsts: str) -> str:
    """The paired-test table; rows with no paired item (nothing was tested) are left out."""
    rows = []
    for r in results:
        if not r["n"]:
            continue
        d = r["difference"]
        low, high = d["interval"]
        sign = (
            ""
            if d["value"] is None or d["value"] == 0
            else (' class="pos"' if d["value"] > 0 else ' class="neg"')
        )
        rate_a, rate_b = _rate_from(r["rate_a"]), _rate_from(r["rate_b"])
        rows.append(
            "<tr>"
            + "".join(f'<td class="key">{_key(str(r[f]))}</td>' for f in firsts)
            + f"<td>{r['n']}</td><td>{_cell(fmt_rate(rate_a))}</td>"
            f"<td>{_cell(fmt_rate(rate_b))}</td><td{sign}>{_e(_pp(d['value']))} "
            f'<span class="ci">[{_e(_pp(low))}, {_e(_pp(high))}]</span></td>'
            f"<td>{r['only_a']}</td><td>{r['only_b']}</td><td>{_e(fmt_p(r['mcnemar_p']))}</td>"
            f"<td{_signif(r['holm_p'])}>{_e(fmt_p(r['holm_p']))}</td></tr>"
        )
    head = "".join(f'<th scope="col" class="key">{_e(c)}</th>' for c in firsts) + "".join(
        f'<th scope="col">{_e(c)}</th>'
        for c in (
            "n",
            "A",
            "B",
            "A - B (pp)",
            "only A",
            "only B",
            "McNemar p",
            "Holm p",
        )
    )
    return (
        f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _discordant_list(
    keys: Sequence[str],
    total: int,
    adapter: FamilyAdapter,
    runs: tuple[Run, Run],
    rows: tuple[Mapping[str, Mapping[str, Any]], Mapping[str, Mapping[str, Any]]],
    max_items: int,
) -> str:
    run_a, run_b = runs
    shared = adapter.item_reference_count
    cases = []
    for key in keys[:max_items]:
        ra, rb = rows[0][key], rows[1][key]
        sa, sb = adapter.item_structures(ra, run_a), adapter.item_structures(rb, run_b)
        structures = (
            *sa[:shared],
            *(Structure(f"A: {s.label}", s.smiles, s.note, s.mark) for s in sa[shared:]),
            *(Structure(f"B: {s.label}", s.smiles, s.note, s.mark) for s in sb[shared:]),
        )
        details = (
            *((f"A {k}", v) for k, v in adapter.describe_item(ra, run_a)),
            *((f"B {k}", v) for k, v in adapter.describe_item(rb, run_b)),
        )
        cases.append(_failure(FailureCase(key, key, details, structures)))
    noun = "item" if total == 1 else "items"
    note = f'<p class="note">{total} {noun}; showing {min(total, max_items)}.</p>'
    return note + (f'<div class="failures">{"".join(cases)}</div>' if cases else "")


def render_compare_html(
    comparison: Mapping[str, Any],
    adapter: FamilyAdapter,
    run_a: Run,
    run_b: Run,
    *,
    max_items: int = 12,
) -> str:
    """The HTML page of a paired comparison, with the items one run gets right and not the other."""
    a, b = comparison["run_a"]["label"], comparison["run_b"]["label"]
    protocol = comparison["protocol"]
    items = comparison["items"]
    settings = comparison["settings"]
    if protocol["match"]:
        banner = (
            '<div class="banner ok" role="status"><strong>Same items, same protocol.</strong> '
            f"{items['shared']} shared items.</div>"
        )
    else:
        banner = (
            '<div class="banner bad" role="alert"><strong>Forced comparison:</strong> the runs '
            "differ in their protocol; only shared items are compared. "
            f"A: <code>{_e(protocol['a'])}</code> B: <code>{_e(protocol['b'])}</code></div>"
        )
    body = [
        banner,
        f"<p>A = <code>{_e(a)}</code> ({_e(comparison['run_a']['report'])}), "
        f"B = <code>{_e(b)}</code> ({_e(comparison['run_b']['report'])}). Shared items: "
        f"{items['shared']}; only in A: {items['only_in_a']}; only in B: {items['only_in_b']}. "
        f"Differences are A - B on paired items with a paired bootstrap interval (seed "
        f"{settings['seed']}, {settings['resamples']} resamples); p-values are exact McNemar, "
        f"Holm-adjusted ({_e(settings['holm_families'])}).</p>",
        '<section id="overall"><h2>Overall</h2>',
        _paired_rows(comparison["overall"], "metric"),
    ]
    overall = {r["metric"]: r for r in comparison["overall"]}
    plots = [
        RatePlot(
            title="Hit rate on shared items (95% Wilson intervals)"
            + (f": {panel.title}" if panel.title else ""),
            xlabel=panel.xlabel,
            series={
                label: [(x, _rate_from(overall[m][key])) for x, m in panel.metrics]
                for label, key in ((f"A: {a}", "rate_a"), (f"B: {b}", "rate_b"))
            },
            kind=panel.kind,
        )
        for panel in adapter.metric_panels(list(overall), run_a)
    ]
    body += [_plots(plots, "cmp"), "</section>", '<section id="breakdowns"><h2>Breakdowns</h2>']
    body.append(
        '<p class="note">Holm adjusts over the buckets of one metric within a dimension. '
        "Intervals and tests on a handful of pairs say little: read n first.</p>"
    )
    for dim, per_metric in comparison["breakdowns"].items():
        body.append(f"<h3>{_e(dim)}</h3>")
        flat = [r for results in per_metric.values() for r in results]
        tested = {r["bucket"] for r in flat if r["n"]}
        if len(tested) < 2:
            # One bucket with pairs is the overall table again.
            only = f" ({_e(next(iter(tested)))})" if tested else ""
            body.append(f'<p class="note">Every paired item is in one bucket{only}.</p>')
            continue
        body.append(_paired_rows(flat, "metric", "bucket"))
    body.append("</section>")
    rows_a = {adapter.item_key(r): r for r in run_a.rows}
    rows_b = {adapter.item_key(r): r for r in run_b.rows}
    body.append('<section id="discordant"><h2>Items one run gets right and the other wrong</h2>')
    for r in comparison["overall"]:
        metric = r["metric"]
        lists = comparison["discordant"][metric]
        for side, title in (("only_a", "A right, B wrong"), ("only_b", "B right, A wrong")):
            body.append(f"<h3>{_e(metric)}: {title}</h3>")
            body.append(
                _discordant_list(
                    lists[side], r[side], adapter, (run_a, run_b), (rows_a, rows_b), max_items
                )
            )
    body.append("</section>")
    nav = [("overall", "Overall"), ("breakdowns", "Breakdowns"), ("discordant", "Discordant items")]
    title = f"chemgauge {comparison['family']} comparison: {a} vs {b}"
    return _page(title, f"A = <code>{_e(a)}</code>, B = <code>{_e(b)}</code>", nav, body)
