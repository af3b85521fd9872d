"""Helpers that run syntheseus's own evaluator on given outputs (test and bench dependency)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def syntheseus_eval(
    data_dir: Path,
    outputs_by_product: Mapping[str, Sequence[str]],
    num_top_results: int,
    *,
    stereo: bool = False,
    limit: int | None = None,
    include_predictions: bool = True,
    skip_repeats: bool = True,
) -> Any:
    """syntheseus ``compute_metrics`` on a fixed-output model; returns its ``EvalResults``."""
    import contextlib
    import io

    from syntheseus import Molecule
    from syntheseus.cli.eval_single_step import compute_metrics
    from syntheseus.interface.models import BackwardReactionModel
    from syntheseus.reaction_prediction.data.dataset import DataFold, DiskReactionDataset
    from syntheseus.reaction_prediction.data.reaction_sample import ReactionSample
    from syntheseus.reaction_prediction.utils.inference import (
        process_raw_smiles_outputs_backwards,
    )

    # Keyed by syntheseus's own canonical product (RDKit canonical SMILES is not always
    # idempotent, so the caller's canonical string can differ from syntheseus's).
    by_product = {Molecule(p).smiles: list(o) for p, o in outputs_by_product.items()}

    class FixedOutputs(BackwardReactionModel):  # type: ignore[misc]
        def _get_reactions(self, inputs: list[Molecule], num_results: int) -> list[Any]:
            out = []
            for mol in inputs:
                raw = by_product.get(mol.smiles, [])[:num_results]
                out.append(process_raw_smiles_outputs_backwards(mol, raw, [{} for _ in raw]))
            return out

        def get_parameters(self) -> list[Any]:
            return []

    dataset = DiskReactionDataset(data_dir, sample_cls=ReactionSample)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return compute_metrics(
            FixedOutputs(remove_duplicates=skip_repeats),
            dataset=dataset,
            num_dataset_truncation=limit,
            num_top_results=num_top_results,
            include_results_modulo_stereo=stereo,
            fold=DataFold.TEST,
            include_predictions=include_predictions,
        )


def syntheseus_results_file(results: Any, folder: Path, print_idxs: Sequence[int]) -> Any:
    """The results file syntheseus's own ``print_and_save`` writes for ``results`` (its
    ``eval-single-step`` output), read back as JSON."""
    import contextlib
    import io
    import json

    from syntheseus.cli.eval_single_step import EvalConfig, print_and_save
    from syntheseus.reaction_prediction.utils.config import get_config

    config = get_config(
        argv=[
            "data_dir=unused",
            "model_class=LocalRetro",
            f"results_dir={folder}",
            f"print_idxs=[{','.join(str(k) for k in print_idxs)}]",
        ],
        config_cls=EvalConfig,
    )
    with contextlib.redirect_stdout(io.StringIO()):
        print_and_save(results, config)
    [path] = folder.glob("LocalRetro_*.json")
    return json.loads(path.read_text())
