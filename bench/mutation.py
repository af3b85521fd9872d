"""Mutation score of the modules that produce published numbers (target: >= 90% per module).

Runs mutmut (3.x; configured in ``pyproject.toml``'s ``[tool.mutmut]``: the modules to mutate
and the fast unit tests that are the oracle, mutmut picking per mutant the tests that reach
its function), then reads every mutant's outcome back and scores each module:
killed / (mutants - equivalent), a timeout counting as killed. Equivalent mutants (no test
can tell them from the original) are listed in ``bench/mutation_equivalent.json`` with a
one-line reason each; a listed mutant that is killed or absent is reported, so the list cannot
go stale silently.

The verdicts do not depend on the machine's load or on a random draw: the oracle runs under
the derandomized Hypothesis profile (``HYPOTHESIS_PROFILE=ci``), and a mutant mutmut stopped
on its wall-clock timeout is judged again alone, by this script, under a CPU-time limit only
(ten times the CPU its tests take on the original code, at least 60 s; no wall clock): its
tests fail -> killed, pass -> survived, the CPU limit is hit -> timeout (killed: the mutant
loops or slows its tests tenfold, on any machine). A busy CI machine slows a run down; it
does not turn a survivor into a kill. Mutant names are mutmut's numbering, so the dev extras
pin mutmut's version: the equivalent list names the same mutants on every fresh clone.

    .venv/bin/python bench/mutation.py            # make mutation
    .venv/bin/python bench/mutation.py --reuse    # score the last run again (no mutmut run)
    .venv/bin/python bench/mutation.py --reuse --modules M
        # score module M from the last run again and record its figure (after the
        # equivalent list changed; the figure's command says --reuse)
    .venv/bin/python bench/mutation.py --modules chemgauge.families.names.metrics
        # mutate and score only these modules; their figures replace theirs in the result
        # file, the other modules' figures are kept (each says the date it was measured)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from result_files import figure, load_average, merge_figures, write_result

REPO = Path(__file__).resolve().parents[1]
MUTMUT = Path(sys.executable).with_name("mutmut")
TARGET = ">= 90"

# mutant name -> why no test can tell it from the original (kept beside this script)
EQUIVALENT: dict[str, str] = json.loads(
    (Path(__file__).with_name("mutation_equivalent.json")).read_text(encoding="utf-8")
)


def module_of(mutant: str) -> str:
    """``chemgauge.eval.stats.x_wilson_interval__mutmut_3`` -> ``chemgauge.eval.stats``."""
    return re.sub(r"\.x[_ǁ].*$", "", mutant)


def outcomes() -> dict[str, str]:
    """Every mutant's outcome from mutmut's record of the last run."""
    done = subprocess.run(
        [str(MUTMUT), "results", "--all", "true"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    found = {}
    for line in done.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name.startswith("chemgauge."):
            found[name] = status
    return found


# The oracle's Hypothesis profile (tests/conftest.py): one fixed, derandomized run.
ENV = {**os.environ, "HYPOTHESIS_PROFILE": "ci"}
CPU_FACTOR = 10  # a mutant may take this many times the original's CPU before it times out
CPU_FLOOR_S = 60


def tests_for(mutant: str) -> list[str]:
    """The oracle tests mutmut runs against ``mutant`` (those that reach its function)."""
    done = subprocess.run(
        [str(MUTMUT), "tests-for-mutant", mutant],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(line.strip() for line in done.stdout.splitlines() if "::" in line)


def _pytest_cpu(mutant: str, tests: list[str], cpu_limit: int | None) -> tuple[int, float]:
    """Run ``tests`` in mutants/ with ``mutant`` active (``""``: the original code) under a
    CPU-time limit and no wall clock: (exit code or -signal, CPU seconds the run took)."""

    def limit() -> None:  # in the child, before pytest starts
        if cpu_limit is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 1))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--rootdir=.", "--tb=no", "-x", "-q",
         "-p", "no:randomly", "-p", "no:cacheprovider", *tests],
        cwd=REPO / "mutants",
        env={**ENV, "MUTANT_UNDER_TEST": mutant},
        capture_output=True,
        preexec_fn=limit,
        check=False,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.returncode, cpu


def judge_alone(mutant: str) -> str:
    """``killed``, ``survived`` or ``timeout`` for one mutant, by CPU time alone."""
    tests = tests_for(mutant)
    code, cpu = _pytest_cpu("", tests, None)
    if code != 0:
        raise SystemExit(f"the oracle tests of {mutant} fail on the original code (exit {code})")
    code, _ = _pytest_cpu(mutant, tests, max(CPU_FLOOR_S, int(CPU_FACTOR * cpu) + 1))
    if code in (-9, -24):  # SIGKILL / SIGXCPU: the CPU limit
        return "timeout"
    if code in (4, 5):  # pytest's usage error / no tests collected: not a verdict
        raise SystemExit(f"pytest could not run the oracle tests of {mutant} (exit {code})")
    return "survived" if code == 0 else "killed"  # a failure or a crash the mutant caused


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reuse", action="store_true", help="score the last run again")
    parser.add_argument("--no-record", action="store_true", help="write no JSON result")
    parser.add_argument(
        "--modules",
        nargs="+",
        default=None,
        metavar="MODULE",
        help="dotted module names to mutate and score (default: every module in [tool.mutmut])",
    )
    parser.add_argument("--max-children", type=int, default=2, help="parallel mutmut children")
    args = parser.parse_args()
    load = load_average()
    seconds = None
    if not args.reuse:
        patterns = [f"{m}.*" for m in args.modules or ()]
        if not patterns:
            shutil.rmtree(REPO / "mutants", ignore_errors=True)  # a run from scratch
        started = time.monotonic()
        subprocess.run(
            [str(MUTMUT), "run", "--max-children", str(args.max_children), *patterns],
            cwd=REPO,
            env=ENV,
            check=True,
        )
        seconds = time.monotonic() - started
        print(f"mutmut run: {seconds / 60:.1f} min, load {load} at the start")
    found = outcomes()
    # mutmut's timeout is partly wall clock: on a loaded machine a mutant the tests cannot
    # tell apart can time out too. Each one is judged again alone, by CPU time only.
    # mutmut's "segfault" is also its hard CPU limit (SIGKILL), "suspicious" an odd exit.
    for name in sorted(n for n, s in found.items() if s in ("timeout", "segfault", "suspicious")):
        if args.modules and module_of(name) not in args.modules:
            continue
        stopped, found[name] = found[name], judge_alone(name)
        print(f"{stopped} under mutmut, judged alone by CPU time: {found[name]}: {name}")
    if args.modules:
        found = {n: s for n, s in found.items() if module_of(n) in args.modules}
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    for name, status in found.items():
        kind = "equivalent" if name in EQUIVALENT and status == "survived" else status
        by_module[module_of(name)][kind] += 1
    listed = [n for n in EQUIVALENT if not args.modules or module_of(n) in args.modules]
    stale = [n for n in listed if found.get(n) not in (None, "survived")]
    absent = [n for n in listed if n not in found]
    figures = []
    worst = 100.0
    for module, counts in sorted(by_module.items()):
        total = sum(counts.values())
        killed = counts["killed"] + counts["timeout"]
        scored = total - counts["equivalent"]
        score = 100.0 * killed / scored if scored else 100.0
        worst = min(worst, score)
        survivors = sorted(
            n
            for n, s in found.items()
            if module_of(n) == module and s != "killed" and s != "timeout" and n not in EQUIVALENT
        )
        print(
            f"{module}: {score:.1f}% ({killed} killed of {scored}; {counts['equivalent']} "
            f"equivalent, {total - killed - counts['equivalent']} surviving)"
        )
        for name in survivors:
            print(f"  survived: {name} ({found[name]})")
        figures.append(
            figure(
                "tests",
                f"mutation score, {module}",
                round(score, 1),
                "%",
                target=TARGET,
                detail=f"{killed} killed of {total} mutants, {counts['equivalent']} equivalent; "
                f"survivors: {', '.join(s.rpartition('.')[2] for s in survivors) or 'none'}",
            )
        )
    for name in stale:
        print(f"listed as equivalent but {found[name]}: {name}", file=sys.stderr)
    for name in absent:
        print(f"listed as equivalent but not generated: {name}", file=sys.stderr)
    if not args.no_record and (args.modules or not args.reuse):
        figures.sort(key=lambda f: str(f["name"]))
        method = (
            "mutmut 3 (src layout, pytest --import-mode=importlib, Python 3.11) over the modules "
            "in pyproject.toml's [tool.mutmut], the fast unit tests listed there as the oracle; "
            "score = killed / (mutants - equivalent). Equivalent mutants, one reason each: "
            + "; ".join(f"{n.rpartition('.')[2]}: {why}" for n, why in EQUIVALENT.items())
            + "."
        )
        if args.modules:  # these modules' figures replace theirs, each stamped with this run
            merge_figures("mutation", figures, load, method=method)
            return 0 if worst >= 90 and not stale else 1
        write_result(
            "mutation",
            title="Mutation score of the metric code",
            method=method
            + (f" The run took {seconds / 60:.1f} min on 2 cores." if seconds else ""),
            figures=figures,
            load=load,
            command="make mutation",
        )
    return 0 if worst >= 90 and not stale else 1


if __name__ == "__main__":
    sys.exit(main())
