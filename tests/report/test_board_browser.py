"""The board page in headless Chromium at 1280 px: it loads cleanly, and its layout holds.

The page has no script. To measure it, the test loads a copy with a measuring script added
(and the copy's Content-Security-Policy relaxed for that one script): element boxes from the
browser's own layout, written into the DOM that ``--dump-dom`` prints. Checked: no table is
wider than its container (no column scrolled out of sight), nothing is wider than the window,
no cell's text overflows its cell, the forest plot's axis labels neither overlap each other
nor leave their cell, and no two heat-map or table cells overlap. A control page with an
overlap proves the checks can fail.
"""

from __future__ import annotations

import html
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from tests.report.boards import PATTERNS, make_retro_run, write_data
from tests.report.test_browser import _chromium, _console_messages
from typer.testing import CliRunner

from chemgauge.cli.app import app

pytestmark = pytest.mark.external

WIDTH = 1280

_MEASURE = """
<script>
(function () {
  const out = {width: document.documentElement.clientWidth,
               scrollWidth: document.documentElement.scrollWidth,
               wraps: [], cells: [], axes: [], overlaps: []};
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width}; };
  for (const wrap of document.querySelectorAll('.table-wrap')) {
    out.wraps.push({scroll: wrap.scrollWidth, client: wrap.clientWidth, ...box(wrap)});
  }
  for (const cell of document.querySelectorAll('th, td')) {
    out.cells.push({text: cell.textContent.slice(0, 40), scroll: cell.scrollWidth,
                    client: cell.clientWidth, ...box(cell)});
  }
  for (const axis of document.querySelectorAll('svg.axis')) {
    const cell = box(axis.closest('th'));
    out.axes.push({cell: cell, labels: Array.from(axis.querySelectorAll('text'),
                                                  (t) => ({text: t.textContent, ...box(t)}))});
  }
  for (const row of document.querySelectorAll('tr')) {
    const cells = Array.from(row.children, box);
    for (let i = 1; i < cells.length; i++) {
      if (cells[i].left < cells[i - 1].right - 0.5) {
        out.overlaps.push(row.textContent.slice(0, 60));
      }
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'geometry';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


def _measure(page: Path, tmp_path: Path) -> dict[str, Any]:
    text = page.read_text()
    text = text.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    text = text.replace("</body>", _MEASURE + "</body>")
    probe = tmp_path / f"measure-{page.name}"
    probe.write_text(text)
    proc = _chromium(probe, tmp_path / "profile", "--dump-dom", f"--window-size={WIDTH},2400")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console_messages(proc.stderr) == []
    dumped = proc.stdout.split('<pre id="geometry">', 1)[1].split("</pre>", 1)[0]
    data: dict[str, Any] = json.loads(html.unescape(dumped))
    return data


def _problems(data: dict[str, Any]) -> list[str]:
    found = []
    if data["scrollWidth"] > data["width"]:
        found.append(f"page wider than the window: {data['scrollWidth']} > {data['width']}")
    for wrap in data["wraps"]:
        if wrap["scroll"] > wrap["client"] + 1:
            found.append(f"table scrolls inside its container: {wrap['scroll']} > {wrap['client']}")
    for cell in data["cells"]:
        if cell["right"] > data["width"] + 0.5:
            found.append(f"cell past the window's edge: {cell['text']!r}")
        if cell["scroll"] > cell["client"] + 1:
            found.append(f"text overflows its cell: {cell['text']!r}")
    for axis in data["axes"]:
        labels = sorted(axis["labels"], key=lambda t: t["left"])
        for a, b in itertools.pairwise(labels):
            if b["left"] < a["right"] + 2:
                found.append(f"axis labels overlap: {a['text']} / {b['text']}")
        cell = axis["cell"]
        for label in labels:
            if label["left"] < cell["left"] - 0.5 or label["right"] > cell["right"] + 0.5:
                found.append(f"axis label leaves its cell: {label['text']}")
    found += [f"cells overlap in a row: {row!r}" for row in data["overlaps"]]
    return found


@pytest.fixture(scope="module")
def board_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A board of ten real retro runs, one with a long folder name, with its breakdowns."""
    root = tmp_path_factory.mktemp("board-page")
    data = write_data(root / "data")
    patterns = list(PATTERNS.values())
    names = [f"model-{i}" for i in range(9)] + ["a-run-folder-with-a-rather-long-name-2026-12-01"]
    for i, name in enumerate(names):
        make_retro_run(root / "runs" / name, patterns[i % len(patterns)], data, name=name)
    page = root / "board.html"
    args = ["board", str(root / "runs"), "--out", str(page.parent), "-q"]
    result = CliRunner().invoke(app, [*args, "--metric", "top1[syntheseus,exact]"])
    assert result.exit_code == 0, result.output
    return page


def test_board_page_loads_cleanly(board_page: Path, tmp_path: Path) -> None:
    dom = _chromium(board_page, tmp_path / "profile", "--dump-dom", f"--window-size={WIDTH},2400")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _console_messages(dom.stderr) == []
    assert dom.stdout.count('<svg class="ci"') == 10
    assert 'class="heat"' in dom.stdout and "<script" not in board_page.read_text()


def test_board_layout_at_1280_px(board_page: Path, tmp_path: Path) -> None:
    data = _measure(board_page, tmp_path)
    assert len(data["cells"]) > 200 and data["axes"], "nothing measured"
    assert len(data["axes"][0]["labels"]) >= 3
    assert _problems(data) == []


def test_layout_check_catches_overlap_and_hidden_columns(tmp_path: Path) -> None:
    page = tmp_path / "control.html"
    columns = "".join(f"<td>{'wide cell text ' * 4}</td>" for _ in range(12))
    page.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\"><style>"
        ".table-wrap { overflow-x: auto; width: 600px; } td { white-space: nowrap; }"
        "th { width: 200px; } td.tight { max-width: 20px; overflow: hidden; }</style></head>"
        f'<body><div class="table-wrap"><table><tr>{columns}</tr></table></div>'
        '<table><tr><th><svg class="axis" width="200" height="16">'
        '<text x="10" y="12">100%</text><text x="14" y="12">200%</text></svg></th>'
        '<td class="tight">overflowing text</td></tr></table></body></html>'
    )
    problems = _problems(_measure(page, tmp_path))
    assert any("scrolls inside its container" in p for p in problems)
    assert any("axis labels overlap" in p for p in problems)
    assert any("overflows its cell" in p for p in problems)
