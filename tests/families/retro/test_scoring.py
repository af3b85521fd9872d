"""Both conventions and every metric on hand-checked cases."""

from __future__ import annotations

from typing import Any

import pytest
from tests.families.retro.reading import top_hits, top_rate

from chemgauge.chem.reactant_sets import ReactantSetComparison, ReactantSetScorer
from chemgauge.eval.metrics import rate
from chemgauge.eval.stats import wilson_interval
from chemgauge.families.retro import scoring
from chemgauge.families.retro.metrics import aggregate, top_k_block
from chemgauge.families.retro.scoring import (
    ScoreSettings,
    ScoreTask,
    convention_ranks,
    score_chunk,
    score_target,
)

SETTINGS = ScoreSettings(matchers=("exact", "stereo_ignored"))


def _target(line: int, reactants: tuple[str, ...], cls: str | None = None) -> dict[str, Any]:
    return {
        "target": f"test:{line}",
        "line": line,
        "source_id": None,
        "product": "CNC(C)=O",
        "reactants": list(reactants),
        "reaction_class": cls,
    }


def _row(line: int, outputs: list[str], cls: str | None = None) -> dict[str, Any]:
    task = ScoreTask(_target(line, ("CC(=O)O", "CN"), cls), tuple(outputs), len(outputs))
    return score_target(task, SETTINGS)


def test_conventions_on_invalid_outputs_and_duplicate_spellings() -> None:
    row = _row(2, ["C1CC", "CCO", "OCC", "CN.CC(=O)O"])
    # raw_slots: the invalid output keeps rank 0, the duplicate keeps rank 2 -> truth at 3
    assert row["hits"]["raw_slots"] == {"exact": 3, "stereo_ignored": 3}
    # syntheseus: invalid dropped, duplicate 'OCC' removed -> ['CCO', truth] -> truth at 1
    assert row["hits"]["syntheseus"] == {"exact": 1, "stereo_ignored": 1}
    assert row["invalid_ranks"] == [0]
    assert row["duplicate_ranks"] == [2]
    assert row["n_valid_unique"] == 2
    assert row["status"] == "ok"


def test_a_duplicate_of_the_truth_never_counts_twice_and_stereo_differs_by_matcher() -> None:
    task = ScoreTask(
        _target(3, ("C[C@H](N)C(=O)O",)),
        ("CC(N)C(=O)O", "CC(N)C(O)=O", "N[C@@H](C)C(=O)O"),
        3,
    )
    row = score_target(task, SETTINGS)
    assert row["hits"]["raw_slots"] == {"exact": 2, "stereo_ignored": 0}
    # the flat output repeated in another spelling is removed; the exact one moves to rank 1
    assert row["hits"]["syntheseus"] == {"exact": 1, "stereo_ignored": 0}
    assert row["duplicate_ranks"] == [1]


def test_no_outputs_is_a_miss_with_its_own_status() -> None:
    row = _row(4, [])
    assert row["status"] == "no_outputs"
    assert row["hits"]["syntheseus"]["exact"] is None


def test_aggregate_top_k_mrr_rates_and_intervals() -> None:
    rows = [
        _row(2, ["C1CC", "CCO", "OCC", "CN.CC(=O)O"], "1"),
        _row(3, [], "2"),
        _row(4, ["CC(O)=O.CN", "C1CC"], "1"),
    ]
    m = aggregate(
        rows, conventions=("syntheseus", "raw_slots"), matchers=("exact",), ks=(1, 2, 4), max_k=4
    )
    syn = m["accuracy"]["syntheseus"]["exact"]
    raw = m["accuracy"]["raw_slots"]["exact"]
    assert [top_hits(syn, k) for k in (1, 2, 4)] == [1, 2, 2]
    assert [top_hits(raw, k) for k in (1, 2, 4)] == [1, 1, 2]
    assert syn["curve"] == [1 / 3, 2 / 3, 2 / 3, 2 / 3]
    assert raw["curve"] == [1 / 3, 1 / 3, 1 / 3, 2 / 3]
    assert syn["mrr"]["value"] == pytest.approx((1 / 2 + 1) / 3)
    assert raw["mrr"]["value"] == pytest.approx((1 / 4 + 1) / 3)
    expected = wilson_interval(2, 3)
    assert top_rate(syn, 2)["interval"] == [expected.low, expected.high]
    outputs = m["outputs"]
    assert outputs["total"] == 6
    assert outputs["invalid_rate"]["count"] == 2 and outputs["duplicate_rate"]["count"] == 1
    assert outputs["invalid_by_rank"][0] == {"rank": 1, "share": rate(1, 2)}
    assert outputs["invalid_by_rank"][1] == {"rank": 2, "share": rate(1, 2)}
    assert outputs["duplicate_by_rank"][2] == {"rank": 3, "share": rate(1, 1)}
    assert outputs["per_target_raw"]["max"] == 4 and outputs["per_target_raw"]["min"] == 0
    assert m["status"] == {"no_outputs": 1, "ok": 2}
    by_class = m["by_class"]
    assert top_hits(by_class["1"]["syntheseus"]["exact"], 1) == 1
    assert by_class["1"]["syntheseus"]["exact"]["n"] == 2
    assert by_class["2"]["syntheseus"]["exact"]["misses"] == 1


def test_any_k_up_to_the_maximum_works_and_the_curve_is_cumulative() -> None:
    ranks = [0, 4, None, 9, 2]
    block = top_k_block(ranks, list(range(1, 11)), 10)
    rates = [top_rate(block, k)["value"] for k in range(1, 11)]
    assert rates == block["curve"]
    assert rates == sorted(rates)
    assert top_hits(block, 10) == 4 and top_hits(block, 3) == 2
    assert block["misses"] == 1


def test_error_rows_count_as_misses_in_every_denominator() -> None:
    rows = [_row(2, ["CN.CC(=O)O"]), {**_row(3, ["CCO"]), "status": "error", "hits": None}]
    m = aggregate(rows, conventions=("syntheseus",), matchers=("exact",), ks=(1,), max_k=1)
    assert top_rate(m["accuracy"]["syntheseus"]["exact"], 1) == {
        "count": 1,
        "n": 2,
        "value": 0.5,
        "interval": [wilson_interval(1, 2).low, wilson_interval(1, 2).high],
        "method": "wilson95",
        "k": 1,
    }
    assert m["status"] == {"error": 1, "ok": 1}


def test_product_in_its_own_reactants_is_counted_per_row_and_in_aggregate() -> None:
    rows = [_row(2, ["CNC(C)=O.O", "CN.CC(=O)O"]), _row(3, ["CCO"])]
    assert rows[0]["product_in_reactants_ranks"] == [0]
    assert rows[0]["hits"]["syntheseus"]["exact"] == 1  # counted, not silently removed
    m = aggregate(rows, conventions=("syntheseus",), matchers=("exact",), ks=(1,), max_k=2)
    assert m["outputs"]["product_in_reactants_rate"] == rate(1, 3)


def test_keep_repeats_convention_drops_invalid_outputs_and_keeps_repeats() -> None:
    settings = ScoreSettings(
        matchers=("exact",), conventions=("syntheseus", "syntheseus_keep_repeats", "raw_slots")
    )
    outputs = ("C1CC", "CCO", "OCC", "CN.CC(=O)O", "CC(O)=O.CN")
    row = score_target(ScoreTask(_target(2, ("CC(=O)O", "CN")), outputs, 5), settings)
    # raw_slots: 3; syntheseus: ['CCO', truth] -> 1; keep repeats: ['CCO', 'OCC', truth, ...] -> 2
    assert row["hits"] == {
        "syntheseus": {"exact": 1},
        "syntheseus_keep_repeats": {"exact": 2},
        "raw_slots": {"exact": 3},
    }
    second = ScoreTask(_target(3, ("CC(=O)O", "CN")), ("CN.CC(=O)O",), 1)
    rows = [row, score_target(second, settings)]
    m = aggregate(
        rows,
        conventions=("syntheseus_keep_repeats",),
        matchers=("exact",),
        ks=(1, 3),
        max_k=5,
    )
    block = m["accuracy"]["syntheseus_keep_repeats"]["exact"]
    assert [top_hits(block, k) for k in (1, 3)] == [1, 2]
    assert block["mrr"]["value"] == pytest.approx((1 / 3 + 1) / 2)


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("", "empty"),
        ("CC..N", "empty_component"),
        ("CC.", "empty_component"),
        ("C1CC", "syntax"),
        ("CC(=O)O.CC(", "syntax"),
        ("C(C)(C)(C)(C)C.CN", "valence"),
        ("c1cccc1", "kekulization"),
        ("CC O", "whitespace"),
        ("C" * 200_001, "too_long"),
    ],
)
def test_each_invalid_output_says_why(output: str, reason: str) -> None:
    row = _row(2, ["CCO", output, "CN.CC(=O)O"])
    assert row["invalid_ranks"] == [1]
    assert row["invalid_reasons"] == [reason]


def test_invalid_outputs_are_counted_by_reason() -> None:
    rows = [
        _row(2, ["C1CC", "", "CN.CC(=O)O", "C1CCC"]),
        _row(3, ["c1cccc1", "CCO"]),
        _row(4, ["C1CC"]),
    ]
    m = aggregate(rows, conventions=("syntheseus",), matchers=("exact",), ks=(1,), max_k=4)
    assert m["outputs"]["invalid_rate"]["count"] == 5
    assert m["outputs"]["invalid_by_reason"] == {"empty": 1, "kekulization": 1, "syntax": 3}


# -- conventions, settings and row fields ---------------------------------------------------


def test_each_convention_gives_each_raw_output_its_rank() -> None:
    # [invalid, CCO, OCC (= CCO), truth]: raw slots keep all four; syntheseus drops the invalid
    # one and the repeat; keep-repeats drops only the invalid one
    comparison = ReactantSetScorer(["exact"]).compare(
        ["CC(=O)O", "CN"], ["C1CC", "CCO", "OCC", "CN.CC(=O)O"]
    )
    assert convention_ranks(comparison, "raw_slots") == [0, 1, 2, 3]
    assert convention_ranks(comparison, "syntheseus") == [None, 0, None, 1]
    assert convention_ranks(comparison, "syntheseus_keep_repeats") == [None, 0, 1, 2]


def test_an_unknown_convention_is_refused_with_the_known_ones() -> None:
    comparison = ReactantSetScorer(["exact"]).compare(["CCO"], ["CCO"])
    with pytest.raises(
        ValueError,
        match=r"unknown convention 'skip_repeats'; choose one of "
        r"syntheseus, raw_slots, syntheseus_keep_repeats$",
    ):
        convention_ranks(comparison, "skip_repeats")


def test_default_settings_derive_syntheseus_and_raw_slots_under_exact_and_stereo_ignored() -> None:
    task = ScoreTask(_target(2, ("C[C@H](N)C(=O)O",)), ("NC(C)C(=O)O", "C[C@H](N)C(=O)O"), 2)
    row = score_target(task, ScoreSettings())
    # the flat output is right once stereo is ignored (rank 0), the exact one only at rank 1
    assert row["hits"] == {
        "syntheseus": {"exact": 1, "stereo_ignored": 0},
        "raw_slots": {"exact": 1, "stereo_ignored": 0},
    }
    assert "round_trip" not in row


def test_a_status_from_the_model_is_kept_and_counts_pass_through() -> None:
    task = ScoreTask(_target(2, ("CC(=O)O", "CN")), ("CCO",), 4, "missing_from_predictions")
    row = score_target(task, SETTINGS)
    assert row["status"] == "missing_from_predictions"
    assert (row["n_returned"], row["n_outputs"]) == (4, 1)
    assert row["target"] == "test:2" and row["reactants"] == ["CC(=O)O", "CN"]


def test_keys_the_matcher_cannot_compute_are_listed_per_matcher() -> None:
    # A dative bond has no InChI: unsupported under inchi and inchikey, fine under exact
    settings = ScoreSettings(matchers=("inchikey", "exact", "inchi"), conventions=("syntheseus",))
    task = ScoreTask(_target(2, ("CC(=O)[Cu]<-N", "CN")), ("CCO", "CC(=O)[Cu]<-N.CN"), 2)
    row = score_target(task, settings)
    assert row["unsupported"] == {"inchikey": [1], "exact": [], "inchi": [1]}
    assert row["truth_unsupported"] == ["inchi", "inchikey"]  # sorted by name
    assert row["hits"]["syntheseus"] == {"inchikey": None, "exact": 1, "inchi": None}


def test_score_chunk_scores_every_task_in_input_order() -> None:
    tasks = [
        ScoreTask(_target(line, ("CC(=O)O", "CN")), outputs, len(outputs))
        for line, outputs in ((2, ("CCO", "CN.CC(=O)O")), (3, ()), (4, ("CN.CC(=O)O",)))
    ]
    rows = score_chunk([(task, SETTINGS) for task in tasks])
    assert [r["line"] for r in rows] == [2, 3, 4]
    assert [r["hits"]["syntheseus"]["exact"] for r in rows] == [1, None, 0]


# -- round trips (a dict-backed fake forward model) -------------------------------------------

PRODUCT = "CNC(C)=O"
#: reactant spelling -> ranked forward candidates (product multisets)
FORWARD = {
    "CN.CC(=O)O": [PRODUCT],
    "CC(=O)Cl.CN": ["CCO.Cl", f"{PRODUCT}.Cl"],  # the product only as second candidate
    "CCO": ["CC=O"],
    "CCN": [],  # no candidate at all
    "CCCN": [],
    "CCNC(C)=O": ["CCNC(C)=O"],  # N-ethylacetamide spells the product as a substring
}


@pytest.fixture
def fake_forward(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def forward(reactants: list[str]) -> list[list[str]]:
        calls.extend(reactants)
        return [FORWARD[r] for r in reactants]

    monkeypatch.setitem(scoring._FORWARD, "fake", forward)
    return calls


def _trip(outputs: tuple[str, ...], **settings: Any) -> dict[str, Any]:
    config = ScoreSettings(matchers=("exact",), round_trip_model="fake", **settings)
    task = ScoreTask(_target(2, ("CC(=O)O", "CN")), outputs, len(outputs))
    trip: dict[str, Any] = score_target(task, config)["round_trip"]
    return trip


def test_round_trip_checks_syntheseus_ranks_below_the_maximum_only(
    fake_forward: list[str],
) -> None:
    # syntheseus ranks: CCO 0, CCN 1, CCCN 2, truth 3 (the invalid output and the repeat
    # hold none); CCN and CCCN get no forward candidate
    outputs = ("C1CC", "CCO", "OCC", "CCN", "CCCN", "CN.CC(=O)O")
    assert _trip(outputs, round_trip_max_rank=3) == {
        "checked": 3,
        "round_trips": 0,
        "first_rank": None,
        "no_candidates": 2,
    }
    assert fake_forward == ["CCO", "CCN", "CCCN"]  # rank exactly max_rank is not sent
    assert _trip(outputs, round_trip_max_rank=4) == {
        "checked": 4,
        "round_trips": 1,
        "first_rank": 3,  # a syntheseus rank, not the raw slot 5
        "no_candidates": 2,
    }


def test_round_trip_looks_at_the_first_num_results_candidates(fake_forward: list[str]) -> None:
    outputs = ("CC(=O)Cl.CN", "CN.CC(=O)O")
    one = _trip(outputs, round_trip_num_results=1)
    assert (one["round_trips"], one["first_rank"]) == (1, 1)
    two = _trip(outputs, round_trip_num_results=2)
    assert (two["round_trips"], two["first_rank"]) == (2, 0)  # the product beside HCl counts


def test_round_trip_needs_the_product_as_a_whole_molecule(fake_forward: list[str]) -> None:
    trip = _trip(("CCNC(C)=O",))
    assert (trip["checked"], trip["round_trips"], trip["first_rank"]) == (1, 0, None)


def test_round_trip_defaults_check_ten_proposals_against_the_top_candidate(
    fake_forward: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    alkanes = tuple("C" * n for n in range(1, 12))  # 11 distinct valid wrong proposals
    monkeypatch.setitem(FORWARD, "CC(=O)Cl.CN", ["CCO.Cl", PRODUCT])
    for alkane in alkanes:
        monkeypatch.setitem(FORWARD, alkane, ["C"])
    trip = _trip(alkanes)
    assert (trip["checked"], trip["no_candidates"]) == (10, 0)
    assert _trip(("CC(=O)Cl.CN",))["round_trips"] == 0  # second candidate: not looked at


def test_the_forward_model_is_built_once_per_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from chemgauge.families.retro import roundtrip

    built: list[str] = []

    def build(name: str) -> Any:
        built.append(name)
        return lambda reactants: [FORWARD[r] for r in reactants]

    monkeypatch.setattr(roundtrip, "build_forward_function", build)
    monkeypatch.setattr(scoring, "_FORWARD", {})
    assert _trip_with("built", ("CN.CC(=O)O",))["round_trips"] == 1
    assert _trip_with("built", ("CCO", "CN.CC(=O)O"))["first_rank"] == 1
    assert built == ["built"]


def _trip_with(model: str, outputs: tuple[str, ...]) -> dict[str, Any]:
    config = ScoreSettings(matchers=("exact",), round_trip_model=model)
    task = ScoreTask(_target(2, ("CC(=O)O", "CN")), outputs, len(outputs))
    trip: dict[str, Any] = score_target(task, config)["round_trip"]
    return trip


# -- the scorer: one per matcher set, trusting the loaders' canonical truth -------------------


def test_one_scorer_per_matcher_set_is_kept_across_targets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scoring, "_SCORERS", {})
    first = _row(2, ["CCO", "CN.CC(=O)O"])
    scorer = scoring._SCORERS[("exact", "stereo_ignored")]
    parsed = scorer.parsed
    second = _row(3, ["OCC", "CC(=O)O.CN"])
    assert list(scoring._SCORERS) == [("exact", "stereo_ignored")]
    assert scoring._SCORERS[("exact", "stereo_ignored")] is scorer  # reused, not rebuilt
    assert (
        first["hits"]
        == second["hits"]
        == {
            "syntheseus": {"exact": 1, "stereo_ignored": 1},
            "raw_slots": {"exact": 1, "stereo_ignored": 1},
        }
    )
    assert scorer.parsed > parsed  # the second target's new spelling OCC went through it


def test_the_canonical_truth_is_its_own_exact_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # The loaders write canonical SMILES, so the truth's exact keys are its texts: an output
    # spelled like the truth shares its components and needs no key computed at all, where
    # recomputing would canonicalize acetic acid and methylamine (2 keys).
    monkeypatch.setattr(scoring, "_SCORERS", {})
    settings = ScoreSettings(matchers=("exact",), conventions=("syntheseus",))
    task = ScoreTask(_target(2, ("CC(=O)O", "CN")), ("CC(=O)O.CN",), 1)
    assert score_target(task, settings)["hits"] == {"syntheseus": {"exact": 0}}
    assert scoring._SCORERS[("exact",)].keys_computed == 0


def _comparison(**fields: Any) -> ReactantSetComparison:
    """Three outputs (invalid, valid, the truth), every per-output field of length 3 unless
    a field is given."""
    base: dict[str, Any] = {
        "valid": (False, True, True),
        "first_seen": (None, 1, 2),
        "correct": {"exact": (False, False, True)},
        "unsupported": {"exact": ()},
        "truth_unsupported": {"exact": False},
        "product_in_outputs": (),
        "invalid_reasons": ("syntax",),
        "keys_computed": 0,
    }
    return ReactantSetComparison(**{**base, **fields})


class _FixedScorer:
    def __init__(self, comparison: ReactantSetComparison) -> None:
        self.comparison = comparison

    def compare(self, *args: Any, **kwargs: Any) -> ReactantSetComparison:
        return self.comparison


@pytest.mark.parametrize(
    ("field", "value", "conventions"),
    [
        ("first_seen", (None, 1), ("syntheseus",)),  # read beside valid by the convention
        ("first_seen", (None, 1), ("raw_slots",)),  # and by the unique-output count
        ("correct", {"exact": (False, False)}, ("raw_slots",)),  # read beside the ranks
    ],
)
def test_misaligned_per_output_fields_are_an_error_never_a_truncation(
    monkeypatch: pytest.MonkeyPatch, field: str, value: Any, conventions: tuple[str, ...]
) -> None:
    # A comparison one entry short for the last output (here: the truth) must not score it
    # as a miss: every per-output field is read in lockstep and a length mismatch raises.
    whole = _comparison()
    monkeypatch.setattr(scoring, "_SCORERS", {("exact",): _FixedScorer(whole)})
    settings = ScoreSettings(matchers=("exact",), conventions=conventions)
    task = ScoreTask(_target(2, ("CC(=O)O", "CN")), ("C1CC", "CCO", "CN.CC(=O)O"), 3)
    # whole: the truth holds syntheseus rank 1 (after CCO) and raw slot 2
    rank = {"syntheseus": 1, "raw_slots": 2}[conventions[0]]
    assert score_target(task, settings)["hits"] == {conventions[0]: {"exact": rank}}
    monkeypatch.setitem(scoring._SCORERS, ("exact",), _FixedScorer(_comparison(**{field: value})))
    with pytest.raises(ValueError, match="zip"):
        score_target(task, settings)


def test_syntheseus_ranks_refuse_a_first_seen_shorter_than_the_outputs() -> None:
    # the last output has no first-seen entry: dropping it would silently shorten the ranks
    assert convention_ranks(_comparison(), "syntheseus") == [None, 0, 1]
    with pytest.raises(ValueError, match="zip"):
        convention_ranks(_comparison(first_seen=(None, 1)), "syntheseus")
