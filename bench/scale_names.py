"""Scale check for the streaming names run: wall time, pairs/s and peak RSS at 10/50/100% of N.

The input is a seeded JSONL file of N (structure, name) pairs drawn from OPSIN's own
name-to-InChI test pairs (read from ../shared/data, never copied): most pairs are a structure
with its own name, some get another pair's name (confidently wrong), an uninterpretable name
(unparseable) or no name (abstained). Only structures of at most ``MAX_HEAVY_ATOMS`` heavy
atoms are drawn (the input is kept as it was when the figures in bench/RESULTS.md were
first recorded, so they stay comparable). Each size runs the real ``chemgauge names
coverage`` CLI in a fresh process with OPSIN; peak RSS is getrusage's: the CLI process
itself (RUSAGE_SELF) and its largest child (the OPSIN JVMs, the matching workers;
RUSAGE_CHILDREN), and the largest of the two is the one compared (as bench/scale.py's probe
does). Targets: peak RSS at 100% at most 1.2x that at 10%; at least 300 pairs/s at 100%.

    .venv/bin/python bench/scale_names.py              # 20,000 pairs
    .venv/bin/python bench/scale_names.py --n 50000 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
from pathlib import Path

from rdkit import Chem, RDLogger

from peak_rss import Measure, measure_chemgauge
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
MAX_HEAVY_ATOMS = 20
_FORMATS = (".jsonl", ".tsv", ".csv")

# Runs the CLI in the probe process itself, so the probe's own peak is the CLI's and its
# children's peak is the largest of the JVMs and workers the CLI started and waited for.


def _opsin_pairs() -> list[tuple[str, str]]:
    """(SMILES, name) of OPSIN's test pairs whose InChI RDKit reads, small structures only."""
    pairs: list[tuple[str, str]] = []
    for path in sorted((DATA / "opsin" / "name_to_inchi").glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith(("//", "#")):
                continue
            name, inchi = line.split("\t")[:2]
            mol = Chem.MolFromInchi(inchi)  # type: ignore[no-untyped-call]
            if mol is None or not 0 < mol.GetNumHeavyAtoms() <= MAX_HEAVY_ATOMS:
                continue
            pairs.append((Chem.MolToSmiles(mol), name))
    return pairs


def _uninterpretable() -> list[str]:
    text = (DATA / "opsin" / "negative" / "uninterpretable.txt").read_text(encoding="utf-8")
    return [n.strip() for n in text.splitlines() if n.strip() and not n.startswith("#")]


def build_input(path: Path, n: int, seed: int) -> None:
    """Write ``n`` seeded pairs as JSONL (one object a line, no header, so any prefix of the
    file is itself a valid input): 80% right, 10% another pair's name, 5% unparseable, 5%
    abstained; ids are distinct."""
    pairs, bad_names = _opsin_pairs(), _uninterpretable()
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            smiles, name = pairs[rng.randrange(len(pairs))]
            roll = rng.random()
            if roll < 0.10:
                name = pairs[rng.randrange(len(pairs))][1]
            elif roll < 0.15:
                name = bad_names[rng.randrange(len(bad_names))]
            elif roll < 0.20:
                name = ""
            record = {"id": f"pair-{i}", "smiles": smiles, "name": name}
            handle.write(json.dumps(record) + "\n")


def measure(path: Path, jobs: int) -> Measure:
    """Run ``chemgauge names coverage`` on ``path`` in a fresh process; its run folder goes
    beside it (the input's name with the suffix ``.run``).

    The CLI picks the format by extension, so an input named otherwise (bench/scale.py names
    its fractions ``.in``) is linked as ``.jsonl`` first.
    """
    source = path
    if path.suffix.lower() not in _FORMATS:
        source = path.with_suffix(".jsonl")
        source.unlink(missing_ok=True)
        source.symlink_to(path.resolve())
    cmd = ["names", "coverage", "-i", str(source), "--restart", "-q", "--jobs", str(jobs)]
    cmd += ["--out", str(path.with_suffix(".run"))]
    return measure_chemgauge(cmd, "names coverage")


def run(path: Path, jobs: int) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB, largest process) of one names run in a fresh process."""
    result = measure(path, jobs)
    return result.wall_s, result.peak_kib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20_000, help="pairs at 100%%")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--jobs", type=int, default=2, help="OPSIN JVMs and matching workers")
    add_record_options(parser)
    args = parser.parse_args()
    print(f"# bench/scale_names.py  {os.cpu_count()} cores  N={args.n}  jobs={args.jobs}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        full = folder / "pairs.jsonl"
        build_input(full, args.n, args.seed)
        lines = full.read_text(encoding="utf-8").splitlines(keepends=True)
        print(
            f"{'fraction':>9}{'pairs':>8}{'wall s':>9}{'pairs/s':>9}{'CLI MiB':>9}"
            f"{'child MiB':>11}{'peak MiB':>10}{'load 1m':>9}",
            flush=True,
        )
        peaks: dict[float, Measure] = {}
        for fraction in (0.1, 0.5, 1.0):
            part = folder / f"names-{fraction}.jsonl"
            count = int(len(lines) * fraction)
            part.write_text("".join(lines[:count]), encoding="utf-8")
            result = measure(part, args.jobs)
            peaks[fraction] = result
            print(
                f"{fraction:>9.0%}{count:>8}{result.wall_s:>9.1f}{count / result.wall_s:>9.1f}"
                f"{result.cli_kib / 1024:>9.0f}{result.child_kib / 1024:>11.0f}"
                f"{result.peak_kib / 1024:>10.0f}{os.getloadavg()[0]:>9.2f}",
                flush=True,
            )
            for leftover in folder.glob(f"{part.stem}.*"):  # the input and its run folder
                if leftover.is_dir():
                    shutil.rmtree(leftover)
                else:
                    leftover.unlink()
        low, high = peaks[0.1], peaks[1.0]
        print(
            f"peak RSS 100% / 10%: {high.peak_kib / low.peak_kib:.2f}x (target <= 1.2x); "
            f"CLI process alone {high.cli_kib / low.cli_kib:.2f}x",
            flush=True,
        )
    path = record_path(args, "scale_names", full_size=args.n >= 20_000)
    if path is not None:
        write_result(
            "scale_names",
            title="Peak memory and rate of the names run from 10% to 100%",
            method=(
                f"chemgauge names coverage with the real OPSIN (--jobs {args.jobs}) on a "
                f"seeded file of {args.n:,} pairs drawn from OPSIN's own test pairs (most "
                "right, some with another pair's name, an uninterpretable name or none), at "
                "10%, 50% and 100%; peak RSS of the CLI process and of its largest child, the "
                "larger compared; pairs/s of the full run."
            ),
            figures=[
                peak_rss_figure("names", f"{args.n:,} pairs", low.peak_kib, high.peak_kib),
                figure(
                    "names",
                    f"names coverage pairs/s at {args.n:,} pairs",
                    round(args.n / high.wall_s, 1),
                    "pairs/s",
                    target=">= 300",
                    detail=f"{high.wall_s:.1f} s wall at --jobs {args.jobs}",
                ),
            ],
            path=path,
        )


if __name__ == "__main__":
    main()
