"""``compare``: paired counts, McNemar and Holm checked by hand; mismatched runs refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest
from tests.report.conftest import CORPUS, NAMES_A, NAMES_B, make_names_run
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.report.compare import compare_runs
from chemgauge.report.loading import load_run


def _overall(result: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    return {r["metric"]: r for r in result["overall"]}


def test_paired_counts_mcnemar_and_holm(two_runs: tuple[Path, Path]) -> None:
    result = compare_runs(load_run(two_runs[0]), load_run(two_runs[1]), seed=5)
    assert result["protocol"]["match"] is True
    assert result["items"] == {"shared": 10, "only_in_a": 0, "only_in_b": 0}
    overall = _overall(result)
    # B names: methanol (wrong), D-alanine (exact-only wrong), acetate (strict+exact wrong),
    # one abstention, one unparseable name; A gets all nine named items right.
    expected = {
        "emitted": (1, 0, 1.0),
        "rt_valid[parity]": (3, 0, 0.25),  # 2 * (1/2)^3
        "rt_valid[strict]": (4, 0, 0.125),
        "rt_valid[exact]": (5, 0, 0.0625),
    }
    for metric, (only_a, only_b, p) in expected.items():
        r = overall[metric]
        assert (r["only_a"], r["only_b"]) == (only_a, only_b), metric
        assert r["mcnemar_p"] == pytest.approx(p), metric
        assert r["difference"]["estimate"] == pytest.approx(only_a / 10)
    # Holm over the four metrics: 4 * 0.0625, 3 * 0.125, 2 * 0.25, 1 * 1.
    assert [overall[m]["holm_p"] for m in expected] == pytest.approx([1.0, 0.5, 0.375, 0.25])
    exact = overall["rt_valid[exact]"]
    assert exact["both"] + exact["only_a"] + exact["only_b"] + exact["neither"] == 10
    low, high = exact["difference"]["interval"]
    assert 0 < low <= 0.5 <= high <= 1
    assert result["discordant"]["rt_valid[exact]"] == {
        "only_a": ["m00", "m01", "m02", "m04", "m07"],
        "only_b": [],
    }


def test_breakdown_tests_are_holm_adjusted_within_a_dimension(
    two_runs: tuple[Path, Path],
) -> None:
    result = compare_runs(load_run(two_runs[0]), load_run(two_runs[1]))
    charged = {r["bucket"]: r for r in result["breakdowns"]["charged"]["rt_valid[exact]"]}
    # The one charged item abstains in both runs; the nine neutral ones carry all 5 discordant.
    assert (charged["formal_charges"]["n"], charged["formal_charges"]["mcnemar_p"]) == (1, 1.0)
    assert charged["neutral"]["mcnemar_p"] == pytest.approx(0.0625)
    assert charged["neutral"]["holm_p"] == pytest.approx(0.125)  # 2 buckets * 0.0625
    assert charged["formal_charges"]["holm_p"] == pytest.approx(1.0)


def test_same_inputs_same_json(two_runs: tuple[Path, Path]) -> None:
    a, b = load_run(two_runs[0]), load_run(two_runs[1])
    assert orjson.dumps(compare_runs(a, b, seed=1)) == orjson.dumps(compare_runs(a, b, seed=1))


def test_swapping_runs_flips_the_difference(two_runs: tuple[Path, Path]) -> None:
    ab = _overall(compare_runs(load_run(two_runs[0]), load_run(two_runs[1])))
    ba = _overall(compare_runs(load_run(two_runs[1]), load_run(two_runs[0])))
    for metric, r in ab.items():
        assert ba[metric]["difference"]["estimate"] == pytest.approx(-r["difference"]["estimate"])
        assert ba[metric]["mcnemar_p"] == r["mcnemar_p"]


def test_refuses_runs_over_other_items_unless_forced(tmp_path: Path) -> None:
    a = load_run(make_names_run(tmp_path / "a", NAMES_A))
    other = ("CCO", *CORPUS[1:])  # one input structure differs
    c = load_run(make_names_run(tmp_path / "c", NAMES_A, smiles=other))
    with pytest.raises(ConfigError, match=r"refusing to compare.*corpus_sha256.*--force"):
        compare_runs(a, c)
    forced = compare_runs(a, c, force=True)
    assert forced["protocol"] == {**forced["protocol"], "match": False, "forced": True}
    assert forced["items"]["shared"] == 10


def test_refuses_other_family_and_truncated_rows(two_runs: tuple[Path, Path]) -> None:
    a = load_run(two_runs[0])
    other = dataclasses.replace(a, envelope=a.envelope.model_copy(update={"family": "forward"}))
    with pytest.raises(ConfigError, match="cannot compare a 'names' run"):
        compare_runs(a, other)
    rows = two_runs[1] / "rows.jsonl"
    rows.write_bytes(rows.read_bytes()[:-30])
    with pytest.raises(InputFileError, match=r"rows\.jsonl, line 10: unreadable row"):
        compare_runs(a, load_run(two_runs[1]))  # named as unreadable, not "another corpus"


def test_cli_compare_writes_json_and_html(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    out_json, out_html = tmp_path / "cmp.json", tmp_path / "cmp.html"
    result = CliRunner().invoke(
        app,
        ["compare", *map(str, two_runs), "--json", str(out_json), "--html", str(out_html)],
    )
    assert result.exit_code == 0, result.output
    assert "rt_valid[exact]" in result.output  # not eaten as console markup
    assert orjson.loads(out_json.read_bytes())["family"] == "names"
    page = out_html.read_text()
    assert "rt_valid[exact]: A right, B wrong" in page
    assert "m02" in page and page.count("<svg") >= 6


def test_cli_refusal_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import subprocess
    import sys

    a = make_names_run(tmp_path / "a", NAMES_A)
    c = make_names_run(tmp_path / "c", NAMES_B, smiles=("CCO", *CORPUS[1:]))
    proc = subprocess.run(
        [sys.executable, "-m", "chemgauge", "compare", str(a), str(c)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: refusing to compare")
    assert "Traceback" not in proc.stderr


def test_rows_of_another_shape_name_the_file(two_runs: tuple[Path, Path]) -> None:
    rows = two_runs[1] / "rows.jsonl"
    broken = [orjson.loads(line) for line in rows.read_bytes().splitlines()]
    for row in broken:
        del row["emitted"]
    rows.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in broken))
    with pytest.raises(InputFileError, match=r"rows\.jsonl: rows do not have the names row shape"):
        compare_runs(load_run(two_runs[0]), load_run(two_runs[1]), force=True)
