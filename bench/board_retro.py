"""``chemgauge board`` on real retro runs: the USPTO-50k board, and its speed.

Runs: every USPTO-50k test target (``../shared/data/uspto50k/test_with_class.csv``, 5,007
reactions with their classes, read in place through a symlink) scored by ``chemgauge retro
eval`` for eleven systems: the ``templates`` baseline (rdchiral templates extracted from the
validation split, ``val.csv``, as its training data) and ten ``predictions`` models whose 10
raw outputs a target come from chemgauge's seeded generator
(:mod:`chemgauge.families.retro.synthetic`) under different seeds and quality settings
(where the truth lands, how often it is absent). The outputs are synthetic: the board shows
what the statistics make of systems of known, controlled quality, not how good any real model
is.

Two results:

* the board of five runs (templates and four seeded models) under the family's default metric
  (top-1, syntheseus convention, exact matcher), printed as Markdown with its letter display;
* the time to build the board of the ten seeded runs (10 x 5,007 items: load, verify,
  per-item hits, 45 pairwise exact McNemar tests, Holm, letters, breakdown boards by class and
  reactant count, HTML, Markdown and JSON), against the alternative a user has without it:
  ``compare`` on each of the 45 pairs. Target: the ten-run board in under 10 s on 2 cores.

A full run writes bench/results/board_retro.json (the five-run board) and board_timing.json;
``--timing-only`` makes and times the ten seeded runs alone (the templates run is the long one:
about 0.3 s a target on a quiet core) and writes board_timing.json.

    .venv/bin/python bench/board_retro.py                # all 5,007 targets
    .venv/bin/python bench/board_retro.py --limit 500    # a quick look (nothing recorded)
    .venv/bin/python bench/board_retro.py --timing-only  # the ten seeded runs and the timing
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from result_files import add_record_options, figure, record_path, write_result

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


#: The four seeded systems of the five-run board, then six more for the ten-run board.
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
    Seeded("seeded-base-10", 10),
)
TEMPLATES = "templates-val"
BOARD_OF_FIVE = (TEMPLATES, *(s.name for s in SEEDED[:4]))
#: The timed board: the ten seeded systems (the templates run is the slow one to make).
BOARD_OF_TEN = tuple(s.name for s in SEEDED)


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
    from chemgauge.eval.executors import ExecutorConfig
    from chemgauge.eval.provenance import canonical_json
    from chemgauge.families.retro.data import find_fold_file, load_targets
    from chemgauge.families.retro.synthetic import SyntheticSettings, generate_outputs

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
        f"--out={out}",
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


def prepare(work: Path, jobs: int, limit: int, *, templates: bool = True) -> dict[str, Path]:
    """The run folders, by name (made once per size, reused afterwards); ``templates``: the
    templates baseline too."""
    data, train = _data_dirs(work)
    runs_dir = work / f"runs-n{limit}"
    runs = {}
    for spec in SEEDED:
        folder = runs_dir / spec.name
        if not (folder / "report.json").exists():
            outputs = _outputs(work, data, spec, jobs, limit)
            _evaluate(folder, data, "predictions", outputs, jobs, limit)
        runs[spec.name] = folder
    if not templates:
        return runs
    # The templates model predicts in one process (about 0.3 s a target on a quiet core).
    runs[TEMPLATES] = _evaluate(runs_dir / TEMPLATES, data, "templates", train, jobs, limit)
    return {name: runs[name] for name in (TEMPLATES, *(s.name for s in SEEDED))}


def board_of_five(runs: dict[str, Path], out: Path) -> tuple[str, list[dict[str, Any]], bool]:
    """The five-run board (Markdown, its standings as JSON) and whether its letters agree with
    ``compare`` run on every pair: the same counts and raw p-values, Holm over all pairs, and
    two runs share a letter exactly when the adjusted p-value is above alpha."""
    from chemgauge.report.board import BoardConfig, build_leaderboard
    from chemgauge.report.board_html import render_board_html
    from chemgauge.report.board_json import leaderboard_to_dict
    from chemgauge.report.board_markdown import render_board_markdown
    from chemgauge.report.compare import compare_runs, holm_adjust
    from chemgauge.report.entrants import enter_runs

    out.mkdir(parents=True, exist_ok=True)
    leaderboard = build_leaderboard(enter_runs([runs[n] for n in BOARD_OF_FIVE]), BoardConfig())
    markdown = render_board_markdown(leaderboard, out)
    (out / "board.md").write_text(markdown)
    (out / "board.html").write_text(render_board_html(leaderboard, out))
    data = leaderboard_to_dict(leaderboard)
    (out / "board.json").write_text(json.dumps(data, indent=1))
    (board,) = data["boards"]
    ranking = board["rankings"][0]
    by_label = {e.label: e.run for e in leaderboard.boards[0].entrants}
    agree, raw = True, []
    for pair in ranking["pairs"]:
        compared = compare_runs(by_label[pair["a"]], by_label[pair["b"]])
        row = next(r for r in compared["overall"] if r["metric"] == ranking["metric"])
        counts = (row["only_a"], row["only_b"], row["n"], row["mcnemar_p"])
        agree &= counts == (pair["only_a"], pair["only_b"], pair["n"], pair["p"])
        raw.append(row["mcnemar_p"])
    agree &= holm_adjust(raw) == [p["p_holm"] for p in ranking["pairs"]]
    letters = {s["run"]: s["letters"] for s in ranking["standings"]}
    alpha = data["settings"]["alpha"]
    for pair, adjusted in zip(ranking["pairs"], holm_adjust(raw), strict=True):
        agree &= bool(set(letters[pair["a"]]) & set(letters[pair["b"]])) == (adjusted > alpha)
    return markdown, ranking["standings"], agree


def _board_command(paths: list[Path], out: Path) -> list[str]:
    chemgauge = str(Path(sys.executable).parent / "chemgauge")
    return [chemgauge, "board", *map(str, paths), "-q", "--out", str(out)]


def _wall(command: list[str], cpu: list[float]) -> float:
    """Wall seconds of ``command``; its CPU seconds (user + system) go on ``cpu``, a figure a
    loaded machine changes less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def _compare_all(paths: list[Path], out: Path) -> float:
    """The alternative: ``chemgauge compare`` on each pair, as a user would run it."""
    chemgauge = str(Path(sys.executable).parent / "chemgauge")
    start = time.perf_counter()
    for i, (a, b) in enumerate(itertools.combinations(paths, 2)):
        command = [chemgauge, "compare", str(a), str(b), "-q", "--out", str(out / f"pair-{i}")]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _phases(paths: list[Path], out: Path) -> dict[str, float]:
    """Wall seconds of the board's phases in this process (no interpreter start)."""
    from chemgauge.report.board import BoardConfig, build_leaderboard
    from chemgauge.report.board_html import render_board_html
    from chemgauge.report.board_json import leaderboard_to_dict
    from chemgauge.report.board_markdown import render_board_markdown
    from chemgauge.report.entrants import enter_runs

    t0 = time.perf_counter()
    entry = enter_runs(paths)
    t1 = time.perf_counter()
    leaderboard = build_leaderboard(entry, BoardConfig())
    t2 = time.perf_counter()
    render_board_html(leaderboard, out)
    render_board_markdown(leaderboard, out)
    json.dumps(leaderboard_to_dict(leaderboard))
    t3 = time.perf_counter()
    return {"read_and_verify_s": t1 - t0, "statistics_s": t2 - t1, "render_s": t3 - t2}


def timing(runs: dict[str, Path], work: Path, repeats: int) -> dict[str, Any]:
    """The ten-run board through the CLI, ``repeats`` times around one pass of 45 compares
    (the load is read before the first and after the last)."""
    paths = list(runs.values())
    out = work / "board-of-ten"
    out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()[0]
    (out / "compare").mkdir(exist_ok=True)
    cpu: list[float] = []
    board = [_wall(_board_command(paths, out), cpu)]
    compares = _compare_all(paths, out / "compare")
    board += [_wall(_board_command(paths, out), cpu) for _ in range(repeats - 1)]
    phases = _phases(paths, out)
    return {
        "board_s": board,
        "board_cpu_s": cpu,
        "compare_all_s": compares,
        "phases": phases,
        "load": f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}",
    }


def record_timing(path: Path, timed: dict[str, Any]) -> None:
    """``board_timing.json``: the ten-run board's wall time against 45 compares."""
    board = statistics.median(timed["board_s"])
    phases = timed["phases"]
    figures = [
        figure(
            "board",
            "board of 10 retro runs x 5,007 targets, wall (chemgauge board, 2 cores)",
            round(board, 1),
            "s",
            target="< 10",
            detail=(
                f"median of {len(timed['board_s'])} CLI runs "
                f"({', '.join(f'{t:.1f}' for t in timed['board_s'])} s) with HTML, Markdown and "
                f"JSON, CPU {statistics.median(timed['board_cpu_s']):.1f} s; in one process: "
                f"read and verify {phases['read_and_verify_s']:.1f} s, "
                f"statistics {phases['statistics_s']:.1f} s, pages {phases['render_s']:.2f} s"
            ),
        ),
        figure(
            "board",
            "board over chemgauge compare on each of the 45 pairs",
            round(timed["compare_all_s"] / board, 1),
            "x",
            detail=f"45 compare commands: {timed['compare_all_s']:.0f} s (no ranks, no letters)",
        ),
    ]
    write_result(
        "board_timing",
        title="The time to board ten retrosynthesis runs on USPTO-50k test",
        method=(
            "Ten chemgauge retro eval runs over all 5,007 USPTO-50k test targets (the split "
            "with reaction classes), predictions models fed 10 seeded synthetic outputs a "
            "target (chemgauge's generator: seeds 1-10, where the truth lands and how often "
            "it is absent varied). chemgauge board on the ten run folders is timed through "
            "the CLI (verification, breakdown boards and the three pages included), "
            "interleaved with one pass of chemgauge compare on each of the 45 pairs."
        ),
        figures=figures,
        load=timed["load"],
        path=path,
        script="board_retro.py",
    )


def record_board(path: Path, standings: list[dict[str, Any]], agree: bool) -> None:
    """``board_retro.json``: the five-run board and its agreement with ``compare``."""
    figures = [
        figure(
            "board",
            "five-run board's letters agree with compare on each of the 10 pairs",
            "yes" if agree else "no",
            target="== yes",
            detail="same discordant counts and McNemar p; Holm over the 10 pairs; a shared "
            "letter exactly when the adjusted p > 0.05",
        ),
    ]
    for s in standings:
        low, high = s["value"]["interval"]
        figures.append(
            figure(
                "board",
                f"USPTO-50k test, top-1 (syntheseus, exact): {s['run']}",
                f"{100 * s['value']['estimate']:.1f}% [{100 * low:.1f}, {100 * high:.1f}]",
                detail=f"rank {s['rank']}, group {s['letters']}; {s['count']:,}/{s['n']:,}",
            )
        )
    write_result(
        "board_retro",
        title="A board of retrosynthesis runs on USPTO-50k test",
        method=(
            "Five chemgauge retro eval runs over all 5,007 USPTO-50k test targets (the split "
            "with reaction classes): the templates baseline (rdchiral templates from the 5,001 "
            "validation reactions) and four predictions models fed 10 seeded synthetic "
            "outputs a target (chemgauge's generator, seeds 1-4: where the truth lands and "
            "how often it is absent varied), ranked by top-1 under the syntheseus convention "
            "and the exact matcher. The letters are checked against chemgauge compare on "
            "every pair."
        ),
        figures=figures,
        path=path,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=FULL, help="targets (default: all 5,007)")
    parser.add_argument("--jobs", type=int, default=0, help="workers for the runs (0 = all cores)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/chemgauge-bench-board"))
    parser.add_argument("--repeats", type=int, default=3, help="timed board commands")
    parser.add_argument("--prepare-only", action="store_true", help="make the runs, then stop")
    parser.add_argument(
        "--timing-only",
        action="store_true",
        help="time the ten-run board, then stop (no templates run, no five-run board)",
    )
    add_record_options(parser)
    args = parser.parse_args()
    jobs = args.jobs or os.cpu_count() or 1
    runs = prepare(args.work, jobs, args.limit, templates=not args.timing_only)
    if args.prepare_only:
        print(json.dumps({name: str(path) for name, path in runs.items()}, indent=2))
        return
    timed = timing({n: runs[n] for n in BOARD_OF_TEN}, args.work, args.repeats)
    board = statistics.median(timed["board_s"])
    print(
        f"board of {len(BOARD_OF_TEN)} runs x {args.limit} targets: {board:.1f} s (median of "
        f"{', '.join(f'{t:.1f}' for t in timed['board_s'])}; CPU "
        f"{statistics.median(timed['board_cpu_s']):.1f} s); 45 compares: "
        f"{timed['compare_all_s']:.1f} s ({timed['compare_all_s'] / board:.1f}x); phases "
        f"{ {k: round(v, 2) for k, v in timed['phases'].items()} }; load {timed['load']}",
        flush=True,
    )
    timing_path = record_path(args, "board_timing", full_size=args.limit >= FULL)
    if timing_path is not None and args.results is not None:  # --results names the board's file
        timing_path = timing_path.with_name(f"{timing_path.stem}_timing{timing_path.suffix}")
    if timing_path is not None:
        record_timing(timing_path, timed)
    if args.timing_only:
        return
    markdown, standings, agree = board_of_five(runs, args.work / f"board-of-five-n{args.limit}")
    print(markdown)
    print(f"letters agree with compare on every pair: {'yes' if agree else 'NO'}")
    board_path = record_path(args, "board_retro", full_size=args.limit >= FULL)
    if board_path is not None:
        record_board(board_path, standings, agree)


if __name__ == "__main__":
    main()
