"""Reports written before the run envelope, read into it.

Until the envelope, each family had its own top level: the family was ``benchmark``
(``chemgauge-forward``, ``retro``), ``family`` (names, p2s) or absent (ocsr); the version was
``report_schema_version``, ``schema``, ``schema_version`` or ``report_version``; the row hash
sat at the top (retro, ocsr) or under ``provenance`` (forward, names, p2s); config and input
hashes sat in different places. Each function here maps one family's old report onto the
envelope without changing a value: the family's results move under ``metrics``, recorded
file hashes become ``inputs`` (sizes unknown), the versions and the back-end go to
``provenance``. What an old report never recorded is derived when read and is marked so by
:attr:`~chemgauge.report.runs.Run.legacy`: ``counts`` (from the rows) and, where no config
hash was recorded, ``config_sha256`` (from the config). ``verify`` skips those two checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from chemgauge.eval.envelope import ENVELOPE_FORMAT, ENVELOPE_SCHEMA_VERSION, CountsTally
from chemgauge.eval.provenance import sha256_json

__all__ = ["LEGACY_DIALECTS", "upgrade_report"]

Report = Mapping[str, Any]
#: Provenance fields the envelope holds at its top level or in ``inputs``.
_MOVED = (
    "chemgauge_version",
    "config_sha256",
    "input_sha256",
    "extra",
    "reproducibility_sha256",
    "reproducibility_excludes",
)


def _block(report: Report, key: str) -> dict[str, Any]:
    value = report.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def _provenance(
    report: Report, backends: Mapping[str, Any], keep: tuple[str, ...] = ()
) -> dict[str, Any]:
    old = _block(report, "provenance")
    kept = {k: v for k, v in old.items() if k not in _MOVED or k in keep}
    kept.setdefault("rdkit_version", "unknown")
    kept.setdefault("python_version", "unknown")
    kept.setdefault("hash_scheme_version", 1)
    kept.setdefault("source_tree_sha256", None)
    return {**kept, "backends": {k: v for k, v in backends.items() if v is not None}}


def _input(role: str, path: Any, sha256: Any, base: str = "given") -> list[dict[str, Any]]:
    if not isinstance(sha256, str) or not path:
        return []
    return [{"role": role, "path": str(path), "base": base, "sha256": sha256, "size": None}]


def _forward(report: Report) -> dict[str, Any]:
    from chemgauge.benchmarks.forward.provenance import ROW_HASH_EXCLUDES

    config, corpus = _block(report, "config"), _block(report, "corpus")
    rules, provenance = _block(report, "rules"), _block(report, "provenance")
    unhashed = ("strict", "templates_file", "template_manifest_file")
    inputs = _input("corpus", corpus.get("path"), corpus.get("sha256"))
    inputs += _input("templates", config.get("templates_file"), rules.get("rules_file_sha256"))
    inputs += _input(
        "template_manifest",
        config.get("template_manifest_file"),
        provenance.get("template_manifest_sha256"),
    )
    environment = _block(report, "environment")
    return {
        "family_schema_version": report.get("report_schema_version"),
        "config": {k: v for k, v in config.items() if k not in unhashed},
        "config_sha256": provenance.get("config_sha256"),
        "inputs": inputs,
        "provenance": {
            **_provenance(report, {}, keep=("config_sha256",)),
            "dependency_versions": environment.get("dependency_versions"),
        },
        "reproducibility_sha256": provenance.get("reproducibility_sha256"),
        "reproducibility_excludes": list(ROW_HASH_EXCLUDES),
        "timing": {"elapsed_ms": report.get("elapsed_ms"), "strict": config.get("strict")},
        "status_field": "failure_reason",
        "rejected_by_reason": {
            k: v
            for k, v in _block(corpus, "stats").items()
            if k in ("malformed_json", "duplicate_records_merged")
        },
        "metrics": {
            "corpus": {k: v for k, v in corpus.items() if k not in ("path", "sha256")},
            **{k: report.get(k) for k in ("rules", "overall", "by_split", "breakdowns")},
            "diagnostics": report.get("diagnostics"),
        },
    }


def _retro(report: Report) -> dict[str, Any]:
    config, data, model = _block(report, "config"), _block(report, "data"), _block(report, "model")
    folder, name = config.get("data_dir"), data.get("file")
    data_path = str(PurePosixPath(str(folder)) / str(name)) if folder and name else name
    extra = _block(_block(report, "provenance"), "extra")
    return {
        "family_schema_version": 1,
        "config": config,
        "config_sha256": None,  # the old top-level hash was the journal key, another scheme
        "derived": ["config_sha256"],
        "inputs": _input("data", data_path, data.get("sha256"))
        + _input("predictions", config.get("model_dir"), model.get("file_sha256")),
        "provenance": _provenance(report, {"model": extra.get("model")}),
        "reproducibility_sha256": report.get("reproducibility_sha256"),
        "reproducibility_excludes": [],
        "timing": _block(report, "run"),
        "status_field": "status",
        "rejected_by_reason": _block(_block(data, "lines"), "rejections_by_reason"),
        "metrics": {
            **_block(report, "metrics"),
            "data": data,
            "model": model,
            "divergences_from_syntheseus": report.get("divergences_from_syntheseus"),
        },
    }


def _names(report: Report) -> dict[str, Any]:
    provenance, source = _block(report, "provenance"), _block(report, "input")
    extra = _block(provenance, "extra")
    stats = _block(report, "input_stats")
    return {
        "family_schema_version": report.get("schema_version"),
        "config": {},  # the old report recorded only the config's hash
        "derived": ["config"],
        "config_sha256": provenance.get("config_sha256"),
        "inputs": _input("input", source.get("path"), source.get("sha256")),
        "provenance": _provenance(report, {"opsin": extra.get("engine")}),
        "reproducibility_sha256": provenance.get("reproducibility_sha256"),
        "reproducibility_excludes": [],  # "timing" was published but never in a row
        "timing": _block(report, "timing"),
        "status_field": "strict",
        "rejected_by_reason": _block(stats, "rejections_by_reason"),
        "metrics": {
            **_block(report, "metrics"),
            "input_stats": stats,
            "confidently_wrong_rows": report.get("confidently_wrong_rows"),
            "confidently_wrong_listed_truncated": report.get("confidently_wrong_listed_truncated"),
        },
    }


def _ocsr(report: Report) -> dict[str, Any]:
    from chemgauge.benchmarks.ocsr.report import report_metrics
    from chemgauge.benchmarks.ocsr.runner import TIMING_FIELDS

    provenance = _block(report, "provenance")
    extra = _block(provenance, "extra")
    return {
        "family_schema_version": report.get("report_version"),
        "config": {"policies": report.get("policies"), **extra},
        "config_sha256": provenance.get("config_sha256"),
        "inputs": [],  # the manifest's hash was recorded, not its path
        "provenance": {
            **_provenance(report, {"recognizer": extra.get("backend")}),
            "manifest_sha256": _block(provenance, "input_sha256").get("manifest"),
        },
        "reproducibility_sha256": report.get("reproducibility_sha256"),
        "reproducibility_excludes": list(TIMING_FIELDS),
        "timing": {"attempts": report.get("timing")},
        "status_field": "status",
        "rejected_by_reason": {},
        "metrics": report_metrics(report),
    }


def _p2s(report: Report) -> dict[str, Any]:
    provenance, data = _block(report, "provenance"), _block(report, "data")
    inputs: list[dict[str, Any]] = []
    root = data.get("path")
    predictions = _block(report, "predictions")
    for name, view in _block(data, "views").items():
        directory, _, condition = str(name).partition("/")
        folder = PurePosixPath(str(root)) / directory if root else None
        if isinstance(view, Mapping) and folder is not None:
            inputs += _input(
                f"tasks:{name}", folder / f"{condition}.jsonl", view.get("tasks_sha256")
            )
            inputs += _input(
                f"labels:{name}", folder / f"{condition}.labels.jsonl", view.get("labels_sha256")
            )
        made = predictions.get(name)
        if isinstance(made, Mapping):
            inputs += _input(
                f"predictions:{name}", made.get("path"), made.get("sha256"), "run_folder"
            )
    unattributable = sum(
        int(p.get("unattributable_lines") or 0)
        for p in predictions.values()
        if isinstance(p, Mapping)
    )
    return {
        "family_schema_version": report.get("schema_version"),
        "config": _block(report, "config"),
        "config_sha256": provenance.get("config_sha256"),
        "inputs": inputs,
        "provenance": _provenance(report, {"model": report.get("model")}),
        "reproducibility_sha256": provenance.get("reproducibility_sha256"),
        "reproducibility_excludes": list(provenance.get("reproducibility_excludes") or ()),
        "timing": {},
        "status_field": "status",
        "rejected_by_reason": {"unattributable_prediction_line": unattributable},
        "metrics": {
            **_block(report, "metrics"),
            "model": report.get("model"),
            "data": data,
            "predictions": predictions,
        },
    }


#: The old dialect of each built-in family: a name for it, and its mapping.
LEGACY_DIALECTS: dict[str, tuple[str, Callable[[Report], dict[str, Any]]]] = {
    "forward": ("benchmark=chemgauge-forward, report_schema_version", _forward),
    "retro": ("benchmark=retro, schema", _retro),
    "names": ("family=names, schema_version, provenance.reproducibility_sha256", _names),
    "ocsr": ("no family, report_version", _ocsr),
    "p2s": ("family=p2s, schema_version, provenance.reproducibility_sha256", _p2s),
}


def upgrade_report(
    family: str, report: Report, rows: Iterable[Mapping[str, Any]], rows_file: str
) -> tuple[dict[str, Any], str, frozenset[str]]:
    """An old report of a built-in family as an envelope mapping, its dialect's name, and the
    envelope fields derived here rather than recorded by the run.

    ``rows`` give the counts (an old report recorded none); ``rows_file`` is the rows file
    relative to the report's folder.
    """
    dialect, mapping = LEGACY_DIALECTS[family]
    mapped = mapping(report)
    derived = frozenset(["counts", *mapped.pop("derived", ())])
    tally = CountsTally(mapped.pop("status_field"))
    for row in rows:
        tally.add(row)
    rejected = mapped.pop("rejected_by_reason")
    config = mapped["config"]
    provenance = _block(report, "provenance")
    envelope = {
        "format": ENVELOPE_FORMAT,
        "schema_version": ENVELOPE_SCHEMA_VERSION,
        "family": family,
        "chemgauge_version": provenance.get("chemgauge_version") or "unknown",
        "created": None,
        **mapped,
        "config_sha256": mapped["config_sha256"] or sha256_json(config),
        "family_schema_version": mapped["family_schema_version"] or 1,
        "rows_file": rows_file,
        "counts": tally.result(rejected).model_dump(),
    }
    return envelope, dialect, derived
