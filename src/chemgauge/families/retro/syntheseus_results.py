"""syntheseus's results file, written beside chemgauge's report, and where the two differ.

``syntheseus eval-single-step`` saves its ``EvalResults`` as JSON plus a ``chosen_<name>``
mapping for each top-k list at its ``print_idxs``. :func:`syntheseus_results` builds that
mapping with syntheseus's field names and order from syntheseus's own verdicts, computed per
target beside chemgauge's (:mod:`~chemgauge.families.retro.syntheseus_verdict`: its parsing,
its repeats under ``skip_repeats``, its identity), with syntheseus's arithmetic: top-k as
hits / targets, MRR summed left to right in data order, mean and median of the per-target
prediction counts as ``statistics`` computes them. So on the same outputs and arguments the
file is the one syntheseus writes (its stereo fields null unless
``include_results_modulo_stereo``, ``predictions`` only with ``include_predictions``); where
chemgauge's own conventions differ is counted per divergence in the report
(:mod:`~chemgauge.families.retro.divergences`).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chemgauge.families.retro.divergences import SYNTHESEUS_DIVERGENCES
from chemgauge.families.retro.metrics import RankTally, RetroTally

if TYPE_CHECKING:
    from chemgauge.families.retro.config import RetroEvalConfig
    from chemgauge.families.retro.engine.base import RetroModel

__all__ = [
    "SYNTHESEUS_DIVERGENCES",
    "SYNTHESEUS_FOLD_NAMES",
    "SyntheseusTally",
    "syntheseus_results",
    "syntheseus_results_name",
]

#: chemgauge fold -> the ``DataFold`` name syntheseus writes in ``eval_args``.
SYNTHESEUS_FOLD_NAMES = {"train": "TRAIN", "val": "VALIDATION", "test": "TEST"}


class SyntheseusTally:
    """syntheseus's own verdicts (``row["syntheseus"]``), folded in data order."""

    def __init__(self) -> None:
        self.exact = RankTally()
        self.stereo = RankTally()
        self.counts = array("d")

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one row in (a row without a verdict is a miss with no predictions)."""
        verdict = row.get("syntheseus") or {}
        self.exact.add(verdict.get("exact"))
        self.stereo.add(verdict.get("stereo"))
        self.counts.append(verdict.get("n", 0))


def syntheseus_results_name(filestring: str | None) -> str:
    """File name of the syntheseus-shaped results (``syntheseus_results[_<filestring>].json``)."""
    return f"syntheseus_results{'_' + filestring if filestring else ''}.json"


def _curve(tally: RankTally, max_k: int) -> list[float] | None:
    if not tally.n:
        return None
    curve = tally.block((), max_k)["curve"]
    return [float(x) for x in curve]


def _mrr(tally: RankTally) -> float | None:
    return tally.sequential_reciprocal / tally.n if tally.n else None


def _counts(values: array[float]) -> dict[str, Any]:
    """min/max/mean/median of per-target prediction counts, as syntheseus computes them."""
    counts = sorted(int(v) for v in values)
    if not counts:
        return dict.fromkeys(
            (
                "min_num_predictions",
                "max_num_predictions",
                "mean_num_predictions",
                "median_num_predictions",
            ),
            None,
        )
    n = len(counts)
    middle = n // 2
    median = counts[middle] if n % 2 else (counts[middle - 1] + counts[middle]) / 2
    return {
        "min_num_predictions": counts[0],
        "max_num_predictions": counts[-1],
        "mean_num_predictions": sum(counts) / n,
        "median_num_predictions": float(median),
    }


def _back_translation(
    tally: RetroTally, config: RetroEvalConfig
) -> tuple[list[float] | None, float | None, str | None]:
    """syntheseus's back-translation top-k and MRR, when chemgauge's round trip covers the
    same proposals (else ``None`` and why)."""
    if config.round_trip is None:
        return None, None, None
    if not config.skip_repeats:
        return None, None, "round trips run on the syntheseus convention (skip_repeats=True)"
    n, max_k = tally.n, config.num_top_results
    if config.round_trip_max_rank < max_k:
        return (
            None,
            None,
            f"round_trip_max_rank={config.round_trip_max_rank} < num_top_results={max_k}: "
            "the back-translation curve would stop early",
        )
    if not n:
        return None, None, None
    hits_at = [0] * (max_k + 1)
    for first, count in tally.rt_firsts.items():
        if first < max_k:
            hits_at[first + 1] += count
    curve, running = [], 0
    for k in range(1, max_k + 1):
        running += hits_at[k]
        curve.append(running / n)
    return curve, tally.rt_sequential_reciprocal / n, None


def _prediction_notes(config: RetroEvalConfig, included: bool) -> list[str]:
    if not included:
        return [
            "predictions and back_translation_predictions are null (include_predictions=False, "
            "chemgauge's default): raw outputs are in journal.jsonl, per-output verdicts in "
            "rows.jsonl"
        ]
    notes = [
        "predictions as syntheseus writes them; each one's metadata holds ground_truth_match "
        "only (chemgauge keeps no model metadata such as probabilities)"
    ]
    if config.round_trip is not None:
        notes.append("back_translation_predictions is null: round trips are chemgauge's own")
    return notes


def syntheseus_results(
    tally: RetroTally,
    theirs: SyntheseusTally,
    config: RetroEvalConfig,
    model: RetroModel,
    *,
    model_seconds: Sequence[float],
    predictions: list[Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The mapping syntheseus's ``print_and_save`` would write, and notes on fields chemgauge
    leaves empty (``model_seconds``: total model-call and post-processing seconds)."""
    convention = config.syntheseus_convention
    max_k = config.num_top_results
    exact = theirs.exact
    stereo = theirs.stereo if config.include_results_modulo_stereo else None
    counts = _counts(theirs.counts)
    params, trainable = model.parameter_counts()
    eval_args: dict[str, Any] = {
        "model_class": model.class_name(),
        "num_top_results": max_k,
        "fold": SYNTHESEUS_FOLD_NAMES[config.fold],
        "batch_size": config.batch_size,
    }
    if config.round_trip is not None:
        eval_args["back_translation_model_class"] = config.round_trip
        eval_args["back_translation_num_results"] = config.round_trip_num_results
    bt_curve, bt_mrr, bt_note = _back_translation(tally, config)
    results: dict[str, Any] = {
        "eval_args": eval_args,
        "model_info": model.describe(),
        "num_params": 0 if params is None else params,
        "num_trainable_params": 0 if trainable is None else trainable,
        "num_samples": tally.n,
        "top_k": _curve(exact, max_k),
        "mrr": _mrr(exact),
        **counts,
        "model_time_total": {
            "time_model_call": model_seconds[0],
            "time_post_processing": model_seconds[1],
        },
        "match_modulo_stereo_top_k": None if stereo is None else _curve(stereo, max_k),
        "match_modulo_stereo_mrr": None if stereo is None else _mrr(stereo),
        "back_translation_top_k": bt_curve,
        "back_translation_mrr": bt_mrr,
        "predictions": predictions,
        "back_translation_predictions": None
        if predictions is None or config.round_trip is not None
        else [],
        "back_translation_time_total": None,
    }
    for name in ("top_k", "match_modulo_stereo_top_k", "back_translation_top_k"):
        curve = results[name]
        if curve is not None:
            results[f"chosen_{name}"] = {str(k): curve[k - 1] for k in config.k}
    notes = [
        *_prediction_notes(config, predictions is not None),
        f"syntheseus's own verdicts, target by target (skip_repeats={config.skip_repeats}): "
        "its parsing, repeats and identity; how they differ from chemgauge's "
        f"{convention!r} convention is counted in divergences_from_syntheseus",
    ]
    if params is None:
        notes.append("num_params: the model exposes no parameters to count (0, as syntheseus)")
    if bt_note is not None:
        notes.append(f"back_translation_top_k is null: {bt_note}")
    if config.round_trip is not None:
        notes.append("back_translation_time_total is null: forward calls are not timed apart")
    if stereo is None:
        notes.append(
            "match_modulo_stereo_* are null: include_results_modulo_stereo was not asked for"
        )
    return results, notes
