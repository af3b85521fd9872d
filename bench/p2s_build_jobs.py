"""p2s build speed-up: `chemgauge p2s build --jobs 2` against `--jobs 1` on the same sources.

Sources are the smallest NCI molecules (bench/p2s_xtb.py's list), built into `dipole` and
`gap` with the xtb provider (GFN2-xTB via tblite) through the real CLI, each run from an
empty folder. Runs alternate (1, 2, 1, 2, ...) so background load hits both alike; the ratio
is of the median walls. Also checked: both worker counts write the same files. Target:
>= 1.7x on 200 sources on an otherwise idle 2-core machine.

    .venv/bin/python bench/p2s_build_jobs.py [--sources 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chemgauge.families.p2s.embedded import nci_sources
from result_files import add_record_options, figure, record_path, write_result

SKIP = {"build_properties.jsonl", "build_manifest.json"}


def build(sources: Path, out: Path, jobs: int) -> float:
    """Wall seconds of one build into an empty folder."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "chemgauge", "p2s", "build", str(sources), "-o", str(out)]
    cmd += ["-p", "dipole", "-p", "gap", "--provider", "xtb", "--jobs", str(jobs), "-q"]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    return time.perf_counter() - start


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in SKIP
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    add_record_options(parser)
    args = parser.parse_args()
    start_load = f"{os.getloadavg()[0]:.1f}"
    with tempfile.TemporaryDirectory(prefix="chemgauge-p2s-jobs-") as tmp:
        sources = Path(tmp) / "sources.smi"
        sources.write_text("".join(f"{s}\n" for s in nci_sources(args.sources)))
        walls: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.repeats):
            for jobs in (1, 2):
                walls[jobs].append(build(sources, Path(tmp) / f"jobs{jobs}", jobs))
                print(f"--jobs {jobs}: {walls[jobs][-1]:.1f} s", flush=True)
        same = files(Path(tmp) / "jobs1") == files(Path(tmp) / "jobs2")
        one, two = statistics.median(walls[1]), statistics.median(walls[2])
        load = os.getloadavg()[0]
        print(f"sources {args.sources}; median wall --jobs 1 {one:.1f} s, --jobs 2 {two:.1f} s")
        print(f"speed-up {one / two:.2f}x (target >= 1.7x); same files: {same}; load {load:.2f}")
    path = record_path(args, "p2s_build_jobs", full_size=args.sources >= 200)
    if path is None:
        return
    write_result(
        "p2s_build_jobs",
        title="p2s build --jobs 2 against --jobs 1",
        method=(
            f"{args.sources} NCI sources (smallest first), dipole and gap with the xtb provider, "
            "the real CLI from an empty folder each run, runs alternating 1, 2, 1, 2; the ratio "
            "is of the median walls, and both worker counts must write the same files."
        ),
        figures=[
            figure(
                "p2s",
                "p2s build --jobs 2 over --jobs 1",
                round(one / two, 2),
                "x",
                target=">= 1.7",
                detail=f"{one:.1f} s -> {two:.1f} s over {args.repeats} repeats",
            ),
            figure(
                "p2s",
                "p2s build: same files at --jobs 1 and 2",
                "yes" if same else "no",
                target="== yes",
            ),
        ],
        load=f"{start_load} -> {load:.1f}",
        path=path,
    )


if __name__ == "__main__":
    main()
