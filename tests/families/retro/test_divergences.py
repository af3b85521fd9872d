"""Every listed divergence from syntheseus, shown on a hand case: chemgauge's answer always,
syntheseus's own answer when it is installed. A divergence without a case fails."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import require_module

from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel
from chemgauge.families.retro.syntheseus_results import SYNTHESEUS_DIVERGENCES

AMIDE = "CC(=O)O.CN>>CNC(C)=O"
TRUTH = "CN.CC(=O)O"


def _folder(tmp_path: Path, name: str, lines: Sequence[str]) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / name).write_text("\n".join(lines) + "\n")
    return data


def _chemgauge(
    data: Path,
    outputs: Callable[[str], list[str]],
    num_top_results: int = 5,
    **options: Any,
) -> Any:
    config = RetroEvalConfig.from_options(
        {
            "data_dir": str(data),
            "model_class": "fixed",
            "num_top_results": num_top_results,
            "out": str(data.parent / "out"),
            "executor": "serial",
            "allow_missing": "true",
            **options,
        }
    )
    model = CallableRetroModel(lambda ps: [outputs(p) for p in ps], "fixed")
    return run_retro_eval(config, model=model)


def _syntheseus(data: Path, outputs: dict[str, list[str]], n: int = 5, stereo: bool = False) -> Any:
    require_module("syntheseus")
    from tests.families.retro.syntheseus_parity import syntheseus_eval

    return syntheseus_eval(data, outputs, n, stereo=stereo, include_predictions=False)


def empty_output(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", [AMIDE])
    run = _chemgauge(data, lambda p: ["", TRUTH])
    [row] = run.rows
    assert row["hits"]["syntheseus"]["exact"] == 0 and row["invalid_reasons"] == ["empty"]
    theirs = _syntheseus(data, {"CNC(C)=O": ["", TRUTH]})
    assert list(theirs.top_k[:2]) == [0.0, 1.0]  # the empty output held rank 1


def whitespace_in_output(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", [AMIDE])
    run = _chemgauge(data, lambda p: ["CN.CC(=O)O trailing words"])
    [row] = run.rows
    assert row["hits"]["syntheseus"]["exact"] is None
    assert row["invalid_reasons"] == ["whitespace"]
    theirs = _syntheseus(data, {"CNC(C)=O": ["CN.CC(=O)O trailing words"]})
    assert theirs.top_k[0] == 1.0  # RDKit dropped 'trailing words'


def atom_maps_in_outputs(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", [AMIDE])
    outputs = ["[CH3:1][NH2:2].CC(=O)O", TRUTH]
    run = _chemgauge(data, lambda p: outputs)
    [row] = run.rows
    assert row["hits"]["syntheseus"]["exact"] == 0
    assert row["duplicate_ranks"] == [1] and row["n_valid_unique"] == 1
    theirs = _syntheseus(data, {"CNC(C)=O": outputs})
    assert list(theirs.top_k[:2]) == [0.0, 1.0]  # mapped output wrong, truth not a repeat
    assert theirs.max_num_predictions == 2


def atom_maps_in_jsonl_truth(tmp_path: Path) -> None:
    mapped_product = "[CH3:4][NH:3][C:2]([CH3:1])=[O:5]"
    line = {
        "reactants": [{"smiles": "[CH3:1][C:2](=[O:5])O"}, {"smiles": "[NH2:3][CH3:4]"}],
        "products": [{"smiles": mapped_product}],
    }
    data = _folder(tmp_path, "test.jsonl", [json.dumps(line)])
    run = _chemgauge(data, lambda p: [TRUTH] if p == "CNC(C)=O" else [])
    [row] = run.rows
    assert row["product"] == "CNC(C)=O" and row["hits"]["syntheseus"]["exact"] == 0
    theirs = _syntheseus(data, {mapped_product: [TRUTH]})  # asked with the mapped product
    assert theirs.top_k[0] == 0.0 and theirs.max_num_predictions == 1


def dot_in_jsonl_entry(tmp_path: Path) -> None:
    line = {"reactants": [{"smiles": "CC(=O)O.CN"}], "products": [{"smiles": "CNC(C)=O"}]}
    data = _folder(tmp_path, "test.jsonl", [json.dumps(line)])
    run = _chemgauge(data, lambda p: [TRUTH])
    [row] = run.rows
    assert row["reactants"] == ["CC(=O)O", "CN"] and row["hits"]["syntheseus"]["exact"] == 0
    theirs = _syntheseus(data, {"CNC(C)=O": [TRUTH]})
    assert theirs.top_k[0] == 0.0


def stereo_ignored_keeps_isotopes(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", ["[13CH3]C(=O)O.CN>>[13CH3]C(=O)NC"])
    run = _chemgauge(data, lambda p: [TRUTH])
    [row] = run.rows
    assert row["hits"]["syntheseus"]["stereo_ignored"] is None
    theirs = _syntheseus(data, {"[13CH3]C(=O)NC": [TRUTH]}, stereo=True)
    assert theirs.match_modulo_stereo_top_k[0] == 1.0 and theirs.top_k[0] == 0.0


def outputs_beyond_num_top_results(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", [AMIDE])
    run = _chemgauge(data, lambda p: ["CCO", "CCN", TRUTH], num_top_results=2)
    assert run.report["metrics"]["outputs"]["cut_at_num_top_results"] == 1
    assert run.rows[0]["n_returned"] == 3 and run.rows[0]["n_outputs"] == 2
    require_module("syntheseus")
    from syntheseus import Molecule
    from syntheseus.cli.eval_single_step import get_results
    from syntheseus.interface.models import BackwardReactionModel
    from syntheseus.reaction_prediction.utils.inference import (
        process_raw_smiles_outputs_backwards,
    )

    class TooMany(BackwardReactionModel):  # type: ignore[misc]
        def _get_reactions(self, inputs: list[Any], num_results: int) -> list[Any]:
            raw = ["CCO", "CCN", TRUTH]
            return [process_raw_smiles_outputs_backwards(m, raw, [{}] * 3) for m in inputs]

        def get_parameters(self) -> list[Any]:
            return []

    with pytest.raises(ValueError, match="Requested 2 results, but model produced 3"):
        get_results(TooMany(), [Molecule("CNC(C)=O")], num_results=2)


def unreadable_data_lines(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", [AMIDE, "", "not a reaction", "CCO.CC(=O)O>>CCOC(C)=O"])
    run = _chemgauge(data, lambda p: [TRUTH])
    assert run.report["metrics"]["data"]["lines"]["rejections_by_reason"] == {"not_a_reaction": 1}
    assert [r["line"] for r in run.rows] == [1, 4]
    with pytest.raises(ValueError):  # the blank line stops syntheseus
        _syntheseus(data, {"CNC(C)=O": [TRUTH]})


def failed_model_calls(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", [AMIDE, "CCO.CC(=O)O>>CCOC(C)=O"])

    def outputs(product: str) -> list[str]:
        if product == "CCOC(C)=O":
            raise RuntimeError("model crashed")
        return [TRUTH]

    run = _chemgauge(data, outputs)
    assert [r["status"] for r in run.rows] == ["ok", "model_error"]
    require_module("syntheseus")
    from syntheseus.cli.eval_single_step import compute_metrics
    from syntheseus.interface.models import BackwardReactionModel
    from syntheseus.reaction_prediction.data.dataset import DataFold, DiskReactionDataset
    from syntheseus.reaction_prediction.data.reaction_sample import ReactionSample

    class Crashing(BackwardReactionModel):  # type: ignore[misc]
        def _get_reactions(self, inputs: list[Any], num_results: int) -> list[Any]:
            raise RuntimeError("model crashed")

        def get_parameters(self) -> list[Any]:
            return []

    dataset = DiskReactionDataset(data, sample_cls=ReactionSample)
    with pytest.raises(RuntimeError, match="model crashed"):
        compute_metrics(Crashing(), dataset, None, 5, fold=DataFold.TEST)


def size_limits(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", [AMIDE])
    chain = "C" * 1_001  # over the 500-atom default, under the 5,000-character one
    run = _chemgauge(data, lambda p: [chain, TRUTH])
    [row] = run.rows
    assert row["invalid_reasons"] == ["too_many_atoms"]
    assert row["hits"]["syntheseus"]["exact"] == 0
    theirs = _syntheseus(data, {"CNC(C)=O": [chain, TRUTH]})
    assert list(theirs.top_k[:2]) == [0.0, 1.0]  # the 1,001-atom chain held rank 1


def dummy_atoms_in_outputs(tmp_path: Path) -> None:
    data = _folder(tmp_path, "test.smi", [AMIDE])
    outputs = ["*", "[*:1]C.CC(=O)O", TRUTH]
    run = _chemgauge(data, lambda p: outputs)
    [row] = run.rows
    assert row["invalid_reasons"] == ["dummy_atom", "dummy_atom"]
    assert row["invalid_ranks"] == [0, 1]
    assert row["hits"]["syntheseus"]["exact"] == 0 and row["hits"]["raw_slots"]["exact"] == 2
    theirs = _syntheseus(data, {"CNC(C)=O": outputs})
    assert list(theirs.top_k[:3]) == [0.0, 0.0, 1.0]  # both placeholders held a rank


CASES: dict[str, Callable[[Path], None]] = {
    "empty_output": empty_output,
    "whitespace_in_output": whitespace_in_output,
    "atom_maps_in_outputs": atom_maps_in_outputs,
    "atom_maps_in_jsonl_truth": atom_maps_in_jsonl_truth,
    "dot_in_jsonl_entry": dot_in_jsonl_entry,
    "stereo_ignored_keeps_isotopes": stereo_ignored_keeps_isotopes,
    "outputs_beyond_num_top_results": outputs_beyond_num_top_results,
    "unreadable_data_lines": unreadable_data_lines,
    "failed_model_calls": failed_model_calls,
    "size_limits": size_limits,
    "dummy_atoms_in_outputs": dummy_atoms_in_outputs,
}


@pytest.mark.parametrize("divergence", sorted(SYNTHESEUS_DIVERGENCES))
def test_each_listed_divergence_is_shown(divergence: str, tmp_path: Path) -> None:
    assert divergence in CASES, f"divergence {divergence!r} has no test case"
    CASES[divergence](tmp_path)


def test_every_case_is_a_listed_divergence_and_the_report_lists_them(tmp_path: Path) -> None:
    assert set(CASES) == set(SYNTHESEUS_DIVERGENCES)
    data = _folder(tmp_path, "test.smi", [AMIDE])
    listed = _chemgauge(data, lambda p: [TRUTH]).report["metrics"]["divergences_from_syntheseus"]
    assert [d["id"] for d in listed] == list(SYNTHESEUS_DIVERGENCES)
    assert all(d["divergence"] for d in listed)
