"""Report, compare and OCSR run pages in headless Chromium at 1280 px: the layout holds.

As in the board's browser test, a copy of each page gets a measuring script (its
Content-Security-Policy relaxed for that one script) that writes element boxes from the
browser's own layout into the DOM ``--dump-dom`` prints. Checked on every page: no table
scrolls inside its container and no cell reaches past the window (every column, the Holm
column of a wide compare table too, is in sight), no cell's text overflows it, no two text
labels of a plot overlap (log-axis ticks included), and every structure drawing has the same
rendered size. Control pages prove each check can fail. Screenshots go to a temporary folder.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from tests.report.boards import PATTERNS, make_retro_run, write_data
from tests.report.conftest import NAMES_A, NAMES_B, make_names_run
from tests.report.test_browser import _chromium, _console_messages
from typer.testing import CliRunner

from chemgauge.chem import try_parse_smiles
from chemgauge.chem.render import highlighted_svg
from chemgauge.cli.app import app
from chemgauge.report.drawings import HEIGHT, WIDTH, structure_svg
from chemgauge.report.html import CSP, PAGE_CSS

pytestmark = pytest.mark.external

WINDOW = 1280

_MEASURE = """
<script>
(function () {
  const out = {width: document.documentElement.clientWidth,
               scrollWidth: document.documentElement.scrollWidth,
               wraps: [], cells: [], plots: [], mols: []};
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width,
            height: r.height}; };
  for (const wrap of document.querySelectorAll('.table-wrap')) {
    out.wraps.push({scroll: wrap.scrollWidth, client: wrap.clientWidth,
                    text: wrap.textContent.slice(0, 60)});
  }
  for (const cell of document.querySelectorAll('th, td')) {
    out.cells.push({text: cell.textContent.slice(0, 40), scroll: cell.scrollWidth,
                    client: cell.clientWidth, ...box(cell)});
  }
  for (const svg of document.querySelectorAll('svg.plot')) {
    out.plots.push(Array.from(svg.querySelectorAll('text'),
                              (t) => ({text: t.textContent, ...box(t)}))
                   .filter((t) => t.width > 0));
  }
  for (const svg of document.querySelectorAll('svg.mol')) {
    const r = box(svg);
    const scale = r.width / svg.viewBox.baseVal.width;
    let bond = 0;  // the longest straight bond line: a bond between two unlabelled carbons
    for (const path of svg.querySelectorAll("path[class^='bond-']")) {
      const a = path.getPointAtLength(0);
      const b = path.getPointAtLength(path.getTotalLength());
      bond = Math.max(bond, Math.hypot(a.x - b.x, a.y - b.y));
    }
    out.mols.push({label: svg.getAttribute('aria-label'), width: r.width, height: r.height,
                   bond: bond * scale});
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
    assert "default-src 'none';" in text
    text = text.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';")
    probe = tmp_path / f"measure-{page.name}"
    probe.write_text(text.replace("</body>", _MEASURE + "</body>"))
    proc = _chromium(probe, tmp_path / "profile", "--dump-dom", f"--window-size={WINDOW},2400")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console_messages(proc.stderr) == []
    dumped = proc.stdout.split('<pre id="geometry">', 1)[1].split("</pre>", 1)[0]
    data: dict[str, Any] = json.loads(html.unescape(dumped))
    return data


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    """True if two boxes share more than a pixel each way."""
    return (
        min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1
    )


def _problems(data: dict[str, Any]) -> list[str]:
    found = []
    if data["scrollWidth"] > data["width"]:
        found.append(f"page wider than the window: {data['scrollWidth']} > {data['width']}")
    for wrap in data["wraps"]:
        if wrap["scroll"] > wrap["client"] + 1:
            found.append(
                f"table scrolls inside its container ({wrap['scroll']} > {wrap['client']}): "
                f"{wrap['text']!r}"
            )
    for cell in data["cells"]:
        if cell["right"] > data["width"] + 0.5:
            found.append(f"cell past the window's edge: {cell['text']!r}")
        if cell["scroll"] > cell["client"] + 1:
            found.append(f"text overflows its cell: {cell['text']!r}")
    for labels in data["plots"]:
        for a, b in itertools.combinations(labels, 2):
            if _overlap(a, b):
                found.append(f"plot labels overlap: {a['text']!r} / {b['text']!r}")
    sizes = {(round(m["width"], 1), round(m["height"], 1)) for m in data["mols"]}
    if len(sizes) > 1:
        found.append(f"structure drawings of different sizes: {sorted(sizes)}")
    return found


def _screenshot(page: Path, tmp_path: Path) -> None:
    """A screenshot at 1280 px in the test's temporary folder (for a person to look at)."""
    shot = tmp_path / f"{page.stem}.png"
    proc = _chromium(
        page, tmp_path / "profile", f"--screenshot={shot}", f"--window-size={WINDOW},3000"
    )
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]


@pytest.fixture(scope="module")
def retro_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two retro runs with 24 hit metrics (2 conventions x 2 matchers x 6 k): the report of
    one and the comparison of both."""
    root = tmp_path_factory.mktemp("retro-pages")
    data = write_data(root / "data")
    runs = [
        make_retro_run(
            root / "runs" / name,
            PATTERNS[pattern],
            data,
            name=name,
            matchers="exact,stereo_ignored",
            num_top_results=50,
        )
        for name, pattern in (
            ("a-model-with-a-long-run-folder-name", "strong"),
            ("b-model", "weak"),
        )
    ]
    pages = {"compare": root / "compare.html", "report": root / "report.html"}
    runner = CliRunner()
    result = runner.invoke(app, ["compare", *map(str, runs), "--out", str(root)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["report", str(runs[0]), "--out", str(pages["report"]), "-q"])
    assert result.exit_code == 0, result.output
    return pages


def test_retro_compare_shows_every_column_and_readable_charts(
    retro_pages: dict[str, Path], tmp_path: Path
) -> None:
    data = _measure(retro_pages["compare"], tmp_path)
    _screenshot(retro_pages["compare"], tmp_path)
    holm = [c for c in data["cells"] if c["text"] == "Holm p"]
    assert len(holm) == 2  # overall and num_reactants (every target has no reaction class)
    assert all(c["right"] <= data["width"] for c in holm)
    assert len(data["plots"]) == 4  # one top-k chart per (convention, matcher), not 24 bars
    assert all(len(labels) >= 10 for labels in data["plots"])
    assert len(data["mols"]) > 20
    assert _problems(data) == []


def test_retro_report_layout(retro_pages: dict[str, Path], tmp_path: Path) -> None:
    data = _measure(retro_pages["report"], tmp_path)
    assert data["plots"] and data["mols"]
    assert _problems(data) == []


def test_forward_report_and_its_log_axis(tmp_path: Path) -> None:
    from chemgauge.families.forward import benchmark

    run = tmp_path / "run"
    benchmark(out=run, executor="serial")
    page = tmp_path / "forward.html"
    result = CliRunner().invoke(app, ["report", str(run), "--out", str(page), "-q"])
    assert result.exit_code == 0, result.output
    assert 'class="plot"' in page.read_text()
    data = _measure(page, tmp_path)
    _screenshot(page, tmp_path)
    assert len(data["plots"]) >= 4 and len(data["cells"]) > 100
    assert _problems(data) == []


def test_names_report_and_compare_layout(tmp_path: Path) -> None:
    runs = [make_names_run(tmp_path / "a", NAMES_A), make_names_run(tmp_path / "b", NAMES_B)]
    pages = {"report": tmp_path / "names.html", "compare": tmp_path / "cmp" / "compare.html"}
    for args in (
        ["report", str(runs[1]), "--out", str(pages["report"])],
        ["compare", *map(str, runs), "--force", "--out", str(pages["compare"].parent)],
    ):
        result = CliRunner().invoke(app, [*args, "-q"])
        assert result.exit_code == 0, result.output
    for page in pages.values():
        data = _measure(page, tmp_path)
        assert len(data["mols"]) >= 6 and data["plots"]
        assert _problems(data) == []


def test_p2s_report_and_compare_layout(tmp_path: Path) -> None:
    from tests.families.p2s.test_adapter import _build, _run

    data, table = _build(tmp_path, seed=0)
    runs = [_run(data, table, tmp_path / "runs", m) for m in ("random", "property_oracle")]
    pages = {"report": tmp_path / "p2s.html", "compare": tmp_path / "cmp" / "compare.html"}
    for args in (
        ["report", str(runs[0]), "--out", str(pages["report"])],
        ["compare", *map(str, runs), "--out", str(pages["compare"].parent)],
    ):
        result = CliRunner().invoke(app, [*args, "-q"])
        assert result.exit_code == 0, result.output
    for page in pages.values():
        data = _measure(page, tmp_path)
        assert len(data["mols"]) > 20 and data["plots"]
        assert _problems(data) == []


def test_ocsr_run_page_layout(tmp_path: Path) -> None:
    from chemgauge.families.ocsr.cohort import COHORT, build_cohort
    from chemgauge.families.ocsr.engine.base import RECOGNIZERS

    cases = {"ethanol": "CCO", "gly_l_ala": "NCC(=O)NC(C)C(=O)O"}
    manifest = build_cohort(tmp_path / "cohort", tuple(e for e in COHORT if e.id in cases))
    answers = {manifest.by_id[c].sha256: smiles for c, smiles in cases.items()}

    def recognize(image: Path) -> str:
        return answers.get(hashlib.sha256(image.read_bytes()).hexdigest(), "")

    RECOGNIZERS.register("pages_browser_test", recognize, replace=True)
    args = ["ocsr", "run", "--manifest", str(manifest.root / "manifest.json"), "--model", "python"]
    args += ["--callable", "pages_browser_test", "-o", str(tmp_path / "run"), "--run", "-q"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    page = tmp_path / "run" / "report.html"
    data = _measure(page, tmp_path)
    _screenshot(page, tmp_path)
    assert len(data["mols"]) >= 4 and data["cells"]
    assert _problems(data) == []
    # The report command's page of the same run (its policy claims are long prose).
    report = tmp_path / "ocsr-report.html"
    result = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "--out", str(report)])
    assert result.exit_code == 0, result.output
    data = _measure(report, tmp_path)
    assert any(c["text"] == "claim" for c in data["cells"])
    assert _problems(data) == []


def _drawings_page(path: Path, drawings: list[str]) -> Path:
    figures = "".join(f"<figure>{svg}</figure>" for svg in drawings)
    path.write_text(
        f"<!DOCTYPE html><html><head>{CSP}<style>{PAGE_CSS}</style></head><body><main>"
        f'<div class="mols">{figures}</div></main></body></html>'
    )
    return path


# Molecules from two to eleven heavy atoms, each with a bond between two plain carbons.
SMALL = ("CCO", "CC(C)C", "c1ccccc1", "CC(=O)Nc1ccc(O)cc1", "CCCCCC")


def _bond_spread(data: dict[str, Any]) -> float:
    bonds = [m["bond"] for m in data["mols"]]
    assert len(bonds) == len(SMALL) and min(bonds) > 5
    return max(bonds) / min(bonds)


def test_structure_drawings_share_one_scale(tmp_path: Path) -> None:
    page = _drawings_page(tmp_path / "same.html", [structure_svg(s, s) for s in SMALL])
    data = _measure(page, tmp_path)
    assert _problems(data) == []
    assert _bond_spread(data) < 1.02

    # Control: each molecule fitted to its box (no fixed bond length) fails the check.
    fitted = [highlighted_svg(try_parse_smiles(s), width=WIDTH, height=HEIGHT) for s in SMALL]
    fitted = [
        svg[svg.index("<svg") :].replace("width='260px' height='190px'", "class='mol'", 1)
        for svg in fitted
    ]
    control = _measure(_drawings_page(tmp_path / "fitted.html", fitted), tmp_path)
    assert _bond_spread(control) > 1.3


def test_layout_checks_catch_overlapping_labels_and_unequal_drawings(tmp_path: Path) -> None:
    page = tmp_path / "control.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\"></head><body>"
        '<svg class="plot" width="300" height="40"><text x="10" y="20">2×10⁰</text>'
        '<text x="30" y="20">3×10⁰</text></svg>'
        '<svg class="mol" viewBox="0 0 10 10" width="100"></svg>'
        '<svg class="mol" viewBox="0 0 10 10" width="120"></svg>'
        '<div class="table-wrap" style="overflow-x: auto; width: 200px"><table><tr>'
        f"<td>{'x' * 80}</td><td>Holm p</td></tr></table></div></body></html>"
    )
    problems = _problems(_measure(page, tmp_path))
    assert any("plot labels overlap" in p for p in problems)
    assert any("drawings of different sizes" in p for p in problems)
    assert any("scrolls inside its container" in p for p in problems)
