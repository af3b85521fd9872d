"""syntheseus ``eval-single-step`` options, spelled as syntheseus spells them, mapped.

syntheseus 0.9's ``EvalConfig`` is its ``BaseEvalConfig`` plus ``BackwardModelConfig``. Every
one of those keys is accepted with the same spelling and case and mapped to the chemgauge
option with the same meaning, or refused with a message that says what to use instead;
:data:`SYNTHESEUS_KEYS` lists what each becomes (and ``--help`` prints it). So a syntheseus
user's command line (``fold=TEST skip_repeats=True include_results_modulo_stereo=True
num_top_results=...``) runs unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chemgauge.errors import ConfigError
from chemgauge.families.retro.option_values import as_bool, as_list, as_scalar

__all__ = ["SYNTHESEUS_FOLDS", "SYNTHESEUS_KEYS", "translate_syntheseus_options"]

#: Each syntheseus ``eval-single-step`` key and what chemgauge makes of it.
SYNTHESEUS_KEYS: dict[str, str] = {
    "data_dir": "data_dir (same scan for *{train,val,test}.{jsonl,csv,smi})",
    "model_class": "model_class (-m/--model); a bare syntheseus class (LocalRetro) means "
    "syntheseus:LocalRetro",
    "model_dir": "model_dir",
    "model_kwargs": "model_kwargs (a JSON object, or model_kwargs.<name>=<value> per argument)",
    "num_top_results": "num_top_results (default 100, as in syntheseus)",
    "fold": "fold: TRAIN, VALIDATION, TEST (or train, val, test)",
    "batch_size": "batch_size (products per model call; default 16, as in syntheseus)",
    "skip_repeats": "True: the syntheseus convention; False: syntheseus_keep_repeats",
    "num_gpus": "num_gpus: the device of a syntheseus:<Class> model (0 CPU, 1 cuda:0)",
    "num_dataset_truncation": "limit",
    "include_results_modulo_stereo": "True: matcher stereo_ignored too, and syntheseus's "
    "stereo-relaxed view in its results file; False: exact only, null there",
    "print_idxs": "k",
    "save_outputs": "true only: chemgauge always writes its results",
    "include_predictions": "include_predictions: True writes syntheseus's predictions lists "
    "into its results file (default False here: raw outputs are in journal.jsonl, verdicts in "
    "rows.jsonl; syntheseus's default is True)",
    "results_dir": "out (the run folder, --out)",
    "filestring": "filestring: suffix of the syntheseus-shaped results file name",
    "resumable": "True: resume from journal.jsonl (chemgauge always can); False: restart",
    "back_translation_config": "refused: round trips use round_trip=chemgauge",
    "back_translation_num_results": "round_trip_num_results",
}

#: syntheseus ``DataFold`` spellings its command line accepts (member names, values and
#: ``DataFold.<NAME>``), to chemgauge's fold names.
_FOLD_NAMES = {"TRAIN": "train", "VALIDATION": "val", "TEST": "test"}
SYNTHESEUS_FOLDS: dict[str, str] = {
    **_FOLD_NAMES,
    **{f"DataFold.{name}": fold for name, fold in _FOLD_NAMES.items()},
}

# Same meaning under another name.
_RENAMES = {
    "num_dataset_truncation": "limit",
    "print_idxs": "k",
    "back_translation_num_results": "round_trip_num_results",
    "model": "model_class",
    "results_dir": "out",
}


def _same(a: Any, b: Any) -> bool:
    """Two spellings of one value (``False`` and ``"false"``, ``5`` and ``"5"``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        try:
            return as_bool("", a) == as_bool("", b)
        except ConfigError:
            return False
    return bool(a == b) or str(a) == str(b)


class _Options:
    """chemgauge options being collected, remembering which key set each (for conflicts)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}

    def set(self, key: str, value: Any, source: str, given: Any) -> None:
        """Set ``key`` from option ``source`` (given as ``given``)."""
        if key in self.values and not _same(self.values[key], value):
            raise ConfigError(
                f"option {key!r} given twice ({self.sources[key]} and {source}={given!r})"
            )
        self.values[key] = value
        self.sources[key] = f"{source}={given!r}"


def _refuse(key: str, value: Any, instead: str) -> ConfigError:
    return ConfigError(f"{key}={value}: {instead}")


def _model_kwargs(options: Mapping[str, Any]) -> dict[str, Any] | None:
    """``model_kwargs.<name>=<value>`` keys (syntheseus's dotted form), merged."""
    dotted = {k: v for k, v in options.items() if k.startswith("model_kwargs.")}
    if not dotted:
        return None
    merged: dict[str, Any] = {}
    for key, value in dotted.items():
        name = key.removeprefix("model_kwargs.")
        if not name or "." in name:
            raise ConfigError(f"{key}: expected model_kwargs.<name>=<value>")
        merged[name] = as_scalar(value)
    return merged


def _matchers(options: Mapping[str, Any], stereo: bool) -> tuple[str, ...]:
    """Matchers for ``include_results_modulo_stereo``, consistent with any ``matchers``."""
    given = tuple(as_list(options["matchers"])) if "matchers" in options else None
    if stereo:
        base = given or ("exact",)
        return base if "stereo_ignored" in base else (*base, "stereo_ignored")
    if given is not None and "stereo_ignored" in given:
        raise ConfigError(
            "include_results_modulo_stereo=False contradicts matchers="
            f"{','.join(given)}; drop one of them"
        )
    return given or ("exact",)


def translate_syntheseus_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """chemgauge options from a mix of chemgauge and syntheseus keys (see module doc)."""
    out = _Options()
    dotted = _model_kwargs(options)
    for key, value in options.items():
        if key.startswith("model_kwargs."):
            continue
        if key == "back_translation_config" or key.startswith("back_translation_config."):
            raise _refuse(
                key,
                value,
                "syntheseus forward models are not wired into chemgauge's round trip; use "
                "round_trip=chemgauge (the built-in forward engine) or register a forward "
                "model under the entry-point group chemgauge.round_trip_models",
            )
        if key == "include_results_modulo_stereo":
            stereo = as_bool(key, value)
            out.set("matchers", _matchers(options, stereo), key, value)
            out.set("include_results_modulo_stereo", stereo, key, value)
        elif key == "matchers" and "include_results_modulo_stereo" in options:
            continue  # folded into the matchers above
        elif key == "save_outputs":
            if not as_bool(key, value):
                raise _refuse(
                    key,
                    value,
                    "chemgauge always writes its results (it resumes from them); choose "
                    "where with --out DIR (results_dir=DIR)",
                )
        elif key == "include_predictions":
            out.set("include_predictions", as_bool(key, value), key, value)
        elif key == "resumable":
            out.set("restart", not as_bool(key, value), key, value)
        elif key == "fold":
            out.set("fold", SYNTHESEUS_FOLDS.get(str(value), value), key, value)
        elif key in _RENAMES:
            out.set(_RENAMES[key], value, key, value)
        else:
            out.set(key, value, key, value)
    if dotted is not None:
        given = out.values.get("model_kwargs")
        if given is not None:
            if not isinstance(given, Mapping):
                given = as_scalar(given)
            if not isinstance(given, Mapping):
                raise ConfigError(f"model_kwargs must be a JSON object, got {given!r}")
            clash = sorted(k for k in dotted if k in given and given[k] != dotted[k])
            if clash:
                raise ConfigError(
                    f"model_kwargs and model_kwargs.<name> disagree on {', '.join(clash)}"
                )
            dotted = {**given, **dotted}
        out.values["model_kwargs"] = dotted
    return out.values
