"""Run configuration of ``chemgauge retro eval``: seed-style ``key=value`` options, validated.

Every option is checked before any work starts: unknown keys fail with "did you mean", and
values are converted and range-checked here. Every key of syntheseus's ``eval-single-step``
is accepted in syntheseus's spelling and mapped or refused with what to use instead
(:mod:`chemgauge.families.retro.syntheseus_options`); defaults follow syntheseus's where
they mean the same thing (``num_top_results=100``, ``skip_repeats=True``).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

from chemgauge.chem import matcher_names
from chemgauge.errors import ConfigError
from chemgauge.eval.executors import DEFAULT_RAY_TIMEOUT_S, check_jobs
from chemgauge.families.retro.data import FOLDS
from chemgauge.families.retro.engine.base import RetroModelOptions
from chemgauge.families.retro.engine.registry import resolve_model_class
from chemgauge.families.retro.option_values import (
    as_bool,
    as_int,
    as_list,
    as_optional_int,
)
from chemgauge.families.retro.scoring import CONVENTIONS, DEFAULT_CONVENTIONS, ScoreSettings
from chemgauge.families.retro.syntheseus_options import (
    SYNTHESEUS_FOLDS,
    SYNTHESEUS_KEYS,
    translate_syntheseus_options,
)

__all__ = ["DEFAULT_KS", "DEFAULT_NUM_TOP_RESULTS", "DEFAULT_OUT", "RetroEvalConfig"]

DEFAULT_KS = (1, 3, 5, 10, 20, 50)
#: syntheseus's default (``BaseEvalConfig.num_top_results``).
DEFAULT_NUM_TOP_RESULTS = 100
#: Where a run's files go unless ``--out`` (or syntheseus's ``results_dir=``) says otherwise.
DEFAULT_OUT = "runs/retro"
_EXECUTORS = ("serial", "local", "ray")
_INTS = (
    "num_top_results",
    "batch_size",
    "jobs",
    "chunk_size",
    "round_trip_max_rank",
    "round_trip_num_results",
)
_BOOLS = (
    "strict",
    "restart",
    "quiet",
    "skip_repeats",
    "allow_missing",
    "include_results_modulo_stereo",
    "allow_in_sample",
    "include_predictions",
)


@dataclass(frozen=True)
class RetroEvalConfig:
    """Options of one retro evaluation run.

    Attributes:
        data_dir: folder scanned for ``*{train,val,test}.{jsonl,csv,smi}``.
        model_class: a registered retro model, or ``syntheseus:<ModelClass>`` (a bare
            syntheseus class name such as ``LocalRetro`` means ``syntheseus:LocalRetro``).
        model_dir: the model's folder (or file, for ``predictions``).
        model_kwargs: extra model arguments (a JSON object on the command line).
        fold: which fold to evaluate (``train``, ``val``, ``test``).
        num_top_results: outputs requested per target; extra outputs are cut and counted.
        k: top-k values to report (each 1..num_top_results; default 1,3,5,10,20,50 up to it).
        matchers: identity policies, side by side.
        conventions: ranking conventions, side by side (default ``syntheseus,raw_slots``);
            the one ``skip_repeats`` picks is always among them.
        skip_repeats: syntheseus's option: ``True`` scores the syntheseus-shaped results file
            under the ``syntheseus`` convention (repeats removed), ``False`` under
            ``syntheseus_keep_repeats``.
        include_results_modulo_stereo: syntheseus's option: its stereo-relaxed view in the
            syntheseus-shaped results file (null there otherwise, as syntheseus writes it);
            adds the ``stereo_ignored`` matcher.
        include_predictions: syntheseus's option: its ``predictions`` lists in the
            syntheseus-shaped results file, as syntheseus writes them (a full parse of every
            output, so off by default here; syntheseus's default is on).
        batch_size: products per model call (syntheseus's default, 16).
        out: the run folder: ``journal.jsonl``, ``rows.jsonl``, ``report.json`` and the
            syntheseus-shaped results file go there (``--out``; syntheseus's
            ``results_dir=`` means the same).
        filestring: suffix of the syntheseus-shaped results file's name.
        limit: evaluate only the first N data lines.
        allow_missing: exit zero even when more than the stated share of targets could not
            be scored (missing from a predictions file, or the model call failed).
        allow_in_sample: run a model whose training data overlaps the evaluated fold (the
            same file, or shared reactions); refused otherwise, and the report says so.
        num_gpus: device of a ``syntheseus:<Class>`` model, as syntheseus places it.
        round_trip: forward model name for round trips (``chemgauge``), or none.
    """

    data_dir: str
    model_class: str
    model_dir: str | None = None
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)
    fold: str = "test"
    num_top_results: int = DEFAULT_NUM_TOP_RESULTS
    k: tuple[int, ...] = ()
    matchers: tuple[str, ...] = ("exact", "stereo_ignored")
    conventions: tuple[str, ...] = ()
    skip_repeats: bool = True
    include_results_modulo_stereo: bool = False
    include_predictions: bool = False
    out: str = DEFAULT_OUT
    filestring: str | None = None
    limit: int | None = None
    batch_size: int = 16
    strict: bool = False
    allow_missing: bool = False
    allow_in_sample: bool = False
    restart: bool = False
    num_gpus: int | None = None
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
        object.__setattr__(self, "model_class", resolve_model_class(self.model_class))
        object.__setattr__(self, "fold", SYNTHESEUS_FOLDS.get(self.fold, self.fold))
        if self.fold not in FOLDS:
            spellings = [*FOLDS, *SYNTHESEUS_FOLDS]
            close = difflib.get_close_matches(self.fold, spellings, n=2, cutoff=0.5)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ConfigError(
                f"unknown fold {self.fold!r}.{hint} Choose one of {', '.join(FOLDS)} "
                "(syntheseus spellings TRAIN, VALIDATION, TEST work too)"
            )
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
        if self.include_results_modulo_stereo and "stereo_ignored" not in self.matchers:
            object.__setattr__(self, "matchers", (*self.matchers, "stereo_ignored"))
        for c in self.conventions:
            if c not in CONVENTIONS:
                raise ConfigError(f"unknown convention {c!r}; choose from {', '.join(CONVENTIONS)}")
        conventions = self.conventions or DEFAULT_CONVENTIONS
        if self.syntheseus_convention not in conventions:
            # the convention syntheseus's own numbers use is always computed (it feeds the
            # syntheseus-shaped results file), first when it is not the default one
            conventions = (self.syntheseus_convention, *conventions)
        object.__setattr__(self, "conventions", tuple(dict.fromkeys(conventions)))
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"limit must be at least 1, got {self.limit}")
        for name in ("batch_size", "chunk_size", "round_trip_max_rank", "round_trip_num_results"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        check_jobs(self.jobs, flag="jobs")
        if self.num_gpus is not None and self.num_gpus < 0:
            raise ConfigError(f"num_gpus must be >= 0 (0 = CPU), got {self.num_gpus}")
        if self.filestring is not None and ("/" in self.filestring or "\\" in self.filestring):
            raise ConfigError(f"filestring must not hold a path separator: {self.filestring!r}")
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

    @property
    def syntheseus_convention(self) -> str:
        """The convention that gives syntheseus's numbers under this ``skip_repeats``."""
        return "syntheseus" if self.skip_repeats else "syntheseus_keep_repeats"

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> RetroEvalConfig:
        """Build from ``key=value`` strings (or typed values), chemgauge's or syntheseus's
        keys; unknown keys say "did you mean"."""
        names = {f.name for f in fields(cls)}
        known = [*names, *SYNTHESEUS_KEYS]
        for raw_key in options:
            base = raw_key.split(".", 1)[0]
            if raw_key not in names and base not in SYNTHESEUS_KEYS and raw_key != "model":
                close = difflib.get_close_matches(raw_key, known, n=3, cutoff=0.6)
                hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
                raise ConfigError(f"unknown option {raw_key!r}.{hint}")
        values = translate_syntheseus_options(options)
        for required in ("data_dir", "model_class"):
            if values.get(required) in (None, ""):
                raise ConfigError(f"missing required option {required}=...")
        converted: dict[str, Any] = {}
        for key, value in values.items():
            converted[key] = cls._convert(key, value)
        return cls(**converted)

    @staticmethod
    def _convert(key: str, value: Any) -> Any:
        if key in _INTS:
            return as_int(key, value)
        if key in ("limit", "num_gpus"):
            return as_optional_int(key, value)
        if key == "ray_timeout":
            try:
                return float(value)
            except (TypeError, ValueError):
                raise ConfigError(
                    f"ray_timeout must be a number of seconds, got {value!r}"
                ) from None
        if key in _BOOLS:
            return as_bool(key, value)
        if key == "k":
            return tuple(as_int("k", v) for v in as_list(value))
        if key in ("matchers", "conventions"):
            return tuple(as_list(value))
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
        if key in ("round_trip", "model_dir", "filestring"):
            return None if value in (None, "", "none", "None", "null") else str(value)
        return str(value)

    def model_options(self) -> RetroModelOptions:
        """What the model's factory is given (its folder, device and keyword arguments)."""
        return RetroModelOptions(
            model_dir=None if self.model_dir is None else Path(self.model_dir),
            num_gpus=self.num_gpus,
            model_kwargs=dict(self.model_kwargs),
        )

    def score_settings(self) -> ScoreSettings:
        """The per-target scoring settings this run uses."""
        return ScoreSettings(
            matchers=self.matchers,
            conventions=self.conventions,
            round_trip_model=self.round_trip,
            round_trip_max_rank=self.round_trip_max_rank,
            round_trip_num_results=self.round_trip_num_results,
            syntheseus_skip_repeats=self.skip_repeats,
            syntheseus_stereo=self.include_results_modulo_stereo,
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
            "syntheseus_verdict": {
                "scheme": "syntheseus-0.9-eval-single-step-v1",
                "skip_repeats": self.skip_repeats,
                "stereo": self.include_results_modulo_stereo,
            },
        }
