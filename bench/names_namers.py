"""The first open-namer board: Orthonym, openclatura and nispo on one fixed structure set,
scored by chemgauge, checked against Orthonym's own metric module.

The set is bench/data/names_namers.smi (1,000 distinct USPTO-50k test products and 766
structures of OPSIN's own test names; bench/names_namers_set.py writes it, its SHA-256 is
checked). Each namer names every structure through ``chemgauge names coverage --namer NAME``
in its own environment (``make namers``), the three runs side by side (``--jobs 1`` each).
Then orthonym.metrics.coverage_metrics (the seed's reference implementation) is run in
Orthonym's environment on every run's names with the same OPSIN read-backs
(bench/names_reference_check.py), and its counts must equal chemgauge's ``reference_parity``
and ``reference_strict`` counts exactly (the module's ``unparseable`` is chemgauge's
``unparseable`` plus ``opsin_error``). Last, ``chemgauge board`` ranks the three runs
(HTML, Markdown, JSON) into --out/board.

    .venv/bin/python bench/names_namers.py --out /tmp/names-namers
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from result_files import add_record_options, figure, load_average, record_path, write_result

REPO = Path(__file__).resolve().parents[1]
SET = REPO / "bench" / "data" / "names_namers.smi"
NAMERS = ("orthonym", "openclatura", "nispo")
LENSES = ("parity", "strict", "exact", "reference_parity", "reference_strict")
METRICS = ("coverage", "of_emitted_rt", "confidently_wrong", "unparseable", "abs_rt_valid")


def _checked_set() -> int:
    digest = hashlib.sha256(SET.read_bytes()).hexdigest()
    recorded = SET.with_suffix(".sha256").read_text().split()[0]
    if digest != recorded:
        sys.exit(f"{SET} changed: sha256 {digest}, recorded {recorded}")
    return sum(1 for line in SET.read_text().splitlines() if line.strip())


def _chemgauge(*args: str) -> list[str]:
    return [sys.executable, "-m", "chemgauge", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src")}


def _reference(run: Path) -> dict[str, Any]:
    sys.path.insert(0, str(REPO / "src"))
    from chemgauge.families.names.namer_envs import find_env

    python = find_env("orthonym").python
    done = subprocess.run(
        [
            str(python),
            "-I",
            str(REPO / "bench" / "names_reference_check.py"),
            str(run / "rows.jsonl"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout))


def _agreement(metrics: dict[str, Any], reference: dict[str, Any]) -> list[str]:
    """Where chemgauge's reference lenses and the module's aggregate disagree (empty: none)."""
    found = []
    for lens, matcher in (("reference_parity", "parity"), ("reference_strict", "strict")):
        ours = metrics["lenses"][lens]["counts"]
        theirs = reference[matcher]
        pairs = {
            "total": (metrics["total"], theirs["total"]),
            "covered": (metrics["emitted"], theirs["covered"]),
            "rt_valid": (ours["rt_valid"], theirs["rt_valid"]),
            "confidently_wrong": (ours["confidently_wrong"], theirs["confidently_wrong_count"]),
            "unparseable": (ours["unparseable"] + ours["opsin_error"], theirs["unparseable_count"]),
        }
        found += [f"{lens}.{k}: {a} != {b}" for k, (a, b) in pairs.items() if a != b]
    return found


def _pct(rate: dict[str, Any]) -> str:
    return "-" if rate["value"] is None else f"{100 * rate['value']:.1f}"


def table(results: dict[str, dict[str, Any]]) -> str:
    """The board as Markdown: each metric under each lens, per namer, and names per second."""
    head = "| namer | lens | " + " | ".join(METRICS) + " |"
    lines = [head, "|" + "---|" * (len(METRICS) + 2)]
    for namer, result in results.items():
        for lens in LENSES:
            block = result["metrics"]["lenses"][lens]
            cells = " | ".join(_pct(block[m]) for m in METRICS)
            lines.append(f"| {namer} | {lens} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/names-namers"))
    parser.add_argument("--reuse", action="store_true", help="keep finished namer runs")
    parser.add_argument("--limit", type=int, default=None, help="first N structures (a trial)")
    add_record_options(parser)
    args = parser.parse_args()
    count = _checked_set()
    source = SET
    if args.limit is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        source = args.out / "set.smi"
        source.write_text("".join(SET.read_text().splitlines(keepends=True)[: args.limit]))
        count = min(count, args.limit)
    load_before = load_average()
    args.out.mkdir(parents=True, exist_ok=True)
    procs, began = {}, {}
    for namer in NAMERS:
        if args.reuse and (args.out / namer / "report.json").is_file():
            continue
        began[namer] = time.perf_counter()
        command = ["names", "coverage", "--namer", namer, "--smiles", str(source)]
        command += ["--out", str(args.out / namer), "-j", "1", "-q", "--restart"]
        command += ["--reference-lenses"]  # the agreement check below needs them
        procs[namer] = subprocess.Popen(_chemgauge(*command), env=_env())
    wall: dict[str, float] = {}
    for namer, proc in procs.items():
        if proc.wait() != 0:
            sys.exit(f"{namer}: chemgauge names coverage exited {proc.returncode}")
        wall[namer] = time.perf_counter() - began[namer]
    results: dict[str, dict[str, Any]] = {}
    disagreements: list[str] = []
    for namer in NAMERS:
        report = json.loads((args.out / namer / "report.json").read_text())
        reference = _reference(args.out / namer)
        found = _agreement(report["metrics"], reference)
        disagreements += [f"{namer}: {d}" for d in found]
        results[namer] = {"metrics": report["metrics"], "timing": report["timing"]}
    board = args.out / "board"
    subprocess.run(
        _chemgauge("board", *(str(args.out / n) for n in NAMERS), "--out", str(board), "-q"),
        env=_env(),
        check=True,
    )
    markdown = table(results)
    print(markdown)
    print("reference module agreement:", disagreements if disagreements else "exact")
    figures = []
    for namer in NAMERS:
        metrics = results[namer]["metrics"]
        named_s = results[namer]["timing"]["load_s"]
        figures.append(
            figure("names", f"{namer}: structures named per second", round(count / named_s, 2),
                   "/s", detail=f"{count} structures in {named_s:.0f} s, namers run side by side")
        )  # fmt: skip
        for lens in LENSES:
            block = metrics["lenses"][lens]
            detail = ", ".join(f"{m} {_pct(block[m])}%" for m in METRICS[:-1])
            figures.append(
                figure("names", f"{namer}: abs_rt_valid ({lens})", _pct(block["abs_rt_valid"]),
                       "%", detail=detail)
            )  # fmt: skip
        differences = metrics["parity_reference_by_class"]
        figures.append(
            figure("names", f"{namer}: rows where parity and reference_parity differ",
                   sum(differences.values()), "rows",
                   detail=", ".join(f"{k}: {v}" for k, v in differences.items()) or "none")
        )  # fmt: skip
    figures.append(
        figure("names", "reference lens counts against orthonym.metrics.coverage_metrics",
               "identical" if not disagreements else "differ", target="== identical",
               detail="; ".join(disagreements)
               or f"{len(NAMERS)} namers x 2 matchers, {count} rows each")
    )  # fmt: skip
    (args.out / "table.md").write_text(markdown + "\n")
    target = record_path(args, "names_namers", full_size=args.limit is None)
    if target is not None:
        write_result(
            "names_namers",
            title="the open namers (Orthonym, openclatura, nispo) on one fixed set",
            method=(
                "chemgauge names coverage --namer NAME -j 1 --reference-lenses on "
                "bench/data/names_namers.smi "
                f"({count} structures: 1,000 distinct USPTO-50k test products and the "
                "structures of OPSIN's test names), the three namers run at once, each in its "
                "own environment with its defaults; orthonym.metrics.coverage_metrics run in "
                "Orthonym's environment on the same names and read-backs; chemgauge board of "
                "the three runs."
            ),
            figures=figures,
            load=f"{load_before} -> {load_average()}",
            path=target,
        )
    if disagreements:
        sys.exit(1)


if __name__ == "__main__":
    main()
