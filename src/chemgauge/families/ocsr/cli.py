"""``chemgauge ocsr``: image-to-structure benchmark (render, import, run, score, review).

``run`` and ``score`` stream: attempts go to the journal, are read back in plan order,
scored one at a time into ``scored.jsonl`` and folded into the report; no row is held.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer

from chemgauge.cli.options import RAY_TIMEOUT, Inputs, guarded
from chemgauge.cli.progress import progress_bar
from chemgauge.cli.summary import print_summary, rate_cell, summary_table
from chemgauge.eval.images import DEFAULT_MAX_IMAGE_BYTES, DEFAULT_MAX_IMAGE_PIXELS, ImageLimits
from chemgauge.eval.outputs import Output
from chemgauge.families.ocsr import RUN_FILES, Bars, rescore, run_recognizer
from chemgauge.families.ocsr.config import MAX_REPEATS, MAX_REQUESTS

MAX_IMAGE_PIXELS = typer.Option(
    DEFAULT_MAX_IMAGE_PIXELS,
    help="Refuse (the run records status not_run) an image whose header declares more pixels.",
)
MAX_IMAGE_MB = typer.Option(
    DEFAULT_MAX_IMAGE_BYTES / 2**20, help="Refuse an image file larger than this (MiB)."
)

app = typer.Typer(
    help="Image-to-structure (OCSR) benchmark: does a recognizer return the exact graph?",
    no_args_is_help=True,
)


def _render_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    return [Output("--out", args["out"], files=("manifest.json",))], []


@app.command("render")
@guarded(_render_files)
def render(
    out: Path = typer.Option(Path("ocsr-cohort"), "--out", "-o", help="Folder for the cohort."),
    width: int = typer.Option(400, min=1, help="Drawing width in pixels."),
    height: int = typer.Option(300, min=1, help="Drawing height in pixels."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Draw the default synthetic cohort (images, reference molfiles, manifest.json)."""
    from chemgauge.families.ocsr.cohort import build_cohort

    manifest = build_cohort(out, width=width, height=height)
    if not quiet:
        qualitative = sum(case.reference is None for case in manifest.cases)
        typer.echo(
            f"wrote {len(manifest.cases)} images ({qualitative} without a unique reference) "
            f"and {out / 'manifest.json'}"
        )


def _import_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    inputs = [("--images", args["images"]), ("--references", args["references"])]
    return [Output("--out", args["out"])], inputs


@app.command("import")
@guarded(_import_files)
def import_set(
    images: Path = typer.Option(..., help="Folder of PNG images."),
    references: Path = typer.Option(..., help="Folder of reference molfiles (same stems)."),
    out: Path = typer.Option(..., "--out", "-o", help="Manifest file to write."),
    name: str = typer.Option(..., help="Data set name recorded in the manifest."),
    attribution: str = typer.Option(..., help="Who made the images."),
    licence: str = typer.Option(..., help="Licence of the images."),
    expectations: Path | None = typer.Option(
        None,
        help="JSON object: image stem -> authored facts to check (formula, heavy_atoms, "
        "bonds, fragments, cip).",
    ),
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    max_image_mb: float = MAX_IMAGE_MB,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing."),
) -> None:
    """Build a manifest for an existing image set, pairing images and references by stem.

    Every reference is read and sanitized; missing, invalid, unsupported references and
    failed expectations are counted apart, and an image over the limits is recorded (the
    run records it not_run).
    """
    from chemgauge.families.ocsr.external import build_import

    limits = ImageLimits(max_pixels=max_image_pixels, max_bytes=int(max_image_mb * 2**20))
    built = build_import(
        images,
        references,
        out,
        name=name,
        attribution=attribution,
        licence=licence,
        image_limits=limits,
        expectations=expectations,
    )
    if not quiet:
        for line in _import_lines(out, built.summary):
            typer.echo(line)


def _examples(found: dict[str, str] | list[str], limit: int = 3) -> str:
    items = list(found.items()) if isinstance(found, dict) else [(stem, "") for stem in found]
    shown = "; ".join(f"{stem}: {why}" if why else stem for stem, why in items[:limit])
    more = f"; +{len(items) - limit} more" if len(items) > limit else ""
    return f" ({shown}{more})"


def _import_lines(manifest: Path, summary: Any) -> list[str]:
    """What ``ocsr import`` found, one outcome per line (examples in brackets)."""
    lines = [f"wrote {manifest}: {summary.images} images, {summary.with_reference} with a "
             "usable reference"]  # fmt: skip
    outcomes = (
        (summary.missing_reference, "without a reference file"),
        (summary.invalid_reference, "with an invalid reference"),
        (summary.unsupported_reference, "with unsupported features"),
        (summary.failed_expectations, "failing their authored expectations"),
    )
    for found, what in outcomes:
        if found:
            lines.append(f"  {len(found)} {what}{_examples(found)}")
    if summary.expectations_checked or summary.expectations_unchecked:
        lines.append(
            f"  expectations checked on {summary.expectations_checked} reference(s); "
            f"{len(summary.expectations_unchecked)} without a usable reference to check"
        )
    if summary.refused_images:
        lines.append(
            f"  {len(summary.refused_images)} images refused by the image limits (recorded; "
            f"the run records them not_run){_examples(summary.refused_images)}"
        )
    if summary.metadata_stripped:
        lines.append(
            f"  {len(summary.metadata_stripped)} images carry metadata (recorded; stripped from "
            f"every copy a recognizer receives){_examples(summary.metadata_stripped)}"
        )
    if summary.metadata_molecule:
        lines.append(
            f"  {len(summary.metadata_molecule)} images' metadata holds a molecule, a leak "
            f"(flagged on the manifest and every row){_examples(summary.metadata_molecule)}"
        )
    if summary.references_without_image:
        lines.append(
            f"  {len(summary.references_without_image)} reference file(s) without an image"
            + _examples(summary.references_without_image)
        )
    return lines


def _bars(quiet: bool) -> Bars:
    """Progress bars on a terminal, none under --quiet."""

    def bars(label: str, total: int, min_total: int) -> Any:
        return progress_bar(label, total, quiet=quiet, min_total=min_total)

    return bars


def _rate(label: str, block: Mapping[str, Any]) -> str:
    """A report's rate as a table cell: value, interval and counts."""
    from chemgauge.report.adapter import Rate

    rate = Rate.of(label, block)
    if rate.estimate is None:
        return "n/a"
    return f"{rate_cell(rate.estimate, rate.low, rate.high)} ({rate.count}/{rate.n})"


def _print_summary(report: dict[str, Any]) -> None:
    metrics = report["metrics"]
    finite = metrics["finite_reference"]
    from chemgauge.families.ocsr.tallies import not_run_phrase

    statuses = ", ".join(
        not_run_phrase(v, finite.get("not_run_reasons")) if k == "not_run" else f"{k} {v}"
        for k, v in finite["statuses"].items()
        if v
    )
    commonest = metrics["localized_errors"]["commonest"]
    errors = ", ".join(f"{c['category']} ({c['attempts']})" for c in commonest[:5])
    row_hash = report["reproducibility_sha256"]
    served = metrics.get("served") or {}
    unverified = (
        f"; reasoning effort {served.get('requested_effort')!r} unverified"
        if served.get("effort_unverified")
        else ""
    )
    print_summary(
        summary_table(
            f"ocsr: {finite['planned']} planned attempts with a finite reference, "
            f"{finite['attempted']} attempted{unverified}",
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
                    _rate(f"{policy} over planned", value["completed_exact_over_planned"]),
                    _rate(f"{policy} over attempted", value["completed_exact_over_attempted"]),
                    str(value["provisional_exact"]),
                    str(value["unsupported"]),
                )
                for policy, value in finite["policies"].items()
            ],
        ),
        notes=(
            f"statuses: {statuses or 'none'}; commonest localized errors: {errors or 'none'}",
            *_extra_notes(report),
            f"reproducibility_sha256 {row_hash}",
        ),
    )


def _run_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    inputs = [("--manifest", args["manifest"])]
    if not args["execute"]:  # only the plan is printed
        return [], inputs
    return [Output("--out", args["out"], files=RUN_FILES)], inputs


def _extra_notes(envelope: dict[str, Any]) -> list[str]:
    """Served model (beside the requested one), label recall, repeat reliability."""
    from chemgauge.families.ocsr.tallies import summary_facts

    requested = (envelope["config"].get("backend") or {}).get("model")  # http's endpoint model
    return summary_facts(envelope["metrics"], requested)


@app.command("run")
@guarded(_run_files)
def run(
    manifest: Path = typer.Option(..., "--manifest", help="Manifest JSON."),
    model: str = typer.Option(
        "osra", "--model", "-m", help="The back-end: osra | command | http | python | a plugin."
    ),
    out: Path = typer.Option(Path("runs/ocsr"), "--out", "-o", help="Run folder."),
    execute: bool = typer.Option(False, "--run", help="Execute (default: print the plan)."),
    repeats: int = typer.Option(
        1, min=1, max=MAX_REPEATS, help=f"Attempts per image (at most {MAX_REPEATS})."
    ),
    max_requests: int | None = typer.Option(
        None,
        min=0,
        max=MAX_REQUESTS,
        help="At most this many attempts start (raise it later to extend the run). Default: "
        "15 for http, command and plugin back-ends (the protocol's 16 workflows, one reserved "
        "for a control run), no limit for osra and python.",
    ),
    per_workflow_seconds: float | None = typer.Option(
        None,
        help="Time limit per attempt, on elapsed time. Default: 300 s for http, command and "
        "plugin back-ends, 60 s for osra and python.",
    ),
    budget_seconds: float | None = typer.Option(
        None,
        help="Overall time budget (raise it later to extend the run). Default: 1,500 s for "
        "http, command and plugin back-ends (1,800 s less the reserved workflow's 300 s), "
        "no limit for osra and python.",
    ),
    unbounded: bool = typer.Option(
        False,
        "--unbounded",
        help="No default request or overall time limit for any back-end (flags still apply).",
    ),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Attempts in flight at once."),
    executor: str = typer.Option(
        "local",
        "--executor",
        help="Where attempts run: local (threads here) or ray (tasks on a Ray cluster).",
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray cluster to join: 'auto', 'local' or HOST:PORT."
    ),
    ray_timeout: float = RAY_TIMEOUT,
    ship_images: bool = typer.Option(
        True,
        "--ship-images/--shared-images",
        help="ray: send each image with its task, or read it from a path every node sees.",
    ),
    command_arg: list[str] = typer.Option([], help="command back-end: one argument ({image})."),
    fmt: str = typer.Option("auto", "--format", help="command output: smiles|molfile|auto|json."),
    url: str | None = typer.Option(None, help="http back-end: OpenAI-compatible base URL."),
    endpoint_model: str | None = typer.Option(
        None, help="http back-end: the model to request from the endpoint."
    ),
    reasoning_effort: str | None = typer.Option(
        None,
        help="http back-end: reasoning effort to request (checked when echoed; recorded "
        "unverified when the server does not echo it).",
    ),
    accept_model: list[str] = typer.Option(
        [],
        "--accept-model",
        help="http back-end: a served model name accepted besides --endpoint-model (exact; a "
        "dated snapshot is another model unless named here). Repeatable.",
    ),
    api_key_env: str = typer.Option("OPENAI_API_KEY", help="http back-end: key variable."),
    target: str | None = typer.Option(None, "--callable", help="python back-end callable."),
    restart: bool = typer.Option(False, help="Discard an existing journal in --out."),
    html: bool = typer.Option(True, "--html/--no-html", help="Write report.html."),
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    max_image_mb: float = MAX_IMAGE_MB,
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Plan (default) or run (--run) a recognizer over a manifest, then score and report.

    Every image is checked from its header before anything decodes it: a decompression bomb
    or an absurd resolution is recorded as not run, with the reason, and never reaches the
    recognizer. The same command resumes an interrupted run; with a larger --max-requests or
    --budget-seconds it runs only the attempts that were not run.
    """
    from chemgauge.families.ocsr.config import RecognizerOptions, RunConfig
    from chemgauge.families.ocsr.engine.registry import build_recognizer
    from chemgauge.families.ocsr.manifest import load_manifest
    from chemgauge.families.ocsr.plan import describe_plan

    options = RecognizerOptions(
        command=tuple(command_arg),
        format=fmt,
        url=url,
        endpoint_model=endpoint_model,
        api_key_env=api_key_env,
        reasoning_effort=reasoning_effort,
        accept_models=tuple(accept_model),
        callable=target,
    )
    recognizer = build_recognizer(model, options)
    bounded = recognizer.bounded_by_default and not unbounded
    base = RunConfig.bounded() if bounded else RunConfig()
    if unbounded:
        base = RunConfig(per_workflow_seconds=base.per_workflow_seconds)
    config = RunConfig(
        repeats=repeats,
        max_requests=base.max_requests if max_requests is None else max_requests,
        per_workflow_seconds=(
            base.per_workflow_seconds if per_workflow_seconds is None else per_workflow_seconds
        ),
        budget_seconds=base.budget_seconds if budget_seconds is None else budget_seconds,
        image_limits=ImageLimits(max_pixels=max_image_pixels, max_bytes=int(max_image_mb * 2**20)),
        jobs=jobs,
        executor=executor,  # type: ignore[arg-type]  # RunConfig checks the name
        ray_address=ray_address,
        ship_images=ship_images,
        ray_timeout=ray_timeout,
    )
    if not execute:
        typer.echo(describe_plan(load_manifest(manifest), config, recognizer.describe()))
        return
    output_report = run_recognizer(
        manifest,
        recognizer,
        out,
        config,
        restart=restart,
        html=html,
        bars=_bars(quiet),
    )
    if not quiet:
        _print_summary(output_report)


def _score_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    out: Path = args["out"]
    inputs = [("--manifest", args["manifest"]), ("attempts journal", out / RUN_FILES[0])]
    return [Output("--out", out, files=RUN_FILES[1:])], inputs


@app.command("score")
@guarded(_score_files)
def score(
    manifest: Path = typer.Option(..., "--manifest", help="Manifest JSON."),
    out: Path = typer.Option(
        Path("runs/ocsr"), "--out", "-o", help="Run folder (with attempts.jsonl)."
    ),
    html: bool = typer.Option(True, "--html/--no-html"),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Re-score a finished run's attempts.jsonl and rewrite its report.

    The run's back-end, budgets and configuration are kept from its report.json, so the same
    scoring gives the same config_sha256; a journal or manifest whose hash changed since the
    run is refused, and a change in scoring is printed and recorded.
    """
    report = rescore(
        manifest,
        out,
        html=html,
        bars=_bars(quiet),
        notice=lambda note: typer.echo(note, err=True),
    )
    if not quiet:
        _print_summary(report)


def _review_files(args: Mapping[str, Any]) -> tuple[list[Output], Inputs]:
    outputs = [] if args["out"] is None else [Output("--out", args["out"])]
    return outputs, [("--data", args["data"])]


@app.command("review")
@guarded(_review_files)
def review(
    data: Path = typer.Option(..., help="The ocsr_review folder (holding assets/)."),
    dataset: str = typer.Option("JPO", help="JPO | UOB | CLEF."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the JSON here."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON instead of the table."),
) -> None:
    """Re-score the 2020 review's shipped OSRA/MolVec/Imago outputs under every policy: a
    table of matches per recognizer and policy beside the published counts."""
    from chemgauge.cli.summary import print_table
    from chemgauge.eval.atomic import atomic_write_json
    from chemgauge.families.ocsr.review import rescore_review, review_table

    assets = data / "assets"
    result = rescore_review(
        dataset,
        assets / "reference" / f"{dataset}_mol_ref.tar.gz",
        assets / "results" / f"{dataset}.tar.gz",
    ).to_dict()
    if out is not None:
        atomic_write_json(out, result)
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))
        return
    print_table(review_table(result))
