"""``verify``: a report edited by hand, a truncated row file and a changed input are caught."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.conftest import assert_valid_report
from tests.report.conftest import NAMES_A, make_names_run
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import InputFileError, UnknownNameError
from chemgauge.eval.provenance import sha256_json
from chemgauge.report.loading import load_run
from chemgauge.report.verify import diff_json, verify_run


def _edit_report(run: Path, edit) -> None:  # type: ignore[no-untyped-def]
    path = run / "report.json"
    report = orjson.loads(path.read_bytes())
    edit(report)
    path.write_bytes(orjson.dumps(report))


def test_clean_run_verifies(names_run: Path) -> None:
    assert assert_valid_report(names_run / "report.json")["family"] == "names"
    result = verify_run(load_run(names_run))
    assert result.ok, result.differences
    assert {c.name for c in result.checks} >= {"aggregates", "reproducibility hash"}


def test_hand_edited_count_is_caught(names_run: Path) -> None:
    def edit(report: dict) -> None:  # type: ignore[type-arg]
        # A consistent edit (count and value agree): only the rows can tell it is wrong.
        report["metrics"]["lenses"]["exact"]["abs_rt_valid"].update(count=10, value=1.0)

    _edit_report(names_run, edit)
    result = verify_run(load_run(names_run))
    assert not result.ok
    wheres = [d.where for d in result.differences]
    assert wheres == [
        "metrics.lenses.exact.abs_rt_valid.count",
        "metrics.lenses.exact.abs_rt_valid.value",
    ]
    assert (result.differences[0].recorded, result.differences[0].recomputed) == (10, 9)


def test_a_rate_off_its_count_or_a_removed_listing_is_refused_on_loading(
    names_run: Path,
) -> None:
    original = (names_run / "report.json").read_bytes()

    def rate(report: dict) -> None:  # type: ignore[type-arg]
        report["metrics"]["lenses"]["parity"]["coverage"]["value"] = 0.95

    _edit_report(names_run, rate)
    with pytest.raises(InputFileError, match=r"metrics\.lenses\.parity\.coverage: .*count / n"):
        load_run(names_run)
    (names_run / "report.json").write_bytes(original)

    def listing(report: dict) -> None:  # type: ignore[type-arg]
        del report["metrics"]["confidently_wrong_listed_truncated"]

    _edit_report(names_run, listing)
    with pytest.raises(InputFileError, match="confidently_wrong_listed_truncated: Field required"):
        load_run(names_run)


def test_edited_reproducibility_hash_is_caught(names_run: Path) -> None:
    def edit(report: dict) -> None:  # type: ignore[type-arg]
        report["reproducibility_sha256"] = "0" * 64

    _edit_report(names_run, edit)
    [difference] = verify_run(load_run(names_run)).differences
    assert difference.where == "reproducibility_sha256"


def test_row_file_truncated_mid_line_is_caught(names_run: Path) -> None:
    rows = names_run / "rows.jsonl"
    data = rows.read_bytes()
    rows.write_bytes(data[: len(data) - 40])
    run = load_run(names_run)
    result = verify_run(run)
    assert not result.ok
    assert f"{rows}, line 10" in result.differences[0].where
    assert any(d.where.startswith("metrics.total") for d in result.differences)
    with pytest.raises(InputFileError, match="line 10"):
        run.require_clean_rows()


def test_row_file_missing_last_rows_is_caught(names_run: Path) -> None:
    rows = names_run / "rows.jsonl"
    lines = rows.read_bytes().splitlines(keepends=True)
    rows.write_bytes(b"".join(lines[:-2]))
    wheres = {d.where for d in verify_run(load_run(names_run)).differences}
    assert {"metrics.total", "reproducibility_sha256", "counts.items"} <= wheres


def test_reordered_rows_change_only_the_hash(names_run: Path) -> None:
    rows = names_run / "rows.jsonl"
    lines = rows.read_bytes().splitlines(keepends=True)
    rows.write_bytes(b"".join([lines[1], lines[0], *lines[2:]]))
    wheres = [d.where for d in verify_run(load_run(names_run)).differences]
    assert wheres == ["reproducibility_sha256"]


def test_changed_input_file_is_caught_and_missing_one_is_exit_3(names_run: Path) -> None:
    pairs = names_run / "pairs.jsonl"
    pairs.write_bytes(pairs.read_bytes() + b"\n")
    result = verify_run(load_run(names_run))
    assert [d.where.split(" (")[0] for d in result.differences] == ["inputs[input].sha256"]
    assert result.exit_code == 1
    pairs.unlink()
    result = verify_run(load_run(names_run))
    assert result.ok and result.missing_inputs == ["input"] and result.exit_code == 3
    assert any(c.ok is None and "not found" in c.detail for c in result.checks)
    skipped = verify_run(load_run(names_run), check_inputs=False)
    assert skipped.exit_code == 0 and not skipped.missing_inputs


def test_duplicated_row_is_caught(names_run: Path) -> None:
    rows = names_run / "rows.jsonl"
    lines = rows.read_bytes().splitlines(keepends=True)
    rows.write_bytes(b"".join([*lines, lines[0]]))
    wheres = [d.where for d in verify_run(load_run(names_run)).differences]
    assert "rows: item 'm00'" in wheres


def test_diff_json_distinguishes_bool_from_int_and_lengths() -> None:
    assert [d.where for d in diff_json({"a": True}, {"a": 1})] == ["a"]
    assert [d.where for d in diff_json({"a": 1}, {"a": 1.0})] == []
    assert [d.where for d in diff_json([1, 2], [1])] == [" (length)"]
    assert [
        d.where for d in diff_json({"x": {"y": [1, {"z": 2}]}}, {"x": {"y": [1, {"z": 3}]}})
    ] == ["x.y[1].z"]


def test_bad_inputs_name_the_file(tmp_path: Path, names_run: Path) -> None:
    envelope = json.loads((names_run / "report.json").read_text())
    with pytest.raises(InputFileError, match="run folder not found"):
        load_run(tmp_path / "nowhere")
    (names_run / "report.json").write_text("{not json")
    with pytest.raises(InputFileError, match=r"report\.json: report is not valid JSON"):
        load_run(names_run)
    (names_run / "report.json").write_text('{"family": "names", "metrics": {}}')
    with pytest.raises(InputFileError, match="not a chemgauge run envelope"):
        load_run(names_run)
    (names_run / "report.json").write_text(json.dumps({**envelope, "family": "nams"}))
    with pytest.raises(UnknownNameError, match="Did you mean 'names'"):
        load_run(names_run)
    (names_run / "report.json").write_text(json.dumps(envelope))
    (names_run / "rows.jsonl").unlink()
    with pytest.raises(InputFileError, match=r"rows\.jsonl: row file not found"):
        load_run(names_run)


def test_cli_verify_exit_status_and_first_differences(names_run: Path) -> None:
    runner = CliRunner()
    good = runner.invoke(app, ["verify", str(names_run)])
    assert good.exit_code == 0, good.output
    assert "verified" in good.output

    def edit(report: dict) -> None:  # type: ignore[type-arg]
        report["metrics"]["emitted"] = 3

    _edit_report(names_run, edit)
    out = names_run / "verify.json"
    bad = runner.invoke(app, ["verify", str(names_run), "--out", str(out)])
    assert bad.exit_code == 1
    assert "metrics.emitted: recorded 3, recomputed 9" in bad.output
    assert orjson.loads(out.read_bytes())["ok"] is False


def test_a_report_file_stands_for_its_folder(names_run: Path) -> None:
    run = load_run(names_run / "report.json")
    assert run.rows_path == names_run / "rows.jsonl"
    assert verify_run(run).ok


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda r: r["config"]["coverage"].update(pin_pct=99.0), "config_sha256"),
        (lambda r: r["counts"]["by_status"].update(rt_valid=99), "counts.by_status.rt_valid"),
        (lambda r: r["counts"].update(items=11), "counts.items"),
        (lambda r: r["reproducibility_excludes"].append("name"), "reproducibility_excludes"),
        (lambda r: r["inputs"][0].update(size=1), "inputs[input].size"),
        (lambda r: r["inputs"][0].update(sha256="0" * 64), "inputs[input].sha256"),
    ],
)
def test_edited_envelope_fields_are_caught(names_run: Path, edit, where: str) -> None:  # type: ignore[no-untyped-def]
    _edit_report(names_run, edit)
    result = verify_run(load_run(names_run))
    assert where in {d.where.split(" (")[0] for d in result.differences}
    assert result.exit_code == 1


def test_edited_config_with_a_forged_hash_is_caught_by_the_cross_check(names_run: Path) -> None:
    def edit(report: dict) -> None:  # type: ignore[type-arg]
        report["config"]["coverage"]["pin_pct"] = 99.0
        report["config_sha256"] = sha256_json(report["config"])

    _edit_report(names_run, edit)
    wheres = [d.where for d in verify_run(load_run(names_run)).differences]
    assert wheres == ["metrics.pin_pct"]


def test_relative_input_is_found_beside_the_report_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.report.conftest import CORPUS, NAMES_A, write_pairs

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    monkeypatch.chdir(run_dir)  # the run is given a relative input path
    make_names_run(run_dir, NAMES_A, input_path=write_pairs(Path("pairs.jsonl"), CORPUS, NAMES_A))
    assert (
        orjson.loads((run_dir / "report.json").read_bytes())["inputs"][0]["path"] == "pairs.jsonl"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = verify_run(load_run(run_dir))
    assert result.exit_code == 0
    assert any(c.name == "input input" and c.ok for c in result.checks)
    (elsewhere / "pairs.jsonl").write_text("another file of the same name\n")  # checked too
    assert verify_run(load_run(run_dir)).exit_code == 0  # the one beside the report matches
    (run_dir / "pairs.jsonl").unlink()
    result = verify_run(load_run(run_dir))
    assert result.exit_code == 1  # the only file found has other content
    assert [d.where.split(" (")[0] for d in result.differences] == ["inputs[input].sha256"]


def test_cli_verify_missing_input_exits_3_unless_no_inputs(names_run: Path) -> None:
    (names_run / "pairs.jsonl").unlink()
    runner = CliRunner()
    missing = runner.invoke(app, ["verify", str(names_run)])
    assert missing.exit_code == 3
    assert "recorded inputs not found (input)" in missing.output
    assert "skip input input" in missing.output and "not found" in missing.output
    assert runner.invoke(app, ["verify", str(names_run), "--no-inputs"]).exit_code == 0
    usage = runner.invoke(app, ["verify", str(names_run), "--no-such-flag"])
    assert usage.exit_code == 2


def test_a_run_with_opsin_errors_verifies_and_its_listing_is_recomputed(tmp_path: Path) -> None:
    names = ("ethanol", "slow name", "acetic acid", "slow other", *NAMES_A[4:])
    # over the default --max-opsin-errors share: the run is incomplete, and verify says so
    incomplete = verify_run(load_run(make_names_run(tmp_path / "incomplete", names)))
    assert [d.where.split(" (")[0] for d in incomplete.differences] == ["run complete"]
    run_dir = make_names_run(tmp_path / "errors", names, max_opsin_errors=0.5)
    run = load_run(run_dir)
    assert run.metrics["opsin_error"] == 2 and run.metrics["complete"] is True
    assert [e["id"] for e in run.metrics["opsin_error_rows"]] == ["m01", "m03"]
    assert verify_run(run).differences == []
    assert_valid_report(run_dir / "report.json")

    def edit(report: dict[str, Any]) -> None:
        report["metrics"]["opsin_error_rows"] = report["metrics"]["opsin_error_rows"][:1]
        # a report that leaves the two OPSIN errors out of the denominator is caught
        coverage = report["metrics"]["lenses"]["strict"]["abs_rt_valid"]
        rated = report["metrics"]["total"] - 2
        coverage.update(n=rated, value=coverage["count"] / rated)

    _edit_report(run_dir, edit)
    wheres = {d.where for d in verify_run(load_run(run_dir)).differences}
    assert wheres == {
        "metrics.opsin_error_rows (length)",
        "metrics.lenses.strict.abs_rt_valid.n",
        "metrics.lenses.strict.abs_rt_valid.value",
    }
