"""Outside forward systems: predictions files, a command back-end, and the ranking conventions."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from chemgauge.errors import DataQualityError
from chemgauge.families.forward import api
from chemgauge.families.forward.conventions import rank_as_given, rank_deduplicated, rank_pooled
from chemgauge.families.forward.corpus import BenchReaction
from chemgauge.families.forward.output_keys import OutputKeys
from chemgauge.families.forward.outside import Answer, OutsideSystem
from chemgauge.families.forward.systems import FORWARD_SYSTEMS

AMIDE = "CC(=O)NCc1ccccc1"
ESTER = "CCOC(=O)[C@@H](C)N"  # the L-alanine ethyl ester
ESTER_D = "CCOC(=O)[C@H](C)N"  # its enantiomer
SUZUKI = "c1ccc(-c2ccccc2)cc1"

CORPUS = [
    {"reaction_id": "r1", "reactants": ["OC(C)=O", "NCc1ccccc1"], "accepted_products": [[AMIDE]]},
    {"reaction_id": "r2", "reactants": ["C[C@H](N)C(=O)O", "CCO"], "accepted_products": [[ESTER]]},
    {
        "reaction_id": "r3",
        "reactants": ["Brc1ccccc1", "OB(O)c1ccccc1"],
        "accepted_products": [[SUZUKI]],
    },
]


def _corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    lines = [json.dumps({"schema_version": 1, **r}) for r in CORPUS]
    path.write_text("\n".join(lines) + "\n")
    return path


def _jsonl(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _run(tmp_path: Path, **options: object) -> dict:
    return _outside(api.benchmark(_corpus(tmp_path), tmp_path / "run", **options))


def _outside(report: dict) -> dict:
    """An outside run's envelope, its ``metrics.conventions`` block flattened for reading."""
    block = report["metrics"]["conventions"]
    return {**block, "conventions": block["scores"], "report": report}


def _rows(tmp_path: Path) -> dict[str, dict]:
    lines = (tmp_path / "run" / "rows.jsonl").read_text().splitlines()
    return {r["reaction_id"]: r for r in map(json.loads, lines)}


# --- conventions, by hand ---------------------------------------------------------------


def test_as_given_keeps_invalid_and_repeated_slots() -> None:
    keys = OutputKeys()
    ranking = rank_as_given([["C1CC", "OCC", "CCO", "CC"]], keys)
    assert ranking.ranked == (None, ("CCO",), ("CCO",), ("CC",))
    assert (ranking.invalid, ranking.duplicates) == (1, 1)
    assert ranking.best_rank({("CC",)}) == 3


def test_deduplicated_drops_invalid_and_keeps_first_spelling() -> None:
    keys = OutputKeys()
    ranking = rank_deduplicated([["C1CC", "OCC", "CCO", "CC"]], keys)
    assert ranking.ranked == (("CCO",), ("CC",))
    assert ranking.best_rank({("CC",)}) == 1


def test_pooled_weights_position_within_each_list_and_breaks_ties_by_first_output() -> None:
    keys = OutputKeys()
    # list 1: A B ; list 2: B A ; list 3: C (invalid first: takes no position) then B.
    # A = w1 + w2, B = w2 + w1 + w2, C = w1 -> B, A, C.
    lists = [["CC", "CCC"], ["CCC", "CC"], ["C1C", "CCCC", "CCC", "CCC"]]
    ranking = rank_pooled(lists, keys)
    assert ranking.ranked == (("CCC",), ("CC",), ("CCCC",))
    assert (ranking.invalid, ranking.duplicates) == (1, 1)
    # two products with the same positions in different lists tie; the earlier output wins
    tie = rank_pooled([["CC"], ["CCC"]], keys)
    assert tie.ranked == (("CC",), ("CCC",))
    assert tie.ties_at == (0,)
    assert tie.rank_bounds({("CCC",)}) == (0, 1)


def test_a_tie_of_accepted_products_only_is_a_hit_in_every_order() -> None:
    keys = OutputKeys()
    # three lists, one product each at position 1: a three-way exact tie
    tie = rank_pooled([["CC"], ["CCC"], ["CCCC"]], keys)
    assert tie.ties_at == (0, 1)
    # both ends of the tie accepted: whichever order, an accepted product is first
    assert tie.rank_bounds({("CC",), ("CCC",), ("CCCC",)}) == (0, 0)
    # one of three not accepted: at worst it alone precedes the first accepted one
    assert tie.rank_bounds({("CC",), ("CCCC",)}) == (0, 1)
    # two of three not accepted: the accepted one is third at worst
    assert tie.rank_bounds({("CCC",)}) == (0, 2)


def test_multicomponent_outputs_are_multisets_in_any_order() -> None:
    keys = OutputKeys()
    assert keys("O.CCO") == keys("OCC.O") == ("CCO", "O")
    assert keys("CCO.") is None  # an empty component is not a product


# --- predictions files ------------------------------------------------------------------


def test_predictions_registered_with_command_and_templates() -> None:
    assert {"templates", "predictions", "command"} <= set(FORWARD_SYSTEMS.names())


def test_missing_reactions_are_loud_and_counted(tmp_path: Path) -> None:
    preds = _jsonl(tmp_path, [{"reaction_id": "r1", "predictions": [AMIDE]}])
    with pytest.raises(DataQualityError, match="2 reactions have no predictions"):
        _run(tmp_path, model="predictions", predictions=preds)
    report = _outside(json.loads((tmp_path / "run" / "report.json").read_text()))
    assert report["answers"]["missing"] == 2
    top1 = report["conventions"]["deduplicated"]["top_k"]["1"]
    assert (top1["count"], top1["n"]) == (1, 3)  # missing reactions stay in the denominator
    assert _rows(tmp_path)["r2"]["answer_status"] == "missing"


def test_keyed_by_reactant_set_in_any_spelling(tmp_path: Path) -> None:
    preds = _jsonl(
        tmp_path,
        [
            {"reactants": "NCc1ccccc1.CC(=O)O", "predictions": [AMIDE]},
            {"reactants": ["OCC", "N[C@@H](C)C(O)=O"], "predictions": [ESTER]},
            {"reaction_id": "r3", "predictions": [SUZUKI]},
            {"reaction_id": "elsewhere", "predictions": ["C"]},
        ],
    )
    report = _run(tmp_path, model="predictions", predictions=preds)
    assert report["conventions"]["as_given"]["top_k"]["1"]["count"] == 3
    assert report["answers"]["unmatched_prediction_keys"] == 1


def test_invalid_and_duplicate_outputs_under_each_convention(tmp_path: Path) -> None:
    preds = _jsonl(
        tmp_path,
        [
            {"reaction_id": "r1", "predictions": ["C1CC", "c1ccccc1NC(C)=O", AMIDE]},
            {"reaction_id": "r2", "predictions": ["CCO", "OCC", ESTER]},
            {"reaction_id": "r3", "predictions": ["not smiles", SUZUKI]},
        ],
    )
    report = _run(tmp_path, model="predictions", predictions=preds)
    given, dedup = report["conventions"]["as_given"], report["conventions"]["deduplicated"]
    assert [given["top_k"][k]["count"] for k in ("1", "2", "3")] == [0, 1, 3]
    assert [dedup["top_k"][k]["count"] for k in ("1", "2", "3")] == [1, 3, 3]
    assert (given["invalid_outputs"], given["duplicate_outputs"]) == (2, 1)
    row = _rows(tmp_path)["r1"]
    assert row["raw_outputs"] == [["C1CC", "c1ccccc1NC(C)=O", AMIDE]]  # kept as written
    assert row["conventions"]["as_given"]["top_candidates"][0] is None  # the invalid slot


def test_several_augmented_lists_are_pooled(tmp_path: Path) -> None:
    other = "CC(=O)Oc1ccccc1"
    preds = _jsonl(
        tmp_path,
        [
            {"reaction_id": "r1", "predictions": [[other, AMIDE], [AMIDE, other]]},
            {"reaction_id": "r1", "predictions": [AMIDE]},  # a third list on its own line
            {"reaction_id": "r2", "predictions": [ESTER]},
            {"reaction_id": "r3", "predictions": [SUZUKI]},
        ],
    )
    report = _run(tmp_path, model="predictions", predictions=preds)
    assert report["conventions"]["as_given"]["top_k"]["1"]["count"] == 2  # first list: other
    assert report["conventions"]["pooled"]["top_k"]["1"]["count"] == 3
    assert len(_rows(tmp_path)["r1"]["raw_outputs"]) == 3


def test_stereo_variant_is_an_exact_miss_and_a_stereo_ignored_hit(tmp_path: Path) -> None:
    preds = _jsonl(
        tmp_path,
        [
            {"reaction_id": "r1", "predictions": [AMIDE]},
            {"reaction_id": "r2", "predictions": [ESTER_D]},
            {"reaction_id": "r3", "predictions": [SUZUKI]},
        ],
    )
    report = _run(tmp_path, model="predictions", predictions=preds)
    block = report["conventions"]["deduplicated"]
    assert block["top_k"]["1"]["count"] == 2
    assert block["top_k_stereo_ignored"]["1"]["count"] == 3
    assert block["stereo_status_top10"] == {
        "exact_hit": 2,
        "stereo_only_hit": 1,
        "no_hit": 0,
        "unsupported": 0,
    }
    assert (
        _rows(tmp_path)["r2"]["conventions"]["pooled"]["stereo_status_top10"] == "stereo_only_hit"
    )
    by_split = block["by_split"]
    assert sum(s["1"]["n"] for s in by_split.values()) == 3  # every reaction in one split


def test_csv_target_columns_and_mt_pair(tmp_path: Path) -> None:
    csv_file = tmp_path / "preds.csv"
    csv_file.write_text(
        "input,target,target_2\n"
        f"CC(=O)O.NCc1ccccc1,C,{AMIDE}\n"
        f"CC(=O)O.NCc1ccccc1,{AMIDE},C\n"
        f"CCO>C[C@H](N)C(=O)O,{ESTER},C\n"
        f"Brc1ccccc1.OB(O)c1ccccc1,{SUZUKI},C\n"
    )
    report = _run(tmp_path, model="predictions", predictions=csv_file)
    assert report["conventions"]["as_given"]["top_k"]["1"]["count"] == 2
    # r1's two rows tie exactly (C: w1 + w2, the amide: w2 + w1); C is the earlier output
    pooled = report["conventions"]["pooled"]
    assert pooled["top_k"]["1"]["count"] == 2
    assert pooled["top_k_tie_range"]["1"] == [2, 3]
    assert pooled["top_k"]["2"]["count"] == 3

    src = tmp_path / "src.txt"
    src.write_text("C C ( = O ) O . N C c 1 c c c c c 1\nC C O . C [C@H] ( N ) C ( = O ) O\n")
    tgt = tmp_path / "pred.txt"
    tgt.write_text(f"{' '.join(AMIDE)}\nC\nC\n{' '.join(ESTER)}\n")
    report = _outside(
        api.benchmark(
            _corpus(tmp_path),
            tmp_path / "run2",
            model="predictions",
            predictions=tgt,
            src=src,
            allow_missing=True,
        )
    )
    given = report["conventions"]["as_given"]["top_k"]
    assert (given["1"]["count"], given["2"]["count"], report["answers"]["missing"]) == (1, 2, 1)


# --- a command back-end -----------------------------------------------------------------

FAKE_MODEL = """
import sys
lines = sys.stdin.read().splitlines()
if any(line.startswith("Brc1") for line in lines):
    sys.exit("model crashed")
answers = {"OC(C)=O.NCc1ccccc1": "AMIDE", "C[C@H](N)C(=O)O.CCO": "ESTER"}
for line in lines:
    print(answers.get(line, ""))
""".replace("AMIDE", AMIDE).replace("ESTER", ESTER)


def test_command_back_end_crashing_on_one_batch_counts_that_batch(tmp_path: Path) -> None:
    script = tmp_path / "model.py"
    script.write_text(FAKE_MODEL)
    report = _run(
        tmp_path,
        model="command",
        command=[sys.executable, str(script)],
        batch_size=2,
        allow_missing=True,
    )
    assert report["answers"] == {
        "answered": 2,
        "missing": 0,
        "error": 1,
        "unmatched_prediction_keys": 0,
    }
    assert report["conventions"]["as_given"]["top_k"]["1"]["count"] == 2
    row = _rows(tmp_path)["r3"]
    assert row["answer_status"] == "error" and "model crashed" in row["answer_detail"]


def test_list_shows_forward_systems_and_conventions() -> None:
    from typer.testing import CliRunner

    from chemgauge.cli import app

    result = CliRunner().invoke(app, ["list", "forward"])
    assert result.exit_code == 0
    for name in ("predictions", "command", "as_given", "deduplicated", "pooled"):
        assert f"| {name} |" in result.stdout


def test_cli_benchmarks_a_predictions_file_and_fails_on_missing(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from chemgauge.cli import app

    corpus = _corpus(tmp_path)
    preds = _jsonl(tmp_path, [{"reaction_id": "r1", "predictions": [AMIDE]}])
    args = ["forward", "benchmark", "--model", "predictions", "--predictions", str(preds)]
    args += ["--corpus", str(corpus), "--convention", "pooled"]
    missing = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert missing.exit_code != 0
    assert "2 reactions have no predictions" in str(missing.exception)
    assert (tmp_path / "a" / "rows.jsonl").is_file()  # rows written before the refusal
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b"), "--allow-missing"])
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    assert report["metrics"]["conventions"]["headline"] == "pooled"


def test_corpus_from_pairs_merges_augmented_lines_and_counts_them(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from chemgauge.cli import app

    src = tmp_path / "src.txt"
    tgt = tmp_path / "tgt.txt"
    src.write_text(
        "C C ( = O ) O . N C c 1 c c c c c 1\n"
        "N C c 1 c c c c c 1 . O C ( C ) = O\n"  # the same reaction, spelled otherwise
        "C C O . C [C@H] ( N ) C ( = O ) O > O S ( = O ) ( = O ) O\n"
    )
    tgt.write_text(f"{' '.join(AMIDE)}\n{' '.join(AMIDE)}\n{' '.join(ESTER)}\n")
    out = tmp_path / "corpus.jsonl"
    result = CliRunner().invoke(
        app, ["forward", "corpus-from-pairs", "--src", str(src), "--tgt", str(tgt), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reaction_id"] for r in records] == ["src:1", "src:3"]
    assert records[1]["reactants"] == ["CCO", "C[C@H](N)C(=O)O"]  # the reagent left out
    assert "1 merged" in result.output and "1 with reagents left out" in result.output
    preds = _jsonl(tmp_path, [{"reactants": "CC(=O)O.NCc1ccccc1", "predictions": [AMIDE]}])
    report = _outside(
        api.benchmark(
            out, tmp_path / "run", model="predictions", predictions=preds, allow_missing=True
        )
    )
    assert report["conventions"]["pooled"]["top_k"]["1"]["count"] == 1


def _startup_seconds() -> float:
    """How long this machine takes, now, to start a Python child that prints a line."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "print('')"], check=True, capture_output=True)
    return time.perf_counter() - started


def test_a_command_past_its_timeout_fails_its_batch_only(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(
        "import sys, time\nlines = sys.stdin.read().splitlines()\n"
        "if any(l.startswith('Brc1') for l in lines):\n    time.sleep(30)\n"
        "for l in lines:\n    print('')\n"
    )
    report = _run(
        tmp_path,
        model="command",
        command=[sys.executable, str(script)],
        batch_size=2,
        timeout=max(3.0, 30 * _startup_seconds()),  # room for the quick batches when loaded
        allow_missing=True,
    )
    assert (report["answers"]["answered"], report["answers"]["error"]) == (2, 1)
    assert "TimeoutExpired" in _rows(tmp_path)["r3"]["answer_detail"]


class _EchoModel(OutsideSystem):
    """A Python plugin: always answers the accepted amide, twice."""

    name = "echo"

    def _answer(self, batch: Sequence[BenchReaction]) -> list[Answer]:
        return [Answer(((AMIDE, AMIDE),)) for _ in batch]


def test_a_python_plugin_registers_in_the_same_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FORWARD_SYSTEMS._entries, "echo", lambda options: _EchoModel())
    report = _run(tmp_path, model="echo")
    assert report["system"] == {"name": "echo"}
    assert report["conventions"]["as_given"]["duplicate_outputs"] == 3
    assert report["conventions"]["deduplicated"]["top_k"]["1"]["count"] == 1


def test_rows_are_byte_identical_across_runs(tmp_path: Path) -> None:
    preds = _jsonl(
        tmp_path, [{"reaction_id": r["reaction_id"], "predictions": [AMIDE, "C1"]} for r in CORPUS]
    )
    first = api.benchmark(_corpus(tmp_path), tmp_path / "a", model="predictions", predictions=preds)
    second = api.benchmark(
        _corpus(tmp_path), tmp_path / "b", model="predictions", predictions=preds
    )

    def rows(run: str) -> list[dict]:  # elapsed_ms is timing: outside every guarantee
        lines = (tmp_path / run / "rows.jsonl").read_text().splitlines()
        return [{k: v for k, v in json.loads(x).items() if k != "elapsed_ms"} for x in lines]

    assert rows("a") == rows("b")
    assert first["reproducibility_sha256"] == second["reproducibility_sha256"]
