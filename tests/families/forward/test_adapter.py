"""The forward adapter on a real run of the forward benchmark over the bundled demo corpus."""

from __future__ import annotations

import dataclasses
import html
import re
from importlib import resources
from pathlib import Path

import orjson
import pytest
from tests.conftest import assert_valid_report

from chemgauge.errors import ConfigError
from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.provenance import sha256_json
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.corpus import demo_corpus_path
from chemgauge.families.forward.provenance import rows_reproducibility_sha256
from chemgauge.families.forward.runner import run_benchmark
from chemgauge.report.compare import compare_runs
from chemgauge.report.html import render_compare_html, render_run_html
from chemgauge.report.loading import load_run
from chemgauge.report.registry import get_adapter
from chemgauge.report.runs import Run
from chemgauge.report.verify import verify_run


@pytest.fixture(scope="module")
def forward_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("forward") / "run"
    result = run_benchmark(BenchmarkConfig(out=out, executor="serial"))
    write_envelope(out / "report.json", result.envelope)
    return out


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for name in ("report.json", "rows.jsonl"):
        (dst / name).write_bytes((src / name).read_bytes())
    return dst


def test_real_forward_run_verifies(forward_dir: Path) -> None:
    run = load_run(forward_dir)
    assert run.family == "forward"
    assert assert_valid_report(forward_dir / "report.json")["family"] == "forward"
    result = verify_run(run)
    assert result.ok, [d.describe() for d in result.differences[:5]]
    assert any(c.name == "input corpus" and c.ok for c in result.checks)


def test_edited_forward_aggregate_is_caught(forward_dir: Path, tmp_path: Path) -> None:
    run_dir = _copy(forward_dir, tmp_path / "edited")
    report = orjson.loads((run_dir / "report.json").read_bytes())
    block = report["metrics"]["by_split"]["test"]["end_to_end"]["top1_hit_rate"]
    block["count"] += 1  # a consistent edit (an inconsistent rate is refused on loading)
    block["value"] = block["count"] / block["n"]
    (run_dir / "report.json").write_bytes(orjson.dumps(report))
    wheres = [d.where for d in verify_run(load_run(run_dir)).differences]
    assert wheres == [
        "metrics.by_split.test.end_to_end.top1_hit_rate.count",
        "metrics.by_split.test.end_to_end.top1_hit_rate.value",
    ]


def _demote_top1(run: Run, count: int) -> tuple[Run, list[str]]:
    """Run B: the first ``count`` top-1 hits of A pushed to rank 3 (still in the top 5)."""
    rows, demoted = [], []
    for row in run.rows:
        if len(demoted) < count and row["best_correct_rank"] == 0:
            row = {**row, "best_correct_rank": 2}
            demoted.append(str(row["source_line"]))
        rows.append(row)
    return dataclasses.replace(run, rows=rows), demoted


def test_compare_hand_checked(forward_dir: Path) -> None:
    a = load_run(forward_dir)
    b, demoted = _demote_top1(a, 2)
    result = compare_runs(a, b)
    overall = {r["metric"]: r for r in result["overall"]}
    top1 = overall["top1"]
    assert (top1["only_a"], top1["only_b"]) == (2, 0)
    assert top1["mcnemar_p"] == pytest.approx(0.5)  # 2 * (1/2)^2
    assert top1["n"] == 10  # the six invalid inputs take part in no metric
    for metric in ("covered", "top5", "top10", "top10_stereo_ignored"):
        assert (overall[metric]["only_a"], overall[metric]["only_b"]) == (0, 0), metric
    # Holm over five metrics: 5 * 0.5 capped at 1; the others are 1.0 already.
    assert [r["holm_p"] for r in result["overall"]] == [1.0] * 5
    assert result["discordant"]["top1"]["only_a"] == demoted
    assert set(result["breakdowns"]) >= {"reaction_class", "split"}


def test_compare_refuses_other_corpus_or_split_protocol(forward_dir: Path) -> None:
    a = load_run(forward_dir)
    corpus = a.envelope.inputs[0].model_copy(update={"sha256": "0" * 64})
    other_corpus = a.envelope.model_copy(update={"inputs": [corpus]})
    other_split = a.envelope.model_copy(
        update={"config": {**a.config, "split_protocol_version": 2}}
    )
    for envelope, field in ((other_corpus, "corpus_sha256"), (other_split, "split_protocol")):
        with pytest.raises(ConfigError, match=field):
            compare_runs(a, dataclasses.replace(a, envelope=envelope))


def test_forward_html_draws_expected_beside_wrong_top1(forward_dir: Path) -> None:
    run = load_run(forward_dir)
    page = render_run_html(run, get_adapter("forward"), verify_run(run))
    assert page.count('class="plot"') >= 4  # hit@k, ranks, pool sizes, latency (+ breakdowns)
    failures = page.split('id="failures"', 1)[1].split("</section>", 1)[0]
    assert "aria-label='expected product'" in failures
    assert "aria-label='best wrong candidate (top-1)'" in failures


def _verify_edited(forward_dir: Path, tmp_path: Path, edit) -> list[str]:  # type: ignore[no-untyped-def]
    run_dir = _copy(forward_dir, tmp_path / "edited")
    (run_dir / "corpus.jsonl").write_bytes(demo_corpus_path().read_bytes())
    report = orjson.loads((run_dir / "report.json").read_bytes())
    report["inputs"][0]["path"] = "corpus.jsonl"
    edit(report, run_dir)
    (run_dir / "report.json").write_bytes(orjson.dumps(report))
    return [d.where.split(" (")[0] for d in verify_run(load_run(run_dir)).differences]


def test_edited_template_source_is_caught_even_with_a_forged_config_hash(
    forward_dir: Path, tmp_path: Path
) -> None:
    def edit(report: dict, _: Path) -> None:  # type: ignore[type-arg]
        report["config"]["template_source"] = "file"
        report["config_sha256"] = sha256_json(report["config"])
        report["provenance"]["config_sha256"] = report["config_sha256"]

    wheres = _verify_edited(forward_dir, tmp_path, edit)
    assert "config.template_source" in wheres  # the rows still say embedded
    assert "provenance.config_sha256" in wheres  # ... under the config hash they carry


def test_edited_corpus_hash_is_caught(forward_dir: Path, tmp_path: Path) -> None:
    def edit(report: dict, _: Path) -> None:  # type: ignore[type-arg]
        report["provenance"]["corpus_sha256"] = "0" * 64

    assert _verify_edited(forward_dir, tmp_path, edit) == [
        "provenance.corpus_sha256",  # against the rows
        "provenance.corpus_sha256",  # against the recorded corpus input
    ]


def test_rules_hash_forged_everywhere_is_caught_by_recomputing_the_rules(
    forward_dir: Path, tmp_path: Path
) -> None:
    forged = "f" * 64

    def edit(report: dict, run_dir: Path) -> None:  # type: ignore[type-arg]
        rows = [orjson.loads(line) for line in (run_dir / "rows.jsonl").read_bytes().splitlines()]
        for row in rows:
            row["provenance"]["rules_content_sha256"] = forged
        digest = rows_reproducibility_sha256(rows)
        for row in rows:
            row["provenance"]["reproducibility_sha256"] = digest
        body = b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in rows)
        (run_dir / "rows.jsonl").write_bytes(body)
        report["reproducibility_sha256"] = digest
        report["provenance"]["rules_content_sha256"] = forged
        report["provenance"]["backends"]["forward_predictor"]["rules_content_sha256"] = forged
        report["metrics"]["rules"]["rules_content_sha256"] = forged

    assert _verify_edited(forward_dir, tmp_path, edit) == [
        "provenance.rules_content_sha256"  # recomputed from the embedded rules
    ]


def test_rule_file_run_recomputes_the_rules_hash_from_the_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules.jsonl"
    embedded = resources.files("chemgauge.families.forward.engine").joinpath("forward_rules.jsonl")
    rules.write_bytes(embedded.read_bytes())
    out = tmp_path / "run"
    config = BenchmarkConfig(out=out, template_source="file", templates=rules, executor="serial")
    write_envelope(out / "report.json", run_benchmark(config).envelope)
    run = load_run(out)
    assert [i.role for i in run.envelope.inputs] == ["corpus", "templates"]
    assert verify_run(run).exit_code == 0
    lines = rules.read_bytes().splitlines(keepends=True)
    rules.write_bytes(b"".join(lines[:-1]))  # one rule fewer: other content, other file
    wheres = [d.where.split(" (")[0] for d in verify_run(load_run(out)).differences]
    assert wheres == ["provenance.rules_content_sha256", "inputs[templates].sha256"]
    rules.unlink()
    result = verify_run(load_run(out))
    assert result.exit_code == 3 and result.missing_inputs == ["templates"]


@pytest.fixture(scope="module")
def extracted_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A train-extracted run of a corpus with a train/test reactant leak."""
    from tests.families.forward.conftest import write_mapped_corpus

    from chemgauge.families.forward.extraction import extract_split_templates

    out = tmp_path_factory.mktemp("extracted")
    corpus = write_mapped_corpus(out / "mapped.jsonl")
    run = extract_split_templates(corpus, "train", out / "templates")
    result = run_benchmark(
        BenchmarkConfig(
            corpus=corpus,
            out=out,
            template_source="train-extracted",
            templates=run.templates_path,
            template_manifest=run.manifest_path,
            seed=11,
            executor="serial",
        )
    )
    write_envelope(out / "report.json", result.envelope)
    return out


def test_train_extracted_run_verifies_with_its_recorded_bootstrap(extracted_dir: Path) -> None:
    run = load_run(extracted_dir)
    result = verify_run(run)
    assert result.ok, [d.describe() for d in result.differences[:5]]
    aggregates = next(c for c in result.checks if c.name == "aggregates")
    assert "held_out" in aggregates.detail and "leakage" in aggregates.detail


def test_edited_leakage_count_is_caught(extracted_dir: Path, tmp_path: Path) -> None:
    run_dir = _copy(extracted_dir, tmp_path / "edited")
    report = orjson.loads((run_dir / "report.json").read_bytes())
    report["metrics"]["leakage"]["reactant_sets"]["by_split_pair"]["train/test"]["shared"] = 0
    (run_dir / "report.json").write_bytes(orjson.dumps(report))
    wheres = [d.where for d in verify_run(load_run(run_dir)).differences]
    assert wheres == ["metrics.leakage.reactant_sets.by_split_pair.train/test.shared"]


def test_held_out_rows_lead_the_headline_and_the_page(extracted_dir: Path) -> None:
    run = load_run(extracted_dir)
    adapter = get_adapter("forward")
    labels = [rate.label for rate in adapter.headline(run)]
    assert labels[0] == "top-1 (held out: val + test)"
    overall = [label for label in labels if "overall" in label]
    # v1 and x1 share their reactants with train sources: in-sample too
    assert overall and all("includes in-sample train/val/test rows" in s for s in overall)
    assert labels.index(overall[0]) > labels.index("true product in pool (held out: val + test)")
    page = render_run_html(run, adapter, verify_run(run), max_failures=4)
    assert "Ranking (held out: val + test)" in page and "Leakage audit" in page
    assert "train (in-sample)" in page and "CC(=O)O.CCO" in page
    assert page.index("held out (val + test)") < page.index("overall (includes in-sample")


def _table_keys(page: str, title: str) -> list[str]:
    """The first-column texts of the table captioned ``title``."""
    table = page.split(f"<caption>{title}</caption>", 1)[1].split("</table>", 1)[0]
    body = table.split("<tbody>", 1)[1]
    return [
        html.unescape(re.sub(r"<[^>]+>", "", cell))
        for cell in re.findall(r'<tr><td class="key">(.*?)</td>', body)
    ]


def test_forward_html_buckets_in_numeric_order_without_empty_ones(forward_dir: Path) -> None:
    run = load_run(forward_dir)
    page = render_run_html(run, get_adapter("forward"), verify_run(run))
    # The demo corpus's pools hold 0 to 13 candidates; six invalid inputs have no pool.
    assert _table_keys(page, "candidate_pool_size") == ["0", "2-5", "6-10", "11-50"]
    # Only invalid inputs lack a reactant count: no valid reaction, no bucket.
    assert _table_keys(page, "num_reactants") == ["2", "3", "4+"]
    # A bucket with valid reactions stays, after the named ones.
    assert _table_keys(page, "reaction_class")[-1] == "<missing>"
    assert "n/a (n=0)" not in page.split('id="breakdowns"', 1)[1].split("</section>", 1)[0]


def test_forward_compare_html_leaves_out_buckets_without_pairs(forward_dir: Path) -> None:
    a = load_run(forward_dir)
    b, _ = _demote_top1(a, 2)
    comparison = compare_runs(a, b)
    tested = comparison["breakdowns"]["num_reactants"]["top1"]
    assert [r["bucket"] for r in tested] == ["2", "3", "4+", "<missing>"]
    assert tested[-1]["n"] == 0  # the invalid inputs: recorded, with nothing tested
    page = render_compare_html(comparison, get_adapter("forward"), a, b)
    section = page.split('id="breakdowns"', 1)[1].split("</section>", 1)[0]
    dimension = section.split("<h3>num_reactants</h3>", 1)[1].split("<h3>", 1)[0]
    # (bucket, n) of every row shown: metric and bucket cells, then n.
    pattern = r'<td class="key">[^<]*(?:<wbr>[^<]*)*</td><td class="key">([^<]*)</td><td>(\d+)<'
    shown = re.findall(pattern, dimension)
    assert len(shown) == 3 * 5  # three buckets with pairs, five metrics
    assert all(int(n) > 0 for _, n in shown)
    assert [b for b, _ in shown[:3]] == ["2", "3", "4+"]  # one metric's buckets, in order
    assert all(int(n) > 0 for _, n in re.findall(pattern, section))  # every dimension


def test_in_sample_marks_edited_away_are_recomputed_from_the_rule_file(
    extracted_dir: Path, tmp_path: Path
) -> None:
    """v1 and x1 are in-sample (near-duplicates of train sources); marks cleared, every hash
    recomputed: verify recomputes the marks from the recorded rule file and the rows."""
    run_dir = _copy(extracted_dir, tmp_path / "edited")
    rows = [orjson.loads(line) for line in (run_dir / "rows.jsonl").read_bytes().splitlines()]
    cleared = [r["source_line"] for r in rows if r["split"] != "train" and r["in_sample"]]
    assert len(cleared) == 2
    for row in rows:
        if row["split"] != "train":
            row["in_sample"], row["in_sample_reason"] = False, None
    digest = rows_reproducibility_sha256(rows)
    for row in rows:
        row["provenance"]["reproducibility_sha256"] = digest
    body = b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in rows)
    (run_dir / "rows.jsonl").write_bytes(body)
    report = orjson.loads((run_dir / "report.json").read_bytes())
    report["reproducibility_sha256"] = digest
    (run_dir / "report.json").write_bytes(orjson.dumps(report))
    wheres = [d.where for d in verify_run(load_run(run_dir)).differences]
    marks = [w for w in wheres if "in_sample_reason" in w]
    assert [int(w.split("line ")[1].split(" ")[0]) for w in marks] == cleared
