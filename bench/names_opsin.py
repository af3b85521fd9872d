"""Time chemgauge's persistent OPSIN runner against py2opsin on OPSIN's own test names.

py2opsin (same jar) is what a user would otherwise pick: its batch mode starts one
JVM per call on a temporary file, its per-name mode one JVM per name. We report
start-up, a cold first pass (JIT not warm), the best warm pass, and ratios; the
answers of every method are checked against each other so speed never hides a
wrong alignment. Targets: at least 300x py2opsin's per-name throughput, and at least 2x
its batch throughput with the JVMs warm (one cold list, which measures the JVM start and a
cold JIT, is reported without a target; bench/names_speed.py times whole runs). Writes
bench/results/names_opsin.json on a full run (see bench/render_results.py).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from py2opsin import py2opsin

from chemgauge.families.names.engine.runner import OpsinConfig, OpsinRunner
from result_files import add_record_options, figure, record_path, write_result

T = TypeVar("T")
SINGLE_CALLS = 300
DEFAULT_PAIRS = Path(__file__).resolve().parents[1].parent / "shared/data/opsin/name_to_inchi"


def load_names(folder: Path) -> list[str]:
    """Distinct names of OPSIN's name-to-InChI test files, in file order."""
    names: dict[str, None] = {}
    for path in sorted(folder.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                names.setdefault(line.split("\t")[0], None)
    return list(names)


@contextlib.contextmanager
def scratch_dir() -> Iterator[None]:
    """Run py2opsin in a private folder: its temp file has a fixed name in the cwd."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(here)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


@dataclass(frozen=True)
class RunnerTiming:
    """Seconds for start-up, the cold first pass and the best warm pass, plus the answers."""

    startup: float
    jvm_startup: float
    cold: float
    warm: float
    single: float
    answers: list[str | None]
    restarts: int


def run_ours(names: list[str], config: OpsinConfig, passes: int) -> RunnerTiming:
    """Time one runner configuration on the names."""
    runner = OpsinRunner(config)
    startup, _ = timed(runner.start)
    try:
        cold, _ = timed(lambda: runner.names_to_smiles(names))
        warm = [timed(lambda: runner.names_to_smiles(names)) for _ in range(passes)]
        single, _ = timed(lambda: [runner.name_to_smiles(n) for n in names[:SINGLE_CALLS]])
        stats = runner.stats()
    finally:
        runner.close()
    return RunnerTiming(
        startup=startup,
        jvm_startup=max(stats.startup_s[: config.jvms]),
        cold=cold,
        warm=min(seconds for seconds, _ in warm),
        single=single,
        answers=[r.smiles for r in warm[-1][1]],
        restarts=stats.starts - config.jvms,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS, help="name_to_inchi folder")
    parser.add_argument("--passes", type=int, default=8, help="warm passes per configuration")
    parser.add_argument("--sample", type=int, default=8, help="names for py2opsin per-name")
    add_record_options(parser)
    args = parser.parse_args()

    names = load_names(args.pairs)
    print(f"{len(names)} distinct OPSIN test names; {platform.platform()}; {os.cpu_count()} CPUs")
    warnings.simplefilter("ignore")  # py2opsin warns on every OPSIN stderr line

    with scratch_dir():
        batch_s, batch = timed(lambda: py2opsin(names, tmp_fpath="py2opsin_bench.txt"))
        sample = names[: args.sample]
        per_name_s, _ = timed(lambda: [py2opsin(n, tmp_fpath="py2opsin_bench.txt") for n in sample])
    batch_answers = [smiles or None for smiles in batch]
    per_name_rate = len(sample) / per_name_s
    batch_rate = len(names) / batch_s

    rows: list[tuple[str, float, str]] = [
        ("py2opsin per name (JVM per call)", per_name_rate, f"{len(sample)} names"),
        ("py2opsin batch (one JVM, temp file)", batch_rate, "incl. JVM start"),
    ]
    rates: dict[tuple[str, int, str], float] = {}
    agreement: list[int] = []
    for mode in ("server", "cli"):
        for jvms in (1, 2):
            ours = run_ours(names, OpsinConfig(mode=mode, jvms=jvms), args.passes)
            agree = sum(a == b for a, b in zip(ours.answers, batch_answers, strict=True))
            agreement.append(agree)
            rates[mode, jvms, "cold"] = len(names) / (ours.startup + ours.cold)
            rates[mode, jvms, "warm"] = len(names) / ours.warm
            label = f"chemgauge {mode}, {jvms} JVM"
            note = f"start {ours.startup:.2f} s (JVM {ours.jvm_startup:.2f} s); "
            note += f"agrees {agree}/{len(names)}"
            if ours.restarts:
                note += f"; {ours.restarts} restarts"
            rows.append((f"{label}: start+cold", len(names) / (ours.startup + ours.cold), note))
            rows.append((f"{label}: warm", len(names) / ours.warm, ""))
            if jvms == 1:
                single_rate = SINGLE_CALLS / ours.single
                note = f"{1000 / single_rate:.2f} ms a call"
                rows.append((f"{label}: one name per call", single_rate, note))

    print(f"{'method':<42} {'names/s':>9} {'x per-name':>11} {'x batch':>8}  note")
    for label, rate, note in rows:
        print(
            f"{label:<42} {rate:>9.1f} {rate / per_name_rate:>11.0f} "
            f"{rate / batch_rate:>8.2f}  {note}"
        )
    path = record_path(args, "names_opsin", full_size=args.pairs == DEFAULT_PAIRS)
    if path is not None:
        warm, cold = rates["server", 2, "warm"], rates["server", 2, "cold"]
        write_result(
            "names_opsin",
            title="OPSIN through chemgauge's persistent runner against py2opsin",
            method=(
                f"OPSIN's {len(names):,} distinct test names through chemgauge's persistent "
                "OPSIN server (1 and 2 JVMs) and through py2opsin with the same jar, per name "
                "and as one batch. Start-up, a cold first pass and the best of "
                f"{args.passes} warm passes are timed; every method's answers are checked "
                f"against py2opsin's (lowest agreement {min(agreement):,}/{len(names):,})."
            ),
            figures=[
                figure(
                    "names",
                    "throughput over py2opsin one name per call",
                    round(warm / per_name_rate),
                    "x",
                    target=">= 300",
                    detail=f"2 JVMs warm: {warm:,.1f} names/s; py2opsin {per_name_rate:.1f}",
                ),
                figure(
                    "names",
                    "throughput over py2opsin batch, JVMs warm",
                    round(warm / batch_rate, 2),
                    "x",
                    target=">= 2",
                    detail=f"py2opsin batch {batch_rate:,.1f} names/s including its JVM start",
                ),
                figure(
                    "names",
                    "throughput over py2opsin batch, one cold list (JVM start + cold JIT)",
                    round(cold / batch_rate, 2),
                    "x",
                    detail=f"2 JVMs; 1 JVM: {rates['server', 1, 'cold'] / batch_rate:.2f}x",
                ),
            ],
            path=path,
        )


if __name__ == "__main__":
    main()
