"""bench/RESULTS.md is rendered from the bench scripts' JSON results, and says what it measured."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import render_results  # noqa: E402
import result_files  # noqa: E402


def test_results_md_is_the_rendering_of_the_json_results() -> None:
    expected = render_results.render(result_files.read_results())
    assert (BENCH / "RESULTS.md").read_text() == expected, (
        "bench/RESULTS.md is out of date: run .venv/bin/python bench/render_results.py"
    )


def test_results_md_opens_with_every_target_and_tells_no_history() -> None:
    page = (BENCH / "RESULTS.md").read_text()
    first_section = page.split("\n## ", 2)[1]
    assert first_section.startswith("Targets")
    targets = [f for r in result_files.read_results() for f in r["figures"] if "target" in f]
    assert first_section.count("\n| [") == len(targets) > 20
    for word in ("session", "issue", "before the", " was ", "tried"):
        assert word not in page.lower(), word


@pytest.mark.parametrize("path", sorted((BENCH / "results").glob("*.json")), ids=lambda p: p.stem)
def test_every_result_file_is_complete(path: Path) -> None:
    data = json.loads(path.read_text())
    assert data["bench"] == path.stem
    for key in ("title", "script", "command", "date", "machine", "load", "method"):
        assert isinstance(data[key], str) and data[key], key
    assert data["figures"]
    for item in data["figures"]:
        assert item["family"] in result_files.FAMILIES
        if "target" in item:
            result_files.target_met(item["value"], item["target"])  # parses


def test_target_met_contract() -> None:
    met = result_files.target_met
    assert met(1.04, "<= 1.15") and not met(1.16, "<= 1.15")
    assert met(1.7, ">= 1.7") and not met(1.69, ">= 1.7")
    assert met("yes", "== yes") and not met("no", "== yes")
    with pytest.raises(ValueError, match="needs a number"):
        met("fast", ">= 2")
    with pytest.raises(ValueError, match="op"):
        met(1, "about 2")
    with pytest.raises(ValueError, match="unknown family"):
        result_files.figure("chemistry", "x", 1)


def test_check_fails_on_a_missed_target_of_the_benches_named(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    ok = result_files.figure("canon", "fast enough", 2.0, "x", target=">= 1.7")
    slow = result_files.figure("canon", "fast enough", 1.2, "x", target=">= 1.7")
    for bench, item in (("good", ok), ("bad", slow)):
        result_files.write_result(
            bench, title=bench, method="m", figures=[item], load="1.0", command="c",
            path=folder / f"{bench}.json",
        )  # fmt: skip
    out = tmp_path / "RESULTS.md"
    args = ["--results", str(folder), "--out", str(out)]
    assert render_results.main([*args, "--check", "good"]) == 0
    assert render_results.main([*args, "--check", "bad"]) == 1
    assert render_results.main([*args, "--check-all"]) == 1
    page = out.read_text()
    assert "| fast enough | ≥ 1.7x | 1.2x | **no** |" in page
    with pytest.raises(SystemExit, match="no results for missing"):
        render_results.main([*args, "--check", "missing"])
