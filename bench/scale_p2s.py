"""p2s memory check: peak RSS of `chemgauge p2s run` at 10/50/100% of N records.

The input is a dipole benchmark built by the real builder from USPTO-50k test products in
../shared/data (a few hundred molecules, seeded; dipole values from a seeded hash table,
since the check is about memory, not chemistry), then repeated under new record ids until it
holds N records (about 4N tasks over the correct, shuffled and counterfactual views). The
run uses the seeded ``random`` baseline, so it measures chemgauge's own memory (checking the
views, batching, journals, prediction files, rows and the report). Each size runs the real
CLI in a fresh process; peak RSS comes from getrusage over the child processes. Target: peak
RSS at 100% at most 1.2x that at 10%.

    .venv/bin/python bench/scale_p2s.py [--n 40000]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

import orjson

from peak_rss import measure_command
from result_files import add_record_options, peak_rss_figure, record_path, write_result

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))
SOURCES = 400
CONDITIONS = ("correct", "shuffled", "counterfactual")


def _dipole(smiles: str, seed: int) -> dict[str, object]:
    """A seeded stand-in dipole (0.1 to 9.1 D) for one molecule."""
    digest = hashlib.sha256(f"{seed}:{smiles}".encode()).digest()
    value = round(0.1 + int.from_bytes(digest[:4]) % 90_000 / 10_000, 4)
    return {"dipole": {"value": value, "unit": "D"}}


def _base(folder: Path, seed: int) -> Path:
    """The real builder on seeded USPTO-50k products (built once per folder and seed)."""
    from collections import Counter

    from chemgauge.eval.rejections import RejectionStats
    from chemgauge.families.p2s.build import (
        BuildConfig,
        build_benchmark,
        read_sources,
        select_records,
    )
    from chemgauge.families.p2s.engine.properties import TableProvider

    base = folder / f"base-{seed}"
    if (base / "data").is_dir():
        return base / "data"
    base.mkdir(parents=True, exist_ok=True)
    with open(DATA / "uspto50k" / "test.csv", newline="") as handle:
        products = sorted({row[2].split(">")[-1] for row in list(csv.reader(handle))[1:]})
    rng = random.Random(seed)
    chosen = rng.sample(products, SOURCES)
    sources = base / "sources.smi"
    sources.write_text("".join(f"{s} p{i}\n" for i, s in enumerate(chosen)))
    config = BuildConfig(directories=("dipole",), candidates=4, counterfactuals_per_record=2)
    records = select_records(read_sources(sources, RejectionStats()), config, Counter())
    molecules = sorted({c for r in records for c in r.candidates})
    table = base / "table.jsonl"
    table.write_bytes(
        b"".join(
            orjson.dumps({"smiles": m, "properties": _dipole(m, seed)}) + b"\n" for m in molecules
        )
    )
    build_benchmark(sources, base / "data", TableProvider(table), config)
    return base / "data"


def _lines(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def build_input(path: Path, n: int, seed: int) -> None:
    """A data folder at ``path`` with ``n`` correct-view records (and their shuffled and
    counterfactual tasks): the built base repeated under new record ids."""
    source = _base(path.parent, seed) / "dipole"
    correct = _lines(source / "correct.jsonl")
    place = {str(task["record_id"]): i for i, task in enumerate(correct)}
    copies = -(-n // len(correct))
    out = path / "dipole"
    out.mkdir(parents=True, exist_ok=True)
    for condition in CONDITIONS:
        tasks = _lines(source / f"{condition}.jsonl")
        labels = {
            str(lab["record_id"]): lab for lab in _lines(source / f"{condition}.labels.jsonl")
        }
        with (
            open(out / f"{condition}.jsonl", "wb") as task_file,
            open(out / f"{condition}.labels.jsonl", "wb") as label_file,
        ):
            for copy in range(copies):
                for task in tasks:
                    label = labels[str(task["record_id"])]
                    base = str(label.get("base_record_id", task["record_id"]))
                    if copy * len(correct) + place[base] >= n:
                        continue  # keeps each view to the same first n records
                    suffix = f"~{copy}"
                    renamed = {**task, "record_id": f"{task['record_id']}{suffix}"}
                    task_file.write(orjson.dumps(renamed) + b"\n")
                    answer = {**label, "record_id": renamed["record_id"]}
                    if "base_record_id" in label:
                        answer["base_record_id"] = f"{base}{suffix}"
                    label_file.write(orjson.dumps(answer) + b"\n")


def run(path: Path, jobs: int) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one `chemgauge p2s run` in a fresh process
    (``jobs`` is accepted for bench/scale.py's interface: p2s runs one batch at a time)."""
    del jobs
    out = path.with_name(path.name + "-runs")
    cmd = [sys.executable, "-m", "chemgauge", "p2s", "run", str(path), "-m", "random"]
    cmd += ["-o", str(out), "--restart", "-q", "--batch-size", "64"]
    return measure_command(cmd, "p2s run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40_000, help="correct-view records at 100%%")
    parser.add_argument("--seed", type=int, default=20261130)
    add_record_options(parser)
    args = parser.parse_args()
    print(f"# bench/scale_p2s.py  {os.cpu_count()} cores  n={args.n}", flush=True)
    with tempfile.TemporaryDirectory(prefix="chemgauge-scale-p2s-") as tmp:
        header = f"{'fraction':>9}{'records':>9}{'tasks':>9}{'wall s':>9}{'tasks/s':>9}"
        print(f"{header}{'peak RSS MiB':>14}", flush=True)
        rss: dict[float, int] = {}
        for fraction in (0.1, 0.5, 1.0):
            count = int(args.n * fraction)
            data = Path(tmp) / f"data-{count}"
            build_input(data, count, args.seed)
            tasks = sum(
                len((data / "dipole" / f"{c}.jsonl").read_bytes().splitlines()) for c in CONDITIONS
            )
            wall, peak = run(data, 1)
            rss[fraction] = peak
            print(
                f"{fraction:>9.0%}{count:>9}{tasks:>9}{wall:>9.1f}{tasks / wall:>9.0f}"
                f"{peak / 1024:>14.0f}",
                flush=True,
            )
            shutil.rmtree(data)
            shutil.rmtree(data.with_name(data.name + "-runs"))
        print(f"peak RSS 100% / 10%: {rss[1.0] / rss[0.1]:.2f}x (target <= 1.2x)")
    path = record_path(args, "scale_p2s", full_size=args.n >= 40_000)
    if path is not None:
        write_result(
            "scale_p2s",
            title="Peak memory of a p2s run from 10% to 100%",
            method=(
                "chemgauge p2s run (random baseline) on a dipole benchmark built from USPTO-50k "
                f"test products and repeated under new ids to {args.n:,} records (about four "
                "tasks each over three views), at 10%, 50% and 100%; peak RSS over the child "
                "processes."
            ),
            figures=[peak_rss_figure("p2s", f"{args.n:,} records", rss[0.1], rss[1.0])],
            path=path,
        )


if __name__ == "__main__":
    main()
