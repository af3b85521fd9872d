"""Time `chemgauge canon` machinery against a plain RDKit loop on the same strings, in one run.

Targets (2-core machine): serial within 1.15x of the plain loop; 2 jobs at least 1.7x faster
than the plain loop; with half the strings duplicated, at least 1.9x faster serially. Prints
one table of ratios and, on a full-size run, writes bench/results/canon.json (rendered into
bench/RESULTS.md by bench/render_results.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import rdkit
from rdkit import Chem, RDLogger

from chemgauge.chem import Canonicalizer
from result_files import add_record_options, figure, record_path, write_result

RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]


def load_nci(repeat: int) -> list[str]:
    path = Path(rdkit.__file__).parent / "Data" / "NCI" / "first_5K.smi"
    base = [line.split()[0] for line in path.read_text().splitlines() if line.strip()]
    # Distinct spellings per repeat so the memo cannot help in the "distinct" case.
    out: list[str] = []
    for r in range(repeat):
        for s in base:
            mol = Chem.MolFromSmiles(s)
            if mol is None or r == 0:
                out.append(s)
            else:
                out.append(Chem.MolToSmiles(mol, doRandom=True, canonical=False))
    return out


def plain_loop(strings: list[str]) -> list[str | None]:
    out: list[str | None] = []
    for s in strings:
        mol = Chem.MolFromSmiles(s)
        out.append(None if mol is None else Chem.MolToSmiles(mol))
    return out


def timed(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=4, help="copies of the NCI 5K set")
    parser.add_argument("--rounds", type=int, default=5, help="best of N timings")
    add_record_options(parser)
    args = parser.parse_args()
    import random

    rng = random.Random(0)
    distinct = load_nci(args.repeat)
    half = distinct[: len(distinct) // 2]
    duplicated = half + half
    rng.shuffle(duplicated)

    # Rounds interleave the contenders so drift in machine load hits both alike; best of N.
    cases = {
        "plain": lambda: plain_loop(distinct),
        "serial": lambda: Canonicalizer("exact").many(distinct),
        "jobs2": lambda: Canonicalizer("exact").many(distinct, jobs=2, chunk_size=1024),
        "plain_dup": lambda: plain_loop(duplicated),
        "serial_dup": lambda: Canonicalizer("exact").many(duplicated),
    }
    best: dict[str, float] = {}
    results: dict[str, list[str | None]] = {}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            elapsed, out = timed(fn)
            best[name] = min(best.get(name, elapsed), elapsed)
            results[name] = out
    assert results["serial"] == results["plain"], "chemgauge and the plain loop disagree"
    assert results["jobs2"] == results["plain"]
    assert results["serial_dup"] == results["plain_dup"]
    t_plain, t_serial, t_jobs2 = best["plain"], best["serial"], best["jobs2"]
    t_plain_dup, t_serial_dup = best["plain_dup"], best["serial_dup"]

    print(f"# bench/canon.py  RDKit {rdkit.__version__}  Python {platform.python_version()}")
    print(f"# {os.cpu_count()} cores, {len(distinct)} strings ({args.repeat} x NCI 5K)")
    print(f"{'case':<44}{'plain s':>9}{'ours s':>9}{'speed-up':>10}{'target':>10}")
    rows = [
        ("serial, all distinct", t_plain, t_serial, "> 0.87"),
        ("2 jobs, all distinct", t_plain, t_jobs2, ">= 1.7"),
        ("serial, half duplicated", t_plain_dup, t_serial_dup, ">= 1.9"),
    ]
    for label, plain, ours_t, target in rows:
        print(f"{label:<44}{plain:>9.2f}{ours_t:>9.2f}{plain / ours_t:>9.2f}x{target:>10}")
    print(f"serial overhead vs plain loop: {t_serial / t_plain:.3f}x (target <= 1.15x)")
    path = record_path(args, "canon", full_size=args.repeat >= 4 and args.rounds >= 5)
    if path is not None:
        timings = f"best of {args.rounds} interleaved rounds"
        write_result(
            "canon",
            title="Canonicalization against a plain RDKit loop",
            method=(
                "chemgauge canon's machinery against a plain RDKit MolFromSmiles + "
                f"MolToSmiles loop on the same {len(distinct):,} strings ({args.repeat} x the "
                "NCI 5K set shipped in the rdkit wheel, random spellings so the memo cannot "
                f"help), {timings}; single runs of the same code spread by about +-10%."
            ),
            figures=[
                figure(
                    "canon",
                    "serial time / plain loop",
                    round(t_serial / t_plain, 2),
                    "x",
                    target="<= 1.15",
                    detail=f"{t_serial:.2f} s against {t_plain:.2f} s",
                ),
                figure(
                    "canon",
                    "--jobs 2 speed-up over the plain loop",
                    round(t_plain / t_jobs2, 2),
                    "x",
                    target=">= 1.7",
                    detail=f"{t_jobs2:.2f} s",
                ),
                figure(
                    "canon",
                    "half the strings duplicated, serial speed-up",
                    round(t_plain_dup / t_serial_dup, 2),
                    "x",
                    target=">= 1.9",
                    detail=f"{t_serial_dup:.2f} s against {t_plain_dup:.2f} s",
                ),
            ],
            path=path,
        )


if __name__ == "__main__":
    main()
