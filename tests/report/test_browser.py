"""The HTML report in a real browser: headless Chromium loads it cleanly and lays it out.

Console messages are read from Chromium's own log (``--enable-logging=stderr``); the page has
no script and a Content-Security-Policy that forbids every external load, so any console line
(a blocked resource, a parse problem) is a failure. A control page proves the check can fail.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from tests.conftest import missing
from tests.report.conftest import NAMES_B, make_names_run

pytestmark = pytest.mark.external

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
)
_CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\] (.*)")


def _chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    chromium = CHROMIUM or missing("program 'chromium'", "scripts/system-deps.sh installs it")
    return subprocess.run(
        [chromium, *_FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _console_messages(stderr: str) -> list[str]:
    return [m.group(1) for m in _CONSOLE.finditer(stderr)]


def test_console_check_catches_a_broken_page(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'\"></head><body>"
        '<img src="https://example.invalid/x.png" alt=""></body></html>'
    )
    proc = _chromium(page, tmp_path / "profile", "--dump-dom")
    assert any("example.invalid" in m for m in _console_messages(proc.stderr)), proc.stderr[-2000:]


def test_report_loads_cleanly_and_shows_key_elements(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from chemgauge.cli.app import app

    run_dir = make_names_run(tmp_path / "b", NAMES_B)
    page = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(page), "-q"])
    assert result.exit_code == 0, result.output

    dom = _chromium(page, tmp_path / "profile", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _console_messages(dom.stderr) == []
    for anchor in ("headline", "lenses", "breakdowns", "failures", "provenance"):
        assert f'id="{anchor}"' in dom.stdout, anchor
    # coverage, round-trip valid under the three lenses a run computes by default (parity,
    # strict, exact; the reference lenses only with --reference-lenses), confidently wrong
    assert dom.stdout.count('class="card"') == 5
    assert dom.stdout.count('class="plot"') == 4
    assert dom.stdout.count('class="mol"') + dom.stdout.count("class='mol'") >= 6

    # Laptop width: the screenshot must show a laid-out page, not a blank or error page.
    shot = tmp_path / "report.png"
    proc = _chromium(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1366,3000")
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    assert _console_messages(proc.stderr) == []
    image = Image.open(io.BytesIO(shot.read_bytes())).convert("L")
    assert image.size == (1366, 3000)
    dark = sum(image.histogram()[:128])
    assert dark > 0.005 * image.size[0] * image.size[1]  # text, plots and drawings are there
    # Nothing wider than the window: the right-most 60 px column is background only.
    margin = image.crop((1366 - 60, 0, 1366, 3000))
    assert margin.getextrema()[0] > 200
