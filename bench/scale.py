"""Scale check: wall time, throughput and peak RSS at 10/50/100% of the input.

`canon`: a seeded file of N SMILES (random spellings of the NCI 5K set shipped with RDKit;
every 5th line repeats an earlier string). `forward`: a seeded schema-1 corpus of M reactions
built from USPTO-50k test reactions, each made distinct by a spectator alkane, run through
`chemgauge forward benchmark` with the embedded rules. Each size runs the real CLI in a fresh
process; peak resident memory of the largest process comes from getrusage. Targets: peak
RSS at 100% at most 1.2x that at 10%; `--jobs 2` at least 1.7x faster
than `--jobs 1` (per family: bench/jobs_scaling.py).

    .venv/bin/python bench/scale.py                      # 1,000,000 SMILES + 200,000 reactions
    .venv/bin/python bench/scale.py --only forward --no-jobs-scaling   # the forward part only
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

import rdkit
from rdkit import Chem, RDLogger

from peak_rss import measure_command
from result_files import (
    add_record_options,
    figure,
    peak_rss_figure,
    record_path,
    write_result,
)

RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))


def build_input(path: Path, n: int, seed: int) -> None:
    """Seeded random spellings; every 5th line repeats an earlier string (a realistic memo)."""
    source = Path(rdkit.__file__).parent / "Data" / "NCI" / "first_5K.smi"
    mols = [Chem.MolFromSmiles(line.split()[0]) for line in source.read_text().splitlines()]
    valid = [m for m in mols if m is not None]
    rng = random.Random(seed)
    written: list[str] = []
    with open(path, "w") as handle:
        for i in range(n):
            if i % 5 == 4 and written:
                smiles = written[rng.randrange(len(written))]
            else:
                mol = valid[rng.randrange(len(valid))]
                smiles = Chem.MolToSmiles(mol, doRandom=True, canonical=False)
                if len(written) < 100_000:
                    written.append(smiles)
            handle.write(f"{smiles}\tid{i}\n")


def run_canon(path: Path, jobs: int) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one `chemgauge canon` run in a fresh process."""
    out = path.with_suffix(".out")
    cmd = [sys.executable, "-m", "chemgauge", "canon", str(path), "-o", str(out), "-q"]
    cmd += ["--jobs", str(jobs)]
    return measure_command(cmd, "chemgauge canon")


def build_corpus(path: Path, n: int, seed: int) -> None:
    """Distinct reactions from USPTO-50k test: reactants plus a spectator alkane C_k."""
    import csv

    from chemgauge.chem import canonicalize_reaction

    source = DATA / "uspto50k" / "test.csv"
    with open(source, newline="") as handle:
        reactions = [canonicalize_reaction(row[2]) for row in list(csv.reader(handle))[1:]]
    rng = random.Random(seed)
    order = list(range(len(reactions)))
    rng.shuffle(order)
    with open(path, "w") as handle:
        for i in range(n):
            reaction = reactions[order[i % len(order)]]
            spectator = "C" * (1 + i // len(order))
            record = {
                "schema_version": 1,
                "reaction_id": f"synthetic-{i}",
                "reactants": [*reaction.reactants, spectator],
                "accepted_products": [list(reaction.products)],
            }
            handle.write(json.dumps(record) + "\n")


def run_forward(path: Path, jobs: int) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one forward benchmark run in a fresh process."""
    cmd = [sys.executable, "-m", "chemgauge", "forward", "benchmark", "--corpus", str(path)]
    cmd += ["--out", str(path.with_suffix(".run")), "--restart", "-q", "--jobs", str(jobs)]
    return measure_command(cmd, "chemgauge forward benchmark")


def scale_table(  # type: ignore[no-untyped-def]
    label: str, lines: list[str], folder: Path, jobs: int, run, *, jobs_scaling: bool = True
) -> list[dict[str, object]]:
    """Run fractions of ``lines`` and print wall, throughput and peak RSS; then jobs scaling.
    Returns the figures for the result file.

    Each fraction's input is written, run and deleted with its outputs, so disk use stays
    bounded. The 1-minute load average after each run is printed beside it: on a shared
    machine throughput depends on it, peak RSS does not.
    """
    print(f"## {label}", flush=True)
    print(
        f"{'fraction':>9}{'items':>10}{'jobs':>6}{'wall s':>9}{'items/s':>10}"
        f"{'per core':>10}{'peak RSS MiB':>14}{'load 1m':>9}",
        flush=True,
    )
    rss: dict[float, int] = {}
    wall_at_10 = 0.0
    for fraction in (0.1, 0.5, 1.0):
        part = folder / f"{label}-{fraction}.in"
        count = int(len(lines) * fraction)
        part.write_text("".join(lines[:count]))
        wall, peak = run(part, jobs)
        load = os.getloadavg()[0]
        rss[fraction] = peak
        rate = count / wall
        print(
            f"{fraction:>9.0%}{count:>10}{jobs:>6}{wall:>9.1f}{rate:>10.1f}"
            f"{rate / jobs:>10.1f}{peak / 1024:>14.0f}{load:>9.2f}",
            flush=True,
        )
        keep_input = fraction == 0.1 and jobs_scaling  # rerun below with --jobs 1
        for leftover in folder.glob(f"{part.stem}.*"):
            if leftover != part or not keep_input:
                leftover.unlink()
        if fraction == 0.1:
            wall_at_10 = wall
    print(f"peak RSS 100% / 10%: {rss[1.0] / rss[0.1]:.2f}x (target <= 1.2x)", flush=True)
    unit = "SMILES" if label == "canon" else "reactions"
    figures = [peak_rss_figure(label, f"{len(lines):,} {unit}", rss[0.1], rss[1.0])]
    if jobs_scaling:
        wall1, _ = run(folder / f"{label}-0.1.in", 1)
        print(
            f"jobs 1 -> {jobs} on the 10% input: {wall1 / wall_at_10:.2f}x (target >= 1.7x), "
            f"load {os.getloadavg()[0]:.2f}"
        )
        figures.append(
            figure(
                label,
                f"{label} --jobs {jobs} over --jobs 1 on the 10% input",
                round(wall1 / wall_at_10, 2),
                "x",
                target=">= 1.7",
            )
        )
    return figures


_METHODS = {
    "canon": (
        "chemgauge canon (--jobs {jobs}) in a fresh process at 10%, 50% and 100% of a seeded "
        "file of {n:,} SMILES (random spellings of the NCI set, every 5th line a repeat); "
        "peak RSS of the largest process (getrusage)."
    ),
    "forward": (
        "chemgauge forward benchmark (embedded rules, --jobs {jobs}) in a fresh process at "
        "10%, 50% and 100% of a synthetic corpus of {n:,} reactions built from the USPTO-50k "
        "test reactions, each made distinct by a spectator alkane; peak RSS of the largest "
        "process (getrusage)."
    ),
}


def _record(args: argparse.Namespace, label: str, n: int, figures: list[dict[str, object]]) -> None:
    default = 1_000_000 if label == "canon" else 200_000
    path = record_path(args, f"scale_{label}", full_size=n >= default)
    if path is not None and args.results is not None and args.only is None:
        path = path.with_name(f"{path.stem}_{label}{path.suffix}")  # one file per part
    if path is not None:
        write_result(
            f"scale_{label}",
            title=f"Peak memory from 10% to 100% of the input: {label}",
            method=_METHODS[label].format(jobs=args.jobs, n=n),
            figures=figures,
            path=path,
            script="scale.py",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="SMILES in the canon input")
    parser.add_argument("--reactions", type=int, default=200_000, help="forward corpus size")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=("canon", "forward"), default=None)
    parser.add_argument(
        "--no-jobs-scaling",
        action="store_true",
        help="skip the --jobs 1 rerun of the 10%% input (bench/jobs_scaling.py covers it)",
    )
    add_record_options(parser)
    args = parser.parse_args()
    print(f"# bench/scale.py  RDKit {rdkit.__version__}  {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.only in (None, "canon"):
            full = folder / "full.smi"
            build_input(full, args.n, args.seed)
            lines = full.read_text().splitlines(keepends=True)
            figures = scale_table(
                "canon", lines, folder, args.jobs, run_canon, jobs_scaling=not args.no_jobs_scaling
            )
            _record(args, "canon", args.n, figures)
        if args.only in (None, "forward"):
            corpus = folder / "corpus.jsonl"
            build_corpus(corpus, args.reactions, args.seed)
            lines = corpus.read_text().splitlines(keepends=True)
            figures = scale_table(
                "forward",
                lines,
                folder,
                args.jobs,
                run_forward,
                jobs_scaling=not args.no_jobs_scaling,
            )
            _record(args, "forward", args.reactions, figures)


if __name__ == "__main__":
    main()
