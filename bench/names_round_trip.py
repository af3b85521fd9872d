"""End-to-end ``chemgauge names coverage`` on OPSIN's own test pairs: this checkout against a
baseline commit, side by side in one run.

The input is every name/InChI pair of OPSIN's test files whose InChI RDKit reads (1,047
pairs; SMILES from the InChI, read from ../shared/data, never copied). Each side runs the
real CLI with the real OPSIN in a fresh process (``--jobs 2 --restart -q``), in the order
baseline, new, new, baseline, ... so a change in machine load hits both sides alike. The
baseline is a ``git worktree`` of ``--baseline`` (by default commit 76b962b, whose parity
lens standardizes and tautomer-searches every structure) run with this venv's Python and
``PYTHONPATH=<worktree>/src``; the OPSIN jar and line server are the same for both.

Printed per side: the median wall time, the CPU seconds of the run and every process it
waited for (OPSIN JVMs, matching workers; a load-independent measure of the work) and the
1-minute load. Then the ratios, and the check that the classes under ``strict`` and
``exact`` are identical row by row (exit 1 if not); ``parity`` is expected to change (it
follows the metric contract now) and its transitions are counted.

Target: the new code at least 5x faster end to end than the baseline (wall, same run);
identical strict and exact classes.

    .venv/bin/python bench/names_round_trip.py                  # 3 runs a side, recorded
    .venv/bin/python bench/names_round_trip.py --repeats 5 --baseline 76b962b --no-record

A run of at least 2 repeats a side writes bench/results/names_round_trip.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rdkit import Chem, RDLogger

from result_files import add_record_options, figure, record_path, write_result

RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))
# A commit whose parity lens standardizes and tautomer-searches every structure.
BASELINE = "76b962b"


def build_input(path: Path) -> int:
    """Write OPSIN's readable name/InChI test pairs as JSONL; return how many."""
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for source in sorted((DATA / "opsin" / "name_to_inchi").glob("*.txt")):
            text = source.read_text(encoding="utf-8")
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip() or line.startswith(("//", "#")):
                    continue
                name, inchi = line.split("\t")[:2]
                mol = Chem.MolFromInchi(inchi)  # type: ignore[no-untyped-call]
                if mol is None or mol.GetNumAtoms() == 0:
                    continue
                record = {"id": f"{source.name}:{number}", "smiles": Chem.MolToSmiles(mol)}
                handle.write(json.dumps({**record, "name": name}) + "\n")
                count += 1
    return count


@dataclass(frozen=True)
class Timing:
    """One run: wall seconds, CPU seconds of it and its children, load before it."""

    wall_s: float
    cpu_s: float
    load: float


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def output_flags(src: Path, out: Path) -> list[str]:
    """The flags that put a run's rows and report into ``out`` for the code under ``src``:
    ``--out DIR`` now, ``--output-rows``/``--output-report`` before it (older baselines)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, "-m", "chemgauge", "names", "coverage", "--help"]
    shown = subprocess.run(command, env=env, capture_output=True, text=True, check=False).stdout
    if "--output-rows" in shown:
        return [
            "--output-rows",
            str(out / "rows.jsonl"),
            "--output-report",
            str(out / "report.json"),
        ]
    return ["--out", str(out)]


def run_side(src: Path, pairs: Path, out: Path, jobs: int) -> Timing:
    """Run ``names coverage`` from the package under ``src`` in a fresh process."""
    out.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "chemgauge", "names", "coverage", "-i", str(pairs)]
    command += output_flags(src, out)
    command += ["--jobs", str(jobs), "--restart", "-q"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    load = os.getloadavg()[0]
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{src}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return Timing(wall, _children_cpu() - cpu, load)


def classes(rows_file: Path) -> dict[str, dict[str, str]]:
    """Per id, the class under each lens."""
    out: dict[str, dict[str, str]] = {}
    for line in rows_file.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[row["id"]] = {lens: row[lens] for lens in ("parity", "strict", "exact")}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=BASELINE, help="commit to compare against")
    parser.add_argument("--repeats", type=int, default=3, help="runs per side")
    parser.add_argument("--jobs", type=int, default=2)
    add_record_options(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pairs = work / "pairs.jsonl"
        n = build_input(pairs)
        old_tree = work / "baseline"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(old_tree), args.baseline],
            check=True,
            capture_output=True,
        )
        try:
            sides = {"baseline": old_tree / "src", "new": REPO / "src"}
            print(
                f"# bench/names_round_trip.py  {n} pairs  --jobs {args.jobs}  "
                f"baseline {args.baseline}  {os.cpu_count()} cores",
                flush=True,
            )
            print(f"{'run':>4} {'side':<9} {'wall s':>8} {'CPU s':>8} {'load 1m':>8}", flush=True)
            timings: dict[str, list[Timing]] = {side: [] for side in sides}
            order = ["baseline", "new", "new", "baseline"]
            for index in range(2 * args.repeats):
                side = order[index % 4]
                timing = run_side(sides[side], pairs, work / side, args.jobs)
                timings[side].append(timing)
                print(
                    f"{index + 1:>4} {side:<9} {timing.wall_s:>8.1f} {timing.cpu_s:>8.1f} "
                    f"{timing.load:>8.2f}",
                    flush=True,
                )
            old = classes(work / "baseline" / "rows.jsonl")
            new = classes(work / "new" / "rows.jsonl")
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(old_tree)],
                check=False,
                capture_output=True,
            )
    wall = {side: statistics.median(t.wall_s for t in ts) for side, ts in timings.items()}
    cpu = {side: statistics.median(t.cpu_s for t in ts) for side, ts in timings.items()}
    print(
        f"median wall: baseline {wall['baseline']:.1f} s, new {wall['new']:.1f} s -> "
        f"{wall['baseline'] / wall['new']:.2f}x (target >= 5x); {n / wall['new']:.0f} pairs/s"
    )
    print(
        f"median CPU: baseline {cpu['baseline']:.1f} s, new {cpu['new']:.1f} s -> "
        f"{cpu['baseline'] / cpu['new']:.2f}x"
    )
    differ = {
        lens: sorted(i for i in old if old[i][lens] != new[i][lens]) for lens in ("strict", "exact")
    }
    moved = Counter(
        f"{old[i]['parity']} -> {new[i]['parity']}"
        for i in old
        if old[i]["parity"] != new[i]["parity"]
    )
    print(f"rows: {len(old)} baseline, {len(new)} new, same ids: {set(old) == set(new)}")
    for lens, ids in differ.items():
        print(f"{lens}: {len(ids)} rows classed differently {ids[:5]}")
    changes = ", ".join(f"{count} {move}" for move, count in sorted(moved.items())) or "none"
    print(f"parity changes: {changes}")
    same = set(old) == set(new) and not any(differ.values())
    loads = [t.load for ts in timings.values() for t in ts]
    path = record_path(args, "names_round_trip", full_size=args.repeats >= 2)
    if path is not None:
        detail = (
            f"median of {args.repeats}: baseline {args.baseline} {wall['baseline']:.1f} s, "
            f"this code {wall['new']:.1f} s"
        )
        write_result(
            "names_round_trip",
            title="names coverage end to end against a baseline commit",
            method=(
                f"chemgauge names coverage --jobs {args.jobs} with the real OPSIN on OPSIN's "
                f"{n:,} readable test pairs, this checkout against a git worktree of commit "
                f"{args.baseline} (whose parity lens standardizes and tautomer-searches every "
                "structure), runs interleaved baseline, new, new, baseline; wall time and the "
                "CPU seconds of each run and the processes it waited for; classes under "
                "strict and exact compared row by row."
            ),
            figures=[
                figure(
                    "names",
                    "names coverage end to end, baseline wall over this code's",
                    round(wall["baseline"] / wall["new"], 2),
                    "x",
                    target=">= 5",
                    detail=detail,
                ),
                figure(
                    "names",
                    "names coverage CPU, baseline over this code",
                    round(cpu["baseline"] / cpu["new"], 2),
                    "x",
                    detail=f"{cpu['baseline']:.1f} -> {cpu['new']:.1f} CPU s",
                ),
                figure(
                    "names",
                    "strict and exact classes against the baseline",
                    "identical" if same else "different",
                    target="== identical",
                    detail=f"{len(new):,} rows; parity: {changes}",
                ),
            ],
            load=f"{min(loads):.1f} -> {max(loads):.1f}",
            path=path,
        )
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
