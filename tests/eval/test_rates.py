"""The standard-library Wilson interval and rate mapping: what every report's rate is made of."""

from __future__ import annotations

import pytest
from scipy import stats as scipy_stats

from chemgauge.eval.metrics import Rate, RateAtK
from chemgauge.eval.rates import interval_method, rate, wilson_bounds


@pytest.mark.parametrize(("count", "n", "confidence"), [(0, 5, 0.95), (3, 7, 0.9), (7, 7, 0.99)])
def test_wilson_bounds_are_scipys_wilson_interval(count: int, n: int, confidence: float) -> None:
    value, low, high = wilson_bounds(count, n, confidence)
    ref = scipy_stats.binomtest(count, n).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    assert value == count / n
    assert low == pytest.approx(ref.low, abs=1e-12) and high == pytest.approx(ref.high, abs=1e-12)
    assert low is not None and high is not None and 0.0 <= low <= high <= 1.0


def test_nothing_measured_is_no_number_and_bad_counts_are_refused() -> None:
    assert wilson_bounds(0, 0) == (None, None, None)
    for count, n in ((-1, 3), (4, 3), (0, -1)):
        with pytest.raises(ValueError, match="need 0 <= successes <= n"):
            wilson_bounds(count, n)
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\)"):
        wilson_bounds(1, 2, 1.0)


def test_the_method_names_the_kind_and_the_level() -> None:
    assert interval_method("wilson", 0.95) == "wilson95"
    assert interval_method("paired_bootstrap", 0.8) == "paired_bootstrap80"
    assert interval_method("bootstrap", 0.975) == "bootstrap97.5"


def test_rate_is_the_report_rate_shape() -> None:
    block = rate(3, 4, confidence=0.9)
    value, low, high = wilson_bounds(3, 4, 0.9)
    assert block == {
        "count": 3,
        "n": 4,
        "value": value,
        "interval": [low, high],
        "method": "wilson90",
    }
    Rate.model_validate(block)
    at_k = rate(1, 2, k=5)
    assert at_k["k"] == 5 and at_k["method"] == "wilson95"
    RateAtK.model_validate(at_k)
    empty = rate(0, 0)
    assert (empty["value"], empty["interval"]) == (None, [None, None])
    Rate.model_validate(empty)
