"""The HTML report: self-contained, deterministic, and showing what explains failures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest
from tests.report.conftest import NAMES_B, make_names_run

from chemgauge.report.drawings import structure_svg
from chemgauge.report.html import render_run_html
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.verify import verify_run


def _render(run_dir: Path) -> str:
    run = load_run(run_dir)
    return render_run_html(run, get_adapter(run.family), verify_run(run))


@pytest.fixture(scope="module")
def run_b(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Run B and its page, rendered once for the read-only tests."""
    run_dir = make_names_run(tmp_path_factory.mktemp("html") / "b", NAMES_B)
    return run_dir, _render(run_dir)


def test_same_run_same_bytes(run_b: tuple[Path, str], tmp_path: Path) -> None:
    """In this process and through the CLI in another one (other hash seed): same bytes."""
    run_dir, first = run_b
    out = tmp_path / "out.html"
    proc = subprocess.run(
        [sys.executable, "-m", "chemgauge", "report", str(run_dir), "--out", str(out), "-q"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == first
    assert not list(tmp_path.glob(".out.html.*"))  # atomic write left no temporary file


def test_page_is_self_contained_with_unique_ids(run_b: tuple[Path, str]) -> None:
    page = run_b[1]
    assert "<script" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "url(" not in page.replace("url(#", "")  # only in-document references
    assert "default-src 'none'" in page
    ids = Counter(re.findall(r"""\sid=["']([^"']+)["']""", page))
    assert ids and max(ids.values()) == 1, [i for i, n in ids.items() if n > 1]
    assert "Date" not in page.split("</style>", 1)[1].split("<footer>")[0].replace("Update", "")


def test_failures_draw_input_beside_read_back(run_b: tuple[Path, str]) -> None:
    page = run_b[1]
    assert "3 items; showing 3." in page  # methanol, acetate, D-alanine
    section = page.split('id="failures"', 1)[1].split("</section>", 1)[0]
    assert section.count("<svg") == 6
    assert section.index("methanol") < section.index("D-alanine")  # wrong under 3 lenses first
    assert "aria-label='OPSIN read-back of the name'" in section
    assert "Verified." in page


def test_disagreeing_report_is_flagged_and_rows_win(tmp_path: Path) -> None:
    run_dir = make_names_run(tmp_path / "b", NAMES_B)
    path = run_dir / "report.json"
    report = orjson.loads(path.read_bytes())
    report["metrics"]["lenses"]["exact"]["abs_rt_valid"].update(count=9, value=0.9)
    path.write_bytes(orjson.dumps(report))
    page = _render(run_dir)
    assert "The report disagrees with its rows." in page
    assert "metrics.lenses.exact.abs_rt_valid.count: recorded 9, recomputed 4" in page
    assert "40.0%" in page and "90.0%" not in page.split('id="headline"')[1].split("</section>")[0]


def test_placeholder_for_missing_or_bad_structures() -> None:
    assert "no structure" in structure_svg(None)
    assert "unparsable SMILES" in structure_svg("C1CC")
    assert "class='mol'" in structure_svg("CCO")


@pytest.mark.parametrize(
    ("values", "labels"),
    [
        ((1.2, 3.0, 4.5, 9.0, 14.0, 30.0), {"2", "5", "10", "20"}),  # 1-2-5 over 1.4 decades
        ((0.0004, 0.01, 0.3, 8.0, 120.0), {"0.001", "0.01", "0.1", "1", "10", "100"}),
    ],
)
def test_log_axis_labels_plain_major_ticks_only(
    values: tuple[float, ...], labels: set[str]
) -> None:
    from chemgauge.report.adapter import Distribution
    from chemgauge.report.plots import render_plot

    svg = render_plot(Distribution("t", "seconds", values, integer=False, log_x=True), "t")
    texts = {t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)}
    assert labels <= texts
    # No minor-tick label in scientific notation (they ran into each other).
    assert not any("×" in t or "^" in t for t in texts)


def test_table_cells_put_intervals_under_values_and_wrap_prose() -> None:
    from chemgauge.report.adapter import Table
    from chemgauge.report.html import table_html

    claim = "canonical isomeric SMILES of the seed's reading, compared as text"
    page = table_html(
        Table(
            "t",
            ("metric", "rate", "claim"),
            (("top10[syntheseus,exact]", "72.4% [65.1, 78.9] (21/29)", claim),),
        )
    )
    assert '<td class="key">top10[<wbr>syntheseus,<wbr>exact]</td>' in page
    assert (
        '<td>72.4% <span class="ci"><span>[65.1, 78.9]</span> <span>(21/29)</span></span></td>'
        in page
    )
    assert f'<td class="wrap">{claim.replace(chr(39), "&#x27;")}</td>' in page
