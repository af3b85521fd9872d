"""Write bench/RESULTS.md from the bench scripts' JSON results (bench/results/*.json).

RESULTS.md opens with one table of every target, its current figure and whether it is met,
then one table per family with every figure (value, target, date, load, command), then each
bench's method. ``--check BENCH...`` exits 1 when a target of those benches is missed (what
``make bench`` runs after the quick scripts); ``--check-all`` checks every bench.

    .venv/bin/python bench/render_results.py                  # rewrite bench/RESULTS.md
    .venv/bin/python bench/render_results.py --check canon    # and fail on a missed target
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from result_files import FAMILIES, RESULTS_DIR, read_results, target_met

RESULTS_MD = Path(__file__).resolve().parent / "RESULTS.md"
_TITLES = {
    "canon": "Canonicalization (`chemgauge canon`)",
    "forward": "Forward prediction",
    "retro": "Single-step retrosynthesis",
    "names": "Names through OPSIN",
    "ocsr": "Image to structure (OCSR)",
    "p2s": "Property-grounded completion (p2s)",
    "board": "Boards of many runs (`chemgauge board`)",
    "tests": "Test suite (mutation score of the metric code)",
}


def _number(value: float) -> str:
    return f"{value:,}"  # as recorded: 1.0 stays 1.0, 2579 becomes 2,579


def format_value(value: float | str, unit: str = "") -> str:
    """A value with its unit: ``1.04x``, ``7.3%``, ``0.26 GB``, ``identical``."""
    text = value if isinstance(value, str) else _number(value)
    if not unit:
        return text
    return f"{text}{unit}" if unit in ("x", "%") else f"{text} {unit}"


def format_target(target: str, unit: str = "") -> str:
    """``>= 1.7`` with its unit, ``== yes`` as just ``yes``."""
    op, _, threshold = target.partition(" ")
    if op == "==":
        return threshold
    return f"{op.replace('<=', '≤').replace('>=', '≥')} {format_value(threshold, unit)}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _figures(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for result in results:
        for item in result["figures"]:
            merged = {k: result[k] for k in ("date", "load", "command", "machine", "bench")}
            out.append({**merged, **item})
    return out


def _met(item: Mapping[str, Any]) -> bool | None:
    target = item.get("target")
    return None if target is None else target_met(item["value"], target)


def _mark(met: bool | None) -> str:
    return "" if met is None else ("yes" if met else "**no**")


def _anchor(family: str) -> str:
    return _TITLES[family].lower().replace(" ", "-").translate(str.maketrans("", "", "()`"))


def render(results: Sequence[Mapping[str, Any]]) -> str:
    """The whole RESULTS.md page."""
    figures = _figures(results)
    unknown = sorted({f["family"] for f in figures} - set(FAMILIES))
    if unknown:
        raise ValueError(f"figures of unknown families: {unknown}")
    lines = [
        "# Measured results",
        "",
        "Written by `bench/render_results.py` from the JSON results the bench scripts write in",
        "`bench/results/` (do not edit by hand: rerun a script, or edit its JSON, then rerun the",
        "renderer). Each figure gives the date and the 1-minute load of its measurement and the",
        "command that printed it; on a shared 2-core machine wall-clock ratios move with the",
        "load, so figures taken under load are conservative. `make bench` reruns the quick",
        "scripts and fails when a target they measure is missed. Reliability figures are in",
        "[`RELIABILITY.md`](RELIABILITY.md).",
        "",
        "## Targets",
        "",
        "| family | figure | target | current | met |",
        "|---|---|---|---|---|",
    ]
    for family in FAMILIES:
        for item in figures:
            if item["family"] != family or "target" not in item:
                continue
            lines.append(
                f"| [{family}](#{_anchor(family)}) | {_cell(item['name'])} | "
                f"{_cell(format_target(item['target'], item.get('unit', '')))} | "
                f"{_cell(format_value(item['value'], item.get('unit', '')))} | "
                f"{_mark(_met(item))} |"
            )
    for family in FAMILIES:
        members = [f for f in figures if f["family"] == family]
        if not members:
            continue
        lines += [
            "",
            f"## {_TITLES[family]}",
            "",
            "| figure | value | target | met | detail | date | load | command |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for item in members:
            target = item.get("target")
            unit = item.get("unit", "")
            lines.append(
                "| "
                + " | ".join(
                    [
                        _cell(item["name"]),
                        _cell(format_value(item["value"], unit)),
                        "" if target is None else _cell(format_target(target, unit)),
                        _mark(_met(item)),
                        _cell(item.get("detail", "")),
                        _cell(str(item["date"])),
                        _cell(str(item["load"])),
                        f"`{_cell(item['command'])}`",
                    ]
                )
                + " |"
            )
        machines = sorted({str(f["machine"]) for f in members})
        lines += ["", "Machine: " + "; ".join(machines) + "."]
    lines += ["", "## Methods", ""]
    for result in results:
        lines += [
            f"**{result['title']}** (`{result['script']}`). {result['method']}",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def missed(results: Sequence[Mapping[str, Any]], benches: Sequence[str] | None) -> list[str]:
    """The targets missed by ``benches`` (all benches when ``None``), as printable lines."""
    known = {r["bench"] for r in results}
    if benches is not None:
        absent = sorted(set(benches) - known)
        if absent:
            raise SystemExit(f"no results for {', '.join(absent)} in {RESULTS_DIR}")
    out = []
    for item in _figures(results):
        if (benches is None or item["bench"] in benches) and _met(item) is False:
            out.append(
                f"{item['bench']}: {item['name']}: "
                f"{format_value(item['value'], item.get('unit', ''))}, target "
                f"{format_target(item['target'], item.get('unit', ''))}"
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="JSON results folder")
    parser.add_argument("--out", type=Path, default=RESULTS_MD, help="markdown to write")
    parser.add_argument("--check", nargs="+", metavar="BENCH", help="fail on their missed targets")
    parser.add_argument("--check-all", action="store_true", help="fail on any missed target")
    args = parser.parse_args(argv)
    results = read_results(args.results)
    page = render(results)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(page)
    tmp.replace(args.out)
    print(f"wrote {args.out} from {len(results)} result files", file=sys.stderr)
    if args.check or args.check_all:
        failures = missed(results, None if args.check_all else args.check)
        for line in failures:
            print(f"target missed: {line}", file=sys.stderr)
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
