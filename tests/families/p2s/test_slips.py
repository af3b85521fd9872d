"""The slips a tired developer makes in p2s statistics and selection, each with the test that
fails on it.

Slips considered: the chance rate as 1/mean(K) instead of mean(1/K) (equal when every task
has the same K, so the tasks here have 2, 3 and 6 candidates); the audit's per-view chance
the same way; ``--max-records`` keeping one record too many or too few (``>`` for ``>=``),
or counting skipped sources against the limit.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.p2s.audit import PRIOR, Attack, score_attack
from chemgauge.families.p2s.build import BuildConfig, read_sources, select_records
from chemgauge.families.p2s.claim import claim_report, prediction_paths

from .test_scoring import task, write_jsonl

# K per record: 2, 3 and 6 candidates. mean(1/K) = (1/2 + 1/3 + 1/6) / 3 = 1/3, while
# 1/mean(K) = 3/11.
POOL = ["Oc1ccc(F)cc1", "Oc1ccc(Cl)cc1", "Oc1ccc(Br)cc1", "Oc1ccc(I)cc1", "Oc1ccc(C)cc1",
        "Oc1ccc(N)cc1"]  # fmt: skip
SIZES = (2, 3, 6)


def _varied_dataset(root: Path) -> Path:
    data = root / "data"
    ids = [f"r{i}" for i in range(len(SIZES))]
    for cond in ("correct", "shuffled"):
        write_jsonl(
            data / "dipole" / f"{cond}.jsonl",
            [task(r, POOL[:k]) for r, k in zip(ids, SIZES, strict=True)],
        )
        write_jsonl(
            data / "dipole" / f"{cond}.labels.jsonl", [{"record_id": r, "label": 0} for r in ids]
        )
    write_jsonl(
        data / "dipole" / "counterfactual.jsonl",
        [task(f"{r}-cf", POOL[:k], dipole=2.0) for r, k in zip(ids, SIZES, strict=True)],
    )
    write_jsonl(
        data / "dipole" / "counterfactual.labels.jsonl",
        [{"record_id": f"{r}-cf", "label": 1, "base_record_id": r, "source_label": 0} for r in ids],
    )
    return data


def test_the_claims_chance_rate_is_the_mean_of_one_over_k(tmp_path: Path) -> None:
    data = _varied_dataset(tmp_path)
    run = tmp_path / "run"
    for cond in ("correct", "shuffled", "counterfactual"):
        suffix = "-cf" if cond == "counterfactual" else ""
        write_jsonl(
            run / "dipole" / f"{cond}.jsonl",
            [{"record_id": f"r{i}{suffix}", "selected_candidate_index": 0} for i in range(3)],
        )
    report = claim_report(data, "dipole", prediction_paths(run, "dipole"), model="m")
    assert report["chance"] == pytest.approx(1 / 3)
    assert report["chance"] != pytest.approx(3 / 11)


def test_the_audits_chance_and_test_use_each_tasks_own_k() -> None:
    attack = Attack(
        directory="dipole",
        condition="correct",
        record_ids=("a", "b", "c"),
        candidates=SIZES,
        picks={PRIOR: (0, 0, 0), "position_0": (0, None, 1)},
    )
    audit = score_attack([attack], {"dipole/correct": {"a": 0, "b": 0, "c": 0}})
    block = audit["views"]["dipole/correct"]
    assert block["chance"] == pytest.approx(1 / 3)
    prior = block["structural_prior"]
    assert prior["hits"] == 3 and prior["chance"] == pytest.approx(1 / 3)
    # P(all three right) = 1/2 * 1/3 * 1/6 = 1/36, exactly the product of each task's chance.
    assert prior["p_value"] == pytest.approx(float(Fraction(1, 36)))


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_max_records_keeps_exactly_that_many(
    nci_smiles: list[str], tmp_path: Path, limit: int
) -> None:
    sources = tmp_path / "nci.smi"
    sources.write_text("\n".join(nci_smiles[:120]) + "\n")
    read = read_sources(sources, RejectionStats())
    every = select_records(read, BuildConfig(directories=("dipole",)), Counter())
    limited = select_records(
        read, BuildConfig(directories=("dipole",), max_records=limit), Counter()
    )
    assert len(every) > limit
    assert [r.record_id for r in limited] == [r.record_id for r in every[:limit]]


def test_the_donor_pick_under_correct_is_read_from_the_correct_view(tmp_path: Path) -> None:
    """Each view's reads from its own view: the correct view picks the answer (0), the
    shuffled view the donor (1), so a base pick read from the shuffled view would say 3/3."""
    data = _varied_dataset(tmp_path)
    run = tmp_path / "run"
    picks = {"correct": 0, "shuffled": 1, "counterfactual": 1}
    for cond, pick in picks.items():
        suffix = "-cf" if cond == "counterfactual" else ""
        write_jsonl(
            run / "dipole" / f"{cond}.jsonl",
            [{"record_id": f"r{i}{suffix}", "selected_candidate_index": pick} for i in range(3)],
        )
    report = claim_report(data, "dipole", prediction_paths(run, "dipole"), model="m")
    flip = report["counterfactual_flip"]
    assert flip["donor_pick_rate_under_correct"]["count"] == 0
    assert flip["flip_rate"]["count"] == 3
    assert report["accuracy"]["correct"]["count"] == 3
    assert report["accuracy"]["shuffled"]["count"] == 0
