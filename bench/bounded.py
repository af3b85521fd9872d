"""Bounded by construction: hostile sizes, flags, encodings and kills, tallied.

Run from the repository root: ``.venv/bin/python bench/bounded.py [--no-kills]``. Prints one
Markdown table (recorded in ``bench/RELIABILITY.md``): cases, tracebacks, data lost, hangs,
orphans after SIGKILL and misleading messages, each of which must be 0.

- cases: one command each (a molecule of 10,000 ring atoms, a record of 2,999 accepted
  products, ``--jobs 100000``, seeds out of range, UTF-16 inputs, a repeated JSON key, a
  file with lines and no record, a run compared with itself, a board piped and one with a
  hostile run name, a report whose recorded rows file escapes the run folder, ``-q`` on a
  local Ray cluster, a p2s task file linked to a file outside its data folder, a newline in
  a file name, dummy-atom retro predictions). "Misleading" is a case that did not end with
  its expected status and message (for example exit 0 with 0 rows, or a message naming a
  Python class); "hang" one that ran past 120 s; "data lost" a counted line missing from
  the totals.
- kills: every family's run SIGKILLed with its children at work (``tests/reliability/
  stops.py``: forward on a pool and on a local Ray cluster, retro, names with OPSIN JVMs,
  an OCSR run with recognizer commands, p2s build); "orphans" counts any process of the run
  alive 10 s later, "data lost" a run that did not resume to a run that verifies.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "src")]

from tests.reliability.commands import DEMO, run_cli  # noqa: E402

TIMEOUT_S = 120.0


@dataclass
class Case:
    """One hostile command and what an honest answer looks like."""

    name: str
    argv: Callable[[Path], list[str]]
    status: int
    stderr_has: tuple[str, ...] = ()
    check: Callable[[Path, subprocess.CompletedProcess[str]], bool] | None = None


def _cli(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return run_cli(argv, timeout=TIMEOUT_S)


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


def _ring(work: Path) -> list[str]:
    return ["canon", str(_write(work / "ring.smi", "C1" + "C" * 9998 + "1\n")), "-p", "parity"]


def _products(work: Path) -> list[str]:
    record = {"schema_version": 1, "reaction_id": "huge", "reactants": ["CCO"],
              "accepted_products": [[f"C{'C' * (i % 40)}O"] for i in range(2999)]}  # fmt: skip
    corpus = _write(work / "huge.jsonl", json.dumps(record) + "\n" + DEMO.read_text())
    return ["forward", "benchmark", "--corpus", str(corpus), "--out", str(work / "h"), "--json"]


def _counted(key: str, extra: int) -> Callable[[Path, subprocess.CompletedProcess[str]], bool]:
    def check(work: Path, done: subprocess.CompletedProcess[str]) -> bool:
        stats = json.loads(done.stdout)["metrics"]["corpus"]["stats"]
        rest = sum(v for k, v in stats.items() if k not in ("lines_read", "blank_lines"))
        return bool(stats[key] >= extra and stats["lines_read"] == stats["blank_lines"] + rest)

    return check


def _repeated_key(work: Path) -> list[str]:
    lines = DEMO.read_text().splitlines()
    corpus = _write(work / "dup.jsonl", "\n".join([lines[0][:-1] + ', "reactants": ["C"]}',
                                                   *lines[1:]]) + "\n")  # fmt: skip
    return ["forward", "benchmark", "--corpus", str(corpus), "--out", str(work / "d"), "--json"]


def _run(work: Path, name: str = "run") -> Path:
    out = work / name
    if not (out / "report.json").exists():
        done = _cli(["forward", "benchmark", "--out", str(out), "-q"])
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
    return out


def _escaped_run(work: Path) -> Path:
    out = work / "r<img src=x onerror=alert(1)>|[x](javascript:alert(1))"
    return _run(work, out.name)


def _escaping_rows(work: Path) -> Path:
    out = _run(work, "escape")
    _write(work / "secret.jsonl", '{"password": "hunter2"}\n')
    report = out / "report.json"
    envelope = json.loads(report.read_text())
    envelope["rows_file"] = "../secret.jsonl"
    report.write_text(json.dumps(envelope))
    return out


def _no_markup(work: Path, done: subprocess.CompletedProcess[str]) -> bool:
    return (
        "<img" not in done.stdout and "](javascript" not in done.stdout and "┃" not in done.stdout
    )


def _silent(work: Path, done: subprocess.CompletedProcess[str]) -> bool:
    return done.stdout == "" and done.stderr == ""


def _linked_task_file(work: Path) -> list[str]:
    data = work / "p2s-linked" / "dipole"
    data.mkdir(parents=True, exist_ok=True)
    secret = _write(work / "secret.txt", SECRET + "\n")
    link = data / "correct.jsonl"
    if not link.is_symlink():
        link.symlink_to(secret)
    return ["p2s", "tasks", str(data.parent)]


def _unquoted(work: Path, done: subprocess.CompletedProcess[str]) -> bool:
    return SECRET not in done.stdout + done.stderr


def _newline_name(work: Path) -> list[str]:
    return ["canon", str(work / "two\nlines.smi")]


def _one_line(work: Path, done: subprocess.CompletedProcess[str]) -> bool:
    return len(done.stderr.strip().splitlines()) == 1


def _dummy_atoms(work: Path) -> list[str]:
    data = work / "retro-dummy"
    _write(data / "data" / "test.smi", "CC(=O)O.CN>>CNC(C)=O\n")
    outputs = {"product": "CNC(C)=O", "predictions": ["*", "[*:1]C.CC(=O)O", "CN.CC(=O)O"]}
    _write(data / "predictions.jsonl", json.dumps(outputs) + "\n")
    model = f"model_dir={data / 'predictions.jsonl'}"
    return ["retro", "eval", f"data_dir={data / 'data'}", "model_class=predictions", model,
            "--out", str(data / "run"), "-q"]  # fmt: skip


def _dummy_invalid(work: Path, done: subprocess.CompletedProcess[str]) -> bool:
    rows = (work / "retro-dummy" / "run" / "rows.jsonl").read_text().splitlines()
    row = json.loads(rows[0])
    return bool(row["invalid_reasons"] == ["dummy_atom", "dummy_atom"])


SECRET = "root:x:0:0:a line no diagnostic may quote"


CASES = [
    Case("10,000-atom ring, canon parity", _ring, 0, ("over the limit of 5,000",)),
    Case("2,999 accepted products", _products, 0, (), _counted("record_too_large", 1)),
    Case(
        "--jobs 100000",
        lambda w: ["canon", str(_write(w / "m.smi", "CCO\n")), "--jobs", "100000"],
        2,
        ("--jobs must be between",),
    ),
    Case(
        "--jobs -1",
        lambda w: ["canon", str(_write(w / "m.smi", "CCO\n")), "--jobs", "-1"],
        2,
        ("--jobs must be between",),
    ),
    Case(
        "forward --seed -1",
        lambda w: ["forward", "benchmark", "--out", str(w / "s1"), "--seed", "-1"],
        2,
        ("--seed",),
    ),
    Case(
        "forward --seed 10^24",
        lambda w: ["forward", "benchmark", "--out", str(w / "s2"), "--seed", "1" + "0" * 24],
        2,
        ("--seed",),
    ),
    Case(
        "compare --seed -1",
        lambda w: ["compare", str(_run(w)), str(_run(w)), "--seed", "-1"],
        2,
        ("--seed",),
    ),
    Case("board --seed -1", lambda w: ["board", str(_run(w)), "--seed", "-1"], 2, ("--seed",)),
    Case(
        "UTF-16 corpus",
        lambda w: [
            "forward",
            "benchmark",
            "--corpus",
            str(_write(w / "u16.jsonl", DEMO.read_text().encode("utf-16"))),
            "--out",
            str(w / "u"),
        ],
        2,
        ("UTF-16 (little-endian) text, not UTF-8",),
    ),
    Case(
        "UTF-16 p2s predictions",
        lambda w: [
            "p2s",
            "score",
            "--property",
            "dipole",
            "--condition",
            "correct",
            "--predictions",
            str(
                _write(
                    w / "p.jsonl",
                    '{"record_id": "x", "selected_candidate_index": 0}\n'.encode("utf-16-le"),
                )
            ),
        ],
        2,
        ("UTF-16 (little-endian)",),
    ),
    Case("repeated JSON key", _repeated_key, 0, (), _counted("malformed_json", 2)),
    Case(
        "lines but no record",
        lambda w: [
            "forward",
            "benchmark",
            "--corpus",
            str(_write(w / "c.csv", "reactants,products\nCCO,CC=O\n")),
            "--out",
            str(w / "n"),
        ],
        2,
        ("no record could be read",),
    ),
    Case(
        "compare a run with itself",
        lambda w: ["compare", str(_run(w)), str(_run(w)), "-q"],
        0,
        ("A and B are the same run",),
    ),
    Case(
        "board piped, hostile run name",
        lambda w: ["board", str(_escaped_run(w))],
        0,
        (),
        _no_markup,
    ),
    Case(
        "report: rows_file outside the run",
        lambda w: ["report", str(_escaping_rows(w))],
        2,
        ("outside the run folder",),
    ),
    Case(
        "verify: rows_file outside the run",
        lambda w: ["verify", str(_escaping_rows(w))],
        2,
        ("outside the run folder",),
    ),
    Case(
        "-q on a local Ray cluster",
        lambda w: [
            "forward",
            "benchmark",
            "--out",
            str(w / "ray"),
            "--executor",
            "ray",
            "--jobs",
            "1",
            "-q",
        ],
        0,
        (),
        _silent,
    ),
    Case(
        "p2s tasks: a task file linked out of the data folder",
        _linked_task_file,
        2,
        ("outside the data folder",),
        _unquoted,
    ),
    Case("canon: a newline in a file name", _newline_name, 3, ("two\\x0alines.smi",), _one_line),
    Case("retro: dummy-atom predictions", _dummy_atoms, 0, (), _dummy_invalid),
]


def run_cases(work: Path) -> dict[str, int]:
    """The tally over :data:`CASES`, printing each misleading case."""
    tally = {"cases": 0, "tracebacks": 0, "data lost": 0, "hangs": 0, "misleading": 0}
    for case in CASES:
        tally["cases"] += 1
        try:
            done = _cli(case.argv(work))
        except subprocess.TimeoutExpired:
            tally["hangs"] += 1
            print(f"hang: {case.name}", file=sys.stderr)
            continue
        if "Traceback" in done.stderr:
            tally["tracebacks"] += 1
        honest = done.returncode == case.status and all(s in done.stderr for s in case.stderr_has)
        if honest and case.check is not None:
            try:
                honest = case.check(work, done)
            except (ValueError, KeyError):
                honest = False
            if not honest and case.check.__name__ == "check":
                tally["data lost"] += 1
        if not honest:
            tally["misleading"] += 1
            print(f"misleading: {case.name}: exit {done.returncode}: {done.stderr[-300:]}",
                  file=sys.stderr)  # fmt: skip
    return tally


def run_kills(work: Path) -> tuple[int, int, int]:
    """(runs killed, orphans left, runs that did not resume to a verified run)."""
    import signal

    from tests.reliability import stops

    for name in ("kf", "kr", "kt", "kn", "ko", "kp"):
        (work / name).mkdir(parents=True, exist_ok=True)
    scenarios = [
        stops.forward_scenario(work / "kf"),
        stops.forward_scenario(work / "kr", executor="ray"),
        stops.retro_scenario(work / "kt"),
        stops.names_scenario(work / "kn"),
        stops.ocsr_scenario(work / "ko"),
        stops.p2s_build_scenario(work / "kp"),
    ]
    orphans = lost = 0
    for scenario in scenarios:
        result = stops.stop_run(scenario, signal.SIGKILL)
        orphans += len(result.survivors)
        lost += 0 if result.resumed else 1
        print(f"{result.family}: {result.children_at_stop} children at the kill, "
              f"{len(result.survivors)} alive 10 s later", file=sys.stderr)  # fmt: skip
    return len(scenarios), orphans, lost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-kills", action="store_true", help="skip the SIGKILL campaign")
    args = parser.parse_args()
    started = time.time()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tally = run_cases(Path(tmp) / "cases")
        killed, orphans, lost = (0, 0, 0) if args.no_kills else run_kills(Path(tmp) / "kills")
    print(f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
          f"{time.time() - started:.0f} s")  # fmt: skip
    print()
    print("| cases | tracebacks | data lost | hangs | orphans after SIGKILL | misleading |")
    print("|---:|---:|---:|---:|---:|---:|")
    cases = f"{tally['cases']} + {killed} kills"
    print(f"| {cases} | {tally['tracebacks']} | {tally['data lost'] + lost} | {tally['hangs']} "
          f"| {orphans} | {tally['misleading']} |")  # fmt: skip


if __name__ == "__main__":
    main()
