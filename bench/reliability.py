"""Reliability figures per family: hostile inputs tried, uncaught exceptions, kills survived.

Run from the repository root: ``.venv/bin/python bench/reliability.py [--mutations N]
[--kills K] [--no-kills] [--no-seams] [--seams-only]``. Prints two tables (recorded in
``bench/RELIABILITY.md``). Targets: 0 uncaught, 0 tracebacks, 0 inputs clobbered, 0 orphans
after SIGTERM, 0 hangs, every kill resumed to identical rows.

- inputs: every landed reader gets every named hostile file (malformed JSON, wrong types,
  missing fields, invalid UTF-8, NUL bytes, a 10 MB line, empty, a directory, CRLF, BOM,
  deep nesting, ...) plus N seeded random byte mutations of a valid file. "uncaught" is any
  outcome other than loading (bad lines counted) or a chemgauge error naming the file.
  Readers: foundation, names, p2s, forward (rule files, corpus, template manifest), retro
  (SMI/CSV/JSONL data files, the ``predictions`` model file) and OCSR (manifest, attempts
  journal, image-set import with the hostile file as image or as reference; the image import
  also gets decompression bombs and absurd resolutions, which must be refused).
- chemistry: pathological molecules through every matcher; "uncaught" is an exception or a
  crashed child process (each item runs in a child so a segfault is counted, not fatal).
- kills: SIGKILL at random journal sizes, resume, then compare the final rows byte for byte
  with an uninterrupted run (names, p2s; forward benchmark, retro eval with the predictions
  model and an OCSR run with a Python recognizer, each also given torn journal lines).
- seams (``tests/reliability/seams.py``): every family's commands with outputs aliasing
  their inputs (path, symlink, hard link) or each other, a directory, FIFO or device as an
  output, a second run into locked outputs, an unreachable Ray address, and SIGTERM with
  children at work (forward, retro, names, ocsr, p2s build); counted: tracebacks, inputs
  clobbered, orphans, hangs, and cases without the expected one-line refusal.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "src")]

from tests.reliability.family_readers import all_readers, hostile_images  # noqa: E402
from tests.reliability.hostile import (  # noqa: E402
    hostile_contents,
    materialize,
    mutate,
    try_reader,
)
from tests.reliability.seams import SeamFigures, seam_campaign  # noqa: E402

PATHOLOGICAL = {
    "chain_10k_atoms": "C" * 10_000,
    "chain_20k_atoms": "C" * 20_000,
    "ring_chain_2k_rings": "".join("C1CC1" for _ in range(2000)),
    "polyamide_500": "CC(=O)N" * 500,
    "polyketone_200": "CC(=O)C" * 200,
    "polyguanidine_200": "NC(=N)N" * 200,
    "polyhydroxypyridine_50": "Oc1cc(O)nc(O)c1" * 50,
    "macrocycle_5k": "C1" + "C" * 5000 + "1",
    "hypervalent_if7": "FI(F)(F)(F)(F)(F)F",
    "xenon_octafluoride": "[Xe](F)(F)(F)(F)(F)(F)(F)F",
    "lone_surrogate": "C\ud800C",
    "nul_byte": "C\x00C",
    "text_1mb": "C" * 1_000_000,
}

_CHEM_CHILD = """
import sys, time
from chemgauge.chem import get_matcher, matcher_names
text = sys.stdin.read().encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
for policy in matcher_names():
    t = time.perf_counter()
    key = get_matcher(policy).key(text)
    print(policy, "key" if key else "none", f"{time.perf_counter() - t:.2f}", flush=True)
"""


def bench_inputs(mutations: int, work: Path) -> dict[str, list[int]]:
    """family -> [inputs tried, uncaught, refused with a chemgauge error]."""
    from tests.families.p2s.conftest import SOURCES, write_table

    from chemgauge.families.p2s.build import build_benchmark
    from chemgauge.families.p2s.config import BuildConfig
    from chemgauge.families.p2s.engine.properties import TableProvider

    sources = work / "sources.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    config = BuildConfig(directories=("dipole",), candidates=4, counterfactuals_per_record=1)
    write_table(sources, work / "table.jsonl", config)
    build_benchmark(sources, work / "data", TableProvider(work / "table.jsonl"), config)
    figures: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    failures: list[str] = []
    for reader in all_readers(work / "data"):
        started = time.perf_counter()
        folder = work / f"in_{reader.family}_{reader.name}"
        variants = list(hostile_contents(reader.valid).items())
        variants += [
            (f"mutation_{i}", mutate(reader.valid, i, 1 + i % 12)) for i in range(mutations)
        ]
        bombs = hostile_images() if reader.name == "import_image" else {}
        variants += list(bombs.items())
        for index, (variant, content) in enumerate(variants):
            path = materialize(folder / f"{index}_{variant}{reader.suffix}", content)
            names = None if reader.names_file else str(path.parent / f"data_{path.name}")
            outcome = try_reader(reader.read, path, names)
            row = figures[reader.family]
            row[0] += 1
            row[1] += outcome.kind == "uncaught"
            row[2] += outcome.kind == "refused"
            if outcome.kind == "uncaught" or (variant in bombs and outcome.kind != "refused"):
                failures.append(f"{reader.family}:{reader.name} {variant}: {outcome.detail[:150]}")
                row[1] += outcome.kind != "uncaught"  # a bomb that loaded counts as a failure
        seconds = time.perf_counter() - started
        print(f"  inputs {reader.family}:{reader.name}: {len(variants)} in {seconds:.1f} s",
              file=sys.stderr)  # fmt: skip
    for line in failures:
        print("UNCAUGHT", line, file=sys.stderr)
    return figures


def bench_chemistry() -> tuple[int, int, int, float]:
    """(items x policies tried, uncaught or crashed, keyless, slowest item seconds)."""
    tried = uncaught = keyless = 0
    slowest = 0.0
    for name, smiles in PATHOLOGICAL.items():
        done = subprocess.run(
            [sys.executable, "-c", _CHEM_CHILD],
            input=smiles.encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=1800,
            env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        )
        lines = done.stdout.decode().splitlines()
        tried += 6
        if done.returncode != 0 or len(lines) != 6:
            uncaught += 6 - len(lines)
            print(f"CHEMISTRY {name}: exit {done.returncode}", file=sys.stderr)
        for line in lines:
            _, status, seconds = line.split()
            keyless += status == "none"
            slowest = max(slowest, float(seconds))
        print(f"  chemistry {name}: {' '.join(lines)}", file=sys.stderr)
    return tried, uncaught, keyless, slowest


def bench_kills(kills: int, work: Path) -> dict[str, tuple[int, bool]]:
    """family -> (kills survived, final rows byte-identical)."""
    from tests.reliability.faults import NAMES_DRIVER, P2S_DRIVER, kill_and_resume, run_to_end
    from tests.reliability.test_kill_resume import _pairs

    out: dict[str, tuple[int, bool]] = {}
    pairs = work / "pairs.tsv"
    total = _pairs(pairs, 6)
    names_args = {
        tag: ["names", "coverage", "-i", str(pairs), "--out", str(work / tag), "-j", "1", "-q"]
        for tag in ("names_ref", "names_kill")
    }  # fmt: skip
    for tag in names_args:
        (work / tag).mkdir()
    run_to_end(NAMES_DRIVER, names_args["names_ref"])
    journal = work / "names_kill" / "rows.jsonl.journal"
    report = kill_and_resume(NAMES_DRIVER, names_args["names_kill"], [journal], total, kills, 101)
    same = (work / "names_ref" / "rows.jsonl").read_bytes() == (
        work / "names_kill" / "rows.jsonl"
    ).read_bytes()
    out["names"] = (report.kills, same)

    def p2s_args(tag: str) -> list[str]:
        return ["p2s", "run", str(work / "data"), "-m", "random", "-o", str(work / tag),
                "--batch-size", "1", "--seed", "5", "-q"]  # fmt: skip

    run_to_end(P2S_DRIVER, p2s_args("p2s_ref"))
    finals = [p.relative_to(work / "p2s_ref") for p in (work / "p2s_ref").rglob("*.jsonl")]
    finals = [p for p in finals if not p.name.endswith(".journal.jsonl")]
    views = [p for p in finals if p.name != "rows.jsonl"]  # journaled per view
    rows = sum(len((work / "p2s_ref" / p).read_bytes().splitlines()) for p in views)
    journals = [work / "p2s_kill" / p.with_name(p.stem + ".journal.jsonl") for p in views]
    report = kill_and_resume(P2S_DRIVER, p2s_args("p2s_kill"), journals, rows, kills, 202)
    same = all(
        (work / "p2s_ref" / p).read_bytes() == (work / "p2s_kill" / p).read_bytes() for p in finals
    )
    out["p2s"] = (report.kills, same)

    from tests.reliability import campaigns

    for family, seed in (("forward", 303), ("retro", 404), ("ocsr", 505)):
        started = time.perf_counter()
        campaign = getattr(campaigns, f"{family}_campaign")(work / f"{family}_kills", kills, seed)
        out[family] = (campaign.report.kills, campaign.all_identical)
        print(f"  kills {family}: {campaign.items} items, {campaign.report}, "
              f"{campaign.identical}, duplicates {campaign.duplicate_ids}, missing "
              f"{campaign.missing_ids}, {time.perf_counter() - started:.0f} s",
              file=sys.stderr)  # fmt: skip
    return out


def print_seams(seams: dict[str, SeamFigures]) -> None:
    """The seams table, then every case that did not end as expected."""
    print(f"{'family':<10}{'cases':>7}{'tracebacks':>12}{'clobbered':>11}{'orphans':>9}"
          f"{'hangs':>7}{'unexpected':>12}")  # fmt: skip
    for family, row in seams.items():
        print(f"{family:<10}{row.cases:>7}{row.tracebacks:>12}{row.clobbered:>11}"
              f"{row.orphans:>9}{row.hangs:>7}{len(row.unexpected):>12}")  # fmt: skip
    for row in seams.values():
        for line in row.unexpected:
            print("UNEXPECTED", line, file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=200, help="random mutations per reader")
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--no-kills", action="store_true")
    parser.add_argument("--no-seams", action="store_true")
    parser.add_argument("--seams-only", action="store_true", help="only the seams campaign")
    args = parser.parse_args()
    started = time.perf_counter()
    load = os.getloadavg()
    print(f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on "
          f"{os.cpu_count()} cores", file=sys.stderr)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="chemgauge-reliability-") as tmp:
        work = Path(tmp)
        seams = {} if args.no_seams else seam_campaign(work / "seams")
        if seams:
            print_seams(seams)
        if args.seams_only:
            return
        inputs = bench_inputs(args.mutations, work)
        chem = bench_chemistry()
        kills = {} if args.no_kills else bench_kills(args.kills, work)
    print(f"{'family':<12}{'inputs tried':>14}{'uncaught':>10}{'refused':>9}{'kills':>8}"
          f"{'rows identical':>16}")  # fmt: skip
    for family in sorted(set(inputs) | set(kills)):
        tried, uncaught, refused = inputs.get(family, [0, 0, 0])
        killed, same = kills.get(family, (0, True))
        k = f"{killed}/{args.kills}" if family in kills else "n/a"
        s = ("yes" if same else "NO") if family in kills else "n/a"
        print(f"{family:<12}{tried:>14}{uncaught:>10}{refused:>9}{k:>8}{s:>16}")
    tried, uncaught, keyless, slowest = chem
    print(f"{'chemistry':<12}{tried:>14}{uncaught:>10}{keyless:>9}{'n/a':>8}{'n/a':>16}"
          f"   (keyless = refused or no key; slowest item {slowest:.1f} s)")  # fmt: skip
    load = os.getloadavg()
    print(f"total {time.perf_counter() - started:.0f} s; load average at end {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}", file=sys.stderr)  # fmt: skip


if __name__ == "__main__":
    main()
