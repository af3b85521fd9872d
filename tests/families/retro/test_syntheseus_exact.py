"""syntheseus's own evaluator, reproduced on the inputs where chemgauge's convention parts from
it: atom-mapped spellings of the truth, '' and 'A.' outputs, repeats, stereo variants, more
outputs than num_top_results. The file chemgauge writes equals the one syntheseus writes, and
the report counts, per divergence, the targets it changed (hand-counted below)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel

REACTIONS = (
    "[CH3:1][C:2](=[O:3])[OH:4].[NH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:5][CH3:6]",
    "[CH3:1][C@H:2]([NH2:3])[C:4](=[O:5])[OH:6].[CH3:7][OH:8]>>"
    "[CH3:7][O:8][C:4](=[O:5])[C@H:2]([CH3:1])[NH2:3]",
    "[CH3:1][CH2:2][OH:3].[CH3:4][C:5](=[O:6])[OH:7]>>[CH3:1][CH2:2][O:3][C:5]([CH3:4])=[O:6]",
    "Br[c:1]1[cH:2][cH:3][cH:4][cH:5][cH:6]1.OB(O)[c:7]1[cH:8][cH:9][cH:10][cH:11][cH:12]1>>"
    "[c:1]1([c:7]2[cH:8][cH:9][cH:10][cH:11][cH:12]2)[cH:2][cH:3][cH:4][cH:5][cH:6]1",
    "[CH3:1][C:2](=[O:3])Cl.[NH2:4][CH2:5][CH3:6]>>[CH3:1][C:2](=[O:3])[NH:4][CH2:5][CH3:6]",
)
OUTPUTS = {
    # a mapped spelling of the truth (right for chemgauge, wrong for syntheseus), an empty
    # output (a rank for syntheseus), the truth, a repeat of it
    "CNC(C)=O": ["[CH3:1][NH2:2].CC(=O)O", "", "CN.CC(=O)O", "CC(O)=O.CN"],
    # stereo-free and enantiomer spellings, the truth, 'A.' (a rank for syntheseus), a repeat
    "COC(=O)[C@H](C)N": [
        "CC(N)C(=O)O.CO",
        "C[C@@H](N)C(=O)O.CO",
        "CO.C[C@H](N)C(=O)O",
        "CO.",
        "C[C@H](N)C(=O)O.CO",
    ],
    # seven outputs for num_top_results=5: the last two are cut
    "CCOC(C)=O": ["CCO.CC(=O)O", "OCC.CC(=O)O", "C1CC", "CCN", "CC", "CCO.CC(=O)O", "CO"],
    "c1ccc(-c2ccccc2)cc1": [],
    "CCNC(C)=O": ["CC(=O)Cl.CCN", "CCN.CC(=O)Cl"],
}
NUM_TOP_RESULTS = 5
PRINT_IDXS = (1, 3, 5)
# The model and the machine, not the evaluation: syntheseus's model here is another class.
_NOT_COMPARED = ("model_info", "model_time_total")


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    (data / "test.smi").write_text("\n".join(REACTIONS) + "\n")
    return data


def _ours(tmp_path: Path, **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    out = tmp_path / "ours"
    config = RetroEvalConfig.from_options(
        {
            "data_dir": str(_data(tmp_path)),
            "model_class": "fixed",
            "num_top_results": NUM_TOP_RESULTS,
            "print_idxs": list(PRINT_IDXS),
            "out": str(out),
            "executor": "serial",
            **options,
        }
    )
    model = CallableRetroModel(lambda ps: [OUTPUTS.get(p, []) for p in ps], "fixed")
    run = run_retro_eval(config, model=model)
    path = out / run.report["metrics"]["syntheseus_results"]["file"]
    return json.loads(path.read_text()), run.report


@pytest.mark.usefixtures("syntheseus_installed")
@pytest.mark.parametrize(
    ("skip_repeats", "stereo", "predictions"),
    [(True, True, False), (True, False, True), (False, True, True), (True, False, False)],
)
def test_the_file_equals_syntheseus_on_every_divergent_input(
    tmp_path: Path, skip_repeats: bool, stereo: bool, predictions: bool
) -> None:
    from tests.families.retro.syntheseus_parity import syntheseus_eval, syntheseus_results_file

    options: dict[str, Any] = {"skip_repeats": str(skip_repeats)}
    if stereo:
        options["include_results_modulo_stereo"] = "True"
    if predictions:
        options["include_predictions"] = "True"
    ours, _ = _ours(tmp_path, **options)
    results = syntheseus_eval(
        _data(tmp_path),
        OUTPUTS,
        NUM_TOP_RESULTS,
        stereo=stereo,
        include_predictions=predictions,
        skip_repeats=skip_repeats,
    )
    theirs = syntheseus_results_file(results, tmp_path / "theirs", PRINT_IDXS)
    assert list(ours) == list(theirs)
    for key in theirs:
        if key in _NOT_COMPARED:
            continue
        if key == "eval_args":
            assert {**ours[key], "model_class": None} == {**theirs[key], "model_class": None}
            continue
        assert ours[key] == theirs[key], key
    assert set(ours["model_time_total"]) == set(theirs["model_time_total"])
    if not stereo:
        assert (
            ours["match_modulo_stereo_top_k"] is None and theirs["match_modulo_stereo_mrr"] is None
        )
    assert ours["eval_args"]["batch_size"] == 16 and ours["num_params"] == 0
    if predictions:  # the '' output is kept, the mapped spelling is not a match
        assert ours["predictions"][0][1]["reactants"] == [{"smiles": ""}]
        assert [p["metadata"]["ground_truth_match"] for p in ours["predictions"][0]][:3] == [
            False,
            False,
            True,
        ]
    else:
        assert ours["predictions"] is None


def test_divergence_counts_are_the_hand_counts(tmp_path: Path) -> None:
    ours, report = _ours(tmp_path)
    metrics = report["metrics"]
    # syntheseus's ranks by hand: the mapped spelling is wrong and '' holds rank 1, so the
    # truth is at rank 2 (chemgauge: 0); 'CO.' holds a rank (4 predictions, chemgauge 3); the
    # cut target and the last two agree.
    assert [r["syntheseus"] for r in report_rows(tmp_path)] == [
        {"exact": 2, "n": 3},
        {"exact": 2, "n": 4},
        {"exact": 0, "n": 3},
        {"exact": None, "n": 0},
        {"exact": 0, "n": 1},
    ]
    assert ours["top_k"][:3] == [2 / 5, 2 / 5, 4 / 5]
    counts = {
        d["id"]: (d["targets"], d["targets_changed"])
        for d in metrics["divergences_from_syntheseus"]
    }
    assert counts["empty_output"] == (2, 2)
    assert counts["atom_maps_in_outputs"] == (1, 1)
    assert counts["outputs_beyond_num_top_results"] == (1, 0)
    assert all(
        v == (0, 0)
        for k, v in counts.items()
        if k not in ("empty_output", "atom_maps_in_outputs", "outputs_beyond_num_top_results")
    )
    agreement = metrics["syntheseus_agreement"]
    assert agreement["targets_changed"] == 2 and agreement["unexplained"] == 0


def report_rows(tmp_path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in (tmp_path / "ours" / "rows.jsonl").read_text().splitlines()
    ]


def test_a_moved_first_pass_is_judged_syntheseus_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where RDKit's first canonical pass was not chemgauge's key, syntheseus keys decide:
    the fast verdict equals the one computed syntheseus's way on every output."""
    from chemgauge.chem import smiles
    from chemgauge.chem.reactant_sets import ReactantSetScorer
    from chemgauge.families.retro.syntheseus_verdict import _slow, judge, syntheseus_truth

    outputs = [*OUTPUTS["COC(=O)[C@H](C)N"][:3], "C[C@H](N)C(=O)O.CO", "OC.C[C@H](N)C(O)=O"]
    truth = ["CO", "C[C@H](N)C(=O)O"]
    theirs = syntheseus_truth(truth, mapped=True)
    comparison = ReactantSetScorer(("exact", "stereo_ignored")).compare(truth, outputs)
    # every stereo component counts as moved: the verdict must come from syntheseus keys
    monkeypatch.setattr(smiles, "_SECOND_PASS", {c for o in outputs for c in o.split(".")})
    fast = judge(theirs, truth, outputs, comparison, skip_repeats=True, stereo=True)
    assert fast is not None and not fast.slow_path
    slow = _slow(tuple(theirs or ()), outputs, True, True)
    assert (fast.exact, fast.stereo, fast.num_predictions) == (
        slow.exact,
        slow.stereo,
        slow.num_predictions,
    )
    assert (fast.exact, fast.num_predictions) == (2, 3)
