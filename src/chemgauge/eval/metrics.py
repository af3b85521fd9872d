"""The one metrics contract: every rate and every interval estimate in any report has one shape.

A :class:`Rate` is a share of items (``count`` of ``n``) with its value and a two-sided
interval; an :class:`Estimate` is a real-valued statistic over ``n`` items (a mean reciprocal
rank, an nDCG, a paired difference) with its interval. A metric with a parameter adds it as a
field (:class:`RateAtK`: the same shape plus ``k``), so no reader parses a metric's name. Each
family's ``metrics`` block is a pydantic model built from these types, and a test walks every
family's report to check that no other shape of rate or interval appears anywhere.

``method`` names how the interval was made: ``wilson95`` (Wilson score, 95%), ``wilson90``,
``bootstrap95`` (seeded percentile bootstrap, 95%: its seed and size are in the run's config),
``paired_bootstrap95``. ``value`` and both ends of ``interval`` are ``null`` when ``n`` is 0:
nothing was measured, which is never reported as 0%.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, model_validator

from chemgauge.eval.rates import interval_method, rate
from chemgauge.eval.stats import Interval

__all__ = [
    "INTERVAL_KEYS",
    "Estimate",
    "MetricsModel",
    "Rate",
    "RateAtK",
    "estimate",
    "interval_method",
    "metrics_json_schema",
    "rate",
    "rate_objects",
    "write_metrics_schema",
]

Bounds = tuple[float | None, float | None]

#: Keys that mark an object as carrying a rate or an interval (the walker's test of "is this a
#: rate object"); any object holding one of them must be a Rate, a RateAtK or an Estimate.
INTERVAL_KEYS = frozenset(
    {"interval", "wilson95", "ci95", "low", "high", "estimate", "bootstrap95", "rate"}
)


def _check_bounds(value: float | None, interval: Bounds, n: int) -> None:
    low, high = interval
    if n == 0 or value is None:
        if value is not None or low is not None or high is not None:
            raise ValueError("with n == 0 (or no value) the value and interval must be null")
        return
    if (low is None) != (high is None):
        raise ValueError("an interval has both ends or neither")
    if low is not None and high is not None and not low <= high:
        raise ValueError(f"interval [{low}, {high}] is reversed")


class MetricsModel(BaseModel):
    """Base of every family's ``metrics`` model: closed (an unknown key is an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Rate(MetricsModel):
    """A share of items: ``count`` of ``n``, ``value = count / n`` and its interval."""

    count: int = Field(ge=0, description="Items counted (the numerator).")
    n: int = Field(ge=0, description="All items the rate is over (the denominator).")
    value: float | None = Field(description="count / n; null when n == 0.")
    interval: Bounds = Field(description="[low, high] of the two-sided interval; nulls if n == 0.")
    method: str = Field(description="How the interval was made (wilson95: Wilson score, 95%).")

    @model_validator(mode="after")
    def _consistent(self) -> Rate:
        if self.count > self.n:
            raise ValueError(f"count {self.count} exceeds n {self.n}")
        if self.n and self.value is not None and abs(self.value - self.count / self.n) > 1e-9:
            raise ValueError(f"value {self.value} is not count / n = {self.count}/{self.n}")
        _check_bounds(self.value, self.interval, self.n)
        return self


class RateAtK(Rate):
    """A :class:`Rate` of a metric with a rank cut-off (top-k): the same shape plus ``k``."""

    k: int = Field(ge=1, description="The rank cut-off (1-based).")


class Estimate(MetricsModel):
    """A real-valued statistic over ``n`` items (MRR, nDCG, a paired difference) with its
    interval; ``interval`` is ``[null, null]`` when none was computed (bootstrap off)."""

    n: int = Field(ge=0, description="Items the statistic is over.")
    value: float | None = Field(description="The statistic; null when n == 0.")
    interval: Bounds = Field(description="[low, high]; nulls when not computed or n == 0.")
    method: str = Field(description="How the interval was made (bootstrap95, or none).")

    @model_validator(mode="after")
    def _consistent(self) -> Estimate:
        _check_bounds(self.value, self.interval, self.n)
        return self


def estimate(
    value: float | None,
    n: int,
    interval: Interval | Bounds | list[float | None] | None = None,
    *,
    method: str = "none",
) -> dict[str, Any]:
    """An estimate as its JSON mapping; ``interval`` may be an :class:`Interval`."""
    if isinstance(interval, Interval):
        bounds: list[float | None] = [interval.low, interval.high]
    elif interval is None:
        bounds = [None, None]
    else:
        bounds = list(interval)
    return {"n": n, "value": value if n else None, "interval": bounds, "method": method}


def rate_objects(document: Any, where: str = "") -> list[tuple[str, Mapping[str, Any]]]:
    """Every object in a JSON document that carries a rate or an interval (a key in
    :data:`INTERVAL_KEYS`), with its path: what the metrics contract test validates."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(document, Mapping):
        if INTERVAL_KEYS & set(document):
            found.append((where or ".", document))
        for key, value in document.items():
            found.extend(rate_objects(value, f"{where}.{key}"))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(rate_objects(value, f"{where}[{index}]"))
    return found


def metrics_json_schema(model: type[BaseModel], title: str) -> dict[str, Any]:
    """The JSON Schema of a family's metrics model, as shipped beside the envelope's."""
    schema = model.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, **schema}


def write_metrics_schema(model: type[BaseModel], title: str, path: Path) -> None:
    """Write the schema file (``make`` never runs this: a test compares the shipped file)."""
    data = orjson.dumps(metrics_json_schema(model, title), option=orjson.OPT_INDENT_2)
    path.write_bytes(data + b"\n")
