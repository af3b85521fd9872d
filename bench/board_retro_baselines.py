"""A board of three real retro baselines on the 5,007 USPTO-50k test targets.

NeuralSym (the trained model folder, ``runs/neuralsym``, ``bench/retro_neuralsym.py``'s
documented training), the template-popularity baseline (``templates``) on the
re-implementation's 10,198 training templates with their training counts, and the
RetroSim-like ``similarity`` baseline (templates of the most similar training products).
Each system is run by ``chemgauge retro eval`` under its own model class (so each run records
its system, and NeuralSym's run its model manifest) into ``runs/retro-baselines/NAME`` and
the three are boarded by ``chemgauge board runs/retro-baselines`` (top-1 under the syntheseus
convention, Wilson intervals, exact McNemar letters); board.html/md/json land in
``bench/results/board_retro_baselines/``, their run links repo-relative.

    .venv/bin/python bench/board_retro_baselines.py --model runs/neuralsym
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from retro_neuralsym import NEURALSYM, ROOT, USPTO

OUT = ROOT / "bench" / "results" / "board_retro_baselines"


def _templates_file(work: Path) -> Path:
    """The training templates as the ``templates`` baseline's JSONL (SMARTS and count)."""
    path = work / "templates.jsonl"
    lines = []
    for line in (NEURALSYM / "training_templates.txt").read_text().splitlines():
        smarts, _, count = line.rpartition(": ")
        lines.append(json.dumps({"smarts": smarts, "count": int(count)}, sort_keys=True) + "\n")
    path.write_text("".join(lines))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "runs" / "neuralsym")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "retro-baselines")
    parser.add_argument("--inputs", type=Path, default=ROOT / "runs" / "retro-baselines-inputs")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="first N targets (a quick look)")
    args = parser.parse_args()
    if not (args.model / "manifest.json").is_file():
        raise SystemExit(
            f"{args.model}: no trained NeuralSym (manifest.json); train it first: "
            "chemgauge retro train neuralsym --out runs/neuralsym"
        )
    args.inputs.mkdir(parents=True, exist_ok=True)
    systems = {
        "neuralsym": ("neuralsym", args.model),
        "similarity": ("similarity", NEURALSYM),
        "templates": ("templates", _templates_file(args.inputs)),
    }
    chemgauge = [sys.executable, "-m", "chemgauge"]
    for name, (model_class, model_dir) in systems.items():
        command = [
            *chemgauge,
            "retro",
            "eval",
            "-m",
            model_class,
            "--model-dir",
            os.path.relpath(model_dir),
            "--data-dir",
            os.path.relpath(USPTO),
            "--num-top-results",
            "50",
            "--jobs",
            str(args.jobs),
            "--out",
            os.path.relpath(args.runs / name),
            "--restart",
            "-q",
        ]
        if args.limit is not None:
            command += ["--limit", str(args.limit)]
        start = time.perf_counter()
        subprocess.run(command, check=True)
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    out = OUT if args.limit is None else args.inputs / "board"
    if out.exists():
        shutil.rmtree(out)
    board = [*chemgauge, "board", os.path.relpath(args.runs), "--out", os.path.relpath(out)]
    subprocess.run(board, check=True)
    print((out / "board.md").read_text())


if __name__ == "__main__":
    main()
