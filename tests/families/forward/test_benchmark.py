"""End-to-end benchmark runs on the fixture: outcomes, determinism, executors, strict, resume."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_module

from chemgauge.errors import ConfigError, DataQualityError
from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.families.forward import runner as runner_module
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.rows import FAILURE_REASONS
from chemgauge.families.forward.runner import run_benchmark

from .conftest import FIXTURE_CORPUS, FIXTURES, corpus_line

SERIAL = ExecutorConfig(kind="serial", jobs=1)
# Row timing fields, and the report's: its timing block, creation time and rows file name.
TIMING = {"elapsed_ms", "latency_ms", "created", "timing", "rows_file"}


def strip_timing(obj: Any) -> Any:
    """The object without any timing entry (see ``TIMING``), at any depth."""
    if isinstance(obj, dict):
        return {k: strip_timing(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [strip_timing(v) for v in obj]
    return obj


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run(tmp_path: Path, name: str, executor: ExecutorConfig = SERIAL, **kw: Any) -> Any:
    """A run into the folder ``tmp_path / name`` on ``executor``."""
    config = BenchmarkConfig(
        corpus=kw.pop("corpus", FIXTURE_CORPUS),
        out=tmp_path / name,
        executor=executor.kind,
        jobs=executor.jobs,
        chunk_size=executor.chunk_size,
        **kw,
    )
    return run_benchmark(config)


@pytest.fixture(scope="module")
def fixture_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return run(tmp_path_factory.mktemp("fixture"), "rows")


def test_fixture_and_demo_corpus_are_what_the_engine_produces() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixture", FIXTURES / "make_fixture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = module.render()
    assert FIXTURE_CORPUS.read_text() == expected
    assert module.DEMO.read_text() == expected


def test_fixture_exercises_every_data_reachable_outcome(fixture_run: Any) -> None:
    rows = rows_of(fixture_run.rows_path)
    reasons = {r["failure_reason"] for r in rows}
    assert reasons == set(FAILURE_REASONS) - {"prediction_error", "capped_unknown"}
    assert {r["stereo_status"] for r in rows} >= {"exact_hit", "stereo_only_hit", "no_hit"}
    assert [r["source_line"] for r in rows] == sorted(r["source_line"] for r in rows)
    stats = fixture_run.report["metrics"]["corpus"]["stats"]
    assert {k: v for k, v in stats.items() if k not in ("lines_read", "records_accepted")} == {
        "blank_lines": 1,
        "malformed_json": 1,
        "wrong_schema_version": 1,
        "empty_reactants_or_products": 1,
        "unparseable_smiles": 1,
        "record_too_large": 0,
        "duplicate_records_merged": 1,
        "conflicting_reaction_ids": 1,
        "conflicting_group_keys": 2,  # line 19, and line 18 rejected in hindsight
    }
    arity = fixture_run.report["metrics"]["breakdowns"]["accepted_product_arity"]
    assert set(arity) == {"1", "mixed:1-2", "<missing>"}
    assert {r["split"] for r in rows} == {"train", "val", "test", "unknown"}


def test_rows_carry_full_provenance_and_the_report_hash(fixture_run: Any) -> None:
    rows = rows_of(fixture_run.rows_path)
    report = fixture_run.report
    prov = rows[0]["provenance"]
    assert all(r["provenance"] == prov for r in rows)
    # The report holds the same provenance; the row hash and version sit at its top level.
    top_level = ("chemgauge_version", "reproducibility_sha256", "reproducibility_excludes")
    assert {k: v for k, v in prov.items() if k not in top_level} == {
        k: v
        for k, v in report["provenance"].items()
        if k not in ("backends", "dependency_versions")
    }
    assert prov["reproducibility_sha256"] == report["reproducibility_sha256"]
    assert prov["chemgauge_version"] == report["chemgauge_version"]
    assert prov["config_sha256"] == report["config_sha256"]
    for key in (
        "rules_content_sha256",
        "config_sha256",
        "corpus_sha256",
        "source_tree_sha256",
        "dependency_lock_sha256",
        "reproducibility_sha256",
        "split_protocol_version",
    ):
        assert prov[key] is not None, key
    assert prov["rules_file_sha256"] is None and prov["template_source"] == "embedded"
    assert prov["reproducibility_excludes"] == [
        "elapsed_ms",
        "latency_ms",
        "source_tree_sha256",
        "corpus_path",
    ]
    diag = report["metrics"]["diagnostics"]
    assert diag["raw_outcomes"] == report["metrics"]["overall"]["n_raw_outcomes"]
    assert diag["templates_matched"] == sum(r["templates_matched"] for r in rows)
    assert diag["template_parse_rejections_by_reason"] == {}


def test_two_runs_and_two_worker_counts_are_identical_modulo_timing(
    tmp_path: Path, fixture_run: Any
) -> None:
    again = run(tmp_path, "again")
    local2 = run(tmp_path, "local2", ExecutorConfig(kind="local", jobs=2, chunk_size=2))
    base_rows = [strip_timing(r) for r in rows_of(fixture_run.rows_path)]
    for other in (again, local2):
        assert [strip_timing(r) for r in rows_of(other.rows_path)] == base_rows
        assert strip_timing(other.report) == strip_timing(fixture_run.report)
        assert (
            other.report["reproducibility_sha256"] == fixture_run.report["reproducibility_sha256"]
        )


@pytest.mark.external
def test_ray_executor_gives_the_same_rows(tmp_path: Path, fixture_run: Any) -> None:
    """serial (fixture_run), local -j2 (above) and a real local Ray cluster agree."""
    require_module("ray")
    from typer.testing import CliRunner

    from chemgauge.cli import app

    result = CliRunner().invoke(
        app,
        [
            "forward",
            "benchmark",
            "--corpus",
            str(FIXTURE_CORPUS),
            "--out",
            str(tmp_path / "ray"),
            "--json",
            "--executor",
            "ray",
            "--ray-address",
            "local",
            "--jobs",
            "2",
            "--chunk-size",
            "3",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert strip_timing(report) == strip_timing(fixture_run.report)
    assert report["timing"]["executor"] == "ray"


def test_engine_receives_the_corpus_text_in_corpus_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, ...]] = []
    real = runner_module.predict_products_detailed

    def spy(reactants: Any, rules: Any, config: Any) -> Any:
        seen.append(tuple(reactants))
        return real(reactants, rules, config)

    monkeypatch.setattr(runner_module, "predict_products_detailed", spy)
    run(tmp_path, "spy")
    assert seen[0] == ("OC(C)=O", "NCc1ccccc1")
    assert ("CC(O)=O", "NCc1ccccc1") not in seen  # the merged duplicate is never predicted


def test_a_failing_prediction_is_an_error_row_and_strict_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = runner_module.predict_products_detailed

    def flaky(reactants: Any, rules: Any, config: Any) -> Any:
        if "C1CCCCC1" in reactants:
            raise RuntimeError("engine exploded")
        return real(reactants, rules, config)

    monkeypatch.setattr(runner_module, "predict_products_detailed", flaky)
    result = run(tmp_path, "err")
    [row] = [r for r in rows_of(result.rows_path) if r["reaction_id"] == "fx-06"]
    assert row["failure_reason"] == "prediction_error"
    assert row["proposal_status"] == "error" and "engine exploded" in row["prediction_error"]
    assert row["leakage_group_id"] is not None and row["split"] != "unknown"
    assert result.report["metrics"]["overall"]["prediction_errors"] == 1
    clean = tmp_path / "clean.jsonl"
    clean.write_text(corpus_line("a", ["C1CCCCC1", "CCCC"], [["C"]]) + "\n")
    with pytest.raises(DataQualityError, match="proposal_status error"):
        run(tmp_path, "strict-err", corpus=clean, strict=True)


def test_capped_pool_is_capped_unknown_and_strict_refuses_it(tmp_path: Path) -> None:
    result = run(tmp_path, "capped", max_results=1)
    rows = {r["source_line"]: r for r in rows_of(result.rows_path)}
    assert rows[2]["proposal_status"] == "capped_unknown"
    assert rows[2]["failure_reason"] == "capped_unknown"
    assert rows[1]["proposal_status"] == "covered"
    assert rows[6]["proposal_status"] == "missed_empty_pool"
    assert result.report["metrics"]["overall"]["capped_unknown"] >= 1
    clean = tmp_path / "clean.jsonl"
    clean.write_text(FIXTURE_CORPUS.read_text().splitlines()[1] + "\n")
    with pytest.raises(DataQualityError, match="capped_unknown"):
        run(tmp_path, "capped-strict", max_results=1, strict=True, corpus=clean)


def test_strict_fails_on_data_quality_never_on_real_misses(tmp_path: Path) -> None:
    with pytest.raises(DataQualityError, match="line 13"):
        run(tmp_path, "strict", strict=True)
    corpus = tmp_path / "misses.jsonl"
    corpus.write_text(
        corpus_line("miss", ["C[C@H](N)C(=O)O", "CCO"], [["CCOC(=O)[C@@H](C)N"]])
        + "\n"
        + corpus_line("empty", ["C1CCCCC1", "CCCC"], [["C"]])
        + "\n"
        + corpus_line("dup", ["CCO", "C[C@H](N)C(=O)O"], [["CCOC(=O)[C@@H](C)N"]])
        + "\n"
    )
    result = run(tmp_path, "misses", corpus=corpus, strict=True)
    assert result.report["metrics"]["overall"]["proposal_coverage"]["value"] == 0.0


def test_interrupted_run_resumes_from_its_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture_run: Any
) -> None:
    real = runner_module.predict_products_detailed
    calls = {"n": 0}

    def interrupt(reactants: Any, rules: Any, config: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(reactants, rules, config)

    monkeypatch.setattr(runner_module, "predict_products_detailed", interrupt)
    one_by_one = ExecutorConfig(kind="serial", jobs=1, chunk_size=1)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "resume", one_by_one)
    journal = tmp_path / "resume" / "rows.jsonl.journal"
    assert journal.exists() and not (tmp_path / "resume" / "rows.jsonl").exists()
    with open(journal, "ab") as handle:
        handle.write(b'{"source_line": 99, "trunc')  # a crash mid-write
    monkeypatch.setattr(runner_module, "predict_products_detailed", real)
    resumed = run(tmp_path, "resume")
    assert resumed.resumed_rows == 3
    assert not journal.exists()
    assert strip_timing(resumed.report) == strip_timing(fixture_run.report)


def test_journal_from_another_configuration_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "other" / "rows.jsonl.journal"
    journal.parent.mkdir()
    journal.write_text(
        '{"chemgauge_rows_journal": 1, "config_sha256": "abc"}\n{"source_line": 1}\n'
    )
    with pytest.raises(ConfigError, match="another configuration"):
        run(tmp_path, "other")
    assert run(tmp_path, "other", restart=True).rows == 16


def test_a_journal_left_by_a_failed_start_does_not_block_the_next_run(tmp_path: Path) -> None:
    # a header and no row (the run stopped before its first row): replaced without --restart
    journal = tmp_path / "other" / "rows.jsonl.journal"
    journal.parent.mkdir()
    journal.write_text('{"chemgauge_rows_journal": 1, "config_sha256": "abc"}\n')
    assert run(tmp_path, "other").rows == 16


def test_the_output_must_be_a_folder(tmp_path: Path) -> None:
    (tmp_path / "rows.jsonl").mkdir()
    for out, refusal in ((tmp_path, "directory"), (FIXTURE_CORPUS, "is a file")):
        with pytest.raises(ConfigError, match=refusal):
            run_benchmark(BenchmarkConfig(corpus=FIXTURE_CORPUS, out=out, executor="serial"))
    with pytest.raises(ConfigError, match="never printed"):
        run_benchmark(BenchmarkConfig(corpus=FIXTURE_CORPUS, out=Path("-"), executor="serial"))


# Methane substituted twelve ways; substituent i is produced by 12 - i templates, so it ranks
# i-th (0-based) by score alone: F, Cl, Br, I, O (5th), N (6th), S, C, C#N, C=O (10th),
# OC (11th), NC.
_SUBSTITUENTS = ("F", "Cl", "Br", "I", "O", "N", "S", "C", "C#N", "C=O", "OC", "NC")


def test_top5_and_top10_edges_are_hand_checked(tmp_path: Path) -> None:
    """The true product at 1-based rank 5, 6, 10 and 11, through engine, rows, report, adapter."""
    from chemgauge.families.forward.adapter import ForwardAdapter
    from chemgauge.report.loading import load_run

    rules = tmp_path / "methane.jsonl"
    rules.write_text(
        "".join(
            json.dumps({"template_id": f"m{i}_{j}", "smirks": f"[CH4:1]>>[CH3:1]{x}"}) + "\n"
            for i, x in enumerate(_SUBSTITUENTS)
            for j in range(12 - i)
        )
    )
    products = {5: "CO", 6: "CN", 10: "CC=O", 11: "COC"}
    corpus = tmp_path / "ranks.jsonl"
    corpus.write_text(
        "".join(corpus_line(f"rank{k}", ["C"], [[p]]) + "\n" for k, p in products.items())
    )
    result = run(tmp_path, "rows", corpus=corpus, template_source="file", templates=rules)
    rows = rows_of(result.rows_path)
    assert [r["best_correct_rank"] for r in rows] == [4, 5, 9, 10]  # 0-based
    assert [r["top1_hit"] for r in rows] == [False] * 4
    assert [r["top5_hit"] for r in rows] == [True, False, False, False]
    assert [r["top10_hit"] for r in rows] == [True, True, True, False]
    assert [r["ranking_status"] for r in rows] == ["top5", "top10", "top10", "beyond10"]
    assert [r["failure_reason"] for r in rows] == [
        "hit_top5",
        "hit_top10",
        "hit_top10",
        "hit_beyond_10",
    ]
    assert [r["correct_ranks_top10"] for r in rows] == [[4], [5], [9], []]
    assert rows[0]["ndcg_at_10"] == pytest.approx(1 / math.log2(6))
    assert rows[3]["ndcg_at_10"] == 0.0
    e2e = result.report["metrics"]["overall"]["end_to_end"]
    assert (e2e["top5_hit_rate"]["count"], e2e["top10_hit_rate"]["count"]) == (1, 3)
    assert (e2e["top5_hit_rate"]["k"], e2e["top10_hit_rate"]["k"]) == (5, 10)
    assert e2e["mrr"]["value"] == pytest.approx((1 / 5 + 1 / 6 + 1 / 10 + 1 / 11) / 4)
    assert e2e["mrr"]["method"] == "bootstrap95" and e2e["mrr"]["n"] == 4
    write_envelope(result.rows_path.with_name("report.json"), result.envelope)
    run_ = load_run(result.rows_path.parent)
    adapter = ForwardAdapter()
    hits = [adapter.hits(row, run_) for row in run_.rows]
    assert [h["top5"] for h in hits] == [True, False, False, False]
    assert [h["top10"] for h in hits] == [True, True, True, False]
    assert [dict(adapter.describe_item(r))["first correct rank"] for r in rows] == [
        "5",
        "6",
        "10",
        "11",
    ]
