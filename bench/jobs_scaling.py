"""Per-family scaling from ``--jobs 1`` to ``--jobs 2``, each run the real CLI in a fresh process.

For every family whose CLI has ``--jobs``, one input is built (sized so that ``--jobs 1``
takes roughly 20-60 s on a quiet machine), then ``python -m chemgauge ...`` runs on it with
``--jobs 1`` and with ``--jobs 2``, one after the other, each in a fresh subprocess. The script
prints a markdown table: family, items, wall time at each job count, the ratio, CPU seconds
(user + system of the run and all its workers: a load-independent measure of the work) and
the 1-minute load average before the first and after the second run. The target is at
least 1.7x where the work is CPU-bound; the note column says where it is not.

* canon: seeded SMILES file from ``bench/scale.py`` (NCI spellings, every 5th line a repeat);
* forward: ``chemgauge forward benchmark`` (embedded rules) on the seeded synthetic corpus of
  ``bench/scale.py`` (USPTO-50k test reactions made distinct by a spectator alkane);
* retro: ``chemgauge retro eval --model predictions`` on the seeded 50 outputs per
  target that ``bench/retro_vs_syntheseus.py`` generates for the first N USPTO-50k test
  targets (generation is cached in the work folder and not timed);
* names: listed but not run here: ``bench/names_speed.py`` times ``names coverage --jobs 1``
  against ``--jobs 2`` on 20,000 pairs beside the reference pipeline, in one run;
* ocsr: ``chemgauge ocsr run --model osra --run`` on the first N JPO images of the 2020
  review (``--jobs`` = OSRA attempts in flight);
* p2s: listed but not run here: ``p2s build --jobs`` is timed by ``bench/p2s_build_jobs.py``,
  and ``p2s run`` has no ``--jobs``.

Data is read from ``../shared/data`` (or ``$CHEMGAUGE_SHARED_DATA``), never copied into the
repository; inputs and outputs go to a temporary folder (``--work`` keeps them, and reuses
generated retro outputs).

Usage (on a quiet machine: wall-clock ratios move with the load):

    .venv/bin/python bench/jobs_scaling.py                   # full sizes, ~10 min when quiet
    .venv/bin/python bench/jobs_scaling.py --quick           # tiny inputs: checks every family
                                                             # runs; ratios are meaningless
    .venv/bin/python bench/jobs_scaling.py --only canon,forward --work /tmp/jobs-bench
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import retro_vs_syntheseus  # noqa: E402  (bench helpers: seeded retro outputs)
import scale  # noqa: E402  (bench helpers: seeded canon input and forward corpus)
from result_files import (  # noqa: E402
    add_record_options,
    figure,
    merge_figures,
    record_path,
    write_result,
)

DATA = scale.DATA
SEED = 20261130
FAMILIES = ("canon", "forward", "retro", "names", "ocsr", "p2s")

# Items per family: full size (``--jobs 1`` about 20-60 s when quiet) and --quick size.
SIZES = {
    "canon": (150_000, 3_000),
    "forward": (2_500, 40),
    "retro": (1_500, 50),
    "ocsr": (12, 2),
}

NOTES = {
    "canon": "CPU-bound (RDKit parse + canonical SMILES per distinct string).",
    "forward": "CPU-bound (RDKit template application per reaction).",
    "retro": (
        "CPU-bound scoring; loading the predictions file and targets and writing rows "
        "stay in the main process."
    ),
    "names": (
        "bench/names_speed.py times names coverage --jobs 1 against --jobs 2 on 20,000 pairs, "
        "beside the reference pipeline, in one run."
    ),
    "ocsr": (
        "OSRA subprocesses (--jobs = attempts in flight); per-image time varies widely, so "
        "with few images the slowest one bounds the wall time."
    ),
    "p2s": (
        "p2s build --jobs: bench/p2s_build_jobs.py; p2s run has no --jobs (its models are a "
        "table lookup or a remote chat API, I/O-bound)."
    ),
}


@dataclass(frozen=True)
class Case:
    """One family's input: how many items, and the CLI arguments for a given job count."""

    family: str
    items: int
    unit: str
    arguments: Callable[[int, Path], list[str]]  # (jobs, output folder) -> CLI arguments


@dataclass(frozen=True)
class Timing:
    """Wall and CPU seconds of one run, with the 1-minute load before and after it."""

    wall_s: float
    cpu_s: float
    load_before: float
    load_after: float


def measure(arguments: list[str]) -> Timing:
    """Run ``python -m chemgauge ARGUMENTS`` in a fresh process; fail loudly if it fails."""
    load_before = os.getloadavg()[0]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "chemgauge", *arguments],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the run and its waited workers
    if done.returncode != 0:
        raise SystemExit(f"chemgauge {' '.join(arguments)} failed:\n{done.stderr[-3000:]}")
    return Timing(
        wall, usage.ru_utime + usage.ru_stime - cpu_before, load_before, os.getloadavg()[0]
    )


# -- inputs ---------------------------------------------------------------------------------


def canon_case(work: Path, n: int) -> Case:
    path = work / "canon.smi"
    scale.build_input(path, n, SEED)

    def arguments(jobs: int, out: Path) -> list[str]:
        return ["canon", str(path), "-o", str(out / "keys.tsv"), "-q", "--jobs", str(jobs)]

    return Case("canon", n, "SMILES", arguments)


def forward_case(work: Path, n: int) -> Case:
    path = work / "forward.jsonl"
    scale.build_corpus(path, n, SEED)

    def arguments(jobs: int, out: Path) -> list[str]:
        return [
            *("forward", "benchmark", "--corpus", str(path), "--out", str(out)),
            *("--restart", "-q", "--jobs", str(jobs)),
        ]

    return Case("forward", n, "reactions", arguments)


def retro_case(work: Path, n: int) -> Case:
    predictions = retro_vs_syntheseus._generate(work, os.cpu_count() or 1, n)

    def arguments(jobs: int, out: Path) -> list[str]:
        return [
            *("retro", "eval", "--data-dir", str(DATA / "uspto50k")),
            *("--model", "predictions", "--model-dir", str(predictions)),
            *("--num-top-results", "50"),
            *("--limit", str(n), "--out", str(out), "--restart", "-q"),
            *("--jobs", str(jobs)),
        ]

    return Case("retro", n, "targets", arguments)


def ocsr_case(work: Path, n: int) -> Case:
    import ocsr_jpo  # bench helper: extracts the review's JPO images and references

    images = ocsr_jpo._extract(ocsr_jpo.ASSETS / "images" / "JPO.tar.gz", work / "img", n)
    references = ocsr_jpo._extract(
        ocsr_jpo.ASSETS / "reference" / "JPO_mol_ref.tar.gz", work / "ref", None
    )
    manifest = work / "manifest.json"
    subprocess.run(
        [
            *(sys.executable, "-m", "chemgauge", "ocsr", "import"),
            *("--images", str(images), "--references", str(references)),
            *("--out", str(manifest), "--name", "JPO sample"),
            *("--attribution", "Rajan et al. 2020 (JPO)", "--licence", "MIT"),
        ],
        check=True,
        capture_output=True,
    )

    def arguments(jobs: int, out: Path) -> list[str]:
        return [
            *("ocsr", "run", "--manifest", str(manifest), "--model", "osra", "--run"),
            *("--out", str(out), "--restart", "--no-html", "-q", "--jobs", str(jobs)),
        ]

    return Case("ocsr", n, "images", arguments)


BUILDERS: dict[str, Callable[[Path, int], Case]] = {
    "canon": canon_case,
    "forward": forward_case,
    "retro": retro_case,
    "ocsr": ocsr_case,
}


# -- driver ---------------------------------------------------------------------------------


def run_family(case: Case, work: Path) -> tuple[Timing, Timing]:
    """``--jobs 1`` then ``--jobs 2``, each into a fresh output folder removed afterwards."""
    timings = []
    for jobs in (1, 2):
        out = work / f"{case.family}-out-{jobs}"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        timings.append(measure(case.arguments(jobs, out)))
        shutil.rmtree(out, ignore_errors=True)
    return timings[0], timings[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny inputs (a smoke test)")
    parser.add_argument("--only", default=",".join(FAMILIES), help="comma-separated families")
    parser.add_argument("--work", type=Path, default=None, help="keep inputs/outputs here")
    add_record_options(parser)
    args = parser.parse_args()
    families = [f.strip() for f in args.only.split(",") if f.strip()]
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families {unknown}; choose from {', '.join(FAMILIES)}")

    with tempfile.TemporaryDirectory(prefix="chemgauge-jobs-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        print(
            f"# bench/jobs_scaling.py{' --quick' if args.quick else ''}: "
            f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at start",
            flush=True,
        )
        lines = []
        figures = []
        loads: list[float] = []
        for family in families:
            if family not in BUILDERS:
                lines.append(f"| {family} | - | - | - | - | - | - | {NOTES[family]} |")
                continue
            full, quick = SIZES[family]
            case = BUILDERS[family](work, quick if args.quick else full)
            one, two = run_family(case, work)
            line = (
                f"| {family} | {case.items:,} {case.unit} | {one.wall_s:.1f} s | "
                f"{two.wall_s:.1f} s | {one.wall_s / two.wall_s:.2f}x | "
                f"{one.cpu_s:.0f} / {two.cpu_s:.0f} | "
                f"{one.load_before:.1f} -> {two.load_after:.1f} | {NOTES[family]} |"
            )
            print(line, flush=True)
            lines.append(line)
            loads += [one.load_before, two.load_after]
            figures.append(
                figure(
                    family,
                    f"{family} --jobs 2 over --jobs 1",
                    round(one.wall_s / two.wall_s, 2),
                    "x",
                    target=">= 1.7",
                    detail=(
                        f"{case.items:,} {case.unit}: {one.wall_s:.1f} s -> {two.wall_s:.1f} s; "
                        f"CPU {one.cpu_s:.0f} / {two.cpu_s:.0f} s"
                    ),
                )
            )
        print()
        print(
            "| family | items | wall --jobs 1 | wall --jobs 2 | ratio | CPU s (j1 / j2) "
            "| load 1m | note |"
        )
        print("|---|---|---|---|---|---|---|---|")
        print("\n".join(lines))
    # One file for every family, so only a run over all of them at full size replaces it.
    full_size = not args.quick and set(families) >= set(BUILDERS)
    path = record_path(args, "jobs_scaling", full_size=full_size)
    if path is None and figures and not (args.quick or args.no_record or args.results):
        # a run of some families replaces their figures in the recorded file
        merge_figures("jobs_scaling", figures, f"{min(loads):.1f} -> {max(loads):.1f}")
    if path is not None and figures:
        write_result(
            "jobs_scaling",
            title="--jobs 1 against --jobs 2, per family",
            method=(
                "Each family's real CLI in a fresh process with --jobs 1, then --jobs 2, on one "
                "input sized for 20-60 s at --jobs 1 on a quiet machine (canon SMILES, forward "
                "reactions, retro targets with the predictions model, names pairs with the "
                "real OPSIN, ocsr JPO images with OSRA attempts in flight); p2s build is timed "
                "by bench/p2s_build_jobs.py. The target holds where the work is CPU-bound."
            ),
            figures=figures,
            load=f"{min(loads):.1f} -> {max(loads):.1f}",
            path=path,
        )


if __name__ == "__main__":
    main()
