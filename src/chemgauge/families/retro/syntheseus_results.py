"""syntheseus's results file, written beside chemgauge's report, and where the two differ.

``syntheseus eval-single-step`` saves its ``EvalResults`` as JSON plus a ``chosen_<name>``
mapping for each top-k list at its ``print_idxs``. :func:`syntheseus_results` builds that
mapping with syntheseus's field names and order from the rows of the convention that gives
syntheseus's numbers (``syntheseus``, or ``syntheseus_keep_repeats`` under
``skip_repeats=False``), with syntheseus's arithmetic: top-k as hits / targets, MRR summed
left to right in data order, mean and median of the per-target prediction counts as
``statistics`` computes them. So a script written for syntheseus reads chemgauge's numbers,
and on the same outputs they are syntheseus's numbers to the last bit, except where a
:data:`SYNTHESEUS_DIVERGENCES` entry applies. ``predictions`` is never copied in (the raw
outputs are in the journal, the verdicts in ``rows.jsonl``).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from chemgauge.families.retro.metrics import RankTally, RetroTally

if TYPE_CHECKING:
    from chemgauge.families.retro.config import RetroEvalConfig
    from chemgauge.families.retro.engine.base import RetroModel

__all__ = [
    "SYNTHESEUS_DIVERGENCES",
    "SYNTHESEUS_FOLD_NAMES",
    "syntheseus_results",
    "syntheseus_results_name",
]

#: Every way chemgauge's ``syntheseus`` convention deliberately differs from syntheseus's own
#: code, by id (each has a test in ``tests/families/retro/test_divergences.py``).
SYNTHESEUS_DIVERGENCES: dict[str, str] = {
    "empty_output": "an empty output or empty component ('', 'A..B', 'A.') is invalid; "
    "syntheseus parses it as an empty molecule, which holds a rank",
    "whitespace_in_output": "an output component with text after whitespace ('CC O') is "
    "invalid (reason 'whitespace'); syntheseus, through RDKit, drops the text after the "
    "whitespace and scores 'CC'",
    "atom_maps_in_outputs": "atom-map numbers in outputs are ignored, for correctness and for "
    "repeats; syntheseus compares mapped SMILES as written, so a mapped correct answer is "
    "wrong there and not a repeat of its unmapped spelling",
    "atom_maps_in_jsonl_truth": "atom maps in JSONL data are removed, as in CSV and SMI data; "
    "syntheseus keeps them in JSONL data (it assumes JSONL is unmapped), where no unmapped "
    "output can match",
    "dot_in_jsonl_entry": "a JSONL reactant or product entry holding several molecules "
    "({'smiles': 'A.B'}) is split into its molecules; syntheseus keeps it as one molecule, "
    "which no output (always split on '.') can equal",
    "stereo_ignored_keeps_isotopes": "stereo_ignored keeps isotopes and flattens stereo "
    "structurally; syntheseus's include_results_modulo_stereo writes non-isomeric SMILES, "
    "dropping isotopes too",
    "outputs_beyond_num_top_results": "outputs beyond num_top_results are cut and counted; "
    "syntheseus raises after the model call and loses the run",
    "unreadable_data_lines": "a data line that is no reaction, has an unparsable side or "
    "several products is rejected, counted and named, and blank lines are skipped; syntheseus "
    "stops the run with an exception",
    "failed_model_calls": "a model call that raises is retried product by product and the "
    "products that still fail are misses with status model_error; syntheseus stops the run",
    "size_limits": "a component over 10,000 atoms or 200,000 characters is invalid (RDKit's "
    "SMILES writer can overflow the stack on long chains); syntheseus parses it",
}

#: chemgauge fold -> the ``DataFold`` name syntheseus writes in ``eval_args``.
SYNTHESEUS_FOLD_NAMES = {"train": "TRAIN", "val": "VALIDATION", "test": "TEST"}


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


def syntheseus_results(
    tally: RetroTally,
    config: RetroEvalConfig,
    model: RetroModel,
    *,
    model_seconds: Sequence[float],
) -> tuple[dict[str, Any], list[str]]:
    """The mapping syntheseus's ``print_and_save`` would write, and notes on fields chemgauge
    leaves empty (``model_seconds``: total model-call and post-processing seconds)."""
    convention = config.syntheseus_convention
    max_k = config.num_top_results
    exact = tally.accuracy[(convention, "exact")]
    stereo = tally.accuracy.get((convention, "stereo_ignored"))
    counts = _counts(
        tally.valid_unique_counts if convention == "syntheseus" else tally.valid_counts
    )
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
        "num_params": params,
        "num_trainable_params": trainable,
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
        "predictions": None,
        "back_translation_predictions": None,
        "back_translation_time_total": None,
    }
    for name in ("top_k", "match_modulo_stereo_top_k", "back_translation_top_k"):
        curve = results[name]
        if curve is not None:
            results[f"chosen_{name}"] = {str(k): curve[k - 1] for k in config.k}
    notes = [
        f"numbers of the {convention!r} convention (skip_repeats={config.skip_repeats})",
        "predictions and back_translation_predictions are not copied: raw outputs are in "
        "journal.jsonl, per-output verdicts in rows.jsonl",
    ]
    if params is None:
        notes.append("num_params: the model exposes no parameters to count (null)")
    if bt_note is not None:
        notes.append(f"back_translation_top_k is null: {bt_note}")
    if config.round_trip is not None:
        notes.append("back_translation_time_total is null: forward calls are not timed apart")
    if stereo is None:
        notes.append("match_modulo_stereo_* are null: the stereo_ignored matcher was not run")
    return results, notes
