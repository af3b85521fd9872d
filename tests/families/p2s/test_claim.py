"""The use claim on hand-built prediction patterns whose statistics can be checked by hand.

Slips considered, each failing a test here (the chance rate's 1/mean(K) in test_slips.py): a
bootstrap drawn with a fresh seed or the default size instead of the claim config's; a run
called blind from anything but its manifest's config saying so (no manifest, broken JSON, a
config that is not an object, an unknown value); the report's presentation default, or the
summary's line for an unknown one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats

from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.metrics import Estimate, Rate
from chemgauge.eval.provenance import sha256_json
from chemgauge.families.p2s import claim as claim_module
from chemgauge.families.p2s.claim import (
    PRESENTATIONS,
    claim_report,
    claim_statistics,
    format_claim,
    prediction_paths,
    run_presentation,
)
from chemgauge.families.p2s.config import ClaimConfig
from chemgauge.families.p2s.taskfile import load_directory

from .test_scoring import hand_dataset, write_jsonl

LABELS = [0, 1, 2, 1, 0, 2, 1, 0, 2, 1]  # 10 records, K = 3 (chance 1/3)
Picker = Callable[[str, str, int, int], int | None]  # (condition, record id, label, cf label)


def write_run(tmp_path: Path, pick: Picker) -> tuple[Path, Path]:
    data = hand_dataset(tmp_path, LABELS)
    views = load_directory(data, "dipole")
    run = tmp_path / "run"
    for condition, view in views.items():
        rows = []
        for task in view.tasks:
            label = view.labels[task.record_id]
            source = label.source_label if label.source_label is not None else label.label
            index = pick(condition, task.record_id, source, label.label)
            if index is not None:
                rows.append({"record_id": task.record_id, "selected_candidate_index": index})
        write_jsonl(run / "dipole" / f"{condition}.jsonl", rows)
    return data, run


def report_for(tmp_path: Path, pick: Picker) -> dict[str, object]:
    data, run = write_run(tmp_path, pick)
    return claim_report(data, "dipole", prediction_paths(run, "dipole"), model="m")


def user(condition: str, rid: str, source: int, label: int) -> int:
    """Follows the evidence: right with its own property, wrong with another's, moves to j."""
    if condition == "correct":
        return source
    if condition == "shuffled":
        return (source + 2) % 3  # never the answer, never the counterfactual donor (+1)
    return label


def test_a_model_that_uses_the_property_earns_the_claim(tmp_path: Path) -> None:
    report = report_for(tmp_path, user)
    drop, flip = report["shuffle_drop"], report["counterfactual_flip"]
    assert isinstance(drop, dict) and isinstance(flip, dict)
    assert drop["difference"]["value"] == 1.0
    # 10 discordant pairs all one way: p = 2 * 0.5**10
    assert drop["mcnemar"] == {"only_a": 10, "only_b": 0, "p_value": 2 / 1024}
    assert flip["flip_rate"]["value"] == 1.0
    assert flip["donor_pick_rate_under_correct"]["value"] == 0.0
    assert flip["mcnemar"]["p_value"] == 2 / 1024
    assert drop["holds"] and flip["holds"] and report["use_claim"] is True
    assert report["chance"] == pytest.approx(1 / 3)
    assert "use claim: YES" in format_claim(report)


def test_a_model_that_ignores_the_property_gets_no_claim(tmp_path: Path) -> None:
    report = report_for(tmp_path, lambda condition, rid, source, label: 0)
    drop, flip = report["shuffle_drop"], report["counterfactual_flip"]
    assert isinstance(drop, dict) and isinstance(flip, dict)
    assert drop["difference"]["value"] == 0.0 and drop["mcnemar"]["p_value"] == 1.0
    # picking 0 hits the donor exactly as often with and without the counterfactual property
    assert flip["flip_rate"]["value"] == flip["donor_pick_rate_under_correct"]["value"]
    assert flip["mcnemar"]["p_value"] == 1.0
    assert report["use_claim"] is False


def test_a_shuffle_drop_alone_is_not_a_use_claim(tmp_path: Path) -> None:
    def drop_only(condition: str, rid: str, source: int, label: int) -> int:
        return (source + 2) % 3 if condition == "shuffled" else source

    report = report_for(tmp_path, drop_only)
    drop, flip = report["shuffle_drop"], report["counterfactual_flip"]
    assert isinstance(drop, dict) and isinstance(flip, dict)
    assert drop["holds"] and not flip["holds"]
    assert flip["flip_rate"]["value"] == 0.0
    assert report["use_claim"] is False


def test_weak_evidence_is_not_significant(tmp_path: Path) -> None:
    """Only the first 5 records react to the shuffle: 5 discordant pairs, p = 2/32 > 0.05."""

    def weak(condition: str, rid: str, source: int, label: int) -> int:
        if condition == "shuffled" and rid in {"r0", "r1", "r2", "r3", "r4"}:
            return (source + 2) % 3
        return label if condition == "counterfactual" else source

    report = report_for(tmp_path, weak)
    drop = report["shuffle_drop"]
    assert isinstance(drop, dict)
    assert drop["difference"]["value"] == 0.5
    assert drop["mcnemar"]["p_value"] == 2 / 32
    assert not drop["holds"] and report["use_claim"] is False


def test_missing_answers_are_wrong_in_every_view(tmp_path: Path) -> None:
    def silent_when_shuffled(condition: str, rid: str, source: int, label: int) -> int | None:
        return None if condition == "shuffled" else user(condition, rid, source, label)

    report = report_for(tmp_path, silent_when_shuffled)
    views = report["views"]
    assert isinstance(views, dict)
    assert views["shuffled"]["missing"] == 10
    assert report["use_claim"] is True  # silence under the shuffle is still a drop


def test_claim_is_deterministic_and_needs_all_three_files(tmp_path: Path) -> None:
    data, run = write_run(tmp_path, user)
    paths = prediction_paths(run, "dipole")
    first = claim_report(data, "dipole", paths, model="m")
    assert claim_report(data, "dipole", paths, model="m") == first
    paths["counterfactual"].unlink()
    with pytest.raises(InputFileError, match=r"counterfactual\.jsonl: file not found"):
        claim_report(data, "dipole", paths, model="m")


# Paired outcomes checked by hand (12 records; 8 counterfactuals):
#   correct vs shuffled: 2 both right, 4 both wrong, 5 right only with the own property,
#   1 right only when shuffled -> accuracy 7/12 vs 3/12, difference 4/12, McNemar on (5, 1)
#   flips vs base picks: 1 both, 2 neither, 4 flip only, 1 base only -> 5/8 vs 2/8, 3/8, (4, 1)
CORRECT = [True, True, True, True, False, False, True, False, False, False, True, True]
SHUFFLED = [True, False, False, False, True, False, True, False, False, False, False, False]
FLIPS = [True, True, False, True, False, True, True, False]
BASE_PICKS = [False, False, False, True, False, False, False, True]


def test_rates_are_wilson_intervals_at_the_configured_confidence() -> None:
    """Checked against scipy's Wilson interval (binomtest(...).proportion_ci)."""
    stats = claim_statistics(CORRECT, SHUFFLED, FLIPS, BASE_PICKS, ClaimConfig(confidence=0.9))
    flip = stats["counterfactual_flip"]
    rates = {
        "correct": (stats["accuracy"]["correct"], 7, 12),
        "shuffled": (stats["accuracy"]["shuffled"], 3, 12),
        "flip": (flip["flip_rate"], 5, 8),
        "base": (flip["donor_pick_rate_under_correct"], 2, 8),
    }
    for name, (rate, hits, n) in rates.items():
        ref = scipy_stats.binomtest(hits, n).proportion_ci(confidence_level=0.9, method="wilson")
        Rate.model_validate(rate)  # the one rate shape, exactly
        assert (rate["count"], rate["n"], rate["value"]) == (hits, n, hits / n), name
        assert rate["method"] == "wilson90", name
        low, high = rate["interval"]
        assert low == pytest.approx(ref.low, abs=1e-12), name
        assert high == pytest.approx(ref.high, abs=1e-12), name


def test_differences_are_paired_bootstrap_intervals_with_the_configured_seed_and_size() -> None:
    """The estimate is the mean paired difference (4/12, 3/8); the percentile interval agrees
    with scipy.stats.bootstrap on the item differences to within one step of the lattice the
    resampled means live on (1/n), and the method says how it was drawn (the seed and size are
    the claim's config, which the run report records as ``config.claim``)."""
    config = ClaimConfig(confidence=0.8, seed=11, resamples=4000)
    stats = claim_statistics(CORRECT, SHUFFLED, FLIPS, BASE_PICKS, config)
    pairs = {
        "correct - shuffled accuracy": (stats["shuffle_drop"], CORRECT, SHUFFLED, 4 / 12),
        "picks donor: counterfactual - correct": (
            stats["counterfactual_flip"],
            FLIPS,
            BASE_PICKS,
            3 / 8,
        ),
    }
    for compares, (block, a, b, estimate) in pairs.items():
        diff = block["difference"]
        Estimate.model_validate(diff)  # the one estimate shape, exactly
        assert block["compares"] == compares
        assert diff["value"] == pytest.approx(estimate, abs=1e-12)
        assert (diff["n"], diff["method"]) == (len(a), "paired_bootstrap80")
        d = np.array(a, dtype=float) - np.array(b, dtype=float)
        ref = scipy_stats.bootstrap(
            (d,),
            np.mean,
            confidence_level=0.8,
            n_resamples=50_000,
            method="percentile",
            random_state=1,
        ).confidence_interval
        step = 1 / len(a) + 1e-9
        low, high = diff["interval"]
        assert abs(low - ref.low) <= step and abs(high - ref.high) <= step


def test_mcnemar_counts_only_discordant_pairs() -> None:
    """(5, 1): p = 2 * P(X <= 1 | n=6) = 2 * 7/64; (4, 1): 2 * 6/32; as scipy's exact
    binomial test. Concordant pairs, right or wrong, do not enter."""
    stats = claim_statistics(CORRECT, SHUFFLED, FLIPS, BASE_PICKS, ClaimConfig())
    drop, flip = stats["shuffle_drop"]["mcnemar"], stats["counterfactual_flip"]["mcnemar"]
    assert drop == {"only_a": 5, "only_b": 1, "p_value": 14 / 64}
    assert flip == {"only_a": 4, "only_b": 1, "p_value": 12 / 32}
    assert drop["p_value"] == pytest.approx(scipy_stats.binomtest(1, 6).pvalue)
    assert flip["p_value"] == pytest.approx(scipy_stats.binomtest(1, 5).pvalue)
    # positive differences, but p > 0.05: neither holds
    assert not stats["shuffle_drop"]["holds"] and not stats["counterfactual_flip"]["holds"]


def test_a_claim_needs_p_strictly_below_alpha() -> None:
    """10 pairs all one way: p = 2 * 0.5**10 = 2/1024 exactly, so alpha = 2/1024 is not
    enough and the next float above it is."""
    right, wrong = [True] * 10, [False] * 10
    p = 2 / 1024
    at = claim_statistics(right, wrong, right, wrong, ClaimConfig(alpha=p))
    assert at["shuffle_drop"]["mcnemar"]["p_value"] == p
    assert not at["shuffle_drop"]["holds"] and not at["counterfactual_flip"]["holds"]
    assert at["use_claim"] is False
    above = claim_statistics(right, wrong, right, wrong, ClaimConfig(alpha=math.nextafter(p, 1)))
    assert above["shuffle_drop"]["holds"] and above["counterfactual_flip"]["holds"]
    assert above["use_claim"] is True


def test_a_significant_effect_in_the_wrong_direction_holds_nothing() -> None:
    """Better when shuffled and donor picked less under the counterfactual: p = 2/1024 both,
    differences -1: a significant test is not a claim unless the difference is positive."""
    right, wrong = [True] * 10, [False] * 10
    stats = claim_statistics(wrong, right, wrong, right, ClaimConfig())
    for block in (stats["shuffle_drop"], stats["counterfactual_flip"]):
        assert block["mcnemar"]["p_value"] == 2 / 1024
        assert block["difference"]["value"] == -1.0
        assert block["holds"] is False
    assert stats["use_claim"] is False


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.05, 1.5])
def test_alpha_must_lie_strictly_between_0_and_1(alpha: float) -> None:
    with pytest.raises(ConfigError, match=r"--alpha must be in \(0, 1\)"):
        ClaimConfig(alpha=alpha)


def test_alpha_just_inside_the_unit_interval_is_accepted() -> None:
    assert ClaimConfig(alpha=math.nextafter(0.0, 1)).alpha > 0
    assert ClaimConfig(alpha=math.nextafter(1.0, 0)).alpha < 1


def test_an_empty_directory_has_no_chance_and_no_claim(tmp_path: Path) -> None:
    data = hand_dataset(tmp_path, [])
    run = tmp_path / "run"
    for condition in ("correct", "shuffled", "counterfactual"):
        write_jsonl(run / "dipole" / f"{condition}.jsonl", [])
    report = claim_report(data, "dipole", prediction_paths(run, "dipole"), model="m")
    assert report["chance"] is None
    accuracy = report["accuracy"]
    assert isinstance(accuracy, dict)
    assert accuracy["correct"]["n"] == 0 and accuracy["correct"]["value"] is None
    assert report["use_claim"] is False
    assert "(chance n/a)" in format_claim(report)


def test_report_records_config_input_hashes_and_its_own_hash(tmp_path: Path) -> None:
    data, run = write_run(tmp_path, user)
    paths = prediction_paths(run, "dipole")
    config = ClaimConfig(alpha=0.01, confidence=0.9, seed=5, resamples=500)
    report = claim_report(data, "dipole", paths, model="m", config=config)
    assert report["claim_scheme_version"] == 2
    assert report["config"] == {"alpha": 0.01, "confidence": 0.9, "seed": 5, "resamples": 500}
    views = load_directory(data, "dipole")
    expected = {}
    for condition in ("correct", "counterfactual", "shuffled"):
        expected[f"predictions.{condition}"] = sha256(paths[condition].read_bytes()).hexdigest()
        expected[f"labels.{condition}"] = sha256(
            views[condition].label_path.read_bytes()
        ).hexdigest()
    assert report["input_sha256"] == expected
    rest = {k: v for k, v in report.items() if k != "report_sha256"}
    assert report["report_sha256"] == sha256_json(rest)
    assert set(report) == {
        "claim_scheme_version",
        "model",
        "property",
        "config",
        "chance",
        "presentation",
        "views",
        "accuracy",
        "shuffle_drop",
        "counterfactual_flip",
        "use_claim",
        "input_sha256",
        "report_sha256",
    }


def test_format_claim_states_every_figure(tmp_path: Path) -> None:
    """A hand-made report: percentages to one decimal, p to three significant figures
    (0.001953125 -> 0.00195), and each verdict (None as n/a: the empty-directory test)."""
    report: dict[str, Any] = {
        "model": "m",
        "property": "dipole",
        "chance": 1 / 3,
        "accuracy": {
            "correct": {"value": 0.8, "interval": [0.55, 0.93]},
            "shuffled": {"value": 0.2, "interval": [0.07, 0.45]},
        },
        "shuffle_drop": {
            "difference": {"value": 0.6, "interval": [0.3, 0.9]},
            "mcnemar": {"p_value": 0.001953125},
            "holds": True,
        },
        "counterfactual_flip": {
            "flip_rate": {"value": 0.25, "interval": [0.1, 0.5]},
            "donor_pick_rate_under_correct": {"value": 0.125},
            "mcnemar": {"p_value": 0.5},
            "holds": False,
        },
        "use_claim": False,
    }
    assert format_claim(report).split("\n") == [
        "model m / property dipole (chance 33.3%)",
        "  accuracy correct 80.0% [55.0%, 93.0%], shuffled 20.0% [7.0%, 45.0%]",
        "  shuffle drop 60.0% [30.0%, 90.0%], McNemar p=0.00195 -> holds",
        "  counterfactual flip 25.0% [10.0%, 50.0%] vs 12.5% under the correct property, "
        "McNemar p=0.5 -> no",
        "  use claim: no",
        "  from: per-view files (a system that can see the file name could know the view; "
        "the claim cannot rule out view-dependent answers that never read the property)",
    ]
    both = {**report, "use_claim": True}
    both["counterfactual_flip"] = {**report["counterfactual_flip"], "holds": True}
    both["shuffle_drop"] = {**report["shuffle_drop"], "holds": False}
    lines = format_claim(both).split("\n")
    assert lines[2].endswith("-> no") and lines[3].endswith("-> holds")
    assert lines[4] == "  use claim: YES"
    assert (
        format_claim({**both, "presentation": "blind"})
        .split("\n")[5]
        .startswith("  from: blind run")
    )


def test_each_difference_is_drawn_with_the_configured_seed_size_and_confidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The bootstrap behind both differences gets the claim config's seed, size and
    confidence (never a fresh seed or the function's default size), and its interval is
    reported as drawn."""
    drawn: list[dict[str, Any]] = []
    real = claim_module.paired_bootstrap_difference

    def spy(a: list[float], b: list[float], **kwargs: Any) -> Any:
        drawn.append(kwargs)
        return real(a, b, **kwargs)

    monkeypatch.setattr(claim_module, "paired_bootstrap_difference", spy)
    config = ClaimConfig(confidence=0.8, seed=11, resamples=300)
    stats = claim_statistics(CORRECT, SHUFFLED, FLIPS, BASE_PICKS, config)
    assert drawn == [{"seed": 11, "resamples": 300, "confidence": 0.8}] * 2
    for block, a, b in [
        (stats["shuffle_drop"], CORRECT, SHUFFLED),
        (stats["counterfactual_flip"], FLIPS, BASE_PICKS),
    ]:
        ref = real([float(x) for x in a], [float(x) for x in b], **drawn[0])
        assert block["difference"]["interval"] == [ref.low, ref.high]


def _manifest(run: Path, content: bytes) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    (run / "run_manifest.json").write_bytes(content)
    return run


@pytest.mark.parametrize(
    ("content", "presentation"),
    [
        (b'{"config": {"presentation": "blind"}}', "blind"),
        (b'{"config": {"presentation": "per_view"}}', "per_view"),
        # anything the manifest does not say plainly is per-view files (the weaker claim)
        (b'{"config": {"presentation": "interleaved"}}', "per_view"),
        (b'{"config": {"presentation": null}}', "per_view"),
        (b'{"config": {}}', "per_view"),
        (b'{"config": ["blind"]}', "per_view"),
        (b'{"presentation": "blind"}', "per_view"),  # not under config
        (b'["blind"]', "per_view"),
        (b"{not json", "per_view"),
    ],
)
def test_a_run_is_blind_only_when_its_manifest_says_so(
    tmp_path: Path, content: bytes, presentation: str
) -> None:
    assert run_presentation(_manifest(tmp_path / "run", content)) == presentation


def test_a_run_without_a_manifest_is_per_view(tmp_path: Path) -> None:
    assert run_presentation(tmp_path) == "per_view"
    assert run_presentation(str(tmp_path / "no such run")) == "per_view"


def test_a_claim_report_is_per_view_unless_told_otherwise(tmp_path: Path) -> None:
    data, run = write_run(tmp_path, user)
    paths = prediction_paths(run, "dipole")
    assert claim_report(data, "dipole", paths, model="m")["presentation"] == "per_view"
    blind = claim_report(data, "dipole", paths, model="m", presentation="blind")
    assert blind["presentation"] == "blind"
    assert format_claim(blind).split("\n")[-1] == f"  from: {PRESENTATIONS['blind']}"


def test_format_claim_names_an_unknown_presentation_as_per_view_files(tmp_path: Path) -> None:
    data, run = write_run(tmp_path, user)
    report = claim_report(data, "dipole", prediction_paths(run, "dipole"), model="m")
    assert format_claim({**report, "presentation": "other"}).split("\n")[-1] == (
        "  from: per-view files"
    )
    del report["presentation"]  # an older report: per-view files, said in full
    assert format_claim(report).split("\n")[-1] == f"  from: {PRESENTATIONS['per_view']}"
