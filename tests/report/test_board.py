"""``chemgauge board`` on real runs: boards per item set, refusals, metrics, letters against
the pairwise ``compare`` results, determinism, and the command's files."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import orjson
import pytest
from tests.report.boards import PATTERNS, REACTIONS, make_retro_run, make_retro_runs, write_data
from tests.report.conftest import CORPUS, NAMES_A, NAMES_B, make_names_run
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.report.adapter import FamilyAdapter
from chemgauge.report.board import BoardConfig, build_leaderboard
from chemgauge.report.board_json import leaderboard_to_dict
from chemgauge.report.compare import compare_runs, holm_adjust
from chemgauge.report.entrants import enter_runs, find_reports, unique_labels
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.standings import StatSettings

TOP1 = "top1[syntheseus,exact]"


@pytest.fixture(scope="module")
def retro_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_retro_runs(tmp_path_factory.mktemp("board"))


def _board(paths: list[Path], **config: object) -> dict:  # type: ignore[type-arg]
    leaderboard = build_leaderboard(enter_runs(paths), BoardConfig(**config))  # type: ignore[arg-type]
    return leaderboard_to_dict(leaderboard)


def _letters(ranking: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {s["run"]: s["letters"] for s in ranking["standings"]}


def test_retro_board_by_hand(retro_runs: dict[str, Path]) -> None:
    result = _board(list(retro_runs.values()))
    (board,) = result["boards"]
    assert board["family"] == "retro" and board["items"] == 40 and board["notes"] == []
    (ranking,) = board["rankings"]
    assert ranking["metric"] == TOP1 and ranking["kind"] == "hit"
    ranked = [(s["run"], s["rank"], s["count"], s["n"]) for s in ranking["standings"]]
    assert ranked == [
        ("strong", 1, 36, 40),
        ("medium", 2, 26, 40),
        ("medium-2", 3, 24, 40),
        ("weak", 4, 10, 40),
    ]
    pairs = {(p["a"], p["b"]): p for p in ranking["pairs"]}
    close = pairs["medium", "medium-2"]  # 4 targets only medium hits, 2 only medium-2
    assert (close["only_a"], close["only_b"]) == (4, 2)
    assert close["p"] == pytest.approx(2 * (1 + 6 + 15) / 64)
    assert pairs["medium", "strong"]["p"] == pytest.approx(2 / 2**10)  # 10 vs 0
    assert _letters(ranking) == {"strong": "a", "medium": "b", "medium-2": "b", "weak": "c"}
    identity = {r["label"]: r for r in board["runs"]}
    assert identity["weak"]["system"] == "weak"
    assert identity["weak"]["check"] == "verified"
    assert identity["weak"]["config_sha256"] == load_run(retro_runs["weak"]).envelope.config_sha256


def test_letters_agree_with_pairwise_compare(retro_runs: dict[str, Path]) -> None:
    """Every pair's counts and raw p-value are compare's; Holm over all pairs; two runs share
    a letter exactly when the Holm-adjusted p-value is above alpha."""
    for metric in (TOP1, "top3[syntheseus,exact]"):
        result = _board(list(retro_runs.values()), metrics=(metric,))
        ranking = result["boards"][0]["rankings"][0]
        letters = _letters(ranking)
        raw = []
        for pair in ranking["pairs"]:
            a, b = load_run(retro_runs[pair["a"]]), load_run(retro_runs[pair["b"]])
            compared = compare_runs(a, b)
            row = next(r for r in compared["overall"] if r["metric"] == metric)
            assert (pair["only_a"], pair["only_b"], pair["n"]) == (
                row["only_a"],
                row["only_b"],
                row["n"],
            )
            assert pair["p"] == row["mcnemar_p"]
            assert pair["difference"]["interval"] == row["difference"]["interval"]
            raw.append(row["mcnemar_p"])
        assert [p["p_holm"] for p in ranking["pairs"]] == holm_adjust(raw)
        for pair in ranking["pairs"]:
            shares = bool(set(letters[pair["a"]]) & set(letters[pair["b"]]))
            assert shares == (pair["p_holm"] > 0.05), (metric, pair)


def test_two_item_sets_give_two_boards_unless_forced(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    full = [make_retro_run(tmp_path / n, PATTERNS[n], data) for n in ("strong", "weak")]
    short = make_retro_run(tmp_path / "short", PATTERNS["medium"], data, limit=30)
    result = _board([*full, short])
    first, second = result["boards"]
    assert [r["label"] for r in first["runs"]] == ["strong", "weak"] and first["items"] == 40
    assert [r["label"] for r in second["runs"]] == ["short"] and second["items"] == 30
    assert second["notes"][0].startswith("Not ranked with board 1: not over the same items")
    assert "limit 30 vs none" in second["notes"][0] and "--force" in second["notes"][0]
    # Forced: one board on the 30 targets all three runs have, and the board says so.
    (forced,) = _board([*full, short], force=True)["boards"]
    assert forced["items"] == 30 and len(forced["runs"]) == 3
    assert forced["notes"][0].startswith("Forced (--force): not every run is over the same items")
    assert "strong: 10 of its 40 items left out." in forced["notes"]
    counts = {s["run"]: s["n"] for s in forced["rankings"][0]["standings"]}
    assert counts == {"strong": 30, "weak": 30, "short": 30}


def test_other_data_file_and_other_family_are_other_boards(
    retro_runs: dict[str, Path], tmp_path: Path
) -> None:
    reactions = (*REACTIONS[:39], "CCBr.O>>CCO")
    data = write_data(tmp_path / "data", reactions)
    other = make_retro_run(tmp_path / "other", PATTERNS["strong"], data, reactions=reactions)
    names = make_names_run(tmp_path / "names", NAMES_A)
    result = _board([retro_runs["strong"], retro_runs["weak"], other, names])
    assert [(b["number"], b["family"], len(b["runs"])) for b in result["boards"]] == [
        (1, "names", 1),
        (2, "retro", 2),
        (3, "retro", 1),
    ]
    assert "data_sha256" in result["boards"][2]["notes"][0]
    assert "One run: nothing to compare it with." in result["boards"][0]["notes"]


def test_tampered_run_is_left_off_with_its_reason(
    retro_runs: dict[str, Path], tmp_path: Path
) -> None:
    tampered = tmp_path / "tampered"
    shutil.copytree(retro_runs["medium-2"], tampered)
    report = orjson.loads((tampered / "report.json").read_bytes())
    top1 = report["metrics"]["accuracy"]["syntheseus"]["exact"]["top_k"][0]
    top1.update(count=39, value=39 / top1["n"])  # a consistent rate the rows do not give
    (tampered / "report.json").write_bytes(orjson.dumps(report))
    result = _board([retro_runs["strong"], retro_runs["weak"], tampered])
    assert [r["label"] for r in result["boards"][0]["runs"]] == ["strong", "weak"]
    (refused,) = result["refused"]
    assert refused["path"] == str(tampered / "report.json")
    assert refused["reason"].startswith("fails verify (")
    assert "metrics.accuracy.syntheseus.exact.top_k[0].count: recorded 39" in refused["reason"]
    # --no-verify enters it, and the board says it was not checked.
    unchecked = build_leaderboard(enter_runs([tampered], verify=False))
    assert unchecked.verified is False
    assert unchecked.boards[0].entrants[0].check == "not verified (--no-verify)"


def test_unreadable_runs_are_refused_not_fatal(retro_runs: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "report.json").write_text("{not json")
    cut = tmp_path / "cut"
    shutil.copytree(retro_runs["weak"], cut)
    rows = cut / "rows.jsonl"
    rows.write_bytes(rows.read_bytes()[:-20])
    entry = enter_runs([retro_runs["strong"], broken, cut])
    assert [e.label for e in entry.entrants] == ["strong"]
    reasons = {Path(r.path).parent.name: r.reason for r in entry.refusals}
    assert reasons["broken"].startswith("report is not valid JSON")
    assert "fails verify" in reasons["cut"] and "rows.jsonl, line 40" in reasons["cut"]
    unchecked = enter_runs([cut], verify=False)
    assert "unreadable row" in unchecked.refusals[0].reason


def test_folder_search_labels_and_errors(retro_runs: dict[str, Path], tmp_path: Path) -> None:
    root = next(iter(retro_runs.values())).parent
    found = find_reports([root, retro_runs["weak"], retro_runs["weak"] / "report.json"])
    assert [p.parent.name for p in found] == sorted(PATTERNS)  # each run once
    reports = [Path("a/x/report.json"), Path("b/x/report.json"), Path("c/y/r.json")]
    assert unique_labels(reports) == [
        "a/x",
        "b/x",
        "r",  # a report not named report.json is labelled by its own name
    ]
    with pytest.raises(InputFileError, match="no such run folder"):
        find_reports([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFileError, match="no run folder"):
        find_reports([tmp_path / "empty"])


def test_board_does_not_depend_on_the_order_of_runs(retro_runs: dict[str, Path]) -> None:
    paths = list(retro_runs.values())
    one = _board(paths, metrics=(TOP1, "mrr[syntheseus,exact]"))
    two = _board(paths[::-1], metrics=(TOP1, "mrr[syntheseus,exact]"))
    assert orjson.dumps(one) == orjson.dumps(two)


def test_mean_metric_bootstraps(retro_runs: dict[str, Path]) -> None:
    metric = "mrr[syntheseus,exact]"
    result = _board(list(retro_runs.values()), metrics=(metric,), stats=StatSettings(seed=4))
    ranking = result["boards"][0]["rankings"][0]
    assert ranking["kind"] == "mean"
    values = {s["run"]: s["value"] for s in ranking["standings"]}
    # weak: 10 targets at rank 1 (1.0) and 10 at rank 2 (0.5): MRR (10 + 5) / 40.
    assert values["weak"]["estimate"] == pytest.approx(15 / 40)
    assert values["weak"]["method"] == "paired-bootstrap-percentile"
    low, high = values["weak"]["interval"]
    assert low < 15 / 40 < high
    pair = next(p for p in ranking["pairs"] if {p["a"], p["b"]} == {"strong", "weak"})
    assert pair["test"] == "paired-bootstrap" and pair["significant"]
    assert "only_a" not in pair


def test_retro_measures_equal_the_row_by_row_default(retro_runs: dict[str, Path]) -> None:
    run = load_run(retro_runs["weak"])
    adapter = get_adapter("retro")
    names = [*adapter.hit_metrics(run), *(s.name for s in adapter.score_metrics(run))]
    assert len(names) == 2 * 2 + 2  # k in 1 and 3, and MRR, under two conventions
    fast = adapter.measures(run, run.rows, names)
    assert fast == FamilyAdapter.measures(adapter, run, run.rows, names)
    assert sum(v[0] for v in fast[TOP1] if v) == 10
    with pytest.raises(KeyError):
        adapter.measures(run, run.rows, ["top1[syntheseus,stereo_ignored]"])


def test_unknown_metric_fails_with_did_you_mean(retro_runs: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match=r"no metric 'top1\[syntheseus,exakt\]'.*Did you mean"):
        _board(list(retro_runs.values()), metrics=("top1[syntheseus,exakt]",))


def test_runs_without_the_metric_are_left_off(retro_runs: dict[str, Path], tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    stereo = make_retro_run(
        tmp_path / "stereo", PATTERNS["medium"], data, matchers="exact,stereo_ignored"
    )
    # The runs share items (same data) but only one has the stereo-ignored matcher.
    result = _board([retro_runs["strong"], stereo], metrics=("top1[syntheseus,stereo_ignored]",))
    assert [r["label"] for r in result["boards"][0]["runs"]] == ["stereo"]
    assert result["refused"][0]["reason"].startswith("has no metric top1[syntheseus,stereo_ig")


def test_breakdown_boards(retro_runs: dict[str, Path]) -> None:
    board = _board(list(retro_runs.values()))["boards"][0]
    buckets = {(b["dimension"], b["bucket"]): b for b in board["breakdowns"]}
    # One reaction class only ("(none)"): that breakdown would be the board itself.
    assert set(buckets) == {("num_reactants", "2"), ("num_reactants", "3")}
    three = buckets["num_reactants", "3"]  # targets 4, 8, ..., 40
    assert three["items"] == 10
    counts = {s["run"]: s["count"] for s in three["standings"]}
    assert counts == {"strong": 9, "medium": 6, "medium-2": 6, "weak": 2}
    pair = next(p for p in three["pairs"] if {p["a"], p["b"]} == {"strong", "weak"})
    assert (pair["a"], pair["only_a"], pair["only_b"]) == ("strong", 7, 0)
    assert len(three["pairs"]) == 6  # its own Holm family of six pairs


def test_warnings_on_the_board(retro_runs: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "copy-of-weak"
    shutil.copytree(retro_runs["weak"], copy)
    notes = _board([retro_runs["weak"], copy], metrics=("mrr[syntheseus,exact]",))["boards"][0]
    assert "copy-of-weak, weak have identical rows" in notes["notes"][0]
    # 6 pairs with 100 resamples: the smallest Holm p is 6/101 > 0.05.
    coarse = _board(
        list(retro_runs.values()),
        metrics=("mrr[syntheseus,exact]",),
        stats=StatSettings(resamples=100),
    )["boards"][0]["notes"]
    assert any("no difference can be significant: raise --resamples" in n for n in coarse)
    data = write_data(tmp_path / "data")
    deep = make_retro_run(tmp_path / "deep", PATTERNS["weak"], data, num_top_results=5)
    mixed = [retro_runs["strong"], deep]
    assert _board(mixed)["boards"][0]["notes"] == []  # top-1: both keep at least one output
    top5 = _board(mixed, metrics=("top3[syntheseus,exact]", "mrr[syntheseus,exact]"))
    caveats = top5["boards"][0]["notes"]
    assert len(caveats) == 1 and caveats[0].startswith("mrr[syntheseus,exact]: the runs keep")


def test_names_ratio_metric(tmp_path: Path) -> None:
    a = make_names_run(tmp_path / "a", NAMES_A)
    b = make_names_run(tmp_path / "b", NAMES_B)
    result = _board([a, b], metrics=("rt_valid[exact]", "of_emitted_rt[exact]", "emitted"))
    rankings = {r["metric"]: r for r in result["boards"][0]["rankings"]}
    ratio = {s["run"]: s for s in rankings["of_emitted_rt[exact]"]["standings"]}
    # A names 9 of 10, all round-trip; B names 8 (one abstains, one is blank), 4 round-trip.
    assert (ratio["a"]["count"], ratio["a"]["n"]) == (9, 9)
    assert (ratio["b"]["count"], ratio["b"]["n"]) == (4, 8)
    assert rankings["of_emitted_rt[exact]"]["kind"] == "ratio"
    assert rankings["emitted"]["standings"][0]["count"] == 9
    # Every structure has at most 10 heavy atoms: one bucket, no heavy_atoms breakdown.
    assert {r["dimension"] for r in result["boards"][0]["breakdowns"]} == {"charged", "stereo"}
    assert len(CORPUS) == 10


def test_cli_writes_three_files_and_prints_refusals(
    retro_runs: dict[str, Path], tmp_path: Path
) -> None:
    broken = tmp_path / "runs" / "broken"
    broken.mkdir(parents=True)
    (broken / "report.json").write_text("[]")
    out = tmp_path / "out"
    args = ["board", *map(str, retro_runs.values()), str(broken), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "left off:" in result.output and "report is not a JSON object" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["board.html", "board.json", "board.md"]
    data = orjson.loads((out / "board.json").read_bytes())
    assert data["format"] == "chemgauge-board" and len(data["refused"]) == 1
    markdown = (out / "board.md").read_text()
    assert "| 1 | [strong](" in markdown and "| a |" in markdown
    # Links are relative to the Markdown file and reach the run's report.
    link = markdown.split("| 1 | [strong](", 1)[1].split(")", 1)[0]
    assert (out / link).resolve() == (retro_runs["strong"] / "report.json").resolve()
    page = (out / "board.html").read_text()
    assert "<script" not in page and 'class="heat"' in page and 'class="ci"' in page


def test_cli_fails_when_nothing_can_be_ranked(tmp_path: Path) -> None:
    import subprocess
    import sys

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "report.json").write_text("{")
    proc = subprocess.run(
        [sys.executable, "-m", "chemgauge", "board", str(broken), "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "left off:" in proc.stderr and "error: no run could be ranked" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_letter_property_holds_on_every_breakdown(retro_runs: dict[str, Path]) -> None:
    board = _board(list(retro_runs.values()), metrics=("top3[syntheseus,exact]",))["boards"][0]
    for ranking in [*board["rankings"], *board["breakdowns"]]:
        letters = _letters(ranking)
        for a, b in itertools.combinations(letters, 2):
            pair = next(p for p in ranking["pairs"] if {p["a"], p["b"]} == {a, b})
            assert bool(set(letters[a]) & set(letters[b])) == (not pair["significant"])


def _forward_run(out: Path, rules: Path | None = None) -> Path:
    from chemgauge.families.forward import benchmark

    source = {} if rules is None else {"template_source": "file", "templates": rules}
    benchmark(out=out, executor="serial", **source)
    return out


def test_forward_board_as_in_the_demo(tmp_path: Path) -> None:
    """The embedded rules against their amide-coupling rules alone, on the demo corpus."""
    from importlib import resources

    embedded = resources.files("chemgauge.families.forward.engine").joinpath("forward_rules.jsonl")
    amide = [
        line
        for line in embedded.read_text().splitlines(keepends=True)
        if '"reaction_class": "amide_coupling"' in line
    ]
    assert len(amide) == 4
    (tmp_path / "amide-rules.jsonl").write_text("".join(amide))
    runs = [
        _forward_run(tmp_path / "embedded"),
        _forward_run(tmp_path / "amide-only", tmp_path / "amide-rules.jsonl"),
    ]
    (board,) = _board(runs)["boards"]
    assert board["items"] == 16  # corpus lines; six are invalid inputs and take part in none
    ranking = board["rankings"][0]
    assert ranking["metric"] == "top1" and ranking["items"] == 10
    standings = {s["run"]: (s["count"], s["n"], s["letters"]) for s in ranking["standings"]}
    assert standings == {"amide-only": (4, 10, "a"), "embedded": (3, 10, "a")}
    systems = {r["label"]: r["system"] for r in board["runs"]}
    assert systems["amide-only"] == "template predictor, file rules (amide-rules.jsonl)"
    assert systems["embedded"] == "template predictor, embedded rules"
    buckets = {(b["dimension"], b["bucket"]) for b in board["breakdowns"]}
    assert ("split", "test") in buckets
    assert ("split", "unknown") not in buckets  # invalid inputs only: nobody has a value
    assert all(b["items"] > 0 for b in board["breakdowns"])


def test_make_demo_ends_with_this_board() -> None:
    """The Makefile's demo recipe ends with the board the test above builds."""
    makefile = (Path(__file__).parents[2] / "Makefile").read_text().replace("\\\n", " ")
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    commands = [line.split() for line in recipe.splitlines() if "chemgauge " in line]
    assert 'grep \'"reaction_class": "amide_coupling"\' $(DEMO_RULES)' in recipe
    assert commands[-2][1:3] == ["forward", "benchmark"]
    assert "$(DEMO_OUT)/amide-rules.jsonl" in commands[-2]
    assert commands[-1][1:4] == ["board", "$(DEMO_OUT)", "$(DEMO_OUT)/amide-only"]
    assert commands[-1][-2:] == ["--out", "$(DEMO_OUT)/board"]


def test_cli_run_pages_and_a_mean_metric(retro_runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "board"
    pages = out / "runs"
    page = out / "board.html"
    args = ["board", *map(str, retro_runs.values()), "--out", str(out), "--run-pages"]
    result = CliRunner().invoke(app, [*args, "--metric", "mrr[syntheseus,exact]", "-q"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in pages.iterdir()) == sorted(f"{n}.html" for n in PATTERNS)
    html = page.read_text()
    assert 'href="runs/weak.html"' in html
    assert "Verified." in (pages / "weak.html").read_text()  # the run's own report page
    assert "paired bootstrap intervals (2,000 resamples, seed 0)" in html
