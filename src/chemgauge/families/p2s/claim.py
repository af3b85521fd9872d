"""The use claim for one model and one property: shuffle drop and donor-directed flip.

* Shuffle drop: accuracy on ``correct`` minus accuracy on ``shuffled`` over the same records
  (same candidates, same answer, only the property changed). Paired bootstrap interval of the
  difference; exact McNemar on records right in one view and wrong in the other.
* Counterfactual flip: on each counterfactual record (the property of completion *j*), did
  the model pick *j*? Compared, on the same base record, with how often it picks *j* when
  given the source's own property. Wilson interval of the flip rate, paired bootstrap interval
  of the difference, exact McNemar on the discordant pairs.

Each holds when its difference is positive and McNemar's p is below ``alpha``; the use claim
is made only when both hold. Chance (the mean of 1/K over the correct view) is shown beside.
Missing, invalid and out-of-range answers are wrong in every view, as in the scorer.

The report says how the tasks were presented: ``blind`` (``p2s run``'s default: every view of
the directory interleaved under opaque ids, so the system could not know a task's view) or
``per_view`` (one file per view: a system that can see the file name could know the view and
behave differently per view without reading the property, which a per-view claim cannot rule
out; see the family docs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from chemgauge.eval.metrics import estimate, interval_method, rate
from chemgauge.eval.provenance import sha256_file, sha256_json
from chemgauge.eval.stats import mcnemar_exact, paired_bootstrap_difference
from chemgauge.families.p2s.config import ClaimConfig
from chemgauge.families.p2s.scoring import ScoreResult, read_predictions, score_view
from chemgauge.families.p2s.taskfile import load_directory

__all__ = [
    "PRESENTATIONS",
    "claim_report",
    "claim_statistics",
    "format_claim",
    "prediction_paths",
    "run_presentation",
]

#: How a run presented the views, and what that lets a claim show.
PRESENTATIONS = {
    "blind": "blind run (views interleaved under opaque ids: the system could not know the view)",
    "per_view": (
        "per-view files (a system that can see the file name could know the view; the claim "
        "cannot rule out view-dependent answers that never read the property)"
    ),
}


def run_presentation(run_dir: str | Path) -> str:
    """``blind`` or ``per_view`` as the run manifest says (no manifest: per-view files)."""
    manifest = Path(run_dir) / "run_manifest.json"
    try:
        config = orjson.loads(manifest.read_bytes()).get("config", {})
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return "per_view"
    found = config.get("presentation") if isinstance(config, dict) else None
    return found if found in PRESENTATIONS else "per_view"


CLAIM_SCHEME_VERSION = 2  # 2: rates and differences in the one Rate / Estimate shape


def prediction_paths(run_dir: str | Path, directory: str) -> dict[str, Path]:
    """``<run>/<property>/<condition>.jsonl`` for the three views."""
    base = Path(run_dir) / directory
    return {c: base / f"{c}.jsonl" for c in ("correct", "shuffled", "counterfactual")}


def _paired(
    a: list[bool], b: list[bool], config: ClaimConfig
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The paired bootstrap difference mean(a) - mean(b) as an Estimate (its seed and size
    are the run's ``config.claim``), and the exact McNemar test on the discordant pairs."""
    fa, fb = [float(x) for x in a], [float(x) for x in b]
    diff = paired_bootstrap_difference(  # raises unless a and b pair up item for item
        fa, fb, seed=config.seed, resamples=config.resamples, confidence=config.confidence
    )
    step = np.subtract(fa, fb)  # +1: only a right, -1: only b right, 0: concordant
    test = mcnemar_exact(int(np.sum(step > 0)), int(np.sum(step < 0)))
    method = interval_method("paired_bootstrap", config.confidence)
    return estimate(diff.estimate, diff.n, (diff.low, diff.high), method=method), test.to_dict()


def _holds(difference: Mapping[str, Any], test: Mapping[str, Any], alpha: float) -> bool:
    """A positive difference with McNemar's p below ``alpha`` (a p below 1 needs discordant
    pairs, so the difference is then a number)."""
    return bool(test["p_value"] < alpha and difference["value"] > 0)


def claim_statistics(
    correct: Sequence[bool],
    shuffled: Sequence[bool],
    flips: Sequence[bool],
    base_picks: Sequence[bool],
    config: ClaimConfig,
) -> dict[str, Any]:
    """The claim's numbers from paired outcomes alone (so run reports recompute them from rows).

    ``correct[i]`` and ``shuffled[i]`` are one record's hits under its own and a shuffled
    property; ``flips[j]`` says counterfactual ``j`` picked its donor and ``base_picks[j]``
    whether its base record, given its own property, picked that same donor.
    """
    drop, drop_test = _paired(list(correct), list(shuffled), config)
    drop_holds = _holds(drop, drop_test, config.alpha)
    flip_diff, flip_test = _paired(list(flips), list(base_picks), config)
    flip_holds = _holds(flip_diff, flip_test, config.alpha)
    confidence = config.confidence
    return {
        "accuracy": {
            "correct": rate(sum(correct), len(correct), confidence=confidence),
            "shuffled": rate(sum(shuffled), len(shuffled), confidence=confidence),
        },
        "shuffle_drop": {
            "compares": "correct - shuffled accuracy",
            "difference": drop,
            "mcnemar": drop_test,
            "holds": drop_holds,
        },
        "counterfactual_flip": {
            "flip_rate": rate(sum(flips), len(flips), confidence=confidence),
            "donor_pick_rate_under_correct": rate(
                sum(base_picks), len(base_picks), confidence=confidence
            ),
            "compares": "picks donor: counterfactual - correct",
            "difference": flip_diff,
            "mcnemar": flip_test,
            "holds": flip_holds,
        },
        "use_claim": drop_holds and flip_holds,
    }


def claim_report(
    data_dir: str | Path,
    directory: str,
    predictions: dict[str, Path],
    *,
    model: str,
    config: ClaimConfig | None = None,
    presentation: str = "per_view",
) -> dict[str, Any]:
    """Score the three views of one directory and decide the use claim (a JSON-ready dict)."""
    cfg = config or ClaimConfig()
    views = load_directory(data_dir, directory)
    scores: dict[str, ScoreResult] = {
        c: score_view(views[c], read_predictions(predictions[c])) for c in views
    }
    by_id = {o.record_id: o for o in scores["correct"].outcomes}
    shuffled_by_id = {o.record_id: o for o in scores["shuffled"].outcomes}
    ids = list(by_id)
    labels = views["counterfactual"].labels
    flips, base_picks = [], []
    for outcome in scores["counterfactual"].outcomes:
        label = labels[outcome.record_id]
        assert label.base_record_id is not None  # load_directory resolves every base record
        flips.append(outcome.correct)
        # the donor is never the base's own answer and always in range, so only a miss can
        # select it (missing and invalid answers select nothing)
        base_picks.append(by_id[label.base_record_id].selected == label.label)
    statistics = claim_statistics(
        [by_id[r].correct for r in ids],
        [shuffled_by_id[r].correct for r in ids],
        flips,
        base_picks,
        cfg,
    )

    tasks = views["correct"].tasks
    chance = sum(1 / len(t.candidates) for t in tasks) / len(tasks) if tasks else None
    inputs = {
        **{f"predictions.{c}": sha256_file(p) for c, p in sorted(predictions.items())},
        **{f"labels.{c}": sha256_file(v.label_path) for c, v in sorted(views.items())},
    }
    report: dict[str, Any] = {
        "claim_scheme_version": CLAIM_SCHEME_VERSION,
        "model": model,
        "property": directory,
        "config": {
            "alpha": cfg.alpha,
            "confidence": cfg.confidence,
            "seed": cfg.seed,
            "resamples": cfg.resamples,
        },
        "chance": chance,
        "presentation": presentation,
        "views": {c: s.to_dict() for c, s in scores.items()},
        **statistics,
        "input_sha256": inputs,
    }
    report["report_sha256"] = sha256_json(report)
    return report


def format_claim(report: Mapping[str, Any]) -> str:
    """A few human-readable lines summarizing a claim report."""

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.1f}%"

    def bracket(block: Mapping[str, Any]) -> str:
        """``value [low, high]`` of a Rate or an Estimate."""
        low, high = block["interval"]
        return f"{pct(block['value'])} [{pct(low)}, {pct(high)}]"

    acc = report["accuracy"]
    drop = report["shuffle_drop"]
    flip = report["counterfactual_flip"]
    lines = [
        f"model {report['model']} / property {report['property']} (chance {pct(report['chance'])})",
        f"  accuracy correct {bracket(acc['correct'])}, shuffled {bracket(acc['shuffled'])}",
        f"  shuffle drop {bracket(drop['difference'])}, "
        f"McNemar p={drop['mcnemar']['p_value']:.3g} -> {'holds' if drop['holds'] else 'no'}",
        f"  counterfactual flip {bracket(flip['flip_rate'])} vs "
        f"{pct(flip['donor_pick_rate_under_correct']['value'])} under the correct property, "
        f"McNemar p={flip['mcnemar']['p_value']:.3g} -> {'holds' if flip['holds'] else 'no'}",
        f"  use claim: {'YES' if report['use_claim'] else 'no'}",
        f"  from: {PRESENTATIONS.get(report.get('presentation', 'per_view'), 'per-view files')}",
    ]
    return "\n".join(lines)
