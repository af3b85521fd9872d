"""The p2s adapter on real p2s run folders: the small table-provider benchmark of tests/p2s,
built, then answered by the structure-only, random and property-oracle baselines through
``chemgauge p2s run``, exactly as a user would.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from tests.conftest import assert_valid_report
from tests.families.p2s.conftest import DIRECTORIES, SECRET, SOURCES, write_table
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.families.p2s.build import build_benchmark
from chemgauge.families.p2s.claim import claim_report, prediction_paths
from chemgauge.families.p2s.config import BuildConfig
from chemgauge.families.p2s.engine.properties import TableProvider
from chemgauge.families.p2s.family import FAMILY
from chemgauge.report.compare import compare_runs
from chemgauge.report.html import render_run_html
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.verify import verify_run

runner = CliRunner()
BASELINES = ("structure_only", "random", "property_oracle")
TASKS_PER_PROPERTY = {"correct": 10, "shuffled": 10, "counterfactual": 20}


def _build(root: Path, seed: int) -> tuple[Path, Path]:
    sources = root / "sources.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    config = BuildConfig(
        directories=DIRECTORIES, candidates=4, counterfactuals_per_record=2, seed=seed
    )
    table = root / "table.jsonl"
    write_table(sources, table, config)
    build_benchmark(sources, root / "data", TableProvider(table), config, secret=SECRET)
    return root / "data", table


def _run(data: Path, table: Path, out: Path, model: str, *extra: str) -> Path:
    args = ["p2s", "run", str(data), "-m", model, "-o", str(out), "-q"]
    args += ["--provider", "table", "--table", str(table), *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return out / model


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Run folders by name: the three baselines, a dipole-only run and one on other data."""
    root = tmp_path_factory.mktemp("p2s")
    data, table = _build(root, seed=0)
    folders = {m: _run(data, table, root / "runs", m) for m in BASELINES}
    folders["dipole_only"] = _run(data, table, root / "dipole", "random", "-p", "dipole")
    other = root / "other"
    other.mkdir()
    other_data, other_table = _build(other, seed=1)
    folders["other_data"] = _run(other_data, other_table, other / "runs", "random")
    folders["data"] = data
    return folders.__getitem__


def _copy(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / run.name
    shutil.copytree(run, target)
    return target


def test_run_folder_is_a_verified_p2s_run(runs: Callable[[str], Path]) -> None:
    run = load_run(runs("property_oracle"))
    assert run.family == "p2s" and run.rows_path.name == "rows.jsonl"
    assert assert_valid_report(runs("property_oracle") / "report.json")["family"] == "p2s"
    assert len(run.rows) == len(DIRECTORIES) * sum(TASKS_PER_PROPERTY.values())
    result = verify_run(run)
    assert result.ok, [d.describe() for d in result.differences]
    hashed = [c for c in result.checks if c.name.startswith("input ")]
    # tasks and labels of 9 views, and the 9 prediction files, all present and unchanged
    assert len(hashed) == 27 and all(c.ok for c in hashed)
    headline = {r.label: r for r in get_adapter("p2s").headline(run)}
    assert len(headline) == 9
    own = headline["dipole: own property"]
    assert (own.count, own.n, own.estimate) == (10, 10, 1.0) and own.low is not None
    assert own.method == "wilson95"


def test_claim_from_rows_equals_the_claim_command(runs: Callable[[str], Path]) -> None:
    for model in BASELINES:
        report = orjson.loads((runs(model) / "report.json").read_bytes())
        for directory in DIRECTORIES:
            from_rows = report["metrics"]["properties"][directory]["claim"]
            native = claim_report(
                runs("data"), directory, prediction_paths(runs(model), directory), model=model
            )
            for key in ("accuracy", "shuffle_drop", "counterfactual_flip", "use_claim"):
                assert from_rows[key] == native[key], (model, directory, key)
            assert from_rows["use_claim"] is (model == "property_oracle")


def test_score_run_rebuilds_the_same_rows_from_prediction_files(
    runs: Callable[[str], Path], tmp_path: Path
) -> None:
    # Prediction files made elsewhere (no manifest, no rows): score --out makes a full run.
    bare = tmp_path / "elsewhere"
    for directory in DIRECTORIES:
        shutil.copytree(runs("random") / directory, bare / directory)
        for journal in (bare / directory).glob("*.journal.jsonl"):
            journal.unlink()
    args = ["p2s", "score", "--out", str(bare), "--data", str(runs("data"))]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "use claim" in result.output and "accuracy [95% CI]" in result.output
    assert (bare / "rows.jsonl").read_bytes() == (runs("random") / "rows.jsonl").read_bytes()
    assert verify_run(load_run(bare)).ok
    report = orjson.loads((bare / "report.json").read_bytes())
    assert report["metrics"]["model"] == {"name": "elsewhere"}


def test_hand_edited_report_is_caught(runs: Callable[[str], Path], tmp_path: Path) -> None:
    folder = _copy(runs("random"), tmp_path)
    report = orjson.loads((folder / "report.json").read_bytes())
    properties = report["metrics"]["properties"]
    properties["dipole"]["views"]["correct"]["statuses"]["hit"] += 1
    properties["gap"]["claim"]["use_claim"] = True
    (folder / "report.json").write_bytes(orjson.dumps(report))
    result = verify_run(load_run(folder))
    assert not result.ok
    assert [d.where for d in result.differences] == [
        "metrics.properties.dipole.views.correct.statuses.hit",
        "metrics.properties.gap.claim.use_claim",
    ]

    cli = runner.invoke(app, ["verify", str(folder)])
    assert cli.exit_code == 1
    assert "metrics.properties.dipole.views.correct.statuses.hit: recorded 3, recomputed 2" in (
        cli.output
    )

    # a count that no longer matches its value is no rate: the report is refused on loading
    properties["dipole"]["views"]["correct"]["accuracy"]["count"] += 1
    (folder / "report.json").write_bytes(orjson.dumps(report))
    with pytest.raises(InputFileError, match=r"metrics\.properties\.dipole\.views\.correct"):
        load_run(folder)


def test_a_report_of_another_schema_version_or_without_its_claim_settings_is_refused(
    runs: Callable[[str], Path], tmp_path: Path
) -> None:
    folder = _copy(runs("random"), tmp_path)
    report = orjson.loads((folder / "report.json").read_bytes())
    assert report["family_schema_version"] == FAMILY.schema_version == 2
    (folder / "report.json").write_bytes(orjson.dumps({**report, "family_schema_version": 1}))
    with pytest.raises(InputFileError, match="family schema version 1; this chemgauge reads"):
        load_run(folder)
    config = {k: v for k, v in report["config"].items() if k != "claim"}
    (folder / "report.json").write_bytes(orjson.dumps({**report, "config": config}))
    with pytest.raises(InputFileError, match=r"config\.claim: no claim settings"):
        get_adapter("p2s").headline(load_run(folder))


def test_truncated_or_edited_rows_are_caught(runs: Callable[[str], Path], tmp_path: Path) -> None:
    folder = _copy(runs("random"), tmp_path)
    rows = folder / "rows.jsonl"
    lines = rows.read_bytes().splitlines(keepends=True)

    rows.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])  # cut mid-line
    result = verify_run(load_run(folder))
    assert not result.ok
    assert any("unreadable" in str(d.recomputed) for d in result.differences)
    assert {"reproducibility_sha256"} <= {d.where for d in result.differences}
    with pytest.raises(InputFileError, match="unreadable row"):
        load_run(folder).require_clean_rows()

    rows.write_bytes(b"".join(lines[:-5]))  # whole rows missing at the end
    wheres = {d.where for d in verify_run(load_run(folder)).differences}
    assert "metrics.properties.electronic.views.counterfactual.accuracy.n" in wheres
    assert "reproducibility_sha256" in wheres

    edited = [orjson.loads(line) for line in lines]
    edited[0]["status"] = "hit" if edited[0]["status"] != "hit" else "miss"
    rows.write_bytes(b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in edited))
    wheres = {d.where for d in verify_run(load_run(folder)).differences}
    assert "metrics.properties.dipole.views.correct.accuracy.count" in wheres
    assert "reproducibility_sha256" in wheres


def test_changed_prediction_file_is_caught(runs: Callable[[str], Path], tmp_path: Path) -> None:
    folder = _copy(runs("random"), tmp_path)
    predictions = folder / "dipole" / "correct.jsonl"
    predictions.write_bytes(predictions.read_bytes() + b"\n")
    result = verify_run(load_run(folder))
    assert [d.where.split(" (")[0] for d in result.differences] == [
        "inputs[predictions:dipole/correct].sha256"
    ]


def test_compare_pairs_views_and_counts_by_hand(runs: Callable[[str], Path]) -> None:
    oracle, blind = load_run(runs("property_oracle")), load_run(runs("structure_only"))
    result = compare_runs(oracle, blind, seed=3)
    assert result["protocol"]["match"] is True
    assert result["items"] == {"shared": 120, "only_in_a": 0, "only_in_b": 0}
    overall = {r["metric"]: r for r in result["overall"]}
    assert list(overall) == ["hit[correct]", "hit[shuffled]", "hit[counterfactual]"]
    blind_hits = {
        c: sum(r["status"] == "hit" for r in blind.rows if r["condition"] == c)
        for c in TASKS_PER_PROPERTY
    }
    for condition in ("correct", "counterfactual"):
        r = overall[f"hit[{condition}]"]
        # The oracle is right on every task of these views: B is never right alone.
        n = 3 * TASKS_PER_PROPERTY[condition]
        assert (r["n"], r["only_b"], r["only_a"]) == (n, 0, n - blind_hits[condition])
        assert r["mcnemar_p"] < 1e-3 and r["holm_p"] >= r["mcnemar_p"]
        low, high = r["difference"]["interval"]
        assert 0 < low <= r["difference"]["value"] <= high
    by_property = result["breakdowns"]["property"]["hit[correct]"]
    assert [b["bucket"] for b in by_property] == sorted(DIRECTORIES)
    assert sum(b["n"] for b in by_property) == 30
    assert compare_runs(oracle, blind, seed=3) == result  # seeded: same numbers again


def test_compare_refuses_runs_over_other_items_unless_forced(
    runs: Callable[[str], Path], tmp_path: Path
) -> None:
    full = load_run(runs("random"))
    for other in ("dipole_only", "other_data"):
        with pytest.raises(ConfigError, match=r"refusing to compare.*data_sha256"):
            compare_runs(full, load_run(runs(other)))
    forced = compare_runs(full, load_run(runs("dipole_only")), force=True)
    assert forced["protocol"]["match"] is False
    assert forced["items"] == {"shared": 40, "only_in_a": 80, "only_in_b": 0}
    # Same model, same seed, same tasks: the shared items agree everywhere.
    assert all(r["only_a"] == r["only_b"] == 0 for r in forced["overall"])

    cli = runner.invoke(app, ["compare", str(runs("random")), str(runs("other_data"))])
    assert cli.exit_code != 0 and isinstance(cli.exception, ConfigError)
    page, data = tmp_path / "cmp" / "compare.html", tmp_path / "cmp" / "compare.json"
    args = ["compare", str(runs("property_oracle")), str(runs("random")), "--out"]
    cli = runner.invoke(app, [*args, str(page.parent)])
    assert cli.exit_code == 0, cli.output
    assert "hit[counterfactual]" in cli.output
    html = page.read_text()
    discordant = html.split('id="discordant"', 1)[1]
    assert "mark-true" in discordant and "mark-chosen" in discordant
    assert orjson.loads(data.read_bytes())["family"] == "p2s"


def test_html_has_claim_plots_and_marked_candidates(runs: Callable[[str], Path]) -> None:
    run = load_run(runs("random"))
    page = render_run_html(run, get_adapter("p2s"), verify_run(run), max_failures=3)
    for anchor in ("headline", "accuracy", "claim", "answers", "failures", "provenance"):
        assert f'id="{anchor}"' in page, anchor
    assert 'id="counterfactual-failures"' in page
    assert page.count('class="card"') == 9
    assert page.count('class="plot"') == 5  # accuracy, two claim plots, two distributions
    claim = page.split('id="claim"', 1)[1].split("</section>", 1)[0]
    assert "Shuffle drop" in claim and "Counterfactual flip" in claim and "use claim" in claim
    failures = page.split('id="failures"', 1)[1].split("</section>", 1)[0]
    # Three cases, each the masked scaffold and four candidates; one true, one chosen each.
    assert failures.count("<svg") == 15
    assert failures.count('class="mark-true"') == 3
    assert failures.count('class="mark-chosen"') == 3
    assert re.search(r"candidate \d · true", failures) and re.search(
        r"candidate \d · chosen", failures
    )
    cf = page.split('id="counterfactual-failures"', 1)[1].split("</section>", 1)[0]
    assert "donor (counterfactual answer)" in cf and "source molecule&#x27;s own answer" in cf


def test_cli_report_prints_headline_and_writes_html(
    runs: Callable[[str], Path], tmp_path: Path
) -> None:
    page = tmp_path / "oracle.html"
    result = runner.invoke(app, ["report", str(runs("property_oracle")), "--out", str(page)])
    assert result.exit_code == 0, result.output
    assert "dipole: own property" in result.output and "100.0% [72.2, 100.0]" in result.output
    assert page.read_text().count('class="card"') == 9


@pytest.mark.external
def test_p2s_report_in_headless_chromium(runs: Callable[[str], Path], tmp_path: Path) -> None:
    from PIL import Image
    from tests.report.test_browser import _chromium, _console_messages

    page = tmp_path / "p2s.html"
    result = runner.invoke(
        app, ["report", str(runs("random")), "--out", str(page), "--max-failures", "4", "-q"]
    )
    assert result.exit_code == 0, result.output
    dom = _chromium(page, tmp_path / "profile", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _console_messages(dom.stderr) == []
    for anchor in ("headline", "accuracy", "claim", "answers", "failures", "provenance"):
        assert f'id="{anchor}"' in dom.stdout, anchor
    assert dom.stdout.count('class="mark-true"') == 8  # 4 own-property + 4 counterfactual cases

    shot = tmp_path / "p2s.png"
    proc = _chromium(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1366,4000")
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    assert _console_messages(proc.stderr) == []
    image = Image.open(shot).convert("L")
    assert image.size == (1366, 4000)
    assert sum(image.histogram()[:128]) > 0.005 * 1366 * 4000  # text, plots and drawings
    assert image.crop((1366 - 60, 0, 1366, 4000)).getextrema()[0] > 200  # nothing too wide
    # The chosen candidate's dashed frame is drawn: Okabe-Ito vermillion, which nothing else on
    # a verified p2s page uses (plots here have at most three series: blue, orange, green).
    colours = Image.open(shot).convert("RGB").getcolors(1366 * 4000) or []
    assert any(abs(r - 0xD5) < 8 and abs(g - 0x5E) < 8 and b < 8 for _, (r, g, b) in colours)
