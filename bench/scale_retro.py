"""Memory check for the streaming retro evaluation: wall time and peak RSS at 10/50/100%.

Targets are the first N reactions of USPTO-50k's test and validation folds together (read
from ../shared/data, never copied; 10,008 reactions), with seeded raw outputs from
chemgauge's synthetic generator (the truth at a random rank or absent, decoys, invalid
strings, re-spelled duplicates). Each size is the real ``chemgauge retro eval`` CLI in a
fresh process with ``limit`` at 10%, 50% and 100% of N over the same data and predictions
files, so only the number of targets changes. Peak RSS is getrusage's for the CLI process
and its largest child (a scoring worker); the larger one is compared. Target:
peak RSS at 100% at most 1.2x that at 10%.

    .venv/bin/python bench/scale_retro.py                 # 10,008 targets x 50 outputs
    .venv/bin/python bench/scale_retro.py --n 2000 --outputs 10
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from peak_rss import measure_chemgauge
from result_files import add_record_options, peak_rss_figure, record_path, write_result

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))


def build_input(folder: Path, n: int, seed: int, outputs: int = 50, jobs: int = 2) -> None:
    """``folder/data/test.csv`` (the first ``n`` test-then-validation reactions) and
    ``folder/predictions.jsonl`` (seeded raw outputs for each distinct product)."""
    from chemgauge.eval.executors import ExecutorConfig
    from chemgauge.families.retro.data import find_fold_file, load_targets
    from chemgauge.families.retro.synthetic import SyntheticSettings, generate_outputs

    data = folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for fold in ("test", "val"):
        with open(DATA / "uspto50k" / f"{fold}.csv", encoding="utf-8") as source:
            header = next(source)
            lines.extend(source)
    if n > len(lines):
        raise SystemExit(f"--n {n}: only {len(lines)} reactions available")
    (data / "test.csv").write_text(header + "".join(lines[:n]), encoding="utf-8")
    executor = ExecutorConfig(kind="local", jobs=jobs)
    targets = load_targets(find_fold_file(data, "test"), executor=executor).targets
    settings = SyntheticSettings(seed=seed, outputs_per_target=outputs)
    generated = generate_outputs(targets, settings, executor=executor)
    written: set[str] = set()
    with open(folder / "predictions.jsonl", "w", encoding="utf-8") as handle:
        for target, outs in zip(targets, generated, strict=True):
            if target.product not in written:
                written.add(target.product)
                handle.write(json.dumps({"product": target.product, "predictions": outs}) + "\n")


def run(folder: Path, jobs: int, limit: int | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB, largest process) of one retro eval in a fresh process."""
    results = folder / "results"
    shutil.rmtree(results, ignore_errors=True)
    cmd = ["retro", "eval", f"data_dir={folder / 'data'}", "model_class=predictions"]
    cmd += [f"model_dir={folder / 'predictions.jsonl'}", "--out", str(results)]
    cmd += [
        "num_top_results=50",
        f"jobs={jobs}",
        "executor=local" if jobs > 1 else "executor=serial",
    ]
    cmd += ["--quiet"] + ([f"limit={limit}"] if limit else [])
    result = measure_chemgauge(cmd, "retro eval")
    return result.wall_s, result.peak_kib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_008, help="targets at 100%% (<= 10,008)")
    parser.add_argument("--outputs", type=int, default=50, help="raw outputs per target")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--jobs", type=int, default=2)
    add_record_options(parser)
    args = parser.parse_args()
    print(f"# bench/scale_retro.py  {os.cpu_count()} cores  N={args.n}  outputs={args.outputs}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        build_input(folder, args.n, args.seed, args.outputs, args.jobs)
        print(f"input built in {time.perf_counter() - start:.0f} s", flush=True)
        print(
            f"{'fraction':>9}{'targets':>9}{'wall s':>9}{'targets/s':>11}{'peak RSS MiB':>14}"
            f"{'load 1m':>9}",
            flush=True,
        )
        rss: dict[float, int] = {}
        for fraction in (0.1, 0.5, 1.0):
            count = int(args.n * fraction)
            wall, peak = run(folder, args.jobs, count)
            rss[fraction] = peak
            print(
                f"{fraction:>9.0%}{count:>9}{wall:>9.1f}{count / wall:>11.1f}"
                f"{peak / 1024:>14.0f}{os.getloadavg()[0]:>9.2f}",
                flush=True,
            )
        print(f"peak RSS 100% / 10%: {rss[1.0] / rss[0.1]:.2f}x (target <= 1.2x)")
    path = record_path(args, "scale_retro", full_size=args.n >= 10_008 and args.outputs >= 50)
    if path is not None:
        write_result(
            "scale_retro",
            title="Peak memory of the retro evaluation from 10% to 100%",
            method=(
                f"chemgauge retro eval (predictions model, --jobs {args.jobs}) on the first "
                f"{args.n:,} of USPTO-50k's test and validation reactions with {args.outputs} "
                "seeded raw outputs each, limit at 10%, 50% and 100%; peak RSS of the CLI "
                "process and its largest worker, the larger compared."
            ),
            figures=[
                peak_rss_figure(
                    "retro", f"{args.n:,} targets x {args.outputs} outputs", rss[0.1], rss[1.0]
                )
            ],
            path=path,
        )


if __name__ == "__main__":
    main()
