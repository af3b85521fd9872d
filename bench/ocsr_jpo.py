"""Run OSRA live through the OCSR runner on the review's 450 JPO images, beside the published 260.

Extracts the JPO images and reference SDFs from ../shared/data/ocsr_review (read-only) into a
temporary folder outside the repository, builds a manifest, runs OSRA with the chosen number
of parallel attempts, scores under every policy and prints exact-match counts per policy,
status counts, the commonest localized error categories and timings. The legacy re-score of
the review's own shipped OSRA output is printed alongside, so live and archived OSRA can be
compared on the same images; the archived outputs must re-score to the published counts
within one structure (the target). A full run writes bench/results/ocsr_jpo.json.

    .venv/bin/python bench/ocsr_jpo.py [--jobs 2] [--limit N] [--keep DIR] [--executor ray]

With ``--executor ray`` the attempts run as tasks on a local Ray cluster of ``--jobs`` CPUs
(or the cluster ``--ray-address`` names); rows and the reproducibility hash equal a local run's.
"""

from __future__ import annotations

import argparse
import os
import tarfile
import tempfile
import time
from pathlib import Path

from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.recognizers import OsraRecognizer
from chemgauge.families.ocsr.evaluate import score_attempts
from chemgauge.families.ocsr.external import import_image_set
from chemgauge.families.ocsr.page import write_html
from chemgauge.families.ocsr.report import write_report
from chemgauge.families.ocsr.review import PUBLISHED_COUNTS, rescore_review
from chemgauge.families.ocsr.runner import run_attempts
from chemgauge.families.ocsr.scoring import POLICIES
from result_files import add_record_options, figure, record_path, write_result

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))
ASSETS = DATA / "ocsr_review" / "assets"


def _extract(archive: Path, dest: Path, limit: int | None) -> Path:
    with tarfile.open(archive, "r:*") as tar:
        members = sorted(
            (m for m in tar.getmembers() if m.isfile()), key=lambda member: member.name
        )
        if limit is not None:
            members = members[:limit]
        tar.extractall(dest, members=members, filter="data")
    (folder,) = {Path(m.name).parts[0] for m in members}
    return dest / folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="only the first N images")
    parser.add_argument("--per-workflow-seconds", type=float, default=60.0)
    parser.add_argument("--keep", type=Path, default=None, help="write results here")
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--ray-address", default=None)
    add_record_options(parser)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="chemgauge-jpo-") as scratch:
        work = Path(scratch)
        images = _extract(ASSETS / "images" / "JPO.tar.gz", work / "img", args.limit)
        references = _extract(ASSETS / "reference" / "JPO_mol_ref.tar.gz", work / "ref", None)
        manifest_path = work / "manifest.json"
        manifest = import_image_set(
            images,
            references,
            manifest_path,
            name="OCSR review JPO (Kohulan/OCSR_Review @ 165b46c)",
            attribution="Japanese Patent Office images via Rajan et al. 2020",
            licence="MIT (OCSR_Review repository)",
        )
        out = args.keep or work / "results"
        recognizer = OsraRecognizer()
        config = RunConfig(
            per_workflow_seconds=args.per_workflow_seconds,
            jobs=args.jobs,
            executor=args.executor,
            ray_address=args.ray_address,
        )
        start = time.perf_counter()
        rows = run_attempts(manifest, recognizer, config, out, restart=True)
        run_seconds = time.perf_counter() - start
        start = time.perf_counter()
        scored = score_attempts(manifest, rows)
        score_seconds = time.perf_counter() - start
        envelope = write_report(
            out,
            manifest,
            scored,
            POLICIES,
            {"backend": recognizer.describe(), "run_config": config.to_dict()},
            page=write_html if args.keep is not None else None,
            manifest_path=manifest_path,
        )

    report = envelope["metrics"]
    finite = report["finite_reference"]
    print(f"images {len(manifest.cases)}; with a usable reference {finite['planned']}")
    print(f"backend {recognizer.version()}; jobs {args.jobs}; executor {args.executor}")
    print(f"statuses (all): {report['all_attempts']['statuses']}")
    print("exact matches, completed attempts (denominator: all planned images with reference):")
    for policy, value in finite["policies"].items():
        interval = value["completed_exact_over_planned"]["interval"]
        wilson = None if interval[0] is None else [round(bound, 6) for bound in interval]
        print(
            f"  {policy:15s} {value['completed_exact']:4d} / {finite['planned']}"
            f"  (Wilson 95% {wilson})  provisional exact {value['provisional_exact']}"
        )
    print(f"validation (completed): {report['validation']['completed']}")
    print("commonest localized error categories (attempts):")
    for item in report["localized_errors"]["commonest"]:
        print(f"  {item['category']:30s} {item['attempts']}")
    print(f"graph-diff statuses: {report['localized_errors']['diff_status']}")
    timing = envelope["timing"]["attempts"]
    print(
        f"OSRA time: total {timing['total_seconds']:.1f} s, "
        f"median {timing['median_seconds']:.2f} s, max {timing['max_seconds']:.2f} s; "
        f"wall {run_seconds:.1f} s; scoring {score_seconds:.1f} s"
    )
    figures = [
        figure(
            "ocsr",
            f"live OSRA on JPO, exact graphs over the {finite['planned']} images with a reference",
            finite["policies"]["exact"]["completed_exact"],
            detail=", ".join(
                f"{policy} {value['completed_exact']}"
                for policy, value in finite["policies"].items()
                if policy != "exact"
            )
            + f"; statuses {report['all_attempts']['statuses']}",
        ),
        figure("ocsr", "live OSRA, median time an image", timing["median_seconds"], "s"),
    ]
    if args.limit is None:
        archived = rescore_review(
            "JPO", ASSETS / "reference" / "JPO_mol_ref.tar.gz", ASSETS / "results" / "JPO.tar.gz"
        )
        print(f"archived OSRA output (2020 review) re-scored: {archived.matches['osra']}")
        print(f"published (legacy InChI rule): OSRA {PUBLISHED_COUNTS['JPO']['osra']}")
        published = PUBLISHED_COUNTS["JPO"]
        legacy = {tool: archived.matches[tool]["legacy"] for tool in published}
        figures.append(
            figure(
                "ocsr",
                "JPO: archived outputs re-scored, largest difference from the published counts",
                max(abs(legacy[tool] - published[tool]) for tool in published),
                target="<= 1",
                detail=", ".join(f"{t} {legacy[t]}/{published[t]}" for t in published),
            )
        )
    print(f"reproducibility_sha256 {envelope['reproducibility_sha256']}")
    path = record_path(args, "ocsr_jpo", full_size=args.limit is None)
    if path is not None:
        write_result(
            "ocsr_jpo",
            title="OSRA on the 2020 OCSR review's JPO images",
            method=(
                f"Live {recognizer.version()} through the OCSR runner on the review's "
                f"{len(manifest.cases)} JPO images ({args.jobs} attempts in flight, "
                f"{args.per_workflow_seconds:g} s each at most), scored under every identity "
                "policy, beside the review's own archived tool outputs re-scored by chemgauge "
                "(legacy = standard InChI of the first record, the review's rule) against the "
                "counts the review published."
            ),
            figures=figures,
            path=path,
        )


if __name__ == "__main__":
    main()
