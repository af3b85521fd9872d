"""Breakdown buckets in display order: numbers by value, words by name, no-value labels last."""

from __future__ import annotations

from chemgauge.families.forward.aggregate import MISSING
from chemgauge.report.buckets import ordered_buckets


def test_pool_size_ranges_sort_by_their_lower_bound() -> None:
    # As text, "11-50" < "2-5" < "51+" < "6-10".
    labels = ["11-50", "2-5", MISSING, "51+", "6-10", "0", "1"]
    assert ordered_buckets(labels) == ["0", "1", "2-5", "6-10", "11-50", "51+", MISSING]


def test_counts_classes_and_words() -> None:
    assert ordered_buckets(["10", "4+", "2", "(none)", "4", "3"]) == [
        "2",
        "3",
        "4",
        "4+",
        "10",
        "(none)",
    ]
    assert ordered_buckets(["mixed:1-2", "3+", "1", MISSING]) == ["1", "3+", "mixed:1-2", MISSING]
    assert ordered_buckets(["stereo", "no_stereo"]) == ["no_stereo", "stereo"]
