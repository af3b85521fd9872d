"""Run configuration of ``chemgauge retro eval``: seed-style ``key=value`` options, validated.

Every option is checked before any work starts: unknown keys fail with "did you mean", and
values are converted and range-checked here. syntheseus spellings are accepted as aliases
(``num_dataset_truncation`` for ``limit``, ``print_idxs`` for ``k``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import orjson

from chemgauge.benchmarks.retro.scoring import CONVENTIONS, ScoreSettings
from chemgauge.chem import matcher_names
from chemgauge.errors import ConfigError
from chemgauge.eval.executors import DEFAULT_RAY_TIMEOUT_S

__all__ = ["ALIASES", "DEFAULT_KS", "RetroEvalConfig"]

DEFAULT_KS = (1, 3, 5, 10, 20, 50)
ALIASES = {"num_dataset_truncation": "limit", "print_idxs": "k", "model": "model_class"}
_EXECUTORS = ("serial", "local", "ray")


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be an integer, got {value!r}") from None


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be true or false, got {value!r}")


def _as_list(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    text = str(value).strip().removeprefix("[").removesuffix("]")
    return [part.strip().strip("'\"") for part in text.split(",") if part.strip()]


@dataclass(frozen=True)
class RetroEvalConfig:
    """Options of one retro evaluation run.

    Attributes:
        data_dir: folder scanned for ``*{train,val,test}.{jsonl,csv,smi}``.
        model_class: a registered retro model, or ``syntheseus:<ModelClass>``.
        model_dir: the model's folder (or file, for ``predictions``).
        model_kwargs: extra model arguments (a JSON object on the command line).
        fold: which fold to evaluate.
        num_top_results: outputs requested per target; extra outputs are cut and counted.
        k: top-k values to report (each 1..num_top_results; default 1,3,5,10,20,50 up to it).
        matchers: identity policies, side by side.
        conventions: ranking conventions, side by side.
        results_dir: where ``predictions.jsonl``, ``rows.jsonl`` and ``report.json`` go.
        limit: evaluate only the first N data lines.
        round_trip: forward model name for round trips (``chemgauge``), or none.
    """

    data_dir: str
    model_class: str
    model_dir: str | None = None
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)
    fold: str = "test"
    num_top_results: int = 50
    k: tuple[int, ...] = ()
    matchers: tuple[str, ...] = ("exact", "stereo_ignored")
    conventions: tuple[str, ...] = CONVENTIONS
    results_dir: str = "."
    limit: int | None = None
    batch_size: int = 256
    strict: bool = False
    restart: bool = False
    executor: str = "local"
    jobs: int = 0
    chunk_size: int = 32
    ray_address: str | None = None
    ray_timeout: float = DEFAULT_RAY_TIMEOUT_S
    round_trip: str | None = None
    round_trip_max_rank: int = 10
    round_trip_num_results: int = 1
    quiet: bool = False

    def __post_init__(self) -> None:
        n = self.num_top_results
        if n < 1:
            raise ConfigError(f"num_top_results must be at least 1, got {n}")
        ks = self.k or tuple(sorted({k for k in DEFAULT_KS if k <= n} | {n}))
        for k in ks:
            if not 1 <= k <= n:
                raise ConfigError(
                    f"k={k} is outside 1..num_top_results ({n}): a model asked for {n} outputs "
                    "says nothing about rank k; raise num_top_results or drop that k"
                )
        object.__setattr__(self, "k", tuple(sorted(set(ks))))
        known = matcher_names()
        for m in self.matchers:
            if m not in known:
                close = difflib.get_close_matches(m, known, n=3, cutoff=0.5)
                hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                raise ConfigError(f"unknown matcher {m!r}.{hint} Known: {', '.join(known)}")
        if not self.matchers:
            raise ConfigError("matchers must name at least one identity policy")
        if "exact" not in self.matchers:
            object.__setattr__(self, "matchers", ("exact", *self.matchers))
        for c in self.conventions:
            if c not in CONVENTIONS:
                raise ConfigError(f"unknown convention {c!r}; choose from {', '.join(CONVENTIONS)}")
        if not self.conventions:
            raise ConfigError("conventions must name at least one convention")
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"limit must be at least 1, got {self.limit}")
        for name in ("batch_size", "chunk_size", "round_trip_max_rank", "round_trip_num_results"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.jobs < 0:
            raise ConfigError(f"jobs must be >= 0 (0 = all cores), got {self.jobs}")
        if self.executor not in _EXECUTORS:
            raise ConfigError(
                f"executor must be one of {', '.join(_EXECUTORS)}, got {self.executor!r}"
            )
        if not self.ray_timeout > 0:
            raise ConfigError(f"ray_timeout must be > 0 seconds, got {self.ray_timeout}")
        if self.ray_address is not None and self.executor != "ray":
            raise ConfigError(
                f"ray_address={self.ray_address!r} needs executor=ray (got {self.executor!r})"
            )
        if not isinstance(self.model_kwargs, Mapping):
            raise ConfigError("model_kwargs must be a JSON object")

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> RetroEvalConfig:
        """Build from ``key=value`` strings (or typed values); unknown keys say "did you mean"."""
        names = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for raw_key, value in options.items():
            key = ALIASES.get(raw_key, raw_key)
            if key not in names:
                close = difflib.get_close_matches(raw_key, [*names, *ALIASES], n=3, cutoff=0.6)
                hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                raise ConfigError(f"unknown option {raw_key!r}.{hint}")
            if key in values and values[key] != value:
                raise ConfigError(f"option {key!r} given twice ({values[key]!r} and {value!r})")
            values[key] = value
        for required in ("data_dir", "model_class"):
            if values.get(required) in (None, ""):
                raise ConfigError(f"missing required option {required}=...")
        converted: dict[str, Any] = {}
        for key, value in values.items():
            converted[key] = cls._convert(key, value)
        return cls(**converted)

    @staticmethod
    def _convert(key: str, value: Any) -> Any:
        if key in (
            "num_top_results",
            "batch_size",
            "jobs",
            "chunk_size",
            "round_trip_max_rank",
            "round_trip_num_results",
        ):
            return _as_int(key, value)
        if key == "limit":
            return None if value in (None, "", "none", "None") else _as_int(key, value)
        if key == "ray_timeout":
            try:
                return float(value)
            except (TypeError, ValueError):
                raise ConfigError(
                    f"ray_timeout must be a number of seconds, got {value!r}"
                ) from None
        if key in ("strict", "restart", "quiet"):
            return _as_bool(key, value)
        if key == "k":
            return tuple(_as_int("k", v) for v in _as_list(value))
        if key in ("matchers", "conventions"):
            return tuple(_as_list(value))
        if key == "model_kwargs":
            if isinstance(value, Mapping):
                return dict(value)
            try:
                parsed = orjson.loads(str(value))
            except orjson.JSONDecodeError as exc:
                raise ConfigError(
                    f"model_kwargs must be a JSON object, got {value!r} ({exc})"
                ) from None
            if not isinstance(parsed, dict):
                raise ConfigError(f"model_kwargs must be a JSON object, got {value!r}")
            return parsed
        if key in ("round_trip", "model_dir"):
            return None if value in (None, "", "none", "None") else str(value)
        return str(value)

    def score_settings(self) -> ScoreSettings:
        """The per-target scoring settings this run uses."""
        return ScoreSettings(
            matchers=self.matchers,
            conventions=self.conventions,
            round_trip_model=self.round_trip,
            round_trip_max_rank=self.round_trip_max_rank,
            round_trip_num_results=self.round_trip_num_results,
        )

    def to_dict(self) -> dict[str, Any]:
        """Every option, for the report."""
        out = asdict(self)
        out["model_kwargs"] = dict(self.model_kwargs)
        return out

    def row_affecting(self) -> dict[str, Any]:
        """The options that can change a row (hashed); k, paths and speed settings cannot."""
        return {
            "fold": self.fold,
            "limit": self.limit,
            "model_class": self.model_class,
            "model_kwargs": dict(self.model_kwargs),
            "num_top_results": self.num_top_results,
            "matchers": list(self.matchers),
            "conventions": list(self.conventions),
            "round_trip": self.round_trip,
            "round_trip_max_rank": self.round_trip_max_rank,
            "round_trip_num_results": self.round_trip_num_results,
        }
