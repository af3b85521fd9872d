"""``chemgauge board`` on real retro runs: the USPTO-50k board, and its speed.

Runs: every USPTO-50k test target (``../shared/data/uspto50k/test_with_class.csv``, 5,007
reactions with their classes, read in place through a symlink) scored by ``chemgauge retro
eval`` for ten systems: the ``templates`` baseline (rdchiral templates extracted from the
validation split, ``val.csv``, as its training data) and nine ``predictions`` models whose 10
raw outputs a target come from chemgauge's seeded generator
(:mod:`chemgauge.benchmarks.retro.synthetic`) under different seeds and quality settings
(where the truth lands, how often it is absent). The outputs are synthetic: the board shows
what the statistics make of systems of known, controlled quality, not how good any real model
is.

Two results:

* the board of five runs (templates and four seeded models) under the family's default metric
  (top-1, syntheseus convention, exact matcher), printed as Markdown with its letter display;
* the time to build the board of all ten runs (10 x 5,007 items: load, verify, per-item hits,
  45 pairwise exact McNemar tests, Holm, letters, breakdown boards by class and reactant count,
  HTML, Markdown and JSON), against the alternative a user has without it: ``compare`` on each
  of the 45 pairs. Target: the ten-run board in under 10 s on 2 cores.

A full run writes bench/results/board_retro.json.

    .venv/bin/python bench/board_retro.py                # all 5,007 targets
    .venv/bin/python bench/board_retro.py --limit 500    # a quick look (nothing recorded)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from result_files import add_record_options

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data")) / "uspto50k"
FULL = 5007
#: Raw outputs a target (every run is scored on its top 10).
OUTPUTS = 10


@dataclass(frozen=True)
class Seeded:
    """A ``predictions`` model: the generator's seed and quality settings."""

    name: str
    seed: int
    truth_absent_rate: float = 0.25
    mean_truth_rank: float = 4.0


#: The four seeded systems of the five-run board, then five more for the ten-run board.
SEEDED = (
    Seeded("seeded-base-1", 1),
    Seeded("seeded-base-2", 2),
    Seeded("seeded-sharp", 3, mean_truth_rank=2.0),
    Seeded("seeded-weak", 4, truth_absent_rate=0.35),
    Seeded("seeded-base-5", 5),
    Seeded("seeded-sharp-6", 6, mean_truth_rank=2.0),
    Seeded("seeded-weak-7", 7, truth_absent_rate=0.35),
    Seeded("seeded-flat-8", 8, mean_truth_rank=8.0),
    Seeded("seeded-strong-9", 9, truth_absent_rate=0.15, mean_truth_rank=2.0),
)
TEMPLATES = "templates-val"
BOARD_OF_FIVE = (TEMPLATES, *(s.name for s in SEEDED[:4]))


def _data_dirs(work: Path) -> tuple[Path, Path]:
    """``work/data/test.csv`` -> the test split with classes; ``work/train/train.csv`` -> the
    validation split (the templates baseline's training data); symlinks, never copies."""
    data, train = work / "data", work / "train"
    for folder, name, source in (
        (data, "test.csv", "test_with_class.csv"),
        (train, "train.csv", "val.csv"),
    ):
        folder.mkdir(parents=True, exist_ok=True)
        link = folder / name
        if not link.is_symlink():
            link.symlink_to(DATA / source)
    return data, train


def _outputs(work: Path, data: Path, spec: Seeded, jobs: int, limit: int) -> Path:
    """Seeded raw outputs for each distinct product, written once per settings and size."""
    from chemgauge.benchmarks.retro.data import find_fold_file, load_targets
    from chemgauge.benchmarks.retro.synthetic import SyntheticSettings, generate_outputs
    from chemgauge.eval.executors import ExecutorConfig
    from chemgauge.eval.provenance import canonical_json

    path = work / "outputs" / f"{spec.name}-k{OUTPUTS}-n{limit}.jsonl"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    executor = ExecutorConfig(kind="local", jobs=jobs)
    targets = load_targets(find_fold_file(data, "test"), limit=limit, executor=executor).targets
    settings = SyntheticSettings(
        seed=spec.seed,
        outputs_per_target=OUTPUTS,
        truth_absent_rate=spec.truth_absent_rate,
        mean_truth_rank=spec.mean_truth_rank,
    )
    start = time.perf_counter()
    generated = generate_outputs(targets, settings, executor=executor)
    print(f"{spec.name}: outputs in {time.perf_counter() - start:.0f} s", flush=True)
    seen: set[str] = set()
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        for target, outs in zip(targets, generated, strict=True):
            if target.product not in seen:
                seen.add(target.product)
                handle.write(
                    canonical_json({"product": target.product, "predictions": outs}) + b"\n"
                )
    tmp.replace(path)
    return path


def _evaluate(
    out: Path, data: Path, model_class: str, model_dir: Path, jobs: int, limit: int
) -> Path:
    """One ``chemgauge retro eval`` run folder (kept when its report exists)."""
    if (out / "report.json").exists():
        return out
    command = [
        str(Path(sys.executable).parent / "chemgauge"),
        "retro",
        "eval",
        f"data_dir={data}",
        f"model_class={model_class}",
        f"model_dir={model_dir}",
        f"results_dir={out}",
        f"num_top_results={OUTPUTS}",
        f"limit={limit}",
        f"jobs={jobs}",
        "executor=local" if jobs > 1 else "executor=serial",
        "--quiet",
    ]
    start = time.perf_counter()
    subprocess.run(command, check=True)
    print(f"{out.name}: retro eval in {time.perf_counter() - start:.0f} s", flush=True)
    return out


def prepare(work: Path, jobs: int, limit: int) -> dict[str, Path]:
    """The ten run folders, by name (made once per size, reused afterwards)."""
    data, train = _data_dirs(work)
    runs_dir = work / f"runs-n{limit}"
    runs = {}
    for spec in SEEDED:
        outputs = _outputs(work, data, spec, jobs, limit)
        runs[spec.name] = _evaluate(runs_dir / spec.name, data, "predictions", outputs, jobs, limit)
    # The templates model predicts in one process (about 0.3 s a target on a quiet core).
    runs[TEMPLATES] = _evaluate(runs_dir / TEMPLATES, data, "templates", train, jobs, limit)
    return {name: runs[name] for name in (TEMPLATES, *(s.name for s in SEEDED))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=FULL, help="targets (default: all 5,007)")
    parser.add_argument("--jobs", type=int, default=0, help="workers for the runs (0 = all cores)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/chemgauge-bench-board"))
    parser.add_argument("--prepare-only", action="store_true", help="make the runs, then stop")
    add_record_options(parser)
    args = parser.parse_args()
    jobs = args.jobs or os.cpu_count() or 1
    runs = prepare(args.work, jobs, args.limit)
    if args.prepare_only:
        print(json.dumps({name: str(path) for name, path in runs.items()}, indent=2))
        return


if __name__ == "__main__":
    main()
