"""The OCSR adapter on real OCSR runs over a small rendered cohort with table-backed recognizers."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.conftest import assert_valid_report
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import InputFileError
from chemgauge.families.ocsr.cohort import COHORT, build_cohort
from chemgauge.families.ocsr.engine.base import RECOGNIZERS
from chemgauge.report.compare import compare_runs
from chemgauge.report.html import CSP, PAGE_CSS, render_run_html
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.verify import verify_run

GLY_L_ALA = "C[C@H](NC(=O)CN)C(=O)O"
ANSWERS = {
    "a": {"ethanol": "CCO", "gly_l_ala": "NCC(=O)NC(C)C(=O)O"},  # stereo dropped
    "b": {"ethanol": "CCO", "gly_l_ala": GLY_L_ALA},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    root = tmp_path_factory.mktemp("ocsr")
    small = tuple(e for e in COHORT if e.id in {"ethanol", "gly_l_ala"})
    manifest = build_cohort(root / "cohort", small)
    out = {}
    for name, table in ANSWERS.items():
        by_hash = {manifest.by_id[c].sha256: smiles for c, smiles in table.items()}

        def recognize(image: Path, by_hash: dict[str, str] = by_hash) -> str:
            return by_hash.get(hashlib.sha256(image.read_bytes()).hexdigest(), "")

        RECOGNIZERS.register(f"report_test_{name}", recognize, replace=True)
        args = [
            "ocsr",
            "run",
            "--manifest",
            str(manifest.root / "manifest.json"),
            "--model",
            "python",
        ]
        args += ["--callable", f"report_test_{name}", "-o", str(root / name), "--run", "--quiet"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        out[name] = root / name
    return out.__getitem__


def test_ocsr_run_is_recognized_and_verifies(runs: Callable[[str], Path], tmp_path: Path) -> None:
    run = load_run(runs("a"))
    assert (run.family, run.rows_path.name) == ("ocsr", "scored.jsonl")
    assert assert_valid_report(runs("a") / "report.json")["family"] == "ocsr"
    assert verify_run(run).ok

    edited = tmp_path / "edited"
    edited.mkdir()
    report = orjson.loads((runs("a") / "report.json").read_bytes())
    report["metrics"]["finite_reference"]["policies"]["exact"]["completed_exact"] += 1
    (edited / "report.json").write_bytes(orjson.dumps(report))
    (edited / "scored.jsonl").write_bytes((runs("a") / "scored.jsonl").read_bytes())
    wheres = [d.where for d in verify_run(load_run(edited)).differences]
    assert wheres == ["metrics.finite_reference.policies.exact.completed_exact"]


def test_compare_hand_checked(runs: Callable[[str], Path]) -> None:
    result = compare_runs(load_run(runs("a")), load_run(runs("b")))
    overall = {r["metric"]: r for r in result["overall"]}
    # Only the gly_l_ala base image differs: A drops its stereocentre, B reads it exactly.
    assert (overall["exact[exact]"]["only_a"], overall["exact[exact]"]["only_b"]) == (0, 1)
    assert overall["exact[exact]"]["mcnemar_p"] == 1.0
    assert (
        overall["exact[stereo_ignored]"]["only_a"],
        overall["exact[stereo_ignored]"]["only_b"],
    ) == (0, 0)
    assert result["discordant"]["exact[exact]"]["only_b"] == ["gly_l_ala#r1"]


def test_ocsr_html_shows_reference_beside_recognized(runs: Callable[[str], Path]) -> None:
    run = load_run(runs("a"))
    page = render_run_html(run, get_adapter("ocsr"), verify_run(run))
    failures = page.split('id="failures"', 1)[1].split("</section>", 1)[0]
    assert "tetrahedral_stereo_missing" in failures
    assert "aria-label='recognized'" in failures


def _cards(page: str) -> list[str]:
    return re.findall(r'<div class="card">.*?</div></div>', page)


def test_ocsr_run_page_has_the_report_style_and_headline(runs: Callable[[str], Path]) -> None:
    own = (runs("a") / "report.html").read_text()
    run = load_run(runs("a"))
    report = render_run_html(run, get_adapter("ocsr"), verify_run(run))
    assert PAGE_CSS in own and CSP in own
    # Exact graphs over the planned attempts with a reference, per policy: the same cards.
    finite = run.metrics["finite_reference"]
    assert len(_cards(own)) == len(finite["policies"]) > 1
    assert _cards(own) == _cards(report)
    planned = finite["planned"]
    exact = finite["policies"]["exact"]["completed_exact"]
    assert f'exact graph (exact)</div><div class="value">{100 * exact / planned:.1f}%' in own
    assert f'<div class="count">{exact}/{planned}</div>' in _cards(own)[0]
    assert own.count('<article class="failure attempt">') == len(run.rows)


def _edited_copy(source: Path, folder: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    folder.mkdir()
    report = orjson.loads((source / "report.json").read_bytes())
    edit(report)
    (folder / "report.json").write_bytes(orjson.dumps(report))
    (folder / "scored.jsonl").write_bytes((source / "scored.jsonl").read_bytes())
    return folder


def test_a_report_of_another_schema_version_is_refused(
    runs: Callable[[str], Path], tmp_path: Path
) -> None:
    def older(report: dict[str, Any]) -> None:
        report["family_schema_version"] = 2

    with pytest.raises(
        InputFileError, match="family schema version 2; this chemgauge reads version 3"
    ):
        load_run(_edited_copy(runs("a"), tmp_path / "v2", older))


def test_a_rate_of_the_old_shape_is_refused(runs: Callable[[str], Path], tmp_path: Path) -> None:
    def old_shape(report: dict[str, Any]) -> None:
        exact = report["metrics"]["finite_reference"]["policies"]["exact"]
        block = exact["completed_exact_over_planned"]
        exact["completed_exact_over_planned"] = {
            "successes": block["count"],
            "n": block["n"],
            "rate": round(block["value"], 6),
            "wilson95": [round(bound, 6) for bound in block["interval"]],
        }

    with pytest.raises(InputFileError, match="completed_exact_over_planned"):
        load_run(_edited_copy(runs("a"), tmp_path / "old", old_shape))


def test_board_metric_and_descriptions_come_from_the_policies(
    runs: Callable[[str], Path],
) -> None:
    run = load_run(runs("a"))
    adapter = get_adapter("ocsr")
    assert adapter.hit_metrics(run) == tuple(f"exact[{p}]" for p in run.metrics["policies"])
    assert adapter.board_metric(run) == "exact[exact]"
    described = adapter.hit_description(run, "exact[stereo_ignored]")
    assert described.startswith("the exact graph (stereo_ignored)")
    [headline, *_] = adapter.headline(run)
    block = run.metrics["finite_reference"]["policies"]["exact"]["completed_exact_over_planned"]
    assert (headline.count, headline.n, headline.estimate) == (
        block["count"],
        block["n"],
        block["value"],
    )
