"""A board of three real retro baselines on the 5,007 USPTO-50k test targets.

NeuralSym (``bench/retro_neuralsym.py``'s top-50 predictions file), the template-popularity
baseline (``templates``) on the re-implementation's 10,198 training templates with their
training counts, and the RetroSim-like ``similarity`` baseline (templates of the most similar
training products). Each system's top-50 raw outputs are computed once (``--jobs``
processes), scored by ``chemgauge retro eval -m predictions`` and boarded by
``chemgauge board`` (top-1 under the syntheseus convention, Wilson intervals, exact McNemar
letters); board.html/md/json land in ``bench/results/board_retro_baselines/``.

    .venv/bin/python bench/board_retro_baselines.py \
        --neuralsym /tmp/retro-neuralsym/predictions-uspto.jsonl
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from retro_neuralsym import NEURALSYM, ROOT, USPTO, predict_products

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


def _products(limit: int | None) -> list[str]:
    from chemgauge.families.retro.data import find_fold_file, load_targets

    targets = load_targets(find_fold_file(USPTO, "test"), limit=limit).targets
    return list(dict.fromkeys(t.product for t in targets))


def _write(path: Path, raw: dict[str, list[str]]) -> Path:
    path.write_text(
        "".join(json.dumps({"product": p, "predictions": o}) + "\n" for p, o in raw.items())
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--neuralsym", type=Path, required=True, help="NeuralSym predictions")
    parser.add_argument("--work", type=Path, default=Path("/tmp/retro-board"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="first N targets (a quick look)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    products = _products(args.limit)
    systems = {
        "templates": ("templates", _templates_file(args.work)),
        "similarity": ("similarity", NEURALSYM),
    }
    preds = {"neuralsym": args.neuralsym}
    for name, (model_class, model_dir) in systems.items():
        path = args.work / f"predictions-{name}.jsonl"
        if not path.is_file():
            start = time.perf_counter()
            raw = predict_products(model_class, model_dir, products, args.jobs, {})
            print(f"{name}: {len(raw)} products in {time.perf_counter() - start:.0f} s")
            _write(path, raw)
        preds[name] = path
    runs = args.work / "runs"
    chemgauge = [sys.executable, "-m", "chemgauge"]
    for name, path in preds.items():
        command = [
            *chemgauge,
            "retro",
            "eval",
            "-m",
            "predictions",
            "--model-dir",
            str(path),
            "--data-dir",
            str(USPTO),
            "--num-top-results",
            "50",
            "--out",
            str(runs / name),
            "--restart",
            "-q",
            "--allow-missing",
        ]
        if args.limit is not None:
            command += ["--limit", str(args.limit)]
        subprocess.run(command, check=True)
    out = OUT if args.limit is None else args.work / "board"
    if out.exists():
        shutil.rmtree(out)
    subprocess.run([*chemgauge, "board", str(runs), "--out", str(out)], check=True)
    print((out / "board.md").read_text())


if __name__ == "__main__":
    main()
