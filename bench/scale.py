"""Scale check for `chemgauge canon`: wall time, throughput and peak RSS at 10/50/100% input.

Builds a seeded file of N SMILES (random spellings of the NCI 5K set shipped with RDKit, so
about 1 in 5 strings is new to the memo), then runs the real CLI in a fresh process per size
and reads the peak resident memory of the largest process from getrusage. Target (issue 9):
peak RSS at 100% at most 1.2x that at 10%; `--jobs 2` at least 1.7x faster than `--jobs 1`.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import rdkit
from rdkit import Chem, RDLogger

RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]

_PROBE = (
    "import resource, subprocess, sys; "
    "subprocess.run(sys.argv[1:], check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


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
    start = time.perf_counter()
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, *cmd], capture_output=True, text=True, check=True
    )
    return time.perf_counter() - start, int(probe.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000, help="SMILES in the full input")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "full.smi"
        build_input(full, args.n, args.seed)
        lines = full.read_text().splitlines(keepends=True)
        print(f"# bench/scale.py canon  RDKit {rdkit.__version__}  {os.cpu_count()} cores")
        print(
            f"{'fraction':>9}{'lines':>10}{'jobs':>6}{'wall s':>9}{'lines/s':>10}"
            f"{'per core':>10}{'peak RSS MiB':>14}"
        )
        rss: dict[float, int] = {}
        walls: dict[int, float] = {}
        for fraction in (0.1, 0.5, 1.0):
            part = Path(tmp) / f"part{fraction}.smi"
            count = int(len(lines) * fraction)
            part.write_text("".join(lines[:count]))
            wall, peak = run_canon(part, args.jobs)
            rss[fraction] = peak
            rate = count / wall
            print(
                f"{fraction:>9.0%}{count:>10}{args.jobs:>6}{wall:>9.1f}{rate:>10.0f}"
                f"{rate / args.jobs:>10.0f}{peak / 1024:>14.0f}"
            )
            if fraction == 0.1:
                walls[args.jobs] = wall
        part = Path(tmp) / "part0.1.smi"
        wall1, _ = run_canon(part, 1)
        print(f"peak RSS 100% / 10%: {rss[1.0] / rss[0.1]:.2f}x (target <= 1.2x)")
        print(
            f"jobs 1 -> {args.jobs} on the 10% input: {wall1 / walls[args.jobs]:.2f}x "
            "(target >= 1.7x)"
        )


if __name__ == "__main__":
    main()
