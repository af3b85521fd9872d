"""Compact letter display on hand-checked cases, and its defining property on random ones."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemgauge.report.letters import compact_letters, letter_names


def _groups(letters: str) -> set[str]:
    """The group names in a system's letters (comma-separated past 52 groups)."""
    return set(letters.split(",")) if "," in letters else set(letters)


def test_no_difference_is_one_letter() -> None:
    assert compact_letters("ABC", []) == {"A": "a", "B": "a", "C": "a"}


def test_every_pair_different_is_one_letter_each() -> None:
    pairs = [("A", "B"), ("A", "C"), ("B", "C")]
    assert compact_letters("ABC", pairs) == {"A": "a", "B": "b", "C": "c"}


def test_non_transitive_tie() -> None:
    # A~B and B~C, but A != C: B belongs to both groups.
    assert compact_letters("ABC", [("A", "C")]) == {"A": "a", "B": "ab", "C": "b"}
    # The pair's order and the order of the pairs do not matter.
    assert compact_letters("ABC", [("C", "A")]) == {"A": "a", "B": "ab", "C": "b"}


def test_chain_of_ties() -> None:
    # Ties A~B, B~C, C~D only: groups {A,B}, {B,C}, {C,D}.
    different = [("A", "C"), ("A", "D"), ("B", "D")]
    assert compact_letters("ABCD", different) == {"A": "a", "B": "ab", "C": "bc", "D": "c"}


def test_best_system_gets_a_even_when_alone() -> None:
    # A differs from everyone; B, C, D are tied.
    different = [("A", "B"), ("A", "C"), ("A", "D")]
    assert compact_letters("ABCD", different) == {"A": "a", "B": "b", "C": "b", "D": "b"}
    # The worst differs from everyone.
    different = [("D", "A"), ("D", "B"), ("D", "C")]
    assert compact_letters("ABCD", different) == {"A": "a", "B": "a", "C": "a", "D": "b"}


def test_sweep_drops_a_group_whose_ties_are_all_shown_elsewhere() -> None:
    # Ties: the triangle A-B-C, and D~A,B; E~B,C; F~A,C. Insert-and-absorb gives four
    # maximal groups {A,B,C}, {A,B,D}, {B,C,E}, {A,C,F}; every tie of {A,B,C} is also in one
    # of the other three, so the sweep removes it: three letters.
    ties = {("A", "B"), ("B", "C"), ("A", "C"), ("A", "D"), ("B", "D")}
    ties |= {("B", "E"), ("C", "E"), ("A", "F"), ("C", "F")}
    different = [p for p in itertools.combinations("ABCDEF", 2) if p not in ties]
    letters = compact_letters("ABCDEF", different)
    assert letters == {"A": "ab", "B": "ac", "C": "bc", "D": "a", "E": "c", "F": "b"}


def test_two_disjoint_pairs_need_four_letters() -> None:
    # A != B and C != D only: the four cross pairs are ties and no two fit one group.
    letters = compact_letters("ABCD", [("A", "B"), ("C", "D")])
    assert sorted(letters.values()) == ["ab", "ac", "bd", "cd"]
    assert letters["A"] == "ab"


def test_errors() -> None:
    with pytest.raises(ValueError, match="not ranked"):
        compact_letters("AB", [("A", "Z")])
    with pytest.raises(ValueError, match="distinct"):
        compact_letters("AA", [])
    assert compact_letters("", []) == {}
    assert compact_letters("A", []) == {"A": "a"}


def test_letter_names_stay_distinct_past_the_alphabet() -> None:
    names = letter_names(60)
    assert names[:3] == ["a", "b", "c"] and names[26] == "A" and names[52] == "a2"
    assert len(set(names)) == 60
    # Past 52 groups the letters of one system are separated by commas.
    order = list(range(60))
    different = list(itertools.combinations(order, 2))
    letters = compact_letters(order, different)
    assert letters[0] == "a" and letters[52] == "a2"


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=1, max_value=9).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.sets(
                st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(
                    lambda p: p[0] < p[1]
                )
            ),
        )
    )
)
def test_sharing_a_letter_is_exactly_not_differing(case: tuple[int, set[tuple[int, int]]]) -> None:
    n, different = case
    letters = compact_letters(list(range(n)), different)
    for a, b in itertools.combinations(range(n), 2):
        shares = bool(_groups(letters[a]) & _groups(letters[b]))
        assert shares == ((a, b) not in different), (a, b, letters)
    assert all(letters[i] for i in range(n))  # everyone keeps a letter
    assert "a" in letters[0]  # the best has the first letter
