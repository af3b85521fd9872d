"""An outside forward system's run is a standard run envelope: verify, report, board, resume.

The systems are predictions files written from the demo corpus's own accepted products (so
every count below is known by construction) and a Python plugin that stops mid-run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from math import comb
from pathlib import Path

import pytest
from tests.families.forward.test_benchmark import strip_timing
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import DataQualityError
from chemgauge.families.forward import api
from chemgauge.families.forward.corpus import BenchReaction, demo_corpus_path, load_corpus
from chemgauge.families.forward.outside import Answer, OutsideSystem
from chemgauge.families.forward.systems import FORWARD_SYSTEMS

WRONG = "CCCCCCCCCC"  # decane: no demo reaction makes it


def _reactions() -> list[BenchReaction]:
    entries = load_corpus(demo_corpus_path()).entries
    return [e for e in entries if isinstance(e, BenchReaction)]


def _predictions(path: Path, right: set[int]) -> Path:
    """A predictions file: reaction i's accepted product first when i is in ``right``, else
    decane first and the product second."""
    lines = []
    for i, reaction in enumerate(_reactions()):
        product = ".".join(reaction.accepted_products_canonical[0])
        ranked = [product, WRONG] if i in right else [WRONG, product]
        lines.append(json.dumps({"reaction_id": reaction.reaction_id, "predictions": ranked}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(tmp_path: Path, name: str, right: set[int], **options: object) -> Path:
    preds = _predictions(tmp_path / f"{name}.jsonl", right)
    api.benchmark(None, tmp_path / name, model="predictions", predictions=preds, **options)
    return tmp_path / name


def test_an_outside_run_writes_the_standard_envelope_and_verifies(tmp_path: Path) -> None:
    n = len(_reactions())
    run = _run(tmp_path, "half", set(range(0, n, 2)))
    report = json.loads((run / "report.json").read_text())
    assert report["family"] == "forward" and "reproducibility_sha256" in report
    assert report["config"]["template_source"] == "outside"
    assert report["config"]["convention"] == "deduplicated"
    top1 = report["metrics"]["overall"]["end_to_end"]["top1_hit_rate"]
    assert (top1["count"], top1["n"]) == (len(range(0, n, 2)), n)
    scores = report["metrics"]["conventions"]["scores"]
    assert scores["deduplicated"]["top_k"]["1"]["count"] == top1["count"]
    assert scores["deduplicated"]["top_k"]["2"]["count"] == n
    good = CliRunner().invoke(app, ["verify", str(run)])
    assert good.exit_code == 0, good.output
    shown = CliRunner().invoke(app, ["report", str(run)])
    assert shown.exit_code == 0, shown.output

    # a hand-edited row: one miss turned into a hit
    rows = (run / "rows.jsonl").read_text().splitlines()
    for index, line in enumerate(rows):
        row = json.loads(line)
        if row["input_status"] == "valid" and not row["top1_hit"]:
            row["top1_hit"], row["best_correct_rank"] = True, 0
            rows[index] = json.dumps(row)
            break
    (run / "rows.jsonl").write_text("\n".join(rows) + "\n")
    bad = CliRunner().invoke(app, ["verify", str(run)])
    assert bad.exit_code == 1
    assert "FAIL" in bad.output


def _mcnemar(only_a: int, only_b: int) -> float:
    m, low = only_a + only_b, min(only_a, only_b)
    return min(1.0, 2 * sum(comb(m, i) for i in range(low + 1)) / 2**m) if m else 1.0


def test_a_board_of_outside_runs_gives_mcnemar_and_holm(tmp_path: Path) -> None:
    n = len(_reactions())
    sets = {"all": set(range(n)), "half": set(range(0, n, 2)), "two": {0, 1}}
    runs = [_run(tmp_path, name, right) for name, right in sets.items()]
    out = tmp_path / "board"
    done = CliRunner().invoke(app, ["board", *map(str, runs), "--out", str(out)])
    assert done.exit_code == 0, done.output
    board = json.loads((out / "board.json").read_text())
    ranking = board["boards"][0]["rankings"][0]
    assert ranking["metric"] == "top1"
    pairs = {(p["a"], p["b"]): p for p in ranking["pairs"]}
    raw = {}
    for (a, b), pair in pairs.items():
        only_a, only_b = len(sets[a] - sets[b]), len(sets[b] - sets[a])
        assert (pair["only_a"], pair["only_b"], pair["n"]) == (only_a, only_b, n)
        assert pair["test"] == "mcnemar-exact"
        assert pair["p"] == pytest.approx(_mcnemar(only_a, only_b))
        raw[a, b] = pair["p"]
    # Holm by hand: ascending p times (m - i), running maximum, capped at 1
    order = sorted(raw, key=raw.get)  # type: ignore[arg-type]
    running = 0.0
    for i, key in enumerate(order):
        running = max(running, min(1.0, (len(order) - i) * raw[key]))
        assert pairs[key]["p_holm"] == pytest.approx(running)


class _Interrupted(OutsideSystem):
    """A plugin answering every reaction's accepted product, stopping at its third call."""

    name = "interrupted"
    calls = 0
    stop_at: int | None = 3

    def _answer(self, batch: Sequence[BenchReaction]) -> list[Answer]:
        type(self).calls += 1
        if type(self).calls == self.stop_at:
            raise KeyboardInterrupt
        return [Answer(((".".join(r.accepted_products_canonical[0]),),)) for r in batch]


def test_a_killed_outside_run_resumes_from_its_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = _Interrupted()
    system.batch_size = 1
    monkeypatch.setitem(FORWARD_SYSTEMS._entries, "interrupted", lambda options: system)
    with pytest.raises(KeyboardInterrupt):
        api.benchmark(None, tmp_path / "run", model="interrupted", chunk_size=1)
    journal = tmp_path / "run" / "rows.jsonl.journal"
    assert journal.is_file() and not (tmp_path / "run" / "rows.jsonl").exists()
    _Interrupted.stop_at = None
    resumed = api.benchmark(None, tmp_path / "run", model="interrupted", chunk_size=1)
    assert resumed["timing"]["resumed_rows"] == 2  # the two reactions answered before it
    assert not journal.exists()
    whole = api.benchmark(None, tmp_path / "whole", model="interrupted", chunk_size=1)
    assert resumed["reproducibility_sha256"] == whole["reproducibility_sha256"]
    assert strip_timing(resumed["metrics"]) == strip_timing(whole["metrics"])
    assert CliRunner().invoke(app, ["verify", str(tmp_path / "run")]).exit_code == 0


def test_a_crashing_command_batch_is_counted_and_the_run_verifies(tmp_path: Path) -> None:
    import sys

    script = tmp_path / "model.py"
    first = _reactions()[0].reactants_original[0]
    script.write_text(
        "import sys\nlines = sys.stdin.read().splitlines()\n"
        f"if any(l.startswith({first!r}) for l in lines):\n    sys.exit('crashed')\n"
        "for l in lines:\n    print('C')\n"
    )
    with pytest.raises(DataQualityError, match="failed in the system"):
        api.benchmark(
            None,
            tmp_path / "run",
            model="command",
            command=[sys.executable, str(script)],
            batch_size=1,
        )
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    answers = report["metrics"]["conventions"]["answers"]
    crashed = sum(1 for r in _reactions() if r.reactants_original[0].startswith(first))
    assert (answers["error"], answers["answered"]) == (crashed, len(_reactions()) - crashed)
    assert report["counts"]["by_status"]["prediction_error"] == crashed
    assert CliRunner().invoke(app, ["verify", str(tmp_path / "run")]).exit_code == 0
