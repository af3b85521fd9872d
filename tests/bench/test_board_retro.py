"""bench/board_retro.py: the five-run board's check against ``compare`` and its result files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.report.boards import PATTERNS, make_retro_run, write_data

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import board_retro  # noqa: E402
import render_results  # noqa: E402

#: Five hand-made systems under the script's five names (the templates slot included).
FIVE = dict(
    zip(
        board_retro.BOARD_OF_FIVE,
        [*PATTERNS.values(), "1" * 30 + "2" * 5 + "0" * 5],
        strict=True,
    )
)


def test_board_of_five_agrees_with_compare_and_is_recorded(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    runs = {n: make_retro_run(tmp_path / "runs" / n, p, data, name=n) for n, p in FIVE.items()}
    markdown, standings, agree = board_retro.board_of_five(runs, tmp_path / "board")
    assert agree
    counts = {s["run"]: (s["count"], s["rank"], s["letters"]) for s in standings}
    # Top-1 hits are the pattern's 1s: 36, 30, 26, 24, 10 of the 40 targets.
    assert [c for c, _, _ in counts.values()] == [36, 30, 26, 24, 10]
    assert counts[board_retro.TEMPLATES][0] == 36  # the strong pattern
    assert markdown.startswith("# chemgauge board") and "| rank | run |" in markdown
    assert {p.name for p in (tmp_path / "board").iterdir()} == {
        "board.md",
        "board.html",
        "board.json",
    }

    path = tmp_path / "results" / "board_retro.json"
    board_retro.record_board(path, standings, agree)
    result = json.loads(path.read_text())
    assert result["script"] == "bench/board_retro.py"
    agreement, *rows = result["figures"]
    assert (agreement["value"], agreement["target"]) == ("yes", "== yes")
    assert [r["name"].rsplit(": ", 1)[1] for r in rows] == [s["run"] for s in standings]
    assert rows[0]["value"].startswith("90.0% [")  # 36/40 with its Wilson interval
    assert rows[0]["detail"].startswith("rank 1, group a; 36/40")
    page = render_results.render([result])
    assert "letters agree with compare" in page and "| yes |" in page


def test_a_disagreement_is_recorded_as_a_missed_target(tmp_path: Path) -> None:
    path = tmp_path / "board_retro.json"
    board_retro.record_board(path, [], False)
    (agreement,) = json.loads(path.read_text())["figures"]
    assert agreement["value"] == "no"
    assert not render_results.target_met(agreement["value"], agreement["target"])
