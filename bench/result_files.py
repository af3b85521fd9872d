"""The JSON result files the bench scripts write, and what ``render_results.py`` reads.

One file per script, ``bench/results/<bench>.json``: the command that made it, when, on what
machine and under what load, a short method, and its figures. A figure has a name, a value
(a number with a unit, or a word such as ``identical``), the family it belongs to, and, when
the script has a target for it, the target as ``"<op> <threshold>"`` (``>= 1.7``, ``<= 15``,
``== yes``). A figure may carry its own date, load or command when it was measured apart.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
FAMILIES = ("canon", "forward", "retro", "names", "ocsr", "p2s", "board", "tests")
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
    "==": operator.eq,
}


def figure(
    family: str,
    name: str,
    value: float | str,
    unit: str = "",
    *,
    target: str | None = None,
    detail: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """One figure for a result file (``extra``: its own ``date``, ``load`` or ``command``)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; known: {', '.join(FAMILIES)}")
    if target is not None:
        target_met(value, target)  # a malformed target fails here, not when rendering
    out = {"family": family, "name": name, "value": value, "unit": unit}
    if target is not None:
        out["target"] = target
    if detail:
        out["detail"] = detail
    return {**out, **extra}


def peak_rss_figure(family: str, what: str, low_kib: int, high_kib: int) -> dict[str, Any]:
    """The scale figure: peak RSS at 100% of the input over 10%, target at most 1.2x."""
    return figure(
        family,
        f"{family} peak RSS, 100% over 10% ({what})",
        round(high_kib / low_kib, 2),
        "x",
        target="<= 1.2",
        detail=f"{low_kib / 1024:.0f} -> {high_kib / 1024:.0f} MiB",
    )


def target_met(value: float | str, target: str) -> bool:
    """Whether ``value`` meets ``target`` (``"<op> <threshold>"``)."""
    op, _, threshold = target.partition(" ")
    if op not in _OPS or not threshold:
        raise ValueError(f"target must be '<op> <threshold>' with op in {sorted(_OPS)}: {target!r}")
    if op == "==":
        return str(value) == threshold
    if isinstance(value, str):
        raise ValueError(f"target {target!r} needs a number, got {value!r}")
    return _OPS[op](float(value), float(threshold))


def machine() -> str:
    """Cores, memory and the versions that move the figures."""
    from rdkit import rdBase

    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages / 2**30:.0f} GiB"
    except (ValueError, OSError):
        memory = ""
    return (
        f"{os.cpu_count()} cores{memory}, RDKit {rdBase.rdkitVersion}, "
        f"Python {platform.python_version()}"
    )


def load_average() -> str:
    """The 1-minute load average now."""
    return f"{os.getloadavg()[0]:.1f}"


def write_result(
    bench: str,
    *,
    title: str,
    method: str,
    figures: Sequence[Mapping[str, Any]],
    load: str | None = None,
    command: str | None = None,
    path: Path | None = None,
    script: str | None = None,
) -> Path:
    """Write ``bench/results/<bench>.json`` (or ``path``) for a finished run; ``script`` is
    the script's name when it writes more than one result file (default: ``<bench>.py``)."""
    invoked = " ".join(["bench/" + Path(sys.argv[0]).name, *sys.argv[1:]])
    data = {
        "bench": bench,
        "title": title,
        "script": f"bench/{script or bench + '.py'}",
        "command": command or f"python {invoked}",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": machine(),
        "load": load if load is not None else load_average(),
        "method": method,
        "figures": [dict(f) for f in figures],
    }
    target = path if path is not None else RESULTS_DIR / f"{bench}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(target)
    print(f"results -> {target}", file=sys.stderr)
    return target


def add_record_options(parser: argparse.ArgumentParser) -> None:
    """``--results PATH`` and ``--no-record`` for a bench script's JSON result."""
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="JSON result file (default: bench/results/<bench>.json, full-size runs only)",
    )
    parser.add_argument("--no-record", action="store_true", help="write no JSON result")


def record_path(args: argparse.Namespace, bench: str, *, full_size: bool) -> Path | None:
    """Where to write this run's result: nowhere with ``--no-record``; ``--results`` if given;
    else ``bench/results/<bench>.json`` when the run used the full input (a smaller run must
    not replace the recorded figures)."""
    if args.no_record:
        return None
    if args.results is not None:
        return Path(args.results)
    return RESULTS_DIR / f"{bench}.json" if full_size else None


def read_results(folder: Path = RESULTS_DIR) -> list[dict[str, Any]]:
    """Every result file in ``folder``, by bench name."""
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def merge_figures(
    bench: str, figures: Sequence[Mapping[str, Any]], load: str, *, method: str | None = None
) -> Path:
    """Replace some figures of an existing ``bench/results/<bench>.json`` (a partial run, such
    as one family of several): each new figure says its own date, load and command, and the
    file's other figures and fields, which describe the run that measured them, are kept
    (``method`` replaces the method when the partial run changes what it says)."""
    target = RESULTS_DIR / f"{bench}.json"
    data = json.loads(target.read_text(encoding="utf-8"))
    if method is not None:
        data["method"] = method
    stamp = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "load": load,
        "command": "python " + " ".join(["bench/" + Path(sys.argv[0]).name, *sys.argv[1:]]),
    }
    fresh = {str(f["name"]): {**f, **stamp} for f in figures}
    kept = [fresh.pop(str(f["name"]), f) for f in data["figures"]]
    data["figures"] = kept + list(fresh.values())
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    tmp.replace(target)
    print(f"results (figures replaced) -> {target}", file=sys.stderr)
    return target
