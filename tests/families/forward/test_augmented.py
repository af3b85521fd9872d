"""The augmented-output layout on a slice of the Augmented Transformer's real USPTO-MIT files.

Counts derived by hand from the lines of three reactions of the ``mix`` setting:

- reaction 0 (lines 2-21): all 200 outputs are the true product T.
- reaction 735 (lines 14562-14581): outputs are T and its one-CH2-longer homologue A. T is
  first in 10 lines and second in 3; A is first in 10 and second in 3: an exact tie, and the
  earliest output (line 14562 starts with A) ranks A first. The first line reads
  ``A A A A A A A T T T``.
- reaction 2579 (lines 51082-51101): every output is empty (no valid output at all).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from tests.conftest import SHARED_DATA, shared_path

from chemgauge.families.forward.augmented import read_augmented, score_augmented
from chemgauge.families.forward.output_keys import OutputKeys

DATA = SHARED_DATA / "at_uspto_mit" / "mix"
INPUTS = DATA / "ibm-testJoin20_from_100.Shuff.csv.can.xz"
OUTPUTS = DATA / "result_ibm-testJoin20_from_100.Shuff.csv.can.xz"
SHA256 = {
    INPUTS.name: "05589f369fc0a8970b4ef285928a8c05e1fa57654e75cd1b9fa466d3ee801dd6",
    OUTPUTS.name: "c8aab8a4a4e4dae6946d23f36e9e7a4ce212b79077ab93428621cc2341ee704e",
}
WANTED = (0, 735, 2579)


@pytest.fixture(autouse=True)
def _at_data() -> None:
    """The AT files, or a skip (a failure naming them under CI)."""
    for path in (INPUTS, OUTPUTS):
        shared_path(str(path.relative_to(SHARED_DATA)))


@pytest.fixture(scope="module")
def sliced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The three reactions' lines, written as a small file pair in the same layout."""
    for path in (INPUTS, OUTPUTS):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[path.name]
    folder = tmp_path_factory.mktemp("at_slice")
    ins, outs = (
        ["input,target"],
        ["input," + ",".join(["target"] + [f"target_{i}" for i in range(2, 11)])],
    )
    for reaction in read_augmented(INPUTS, OUTPUTS):
        if reaction.index in WANTED:
            for outputs in reaction.lists:
                ins.append(f"{reaction.input},{reaction.targets[0]}")
                outs.append(",".join([reaction.input, *outputs]))
        if reaction.index >= max(WANTED):
            break
    (folder / "in.csv").write_text("\n".join(ins) + "\n")
    (folder / "out.csv").write_text("\n".join(outs) + "\n")
    return folder / "in.csv", folder / "out.csv"


def test_lines_group_into_the_three_reactions(sliced: tuple[Path, Path]) -> None:
    reactions = list(read_augmented(*sliced))
    assert [len(r.lists) for r in reactions] == [20, 20, 20]
    assert reactions[1].first_line == 22 and reactions[2].first_line == 42


def test_pooled_counts_match_the_hand_count(sliced: tuple[Path, Path]) -> None:
    tallies = score_augmented(read_augmented(*sliced), OutputKeys("as_written"))
    pooled = tallies["pooled"]
    assert (pooled.n, pooled.answered) == (3, 2)  # reaction 2579 has no valid output
    assert (pooled.hits[1], pooled.hits[2]) == (1, 2)  # 735: A first by the earliest output
    assert (pooled.pessimistic[1], pooled.optimistic[1]) == (1, 2)  # the tie either way
    assert pooled.invalid == 200  # 2579's 20 lines of 10 empty outputs
    assert pooled.duplicates == 180 + 174  # repeats within a line take no position


def test_first_line_conventions_match_the_hand_count(sliced: tuple[Path, Path]) -> None:
    tallies = score_augmented(read_augmented(*sliced), OutputKeys("as_written"))
    given, dedup = tallies["as_given"], tallies["deduplicated"]
    # 735's first line: A A A A A A A T T T -> T at slot 8 as given, 2 deduplicated
    assert [given.hits[k] for k in (1, 5, 10)] == [1, 1, 2]
    assert [dedup.hits[k] for k in (1, 2)] == [1, 2]
    assert (given.invalid, dedup.invalid) == (10, 10)


def test_the_tie_decided_reaction_is_named_with_its_tied_products(
    sliced: tuple[Path, Path],
) -> None:
    pooled = score_augmented(read_augmented(*sliced), OutputKeys("as_written"))["pooled"]
    [tie] = pooled.tie_decided  # only 735: 0 is unanimous, 2579 has no valid output
    assert (tie.index, tie.first_line) == (1, 22)  # the slice's second reaction
    first, second = tie.tied
    assert (first[1], second[1]) == (False, True)  # A (earliest output) first, T accepted
    assert len(first[0]) == len(second[0]) + 1  # A is T's one-CH2-longer homologue
    assert not tie.earliest_hit
    listed = pooled.to_dict()["top1_tie_decided"]
    assert listed == [
        {
            "reaction": 1,
            "first_line": 22,
            "tied": [
                {"output": first[0], "accepted": False},
                {"output": second[0], "accepted": True},
            ],
        }
    ]
