"""``compare``: paired counts, McNemar and Holm checked by hand; mismatched runs refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from tests.report.conftest import CORPUS, NAMES_A, NAMES_B, make_names_run
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.report.compare import _protocol_check, compare_runs, paired_binary_bootstrap
from chemgauge.report.loading import load_run
from chemgauge.report.runs import Run


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
        assert r["difference"]["value"] == pytest.approx(only_a / 10)
    # The reference lenses pair up as parity and strict do (same verdicts on these names).
    assert overall["rt_valid[reference_parity]"]["mcnemar_p"] == pytest.approx(0.25)
    assert overall["rt_valid[reference_strict]"]["mcnemar_p"] == pytest.approx(0.125)
    # Holm over the six metrics, ascending: 6 * 0.0625 = 0.375; 5 * 0.125 = 0.625; 4 * 0.125
    # = 0.5 -> 0.625 (monotone); 3 * 0.25 = 0.75; 2 * 0.25 = 0.5 -> 0.75; 1 * 1 = 1.
    assert [overall[m]["holm_p"] for m in expected] == pytest.approx([1.0, 0.75, 0.625, 0.375])
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
        assert ba[metric]["difference"]["value"] == pytest.approx(-r["difference"]["value"])
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
    out_json, out_html = tmp_path / "cmp" / "compare.json", tmp_path / "cmp" / "compare.html"
    result = CliRunner().invoke(
        app, ["compare", *map(str, two_runs), "--out", str(out_json.parent)]
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
    with pytest.raises(
        InputFileError,
        match=r"rows\.jsonl: rows do not have the names row shape \(KeyError: 'emitted'\)",
    ):
        compare_runs(load_run(two_runs[0]), load_run(two_runs[1]), force=True)


# 25 neutral structures without stereo of at most 10 heavy atoms (one bucket per dimension).
SMILES_25 = (
    *("C" * i for i in range(1, 11)),
    *("C" * i + "O" for i in range(1, 10)),
    *("c1ccccc1", "Cc1ccccc1", "Oc1ccccc1", "c1ccncc1", "C1CCCCC1", "CC(C)C"),
)
OPSIN_25 = {f"name{i}": s for i, s in enumerate(SMILES_25)} | {"cyanide": "C#N"}


def _runs_5_2_of_25(tmp_path: Path) -> tuple[Path, Path]:
    """A right and B wrong on items 0-4, B right and A wrong on 5-6, both right on 7-24."""
    names = [f"name{i}" for i in range(25)]
    a = ["cyanide" if i in (5, 6) else n for i, n in enumerate(names)]
    b = ["cyanide" if i < 5 else n for i, n in enumerate(names)]
    return (
        make_names_run(tmp_path / "a", a, smiles=SMILES_25, opsin=OPSIN_25),
        make_names_run(tmp_path / "b", b, smiles=SMILES_25, opsin=OPSIN_25),
    )


def test_compare_reports_the_95_percent_interval_it_labels(tmp_path: Path) -> None:
    # 5 only-A, 2 only-B of 25: the exact distribution of the resampled difference (scipy.stats
    # multinomial, tests/report/test_paired_stats.py) puts the 95% interval at [-2, 8]/25 and
    # the 90% one at [-1, 7]/25, each CDF step several Monte Carlo errors from its cut.
    a, b = (load_run(p) for p in _runs_5_2_of_25(tmp_path))
    for seed in (0, 3):
        result = compare_runs(a, b, seed=seed)
        assert result["settings"]["confidence"] == 0.95
        entries = [r for r in result["overall"] if r["metric"].startswith("rt_valid")]
        entries += [e for dim in result["breakdowns"].values() for e in dim["rt_valid[exact]"]]
        # three lenses (a default run's); three dimensions of one bucket each
        assert len(entries) == 3 + 3
        for entry in entries:
            assert (entry["n"], entry["only_a"], entry["only_b"]) == (25, 5, 2)
            assert (entry["both"], entry["neither"]) == (18, 0)
            assert entry["difference"]["method"] == "paired_bootstrap95"
            assert entry["difference"]["interval"] == [-2 / 25, 8 / 25], (seed, entry["metric"])


def test_the_recorded_seed_and_resamples_reproduce_every_interval(tmp_path: Path) -> None:
    # At 100 resamples (the fewest allowed) the percentile ends move with the seed; each one
    # reported must be the paired bootstrap of its counts under the seed and resamples the
    # comparison records.
    a, b = (load_run(p) for p in _runs_5_2_of_25(tmp_path))
    seen = set()
    for seed in range(4):
        result = compare_runs(a, b, seed=seed, resamples=100)
        assert (result["settings"]["seed"], result["settings"]["resamples"]) == (seed, 100)
        entries = result["overall"] + result["breakdowns"]["heavy_atoms"]["rt_valid[exact]"]
        for entry in entries:
            again = paired_binary_bootstrap(
                entry["only_a"], entry["only_b"], entry["n"], seed=seed, resamples=100
            )
            assert entry["difference"]["interval"] == [again.low, again.high], (seed, entry)
        seen.add(tuple(result["overall"][-1]["difference"]["interval"]))
    assert len(seen) > 1  # the seed matters here, so the check above has teeth


def test_an_opsin_error_is_the_namers_miss_in_every_pair(tmp_path: Path) -> None:
    # B's name for benzene (item m03) gets no answer from OPSIN: an opsin_error stays in every
    # denominator (no rate excludes it), so m03 is B's miss in every pair (A named it right):
    # all 10 items are paired, and benzene moves from both to only-A: the clean run's
    # (4, 5, 0, 1) becomes (3, 6, 0, 1).
    names_b = (*NAMES_B[:3], "slow benzene", *NAMES_B[4:])
    a = load_run(make_names_run(tmp_path / "a", NAMES_A))
    b = load_run(make_names_run(tmp_path / "b", names_b))
    result = compare_runs(a, b)
    assert {r["n"] for r in result["overall"]} == {10}
    exact = _overall(result)["rt_valid[exact]"]
    assert (exact["both"], exact["only_a"], exact["only_b"], exact["neither"]) == (3, 6, 0, 1)


def test_compare_json_has_the_schema_2_layout(two_runs: tuple[Path, Path]) -> None:
    a, b = load_run(two_runs[0]), load_run(two_runs[1])
    result = compare_runs(a, b)
    assert list(result) == [
        "schema_version",
        "family",
        "run_a",
        "run_b",
        "protocol",
        "items",
        "settings",
        "overall",
        "breakdowns",
        "discordant",
        "discordant_listed_max",
        "warnings",
    ]
    assert (result["schema_version"], result["discordant_listed_max"]) == (2, 1000)
    for key, folder in (("run_a", two_runs[0]), ("run_b", two_runs[1])):
        described = result[key]
        assert described["report"] == str(folder / "report.json")
        assert described["rows"] == str(folder / "rows.jsonl")
        assert described["label"] and len(described["reproducibility_sha256"]) == 64
    assert result["settings"] == {
        "seed": 0,  # the defaults
        "resamples": 2000,
        "confidence": 0.95,
        "difference": "rate(A) - rate(B) on paired items",
        "holm_families": "overall: the hit metrics; breakdowns: the buckets of one metric",
        "breakdown_buckets_from": "run A",
    }
    entry = _overall(result)["rt_valid[exact]"]
    assert entry["difference"] == {
        "n": entry["n"],
        "value": 0.5,
        "interval": entry["difference"]["interval"],
        "method": "paired_bootstrap95",
    }
    for dimension in result["breakdowns"].values():
        for metric, entries in dimension.items():
            assert {e["metric"] for e in entries} == {metric}


def test_forced_protocol_records_both_sides(tmp_path: Path) -> None:
    a = load_run(make_names_run(tmp_path / "a", NAMES_A))
    c = load_run(make_names_run(tmp_path / "c", NAMES_A, smiles=("CCO", *CORPUS[1:])))
    protocol = compare_runs(a, c, force=True)["protocol"]
    assert set(protocol["a"]) == set(protocol["b"]) == {"corpus_sha256"}
    assert protocol["a"]["corpus_sha256"] != protocol["b"]["corpus_sha256"]
    assert protocol["a"] == compare_runs(a, a)["protocol"]["b"]


class _Protocols:
    """An adapter stand-in whose comparison protocol is whatever each fake run carries."""

    def comparison_protocol(self, run: Any) -> dict[str, Any]:
        return dict(run.protocol)


def _fake(name: str, protocol: dict[str, Any]) -> Any:
    return SimpleNamespace(report_path=Path(name) / "report.json", protocol=protocol)


@pytest.mark.parametrize(
    ("pa", "pb", "refused"),
    [
        # a key only one run records is a disagreement, whatever its value
        ({"corpus": "c", "split": 1}, {"corpus": "c"}, "split: 1 (a/report.json) vs None"),
        ({"corpus": "c", "split": None}, {"corpus": "c"}, "split: None (a/report.json) vs None"),
        ({"corpus": "c"}, {"corpus": "c", "split": 1}, "split: None (a/report.json) vs 1"),
        # a key both leave unknown is refused too: nobody can say the protocols agree
        ({"corpus": None}, {"corpus": None}, "corpus: None (a/report.json) vs None"),
    ],
)
def test_protocol_keys_missing_or_unknown_are_refused(
    pa: dict[str, Any], pb: dict[str, Any], refused: str
) -> None:
    a, b = _fake("a", pa), _fake("b", pb)
    with pytest.raises(ConfigError) as caught:
        _protocol_check(_Protocols(), a, b, force=False)
    assert f": {refused} (b/report.json). Pass --force" in str(caught.value)
    forced = _protocol_check(_Protocols(), a, b, force=True)
    assert (forced["match"], forced["forced"]) == (False, True)


def test_refusal_names_every_differing_key_with_both_values() -> None:
    a = _fake("a", {"corpus": "c1", "split": 1, "same": "x"})
    b = _fake("b", {"corpus": "c2", "split": 2, "same": "x"})
    with pytest.raises(ConfigError) as caught:
        _protocol_check(_Protocols(), a, b, force=False)
    assert str(caught.value) == (
        "refusing to compare runs that are not over the same items under the same protocol: "
        "corpus: 'c1' (a/report.json) vs 'c2' (b/report.json); "
        "split: 1 (a/report.json) vs 2 (b/report.json). "
        "Pass --force to compare the shared items anyway."
    )


def _run_with_ids(folder: Path, prefix: str) -> Run:
    """Run A's names over the same structures under other item ids (no item shared)."""
    folder.mkdir(parents=True)
    lines = [
        orjson.dumps({"id": f"{prefix}{i:02d}", "smiles": smi, "name": name})
        for i, (smi, name) in enumerate(zip(CORPUS, NAMES_A, strict=True))
    ]
    pairs = folder / "pairs.jsonl"
    pairs.write_bytes(b"\n".join(lines) + b"\n")
    return load_run(make_names_run(folder, NAMES_A, input_path=pairs))


def test_runs_sharing_no_item_are_refused(tmp_path: Path) -> None:
    a = load_run(make_names_run(tmp_path / "a", NAMES_A))
    other = _run_with_ids(tmp_path / "x", "x")
    with pytest.raises(
        ConfigError, match=r"^the runs share no items \(.*a/rows\.jsonl vs .*x/rows"
    ):
        compare_runs(a, other, force=True)


@pytest.mark.parametrize("resamples", [100, 1_000_000])
def test_resamples_at_either_bound_are_accepted(tmp_path: Path, resamples: int) -> None:
    # Runs sharing no item: accepted settings get as far as the shared-items check (and no
    # million-resample bootstrap runs).
    a = load_run(make_names_run(tmp_path / "a", NAMES_A))
    other = _run_with_ids(tmp_path / "x", "x")
    with pytest.raises(ConfigError, match="share no items"):
        compare_runs(a, other, force=True, resamples=resamples)


@pytest.mark.parametrize("resamples", [99, 1_000_001])
def test_resamples_past_either_bound_are_refused(
    two_runs: tuple[Path, Path], resamples: int
) -> None:
    a, b = load_run(two_runs[0]), load_run(two_runs[1])
    expected = f"^--resamples must be between 100 and 1,000,000 .*, got {resamples:,}$"
    with pytest.raises(ConfigError, match=expected):
        compare_runs(a, b, resamples=resamples)


def test_rows_without_an_item_key_or_with_a_repeated_one_name_the_file(
    two_runs: tuple[Path, Path],
) -> None:
    rows_path = two_runs[1] / "rows.jsonl"
    rows = [orjson.loads(line) for line in rows_path.read_bytes().splitlines()]
    rows[3]["id"] = rows[2]["id"]
    rows_path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    a = load_run(two_runs[0])
    with pytest.raises(InputFileError) as twice:
        compare_runs(a, load_run(two_runs[1]), force=True)
    assert str(twice.value) == (
        f"{rows_path}: item 'm02' appears twice; compare needs one row per item"
    )
    assert twice.value.path == str(rows_path)
    del rows[3]["id"]
    rows_path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    with pytest.raises(InputFileError) as keyless:
        compare_runs(a, load_run(two_runs[1]), force=True)
    assert str(keyless.value) == f"{rows_path}: a row lacks the item key ('id')"
    assert keyless.value.path == str(rows_path)


def test_a_metric_only_one_run_has_is_named_not_dropped_silently(tmp_path: Path) -> None:
    """A run with the reference lenses against one without: the two reference metrics
    cannot be paired; the comparison says so instead of leaving them out unannounced."""
    with_reference = make_names_run(tmp_path / "a", NAMES_A, reference_lenses=True)
    without = make_names_run(tmp_path / "b", NAMES_B)
    result = compare_runs(load_run(with_reference), load_run(without), seed=5)
    assert set(_overall(result)) == {
        "emitted",
        "rt_valid[parity]",
        "rt_valid[strict]",
        "rt_valid[exact]",
    }
    assert result["warnings"] == [
        "metrics only in A, not compared: rt_valid[reference_parity], rt_valid[reference_strict]"
    ]
    swapped = compare_runs(load_run(without), load_run(with_reference), seed=5)
    assert swapped["warnings"] == [
        "metrics only in B, not compared: rt_valid[reference_parity], rt_valid[reference_strict]"
    ]
