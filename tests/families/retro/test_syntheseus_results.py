"""The syntheseus-shaped results file: syntheseus's field names, order and numbers.

The file chemgauge writes is compared with the file syntheseus's own ``print_and_save`` writes
for syntheseus's own ``compute_metrics`` on the same outputs (when syntheseus is installed),
and with hand-checked values (always).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel
from chemgauge.families.retro.syntheseus_results import syntheseus_results_name

# Mapped reactions, as syntheseus's SMI format holds them; products recur (lines 1 and 6).
REACTIONS = (
    "[CH3:1][C:2](=[O:3])[OH:4].[NH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:5][CH3:6]",
    "[CH3:1][C:2](=[O:3])Cl.[NH2:4][CH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:4][CH2:5][CH3:6]",
    "[CH3:1][C@H:2]([NH2:3])[C:4](=[O:5])[OH:6].[CH3:7][OH:8]>>"
    "[CH3:7][O:8][C:4](=[O:5])[C@H:2]([CH3:1])[NH2:3]",
    "Br[c:1]1[cH:2][cH:3][cH:4][cH:5][cH:6]1.OB(O)[c:7]1[cH:8][cH:9][cH:10][cH:11][cH:12]1>>"
    "[c:1]1([c:7]2[cH:8][cH:9][cH:10][cH:11][cH:12]2)[cH:2][cH:3][cH:4][cH:5][cH:6]1",
    "[CH3:1][CH2:2][OH:3].[CH3:4][C:5](=[O:6])[OH:7]>>[CH3:1][CH2:2][O:3][C:5]([CH3:4])=[O:6]",
    "[CH3:1][C:2](=[O:3])[OH:4].[NH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:5][CH3:6]",
)
OUTPUTS = {
    # invalid first, a repeat in another spelling, then the truth
    "CNC(C)=O": ["C1CC", "CCO", "OCC", "CN.CC(=O)O", "CN.CC(O)=O"],
    "CCNC(C)=O": ["CC(=O)O.CCN", "CC(=O)Cl.NCC"],
    # stereo-free truth first (right under stereo_ignored only), then the enantiomer, the truth
    "COC(=O)[C@H](C)N": ["CC(N)C(=O)O.CO", "C[C@@H](N)C(=O)O.CO", "C[C@H](N)C(=O)O.CO"],
    "c1ccc(-c2ccccc2)cc1": [],
    "CCOC(C)=O": ["CC(=O)O(C)(C)(C)C", "CCO.CC(=O)O", "OCC.CC(=O)O", "CCO.CC(O)=O"],
}
NUM_TOP_RESULTS = 5
PRINT_IDXS = (1, 2, 5)


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "test.smi").write_text("\n".join(REACTIONS) + "\n")
    return data


def _ours(tmp_path: Path, name: str, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    config = RetroEvalConfig.from_options(
        {
            "data_dir": str(_data(tmp_path)),
            "model_class": "fixed",
            "num_top_results": NUM_TOP_RESULTS,
            "print_idxs": list(PRINT_IDXS),
            "out": str(tmp_path / name),
            "executor": "serial",
            "batch_size": 2,
            **options,
        }
    )
    model = CallableRetroModel(lambda ps: [OUTPUTS.get(p, []) for p in ps], "fixed")
    run = run_retro_eval(config, model=model)
    path = tmp_path / name / run.report["metrics"]["syntheseus_results"]["file"]
    return json.loads(path.read_text()), run.report


# Fields that describe the model or the machine rather than the evaluation.
_NOT_COMPARED = (
    "eval_args",
    "model_info",
    "num_params",
    "num_trainable_params",
    "model_time_total",
)


def _comparable(results: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in results.items() if k not in _NOT_COMPARED}


@pytest.mark.usefixtures("syntheseus_installed")
@pytest.mark.parametrize(("skip_repeats", "stereo"), [(True, True), (False, True), (True, False)])
def test_the_file_equals_the_one_syntheseus_writes(
    tmp_path: Path, skip_repeats: bool, stereo: bool
) -> None:
    from tests.families.retro.syntheseus_parity import syntheseus_eval, syntheseus_results_file

    ours, _ = _ours(
        tmp_path,
        "ours",
        skip_repeats=str(skip_repeats),
        include_results_modulo_stereo=str(stereo),
    )
    results = syntheseus_eval(
        _data(tmp_path),
        OUTPUTS,
        NUM_TOP_RESULTS,
        stereo=stereo,
        include_predictions=False,
        skip_repeats=skip_repeats,
    )
    theirs = syntheseus_results_file(results, tmp_path / "theirs", PRINT_IDXS)
    assert list(ours) == list(theirs)  # same fields, same order
    assert _comparable(ours) == _comparable(theirs)  # same numbers, to the last bit
    assert ours["eval_args"]["fold"] == theirs["eval_args"]["fold"] == "TEST"
    assert ours["eval_args"]["num_top_results"] == theirs["eval_args"]["num_top_results"]
    assert set(ours["model_time_total"]) == set(theirs["model_time_total"])


def test_hand_checked_values_and_the_convention_skip_repeats_picks(tmp_path: Path) -> None:
    ours, report = _ours(tmp_path, "default", include_results_modulo_stereo="True")
    # syntheseus convention, exact: the truth at ranks 1, 1, 2, miss, 0, 1 (0-based)
    assert ours["num_samples"] == 6
    assert ours["top_k"] == [1 / 6, 4 / 6, 5 / 6, 5 / 6, 5 / 6]
    assert ours["chosen_top_k"] == {"1": 1 / 6, "2": 4 / 6, "5": 5 / 6}
    assert ours["mrr"] == (1 / 2 + 1 / 2 + 1 / 3 + 1 + 1 / 2) / 6
    assert ours["match_modulo_stereo_top_k"][0] == 2 / 6  # the stereo-free spelling, rank 0
    # predictions per target once invalid outputs and repeats are dropped: 2, 2, 3, 0, 1, 2
    assert (ours["min_num_predictions"], ours["max_num_predictions"]) == (0, 3)
    assert ours["mean_num_predictions"] == 10 / 6
    assert ours["median_num_predictions"] == 2.0
    assert ours["predictions"] is None and ours["back_translation_top_k"] is None
    assert ours["eval_args"]["fold"] == "TEST"
    assert report["metrics"]["syntheseus_results"]["convention"] == "syntheseus"

    keep, report = _ours(tmp_path, "keep", skip_repeats="False", fold="TEST")
    # repeats keep their ranks: the truth at 2, 1, 2, miss, 0, 2
    assert keep["top_k"][:3] == [1 / 6, 2 / 6, 5 / 6]
    # valid outputs per target: 4, 2, 3, 0, 3, 4
    assert keep["mean_num_predictions"] == 16 / 6
    assert keep["median_num_predictions"] == 3.0
    assert report["metrics"]["syntheseus_results"]["convention"] == "syntheseus_keep_repeats"
    assert report["config"]["conventions"][0] == "syntheseus_keep_repeats"


def test_mrr_is_summed_as_syntheseus_sums_it(tmp_path: Path) -> None:
    ours, report = _ours(tmp_path, "out")
    expected = 0.0
    for rank in (1, 1, 2, None, 0, 1):  # data order, left to right
        if rank is not None:
            expected += 1.0 / (rank + 1)
    assert ours["mrr"] == expected / 6
    chemgauge_mrr = report["metrics"]["accuracy"]["syntheseus"]["exact"]["mrr"]["value"]
    assert chemgauge_mrr == pytest.approx(expected / 6, abs=1e-15)


def test_file_name_follows_filestring_and_is_rewritten_on_resume(tmp_path: Path) -> None:
    assert syntheseus_results_name(None) == "syntheseus_results.json"
    assert syntheseus_results_name("run7") == "syntheseus_results_run7.json"
    first, _ = _ours(tmp_path, "out", filestring="run7")
    again, report = _ours(tmp_path, "out", filestring="run7")
    assert report["timing"]["scored_now"] == 0  # resumed: same numbers from the journal
    assert _comparable(again) == _comparable(first)
    assert (tmp_path / "out" / "syntheseus_results_run7.json").is_file()
    written = orjson.loads((tmp_path / "out" / "report.json").read_bytes())
    assert written["metrics"]["syntheseus_results"]["file"] == "syntheseus_results_run7.json"


@pytest.mark.usefixtures("syntheseus_installed")
def test_a_syntheseus_command_line_runs_unchanged_with_syntheseus_numbers(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.families.retro.syntheseus_parity import syntheseus_eval, syntheseus_results_file

    predictions = tmp_path / "outputs.jsonl"
    predictions.write_text(
        "".join(json.dumps({"product": p, "predictions": o}) + "\n" for p, o in OUTPUTS.items())
    )
    data = _data(tmp_path)
    argv = [
        f"data_dir={data}",
        "model_class=predictions",
        f"model_dir={predictions}",
        "fold=TEST",
        "skip_repeats=True",
        "include_results_modulo_stereo=True",
        f"num_top_results={NUM_TOP_RESULTS}",
        "num_dataset_truncation=5",
        "print_idxs=[1,2,5]",
        "batch_size=16",
        "num_gpus=0",
        "resumable=True",
        "save_outputs=True",
        "include_predictions=False",
        "filestring=cli",
        f"results_dir={tmp_path / 'out'}",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "chemgauge", "retro", "eval", *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    ours = json.loads((tmp_path / "out" / "syntheseus_results_cli.json").read_text())
    results = syntheseus_eval(
        data, OUTPUTS, NUM_TOP_RESULTS, stereo=True, limit=5, include_predictions=False
    )
    theirs = syntheseus_results_file(results, tmp_path / "theirs", PRINT_IDXS)
    assert _comparable(ours) == _comparable(theirs)
    assert ours["num_samples"] == 5
