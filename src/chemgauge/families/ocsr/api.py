"""Python API of the image-to-structure benchmark: ``chemgauge ocsr run --run`` and ``ocsr
score`` as calls.

>>> import chemgauge.families.ocsr
>>> report = chemgauge.families.ocsr.run("cohort/manifest.json", model="osra", out="runs/ocsr")
>>> report["metrics"]

Attempts go to the journal ``attempts.jsonl``, are read back in plan order, scored one at a
time into ``scored.jsonl`` and folded into ``report.json`` (and ``report.html``); no row is
held, and the same call resumes an interrupted run. The command line runs the same
:func:`run_recognizer` and :func:`rescore`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chemgauge.errors import InputFileError
from chemgauge.eval.outputs import Output, claim_outputs

if TYPE_CHECKING:
    from chemgauge.families.ocsr.config import RecognizerOptions, RunConfig
    from chemgauge.families.ocsr.engine.base import Recognizer
    from chemgauge.families.ocsr.manifest import Manifest

__all__ = ["RUN_FILES", "Bars", "rescore", "run", "run_recognizer", "score"]

#: What a run writes in its folder (checked against the inputs and locked before any work).
RUN_FILES = ("attempts.jsonl", "scored.jsonl", "report.json", "report.html")

#: A progress-bar factory: ``bars(label, total, min_total)`` is a context giving ``advance(n)``.
Bars = Callable[[str, int, int], AbstractContextManager[Callable[[int], None]]]


@contextlib.contextmanager
def _no_bar(_label: str, _total: int, _min_total: int) -> Iterator[Callable[[int], None]]:
    yield lambda _n: None


def _score_and_report(
    manifest_path: Path,
    out: Path,
    rows_for: Callable[[Manifest], Iterable[dict[str, Any]]],
    count: int,
    html: bool,
    record: tuple[dict[str, Any], dict[str, Any], list[str]],
    bars: Bars,
) -> dict[str, Any]:
    """Score ``count`` attempt rows as they stream past and write the report files.

    ``record`` is the run's config beyond the policies, where its attempts ran, and
    re-scoring notes. The manifest is loaded (and verified) again here, and ``rows_for``
    reads the attempts against it, so the caller's copy can be dropped first: one manifest
    in memory at a time.
    """
    from chemgauge.families.ocsr.evaluate import iter_scored
    from chemgauge.families.ocsr.manifest import load_manifest
    from chemgauge.families.ocsr.page import write_html
    from chemgauge.families.ocsr.report import write_report
    from chemgauge.families.ocsr.scoring import POLICIES

    extra, execution, notes = record
    manifest = load_manifest(manifest_path)
    with bars("scoring", count, 50) as advance:
        scored = iter_scored(manifest, rows_for(manifest), progress=advance)
        return write_report(
            out,
            manifest,
            scored,
            POLICIES,
            extra,
            page=write_html if html else None,
            manifest_path=manifest_path,
            execution=execution,
            notes=notes,
        )


def run_recognizer(
    manifest: Path,
    recognizer: Recognizer,
    out: Path,
    config: RunConfig,
    *,
    restart: bool = False,
    html: bool = True,
    bars: Bars = _no_bar,
) -> dict[str, Any]:
    """Run ``recognizer`` over the manifest's plan into ``out`` (resuming its journal
    unless ``restart``), then score and report; return the report. The caller checks the
    outputs and takes the run lock."""
    from chemgauge.families.ocsr.manifest import load_manifest
    from chemgauge.families.ocsr.plan import attempts_config_sha256
    from chemgauge.families.ocsr.provenance import check_resumable, scoring_config
    from chemgauge.families.ocsr.runner import iter_attempt_rows, journal_attempts, planned_count

    loaded = load_manifest(manifest)
    if restart:  # the report of a discarded journal must not outlive it
        (out / "report.json").unlink(missing_ok=True)
    else:
        check_resumable(out)
    total = planned_count(loaded, config)
    with bars(f"ocsr ({recognizer.name})", total, 10) as advance:
        journal = journal_attempts(
            loaded,
            recognizer,
            config,
            out,
            restart=restart,
            progress=advance,
        )
    described = recognizer.describe()  # after the run: a back-end may learn what served it
    extra = {
        "scoring": scoring_config(),
        "backend": described,
        "run_config": config.to_dict(),
        "attempts_config_sha256": attempts_config_sha256(loaded, described, config),
    }
    placement = config.placement()
    del loaded  # scoring loads and verifies the manifest again

    def rows_for(checked: Manifest) -> Iterable[dict[str, Any]]:
        return iter_attempt_rows(journal, checked, config)

    return _score_and_report(manifest, out, rows_for, total, html, (extra, placement, []), bars)


def rescore(
    manifest: Path,
    out: Path,
    *,
    html: bool = True,
    bars: Bars = _no_bar,
    notice: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Re-score a finished run's ``attempts.jsonl`` and rewrite its report; return it.

    The run's back-end, budgets and configuration are kept from its report.json, so the same
    scoring gives the same config_sha256; a journal or manifest whose hash changed since the
    run is refused, and a change in scoring goes to ``notice`` and into the report.
    """
    from chemgauge.eval.provenance import source_tree_sha256
    from chemgauge.families.ocsr.config import RunConfig
    from chemgauge.families.ocsr.manifest import load_manifest
    from chemgauge.families.ocsr.plan import iter_plan
    from chemgauge.families.ocsr.provenance import (
        check_inputs,
        read_recorded_run,
        scoring_changes,
        scoring_config,
    )
    from chemgauge.families.ocsr.runner import scan_attempts
    from chemgauge.families.ocsr.scoring import POLICIES

    journal = out / RUN_FILES[0]
    if not journal.exists():
        raise InputFileError(
            "no attempts journal (run `chemgauge ocsr run --run` first)", path=journal
        )
    recorded = read_recorded_run(out)
    check_inputs(recorded, out, manifest)
    config = RunConfig.from_dict(recorded.run["run_config"])
    loaded = load_manifest(manifest, verify=False)
    attempts = scan_attempts(journal, loaded, plan=iter_plan(loaded, config))
    del loaded
    scoring = scoring_config()
    changes = scoring_changes(recorded, list(POLICIES), scoring)
    notes: list[str] = [f"scoring changed since the run: {change}" for change in changes]
    if recorded.source_tree_sha256 not in (None, source_tree_sha256()):
        notes.append("chemgauge's source differs from the run's: its scoring code may too")
    for note in notes:
        if notice is not None:
            notice(note)
    return _score_and_report(
        manifest,
        out,
        lambda _: attempts.rows(),
        len(attempts),
        html,
        ({"scoring": scoring, **recorded.run}, recorded.execution, notes),
        bars,
    )


def run(
    manifest: str | Path,
    model: str = "osra",
    out: str | Path = "runs/ocsr",
    *,
    config: RunConfig | None = None,
    recognizer: RecognizerOptions | None = None,
    restart: bool = False,
    html: bool = True,
) -> dict[str, Any]:
    """Run the back-end ``model`` (``osra``, ``command``, ``http``, ``python`` or a plugin of
    ``chemgauge.ocsr_systems``; ``recognizer`` holds what it needs) over the ``manifest`` into
    the run folder ``out``; return the report. ``config`` holds repeats, budgets, image limits
    and where attempts run (default: one local thread, and the protocol's bounded budgets,
    :meth:`RunConfig.bounded`, for a back-end that asks a model or program)."""
    from chemgauge.families.ocsr.config import RunConfig
    from chemgauge.families.ocsr.engine.registry import build_recognizer

    manifest_path, folder = Path(manifest), Path(out)
    built = build_recognizer(model, recognizer)
    with claim_outputs(
        [Output("out", folder, files=RUN_FILES)],
        [("manifest", manifest_path)],
        command="chemgauge.families.ocsr.run",
    ):
        return run_recognizer(
            manifest_path,
            built,
            folder,
            config or (RunConfig.bounded() if built.bounded_by_default else RunConfig()),
            restart=restart,
            html=html,
        )


def score(
    manifest: str | Path, out: str | Path = "runs/ocsr", *, html: bool = True
) -> dict[str, Any]:
    """Re-score the finished run in ``out`` (see :func:`rescore`); return its report."""
    manifest_path, folder = Path(manifest), Path(out)
    inputs = [("manifest", manifest_path), ("attempts journal", folder / RUN_FILES[0])]
    with claim_outputs(
        [Output("out", folder, files=RUN_FILES[1:])],
        inputs,
        command="chemgauge.families.ocsr.score",
    ):
        return rescore(manifest_path, folder, html=html)
