"""The retro adapter on real retro runs with a function-backed model (the injected boundary)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from tests.conftest import assert_valid_report

from chemgauge.errors import ConfigError, InputFileError
from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel
from chemgauge.report.compare import compare_runs
from chemgauge.report.html import render_compare_html, render_run_html
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.verify import verify_run

REACTIONS = (
    "CC(=O)O.CN>>CNC(C)=O",
    "CC(=O)Cl.NCC>>CCNC(C)=O",
    "C[C@H](N)C(=O)O.CO>>COC(=O)[C@H](C)N",
    "Brc1ccccc1.OB(O)c1ccccc1>>c1ccc(-c2ccccc2)cc1",
)
# Model A: exact syntheseus ranks 0, 1, 2 and a miss (no outputs).
OUTPUTS_A = {
    "CNC(C)=O": ["CC(O)=O.CN"],
    "CCNC(C)=O": ["CC(=O)O.CCN", "CC(=O)Cl.NCC"],
    "COC(=O)[C@H](C)N": ["CC(N)C(=O)O.CO", "C[C@@H](N)C(=O)O.CO", "C[C@H](N)C(=O)O.CO"],
}


def _run(root: Path, name: str, outputs: dict[str, list[str]], reactions=REACTIONS) -> Path:  # type: ignore[no-untyped-def]
    data = root / f"data_{name}"
    data.mkdir()
    (data / "test.smi").write_text("\n".join(reactions) + "\n")

    def fn(products: list[str]) -> list[list[str]]:
        return [outputs.get(p, []) for p in products]

    config = RetroEvalConfig.from_options(
        {
            "data_dir": str(data),
            "model_class": "fixed",
            "num_top_results": 3,
            "out": str(root / name),
            "executor": "serial",
        }
    )
    run_retro_eval(config, model=CallableRetroModel(fn, "fixed"))
    return root / name


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    root = tmp_path_factory.mktemp("retro")
    made = {"a": _run(root, "a", OUTPUTS_A), "b": _run(root, "b", {})}
    return made.__getitem__


def test_real_retro_run_verifies_and_edits_are_caught(
    runs: Callable[[str], Path], tmp_path: Path
) -> None:
    run = load_run(runs("a"))
    assert run.family == "retro"
    assert assert_valid_report(runs("a") / "report.json")["family"] == "retro"
    result = verify_run(run)
    assert result.ok, [d.describe() for d in result.differences[:5]]
    assert any(c.name == "input data" and c.ok for c in result.checks)

    edited = tmp_path / "edited"
    edited.mkdir()
    report = orjson.loads((runs("a") / "report.json").read_bytes())
    top1 = report["metrics"]["accuracy"]["syntheseus"]["exact"]["top_k"][0]
    assert (top1["k"], top1["count"], top1["n"]) == (1, 1, 4)
    top1.update(count=2, value=0.5)  # a consistent rate the rows do not give
    (edited / "report.json").write_bytes(orjson.dumps(report))
    (edited / "rows.jsonl").write_bytes((runs("a") / "rows.jsonl").read_bytes())
    wheres = [d.where for d in verify_run(load_run(edited)).differences]
    where = "metrics.accuracy.syntheseus.exact.top_k[0]"
    assert wheres == [f"{where}.count", f"{where}.value"]


def test_a_report_whose_rate_does_not_add_up_is_refused_at_load(
    runs: Callable[[str], Path], tmp_path: Path
) -> None:
    report = orjson.loads((runs("a") / "report.json").read_bytes())
    report["metrics"]["accuracy"]["syntheseus"]["exact"]["top_k"][0]["count"] = 2
    (tmp_path / "report.json").write_bytes(orjson.dumps(report))
    (tmp_path / "rows.jsonl").write_bytes((runs("a") / "rows.jsonl").read_bytes())
    with pytest.raises(
        InputFileError, match=r"metrics.accuracy.syntheseus.exact.top_k.0: .*count / n"
    ):
        load_run(tmp_path)


def test_a_report_missing_a_grid_cell_is_refused_at_load(
    runs: Callable[[str], Path], tmp_path: Path
) -> None:
    report = orjson.loads((runs("a") / "report.json").read_bytes())
    del report["metrics"]["accuracy"]["raw_slots"]["stereo_ignored"]
    (tmp_path / "report.json").write_bytes(orjson.dumps(report))
    (tmp_path / "rows.jsonl").write_bytes((runs("a") / "rows.jsonl").read_bytes())
    with pytest.raises(InputFileError, match=r"accuracy.raw_slots: matchers \['exact'\] are not"):
        load_run(tmp_path)


def test_compare_hand_checked(runs: Callable[[str], Path]) -> None:
    result = compare_runs(load_run(runs("a")), load_run(runs("b")))
    overall = {r["metric"]: r for r in result["overall"]}
    # B returns nothing: A's exact hits are at ranks 0, 1 and 2 (first three targets).
    top1, top3 = overall["top1[syntheseus,exact]"], overall["top3[syntheseus,exact]"]
    assert (top1["only_a"], top1["only_b"], top1["n"]) == (1, 0, 4)
    assert (top3["only_a"], top3["only_b"]) == (3, 0)
    assert top3["mcnemar_p"] == pytest.approx(0.25)  # 2 * (1/2)^3
    assert len(overall) == 8  # 2 conventions x 2 matchers x k in (1, 3)


def test_compare_refuses_other_data(runs: Callable[[str], Path], tmp_path: Path) -> None:
    other = _run(tmp_path, "c", OUTPUTS_A, reactions=REACTIONS[:3])
    with pytest.raises(ConfigError, match="data_sha256"):
        compare_runs(load_run(runs("a")), load_run(other))


def test_retro_html_draws_true_reactants_and_top_prediction(runs: Callable[[str], Path]) -> None:
    run = load_run(runs("a"))
    page = render_run_html(run, get_adapter("retro"), verify_run(run))
    failures = page.split('id="failures"', 1)[1].split("</section>", 1)[0]
    assert "3 items; showing 3." in failures  # ranks 1, 2 and the miss
    assert "aria-label='true reactants'" in failures
    assert "CC(=O)O.CCN" in failures  # the top prediction from the journal


def test_retro_html_without_the_journal_says_so(tmp_path: Path) -> None:
    folder = _run(tmp_path, "bare", OUTPUTS_A)
    (folder / "journal.jsonl").unlink()
    (folder / "predictions.jsonl").write_text('{"input": "CNC(C)=O"}\n')  # syntheseus's file
    run = load_run(folder)
    page = render_run_html(run, get_adapter("retro"), verify_run(run))
    assert "journal.jsonl not found: no predictions drawn" in page
    assert "CC(=O)O.CCN" not in page.split('id="failures"', 1)[1]


def test_retro_compare_cards_draw_product_truth_and_both_predictions(
    runs: Callable[[str], Path],
) -> None:
    a, b = load_run(runs("a")), load_run(runs("b"))
    page = render_compare_html(compare_runs(a, b), get_adapter("retro"), a, b)
    section = page.split('id="discordant"', 1)[1]
    # Top-1 under syntheseus and exact: only the first target, which A ranks first.
    listing = section.split("top1[syntheseus,exact]: A right, B wrong</h3>", 1)[1]
    card = listing.split('<article class="failure">', 1)[1].split("</article>", 1)[0]
    labels = re.findall(r"aria-label='([^']*)'", card)
    assert labels == ["product", "true reactants", "A: top prediction"]
    assert "no structure" in card  # B returned nothing: a placeholder, said in words
    details = dict(re.findall(r"<dt>([^<]*)</dt><dd>([^<]*)</dd>", card))
    assert details["A top prediction"] == "CC(O)=O.CN"
    assert details["B top prediction"] == "no valid output"
    assert details["A first correct rank (syntheseus, exact)"] == "1"
    assert details["B first correct rank (syntheseus, exact)"] == "none"


def test_retro_compare_chart_is_one_top_k_curve_per_convention_and_matcher(
    runs: Callable[[str], Path],
) -> None:
    a, b = load_run(runs("a")), load_run(runs("b"))
    page = render_compare_html(compare_runs(a, b), get_adapter("retro"), a, b)
    overall = page.split('id="overall"', 1)[1].split("</section>", 1)[0]
    captions = re.findall(r"<figcaption>([^<]*)</figcaption>", overall)
    assert [c.rsplit(": ", 1)[1] for c in captions] == [
        "syntheseus, exact",
        "syntheseus, stereo_ignored",
        "raw_slots, exact",
        "raw_slots, stereo_ignored",
    ]
    assert overall.count('class="plot"') == 4


def test_retro_compare_page_leaves_out_a_one_bucket_breakdown(runs: Callable[[str], Path]) -> None:
    a, b = load_run(runs("a")), load_run(runs("b"))
    comparison = compare_runs(a, b)
    assert {
        r["bucket"] for r in comparison["breakdowns"]["reaction_class"]["top1[syntheseus,exact]"]
    } == {"(none)"}
    page = render_compare_html(comparison, get_adapter("retro"), a, b)
    section = page.split('id="breakdowns"', 1)[1].split("</section>", 1)[0]
    one = section.split("<h3>reaction_class</h3>", 1)[1].split("<h3>", 1)[0]
    assert "<table>" not in one and "Every paired item is in one bucket ((none))." in one


def test_board_metrics_are_found_by_the_report_fields_not_by_their_names(
    runs: Callable[[str], Path],
) -> None:
    run = load_run(runs("a"))
    adapter = get_adapter("retro")
    assert adapter.hit_metrics(run)[:2] == ("top1[syntheseus,exact]", "top3[syntheseus,exact]")
    assert adapter.board_metric(run) == "top1[syntheseus,exact]"
    measured = adapter.measures(run, run.rows, ["top3[syntheseus,exact]", "mrr[raw_slots,exact]"])
    assert [m[0] for m in measured["top3[syntheseus,exact]"]] == [1.0, 1.0, 1.0, 0.0]
    assert [m[0] for m in measured["mrr[raw_slots,exact]"]] == [1.0, 1 / 2, 1 / 3, 0.0]
    # spelled like a metric, but the report holds no top-2 rate: unknown, not parsed
    with pytest.raises(KeyError):
        adapter.measures(run, run.rows, ["top2[syntheseus,exact]"])
    assert adapter.hit_description(run, "top2[syntheseus,exact]") == ""
    assert "first 3 outputs" in adapter.hit_description(run, "top3[syntheseus,exact]")
    panels = adapter.metric_panels(["top1[syntheseus,exact]", "top3[syntheseus,exact]"], run)
    assert [(p.title, p.metrics) for p in panels] == [
        ("syntheseus, exact", (("1", "top1[syntheseus,exact]"), ("3", "top3[syntheseus,exact]")))
    ]
