"""``chemgauge ocsr``: image-to-structure benchmark (render, import, run, score, review).

``run`` and ``score`` stream: attempts go to the journal, are read back in plan order,
scored one at a time into ``scored.jsonl`` and folded into the report; no row is held.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import print_summary, rate_cell, summary_table
from chemgauge.errors import InputFileError
from chemgauge.eval.images import DEFAULT_MAX_IMAGE_BYTES, DEFAULT_MAX_IMAGE_PIXELS, ImageLimits

if TYPE_CHECKING:
    from chemgauge.benchmarks.ocsr.manifest import Manifest

app = typer.Typer(
    help="Image-to-structure (OCSR) benchmark: does a recognizer return the exact graph?",
    no_args_is_help=True,
)


@app.command("render")
def render(
    out: Path = typer.Option(Path("ocsr-cohort"), "--out", "-o", help="Folder for the cohort."),
    width: int = typer.Option(400, help="Drawing width in pixels."),
    height: int = typer.Option(300, help="Drawing height in pixels."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Draw the default synthetic cohort (images, reference molfiles, manifest.json)."""
    from chemgauge.benchmarks.ocsr.cohort import build_cohort

    manifest = build_cohort(out, width=width, height=height)
    if not quiet:
        qualitative = sum(case.reference is None for case in manifest.cases)
        typer.echo(
            f"wrote {len(manifest.cases)} images ({qualitative} without a unique reference) "
            f"and {out / 'manifest.json'}"
        )


@app.command("import")
def import_set(
    images: Path = typer.Option(..., help="Folder of PNG images."),
    references: Path = typer.Option(..., help="Folder of reference molfiles (same stems)."),
    manifest: Path = typer.Option(..., help="Manifest file to write."),
    name: str = typer.Option(..., help="Data set name recorded in the manifest."),
    attribution: str = typer.Option(..., help="Who made the images."),
    licence: str = typer.Option(..., help="Licence of the images."),
) -> None:
    """Build a manifest for an existing image set, pairing images and references by stem."""
    from chemgauge.benchmarks.ocsr.external import import_image_set

    built = import_image_set(
        images, references, manifest, name=name, attribution=attribution, licence=licence
    )
    missing = sum(case.reference is None for case in built.cases)
    typer.echo(f"wrote {manifest}: {len(built.cases)} images, {missing} without a reference")


def _backend(
    backend: str,
    command: list[str],
    fmt: str,
    url: str | None,
    model: str | None,
    api_key_env: str,
    target: str | None,
) -> Any:
    from chemgauge.engines.ocsr.registry import RecognizerOptions, build_recognizer

    options = RecognizerOptions(
        command=tuple(command),
        fmt=fmt,
        url=url,
        model=model,
        api_key_env=api_key_env,
        target=target,
    )
    return build_recognizer(backend, options)


def _score_and_report(
    manifest_path: Path,
    output: Path,
    rows_for: Callable[[Manifest], Iterable[dict[str, Any]]],
    count: int,
    quiet: bool,
    html: bool,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """Score ``count`` attempt rows as they stream past and write the report files.

    The manifest is loaded (and verified) again here, and ``rows_for`` reads the attempts
    against it, so the caller's copy can be dropped first: one manifest in memory at a time.
    """
    from chemgauge.benchmarks.ocsr.evaluate import iter_scored
    from chemgauge.benchmarks.ocsr.manifest import load_manifest
    from chemgauge.benchmarks.ocsr.report import write_report
    from chemgauge.benchmarks.ocsr.scoring import POLICIES

    manifest = load_manifest(manifest_path)
    with progress_bar("scoring", count, quiet=quiet, min_total=50) as advance:
        scored = iter_scored(manifest, rows_for(manifest), progress=advance)
        return write_report(
            output, manifest, scored, POLICIES, extra, html=html, manifest_path=manifest_path
        )


def _rate(block: dict[str, Any] | None) -> str:
    if not block or block.get("rate") is None:
        return "n/a"
    low, high = block["wilson95"]
    return f"{rate_cell(block['rate'], low, high)} ({block['successes']}/{block['n']})"


def _print_summary(report: dict[str, Any]) -> None:
    metrics = report["metrics"]
    finite = metrics["finite_reference"]
    statuses = ", ".join(f"{k} {v}" for k, v in finite["statuses"].items() if v)
    commonest = metrics["localized_errors"]["commonest"]
    errors = ", ".join(f"{c['category']} ({c['attempts']})" for c in commonest[:5])
    row_hash = report["reproducibility_sha256"]
    print_summary(
        summary_table(
            f"ocsr: {finite['planned']} planned attempts with a finite reference, "
            f"{finite['attempted']} attempted",
            (
                "policy",
                "exact / planned [95% CI]",
                "exact / attempted",
                "provisional",
                "unsupported",
            ),
            [
                (
                    policy,
                    _rate(value["completed_exact_over_planned"]),
                    _rate(value["completed_exact_over_attempted"]),
                    str(value["provisional_exact"]),
                    str(value["unsupported"]),
                )
                for policy, value in finite["policies"].items()
            ],
        ),
        notes=(
            f"statuses: {statuses or 'none'}; commonest localized errors: {errors or 'none'}",
            f"reproducibility_sha256 {row_hash}",
        ),
    )


@app.command("run")
def run(
    manifest: Path = typer.Option(..., "--manifest", "-m", help="Manifest JSON."),
    backend: str = typer.Option("osra", help="osra | command | http | python."),
    output: Path = typer.Option(Path("ocsr-results"), "--output", "-o", help="Results folder."),
    execute: bool = typer.Option(False, "--run", help="Execute (default: print the plan)."),
    repeats: int = typer.Option(1, help="Attempts per image."),
    max_requests: int | None = typer.Option(None, help="At most this many attempts start."),
    per_workflow_seconds: float = typer.Option(60.0, help="Time limit per attempt."),
    budget_seconds: float | None = typer.Option(None, help="Overall time budget."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Attempts in flight at once."),
    command_arg: list[str] = typer.Option([], help="command back-end: one argument ({image})."),
    fmt: str = typer.Option("auto", "--format", help="command output: smiles|molfile|auto|json."),
    url: str | None = typer.Option(None, help="http back-end: OpenAI-compatible base URL."),
    model: str | None = typer.Option(None, help="http back-end: model name."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", help="http back-end: key variable."),
    target: str | None = typer.Option(None, "--callable", help="python back-end callable."),
    restart: bool = typer.Option(False, help="Discard an existing journal in --output."),
    html: bool = typer.Option(True, "--html/--no-html", help="Write report.html."),
    max_image_pixels: int = typer.Option(
        DEFAULT_MAX_IMAGE_PIXELS,
        help="Refuse (status not_run) an image whose header declares more pixels.",
    ),
    max_image_mb: float = typer.Option(
        DEFAULT_MAX_IMAGE_BYTES / 2**20, help="Refuse an image file larger than this (MiB)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Plan (default) or run (--run) a recognizer over a manifest, then score and report.

    Every image is checked from its header before anything decodes it: a decompression bomb
    or an absurd resolution is recorded as not run, with the reason, and never reaches the
    recognizer.
    """
    from chemgauge.benchmarks.ocsr.manifest import load_manifest
    from chemgauge.benchmarks.ocsr.runner import (
        RunConfig,
        describe_plan,
        iter_attempt_rows,
        journal_attempts,
        planned_count,
    )

    loaded = load_manifest(manifest)
    recognizer = _backend(backend, command_arg, fmt, url, model, api_key_env, target)
    limits = ImageLimits(max_pixels=max_image_pixels, max_bytes=int(max_image_mb * 2**20))
    config = RunConfig(
        repeats, max_requests, per_workflow_seconds, budget_seconds, jobs, image_limits=limits
    )
    if not execute:
        typer.echo(describe_plan(loaded, config, recognizer.describe()))
        return
    total = planned_count(loaded, config)
    with progress_bar(f"ocsr ({backend})", total, quiet=quiet, min_total=10) as advance:
        journal = journal_attempts(
            loaded, recognizer, config, output, restart=restart, progress=advance
        )
    extra = {"backend": recognizer.describe(), "run_config": config.to_dict()}
    del loaded  # scoring loads and verifies the manifest again

    def rows_for(checked: Manifest) -> Iterable[dict[str, Any]]:
        return iter_attempt_rows(journal, checked, config)

    report = _score_and_report(manifest, output, rows_for, total, quiet, html, extra)
    if not quiet:
        _print_summary(report)


@app.command("score")
def score(
    manifest: Path = typer.Option(..., "--manifest", "-m", help="Manifest JSON."),
    output: Path = typer.Option(..., "--output", "-o", help="Folder with attempts.jsonl."),
    html: bool = typer.Option(True, "--html/--no-html"),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Re-score an existing run's attempts.jsonl and rewrite its report."""
    from chemgauge.benchmarks.ocsr.manifest import load_manifest
    from chemgauge.benchmarks.ocsr.runner import scan_attempts

    journal = output / "attempts.jsonl"
    if not journal.exists():
        raise InputFileError(
            "no attempts journal (run `chemgauge ocsr run --run` first)", path=journal
        )
    attempts = scan_attempts(journal, load_manifest(manifest, verify=False))
    report = _score_and_report(
        manifest, output, lambda _: attempts.rows(), len(attempts), quiet, html, {}
    )
    if not quiet:
        _print_summary(report)


@app.command("review")
def review(
    data: Path = typer.Option(..., help="The ocsr_review folder (holding assets/)."),
    dataset: str = typer.Option("JPO", help="JPO | UOB | CLEF."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the JSON here."),
) -> None:
    """Re-score the 2020 review's shipped OSRA/MolVec/Imago outputs under every policy."""
    from chemgauge.benchmarks.ocsr.review import rescore_review
    from chemgauge.eval.records import atomic_write_json

    assets = data / "assets"
    result = rescore_review(
        dataset,
        assets / "reference" / f"{dataset}_mol_ref.tar.gz",
        assets / "results" / f"{dataset}.tar.gz",
    ).to_dict()
    if out is not None:
        atomic_write_json(out, result)
    typer.echo(json.dumps(result, indent=2, sort_keys=True))
