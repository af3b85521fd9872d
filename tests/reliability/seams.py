"""The seams campaign: every family's commands given outputs that alias their inputs or each
other, special files as outputs, a second run into locked outputs, an unreachable Ray
cluster, and SIGTERM with children at work. Counted per family: cases tried, tracebacks,
inputs clobbered, orphans left after SIGTERM, hangs (no answer within the deadline), and
cases whose exit status or message was not the expected one-line refusal.

Used by ``bench/reliability.py``; the behaviours themselves are asserted by
``test_outputs.py``, ``test_ray_deadline.py`` and ``test_signals.py``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "src" / "chemgauge" / "families" / "forward" / "data" / "demo_corpus.jsonl"
DEADLINE_S = 300.0
UNREACHABLE = "127.0.0.1:1"


@dataclass
class SeamFigures:
    """One family's counts."""

    cases: int = 0
    tracebacks: int = 0
    clobbered: int = 0
    orphans: int = 0
    hangs: int = 0
    unexpected: list[str] = field(default_factory=list)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    except OSError:
        return None


def run_case(
    figures: SeamFigures,
    label: str,
    args: list[str],
    inputs: list[Path],
    expected: int = 2,
    fragment: str = "",
    env: dict[str, str] | None = None,
) -> None:
    """Run one command and count what went wrong (a refusal is one ``error:`` line)."""
    before = {path: _digest(path) for path in inputs}
    figures.cases += 1
    try:
        done = subprocess.run(
            [sys.executable, "-m", "chemgauge", *args],
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
            check=False,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except subprocess.TimeoutExpired:
        figures.hangs += 1
        figures.unexpected.append(f"{label}: no answer within {DEADLINE_S:.0f} s")
        return
    figures.tracebacks += "Traceback" in done.stderr
    changed = [p.name for p, digest in before.items() if _digest(p) != digest]
    figures.clobbered += len(changed)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    ok = done.returncode == expected and not changed
    if expected == 2:
        ok = ok and len(errors) == 1 and fragment in errors[0]
    if not ok:
        detail = (errors or done.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        figures.unexpected.append(f"{label}: exit {done.returncode}: {detail[:200]}")


def _special_outputs(work: Path) -> dict[str, Path]:
    """Paths no output may replace: a directory, a FIFO, a device, the terminal's stdout."""
    folder = work / "a-directory"
    folder.mkdir(exist_ok=True)
    fifo = work / "a-fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    return {"directory": folder, "fifo": fifo, "/dev/null": Path("/dev/null")}


def _file_outputs(
    figures: SeamFigures,
    family: str,
    command: Callable[[dict[str, Path]], list[str]],
    outputs: dict[str, Path],
    inputs: list[Path],
    work: Path,
) -> None:
    """Each file output set to each input (by path, symlink, hard link), to another output,
    and to each special file."""
    for option in outputs:
        for source in inputs:
            link = work / f"link-{option.strip('-')}-{source.name}"
            hard = work / f"hard-{option.strip('-')}-{source.name}"
            for name, path in (("path", source), ("symlink", link), ("hard link", hard)):
                if name == "symlink" and not link.exists():
                    link.symlink_to(source)
                if name == "hard link" and not hard.exists():
                    os.link(source, hard)
                chosen = {**outputs, option: path}
                label = f"{family} {option} = input {source.name} ({name})"
                run_case(figures, label, command(chosen), inputs, fragment="same file as")
        for other in outputs:
            if other != option:
                chosen = {**outputs, option: outputs[other]}
                label = f"{family} {option} = {other}"
                run_case(figures, label, command(chosen), inputs, fragment="same file as")
        for name, special in _special_outputs(work).items():
            chosen = {**outputs, option: special}
            run_case(figures, f"{family} {option} = {name}", command(chosen), inputs)


def _folder_output(
    figures: SeamFigures,
    family: str,
    command: Callable[[Path], list[str]],
    holding: Path,
    inputs: list[Path],
    work: Path,
) -> None:
    """The output folder is the folder holding an input named like a run file; then a
    regular file (an input), a FIFO and a device as the folder."""
    run_case(figures, f"{family} folder holding an input", command(holding), inputs)
    for name, path in (("an input file", inputs[0]), ("/dev/null", Path("/dev/null"))):
        run_case(figures, f"{family} folder = {name}", command(path), inputs)
    fifo = _special_outputs(work)["fifo"]
    run_case(figures, f"{family} folder = fifo", command(fifo), inputs)


def seam_campaign(work: Path, *, signals: bool = True) -> dict[str, SeamFigures]:
    """family -> figures (see the module docstring)."""
    from tests.reliability.commands import (
        ocsr_cohort,
        ocsr_run,
        p2s_build,
        p2s_data,
        retro_eval,
    )
    from tests.reliability.test_outputs import _family_commands

    from chemgauge.eval.runlock import run_lock

    work.mkdir(parents=True, exist_ok=True)
    figures = {f: SeamFigures() for f in ("forward", "retro", "names", "ocsr", "p2s", "canon")}
    figures["report"] = SeamFigures()
    ray = ["--executor", "ray", "--ray-address", UNREACHABLE, "--ray-timeout", "5"]

    # forward: a corpus named like the run's rows, in the folder given as --out
    forward_in = work / "forward-in"
    forward_in.mkdir()
    corpus = forward_in / "rows.jsonl"
    shutil.copyfile(DEMO, corpus)

    def forward(folder: Path, *extra: str) -> list[str]:
        return ["forward", "benchmark", "--corpus", str(corpus), "--executor", "serial", "-q",
                "--out", str(folder), *extra]  # fmt: skip

    run_dir = work / "forward-run"
    _folder_output(figures["forward"], "forward", forward, forward_in, [corpus], work)
    run_case(figures["forward"], "forward unreachable Ray", forward(run_dir, *ray), [corpus],
             fragment="cannot reach the Ray cluster")  # fmt: skip
    run_case(figures["forward"], "forward control run", forward(run_dir), [corpus], expected=0)

    # retro: a predictions file named like the run's journal, in the folder given for results
    retro_in = work / "retro-in"
    retro_in.mkdir()
    (retro_in / "test.smi").write_text("CC(=O)O.CN>>CNC(C)=O\nCCO.CC(=O)O>>CCOC(C)=O\n")
    preds = retro_in / "journal.jsonl"
    preds.write_text('{"product": "CNC(C)=O", "predictions": ["CN.CC(=O)O"]}\n')
    retro_inputs = [retro_in / "test.smi", preds]

    def retro(folder: Path, *extra: str) -> list[str]:
        return retro_eval(retro_in, preds, folder, *extra)

    _folder_output(figures["retro"], "retro", retro, retro_in, retro_inputs, work)
    on_ray = ("executor=ray", f"ray_address={UNREACHABLE}", "ray_timeout=5")
    run_case(figures["retro"], "retro unreachable Ray", retro(work / "retro-out", *on_ray),
             retro_inputs, fragment="cannot reach the Ray cluster")  # fmt: skip

    # names: a pairs file named like the run's rows, in the folder given as --out
    names_in = work / "names-in"
    names_in.mkdir()
    pairs = names_in / "rows.jsonl"
    pairs.write_text('{"smiles": "CCO", "name": "ethanol"}\n{"smiles": "C", "name": "methane"}\n')

    def names(folder: Path) -> list[str]:
        return ["names", "coverage", "--input", str(pairs), "--out", str(folder), "-q"]

    _folder_output(figures["names"], "names", names, names_in, [pairs], work)

    # ocsr: a manifest named like a run file, in the folder given as --out
    rendered, script = ocsr_cohort(work, 2)
    manifest = rendered.rename(rendered.with_name("report.json"))

    def ocsr(folder: Path, *extra: str) -> list[str]:
        return ocsr_run(manifest, script, folder, *extra)

    _folder_output(figures["ocsr"], "ocsr", ocsr, manifest.parent, [manifest], work)
    run_case(figures["ocsr"], "ocsr unreachable Ray", ocsr(work / "ocsr-out", *ray), [manifest],
             fragment="cannot reach the Ray cluster")  # fmt: skip

    # p2s: predictions named like the scored run's rows, in the folder given as --out
    data = p2s_data(work / "p2s")
    scored = work / "p2s-scored"
    scored.mkdir()
    predictions = scored / "rows.jsonl"
    predictions.write_text("")
    view = next(data.rglob("correct.jsonl"))

    def p2s_score(folder: Path) -> list[str]:
        return ["p2s", "score", "--data", str(data), "--property", view.parent.name,
                "--condition", "correct", "--predictions", str(predictions), "--out",
                str(folder), "-q"]  # fmt: skip

    _folder_output(figures["p2s"], "p2s score", p2s_score, scored, [predictions, view], work)
    run_case(figures["p2s"], "p2s run --out DATA",
             ["p2s", "run", str(data), "-m", "random", "--out", str(data), "-q"], [view],
             fragment="same folder as DATA")  # fmt: skip
    sources, table = work / "p2s" / "sources.smi", work / "p2s" / "table.jsonl"
    build = p2s_build(sources, table, work / "p2s-built")
    run_case(figures["p2s"], "p2s build unreachable Ray", build + ray, [sources],
             fragment="cannot reach the Ray cluster")  # fmt: skip

    # canon
    smiles = work / "in.smi"
    smiles.write_text("OCC\nc1ccccc1\n")

    def canon(out: dict[str, Path]) -> list[str]:
        return ["canon", str(smiles), "--out", str(out["--out"]), "-q"]

    _file_outputs(figures["canon"], "canon", canon, {"--out": work / "canon.smi"}, [smiles], work)
    run_case(figures["canon"], "canon unreachable Ray",
             canon({"--out": work / "canon.smi"}) + ray, [smiles],
             fragment="cannot reach the Ray cluster")  # fmt: skip

    # report / compare / verify over the forward control run's folder
    run_files = [run_dir / "rows.jsonl", run_dir / "report.json"]
    for command, option in (("report", "--out"), ("verify", "--out")):
        for target in run_files:
            run_case(figures["report"], f"{command} {option} = {target.name}",
                     [command, str(run_dir), option, str(target)], run_files,
                     fragment="same file as")  # fmt: skip
        for name, special in _special_outputs(work).items():
            run_case(figures["report"], f"{command} {option} = {name}",
                     [command, str(run_dir), option, str(special)], run_files)  # fmt: skip
    for target in run_files:
        run_case(figures["report"], f"compare --out = {target.name}",
                 ["compare", str(run_dir), str(run_dir), "--out", str(target)], run_files,
                 fragment="same file as")  # fmt: skip

    # a second run into locked outputs, every family (each in a folder of its own)
    for family in figures:
        locked = work / "locked" / family
        locked.mkdir(parents=True)
        command, output, folder = _family_commands(locked)[family]
        with run_lock([(output, folder)], "the seams campaign"):
            run_case(figures[family], f"{family} second run into locked outputs",
                     [str(part) for part in command], [],
                     fragment="another chemgauge run")  # fmt: skip

    if signals:
        _stop_every_family(work / "stops", figures)
    return figures


def _stop_every_family(work: Path, figures: dict[str, SeamFigures]) -> None:
    """SIGTERM each family's run with its children at work; count survivors."""
    from tests.reliability.stops import (
        forward_scenario,
        names_scenario,
        ocsr_scenario,
        p2s_build_scenario,
        retro_scenario,
        stop_run,
    )

    scenarios = {
        "forward": forward_scenario,
        "retro": retro_scenario,
        "names": names_scenario,
        "ocsr": ocsr_scenario,
        "p2s": p2s_build_scenario,
    }
    for family, scenario in scenarios.items():
        folder = work / family
        folder.mkdir(parents=True)
        result = stop_run(scenario(folder), signal.SIGTERM)
        row = figures[family]
        row.cases += 1
        row.orphans += len(result.survivors)
        row.tracebacks += "Traceback" in result.stderr
        if result.returncode != 143 or not result.resumed or result.survivors:
            row.unexpected.append(
                f"{family} SIGTERM: exit {result.returncode}, resumed {result.resumed}, "
                f"survivors {result.survivors}: {result.stderr.strip()[-200:]}"
            )
