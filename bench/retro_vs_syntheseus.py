"""chemgauge retro eval vs syntheseus's own evaluator, same outputs, one run.

All 5,007 USPTO-50k test targets (``../shared/data/uspto50k/test.csv``) get 50 raw outputs
each from the seeded generator in :mod:`chemgauge.families.retro.synthetic` (true reactants
at random ranks or absent, stereo-free spellings of the truth, decoys from other targets in
random spellings, ~10% invalid, ~10% duplicate spellings). The same outputs are scored by:

* chemgauge, ``exact`` only and ``exact`` + ``stereo_ignored`` (all cores, and one core); the
  ``exact`` runs of both tools alternate for ``--rounds`` rounds and each tool's best wall time
  is compared (another process on the machine can only add time to a run, so the best of a few
  interleaved runs is each tool's least disturbed figure, and neither is favoured);
* syntheseus ``compute_metrics`` with a fixed-output backward model, without and with its
  stereo-relaxed mode (``include_predictions=False``, its lean setting), and optionally with
  its default of keeping predictions (``--syntheseus-default``, high memory).

chemgauge's sources are byte-compiled first, as ``pip install`` does for an installed package
(syntheseus's are): on a machine that sets ``PYTHONDONTWRITEBYTECODE`` a source checkout
would otherwise be compiled again in every child, a start-up cost that is no part of scoring.

Each run is a fresh subprocess; wall time, CPU time (user + system, the child and its
workers) and the peak resident memory of its whole process tree (sampled from /proc every
50 ms) are reported with the load average around it. On a shared machine wall time depends on
the load; CPU time measures the work itself. The syntheseus-shaped results file chemgauge
writes (``syntheseus_results.json``) is compared field by field with syntheseus's
``EvalResults`` (top-k curves, MRR, prediction-count statistics, stereo view): every number
must be identical (that file holds syntheseus's own verdicts, computed beside chemgauge's).

Targets: at least 5x faster than syntheseus (wall), peak memory at most 1 GB, the
stereo-ignored view adding at most 30%, and identical syntheseus-convention curves. A full
run (all 5,007 targets) writes bench/results/retro_vs_syntheseus.json.

Usage: python bench/retro_vs_syntheseus.py [--limit N] [--jobs J] [--work DIR]
Needs syntheseus (``pip install 'chemgauge[syntheseus]'``; its core does not pull torch).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from result_files import add_record_options, figure, record_path, write_result

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data")) / "uspto50k"


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of a process and all its descendants (Linux /proc)."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as handle:
                    stack.extend(int(c) for c in handle.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def _measure(args: list[str]) -> dict[str, Any]:
    load_before = os.getloadavg()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, __file__, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_kb(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the child and its waited workers
    cpu = usage.ru_utime + usage.ru_stime - cpu_before
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"child {args} failed with exit code {proc.returncode}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    result.update(
        wall_s=wall,
        cpu_s=cpu,
        peak_rss_mb=peak / 1024,
        load_before=load_before,
        load_after=os.getloadavg(),
    )
    return result


# -- children -------------------------------------------------------------------------------

# EvalResults fields compared between chemgauge's syntheseus-shaped file and syntheseus.
_FILE_FIELDS = (
    "num_samples",
    "top_k",
    "mrr",
    "min_num_predictions",
    "max_num_predictions",
    "mean_num_predictions",
    "median_num_predictions",
    "match_modulo_stereo_top_k",
    "match_modulo_stereo_mrr",
)


def _child_chemgauge(preds: str, out: str, matchers: str, jobs: int, limit: int) -> None:
    from chemgauge.families.retro import RetroEvalConfig, run_retro_eval

    config = RetroEvalConfig(
        data_dir=str(DATA),
        model_class="predictions",
        model_dir=preds,
        num_top_results=50,
        matchers=tuple(matchers.split(",")),
        include_results_modulo_stereo="stereo_ignored" in matchers.split(","),
        out=out,
        restart=True,
        jobs=jobs,
        executor="local" if jobs != 1 else "serial",
        limit=limit,
    )
    run = run_retro_eval(config)
    accuracy = run.report["metrics"]["accuracy"]
    name = run.report["metrics"]["syntheseus_results"]["file"]
    written = json.loads((Path(out) / name).read_text())
    print(
        json.dumps(
            {
                "curve": accuracy["syntheseus"]["exact"]["curve"],
                "stereo_curve": accuracy["syntheseus"].get("stereo_ignored", {}).get("curve"),
                "mrr": accuracy["syntheseus"]["exact"]["mrr"]["value"],
                "file": {k: written[k] for k in _FILE_FIELDS},
                "timing": run.report["timing"]["seconds"],
            }
        )
    )


def _child_syntheseus(preds: str, stereo: bool, keep: bool, limit: int) -> None:
    from syntheseus import Molecule
    from syntheseus.cli.eval_single_step import compute_metrics
    from syntheseus.interface.models import BackwardReactionModel
    from syntheseus.reaction_prediction.data.dataset import DataFold, DiskReactionDataset
    from syntheseus.reaction_prediction.data.reaction_sample import ReactionSample
    from syntheseus.reaction_prediction.utils.inference import (
        process_raw_smiles_outputs_backwards,
    )

    raw: dict[str, list[str]] = {}
    with open(preds, "rb") as handle:
        for line in handle:
            obj = json.loads(line)
            raw[Molecule(obj["product"]).smiles] = obj["predictions"]

    class FixedOutputs(BackwardReactionModel):  # type: ignore[misc]
        """Weight-free model: returns the recorded raw outputs, parsed as syntheseus does."""

        def _get_reactions(self, inputs: list[Any], num_results: int) -> list[Any]:
            out = []
            for mol in inputs:
                outputs = raw.get(mol.smiles, [])[:num_results]
                out.append(
                    process_raw_smiles_outputs_backwards(mol, outputs, [{} for _ in outputs])
                )
            return out

        def get_parameters(self) -> list[Any]:
            return []

    start = time.perf_counter()
    dataset = DiskReactionDataset(str(DATA), sample_cls=ReactionSample)
    with contextlib.redirect_stdout(io.StringIO()):
        results = compute_metrics(
            FixedOutputs(remove_duplicates=True),
            dataset=dataset,
            num_dataset_truncation=limit,
            num_top_results=50,
            include_results_modulo_stereo=stereo,
            fold=DataFold.TEST,
            include_predictions=keep,
        )
    print(
        json.dumps(
            {
                "curve": [float(x) for x in results.top_k],
                "stereo_curve": None
                if results.match_modulo_stereo_top_k is None
                else [float(x) for x in results.match_modulo_stereo_top_k],
                "mrr": results.mrr,
                "file": {
                    k: (
                        [float(x) for x in getattr(results, k)]
                        if k.endswith("top_k") and getattr(results, k) is not None
                        else getattr(results, k)
                    )
                    for k in _FILE_FIELDS
                },
                "timing": {"total_s": time.perf_counter() - start},
            }
        )
    )


# -- driver ---------------------------------------------------------------------------------


def _generate(work: Path, jobs: int, limit: int) -> Path:
    from chemgauge.eval.executors import ExecutorConfig
    from chemgauge.eval.provenance import canonical_json, sha256_file
    from chemgauge.families.retro.data import find_fold_file, load_targets
    from chemgauge.families.retro.synthetic import SyntheticSettings, generate_outputs

    settings = SyntheticSettings()
    digest = sha256_file(DATA / "test.csv")[:12]
    preds = work / f"outputs-{digest}-seed{settings.seed}-n{limit}.jsonl"
    if preds.exists():
        return preds
    executor = ExecutorConfig(kind="local", jobs=jobs)
    targets = load_targets(find_fold_file(DATA, "test"), limit=limit, executor=executor).targets
    start = time.perf_counter()
    outputs = generate_outputs(targets, settings, executor=executor)
    print(f"generated {len(targets)} x 50 outputs in {time.perf_counter() - start:.0f} s")
    tmp = preds.with_suffix(".tmp")
    written: set[str] = set()
    with open(tmp, "wb") as handle:
        for target, outs in zip(targets, outputs, strict=True):
            if target.product in written:  # a recurring product: one line, same outputs
                continue
            written.add(target.product)
            handle.write(canonical_json({"product": target.product, "predictions": outs}) + b"\n")
    tmp.replace(preds)
    return preds


def _byte_compile() -> None:
    """Byte-compile chemgauge's package in place (``__pycache__``, as an install does)."""
    import compileall

    import chemgauge

    compileall.compile_dir(Path(chemgauge.__file__).parent, quiet=1)


def _row(name: str, r: dict[str, Any]) -> str:
    lb, la = r["load_before"][0], r["load_after"][0]
    return (
        f"| {name} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} "
        f"| {lb:.1f} -> {la:.1f} |"
    )


def _rounds(results: dict[str, dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    """The interleaved ``exact`` runs of one tool, in the order they ran."""
    return [r for name, r in results.items() if name.startswith(f"{tool} exact #")]


def _best(results: dict[str, dict[str, Any]], tool: str) -> dict[str, Any]:
    """A tool's least disturbed ``exact`` run (lowest wall time)."""
    return min(_rounds(results, tool), key=lambda r: float(r["wall_s"]))


def _walls(runs: list[dict[str, Any]]) -> str:
    return ", ".join(f"{r['wall_s']:.1f}" for r in runs)


def _record(
    path: Path,
    results: dict[str, dict[str, Any]],
    jobs: int,
    same: bool,
    limit: int,
    differing: list[str],
) -> None:
    """bench/results/retro_vs_syntheseus.json from one full run."""
    cg, sy = _best(results, "chemgauge"), _best(results, "syntheseus")
    cg_runs, sy_runs = _rounds(results, "chemgauge"), _rounds(results, "syntheseus")
    cgs = results["chemgauge exact+stereo_ignored"]
    sys_ = results.get("syntheseus exact+relaxed stereo")
    best_cpu = min(float(r["cpu_s"]) for r in cg_runs)
    sy_cpu = min(float(r["cpu_s"]) for r in sy_runs)
    peak = max(max(r["peak_rss_mb"] for r in cg_runs), cgs["peak_rss_mb"]) / 1000
    loads = [r["load_before"][0] for r in (*cg_runs, *sy_runs)]
    figures = [
        figure(
            "retro",
            "speed-up over syntheseus, wall",
            round(sy["wall_s"] / cg["wall_s"], 2),
            "x",
            target=">= 5",
            detail=(
                f"best of {len(cg_runs)} interleaved rounds: chemgauge {_walls(cg_runs)} s, "
                f"syntheseus {_walls(sy_runs)} s; CPU {sy_cpu / best_cpu:.2f}x"
            ),
        ),
        figure(
            "retro",
            "peak memory, chemgauge",
            round(peak, 2),
            "GB",
            target="<= 1",
            detail=f"syntheseus {sy['peak_rss_mb'] / 1000:.2f} GB",
        ),
        figure(
            "retro",
            "stereo-ignored view, extra wall time",
            round((cgs["wall_s"] / cg["wall_s"] - 1) * 100),
            "%",
            target="<= 30",
        ),
        figure(
            "retro",
            "syntheseus convention equals syntheseus's own metrics",
            "identical" if same else "different",
            target="== identical",
            detail=f"top-1..50 curves; MRR {cg['mrr']:.6f}",
        ),
        figure(
            "retro",
            "syntheseus_results.json equals syntheseus's EvalResults",
            "identical" if not differing else "different",
            target="== identical",
            detail=", ".join(_FILE_FIELDS)
            + ("" if not differing else f"; differing: {', '.join(differing)}"),
        ),
    ]
    if sys_ is not None:
        figures.append(
            figure(
                "retro",
                "with the stereo view, speed-up over syntheseus's relaxed mode",
                round(sys_["wall_s"] / cgs["wall_s"], 1),
                "x",
            )
        )
    write_result(
        "retro_vs_syntheseus",
        title="Retrosynthesis scoring against syntheseus's evaluator",
        method=(
            f"All {limit:,} USPTO-50k test targets with 50 seeded raw outputs each, scored by "
            "syntheseus's compute_metrics (include_predictions=False, its lean setting) and "
            f"by chemgauge ({jobs} workers) in one run, each in a fresh subprocess. The two "
            f"tools' exact runs alternate for {len(cg_runs)} rounds and each tool's best wall "
            "time is compared (load on a shared machine only adds time, so the best of a few "
            "interleaved runs is each tool's least disturbed figure). Both tools' packages are "
            "byte-compiled, as an install leaves them. Wall and CPU time, peak RSS of the "
            "process tree, the load before each run."
        ),
        figures=figures,
        load=f"{min(loads):.1f} to {max(loads):.1f}",
        path=path,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=5007)
    parser.add_argument("--jobs", type=int, default=0, help="chemgauge workers (0 = all cores)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/chemgauge-bench-retro"))
    parser.add_argument(
        "--syntheseus-default",
        action="store_true",
        help="also run syntheseus keeping predictions (its default; ~9 GB)",
    )
    parser.add_argument(
        "--no-relaxed",
        action="store_true",
        help="skip syntheseus's stereo-relaxed run (~10 minutes); no stereo speed-up line",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="interleaved exact runs of each tool; the best of each is compared (default 3)",
    )
    parser.add_argument("--child", nargs="*")
    add_record_options(parser)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "chemgauge":
            _child_chemgauge(rest[0], rest[1], rest[2], int(rest[3]), int(rest[4]))
        else:
            _child_syntheseus(rest[0], rest[1] == "1", rest[2] == "1", int(rest[3]))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    jobs = args.jobs or cores
    preds = str(_generate(args.work, jobs, args.limit))
    _byte_compile()
    n = str(args.limit)
    out = {key: str(args.work / f"chemgauge-{key}") for key in ("exact", "stereo", "one")}
    # the two tools' exact runs alternate; each tool's best run is compared (see the docstring)
    exact_cg = ["--child", "chemgauge", preds, out["exact"], "exact", str(jobs), n]
    exact_sy = ["--child", "syntheseus", preds, "0", "0", n]
    plan: list[tuple[str, list[str]]] = []
    for index in range(max(1, args.rounds)):
        pair = [
            (f"chemgauge exact #{index + 1}", exact_cg),
            (f"syntheseus exact #{index + 1}", exact_sy),
        ]
        plan.extend(pair if index % 2 == 0 else pair[::-1])
    plan += [
        (
            "chemgauge exact+stereo_ignored",
            ["--child", "chemgauge", preds, out["stereo"], "exact,stereo_ignored", str(jobs), n],
        ),
        ("syntheseus exact+relaxed stereo", ["--child", "syntheseus", preds, "1", "0", n]),
        ("chemgauge exact, 1 core", ["--child", "chemgauge", preds, out["one"], "exact", "1", n]),
    ]
    if args.no_relaxed:
        plan = [step for step in plan if step[0] != "syntheseus exact+relaxed stereo"]
    if args.syntheseus_default:
        plan.append(
            (
                "syntheseus default (keeps predictions)",
                ["--child", "syntheseus", preds, "0", "1", n],
            )
        )
    results: dict[str, dict[str, Any]] = {}
    for name, child in plan:
        results[name] = _measure(child)
        print(
            f"{name}: {results[name]['wall_s']:.1f} s, {results[name]['peak_rss_mb']:.0f} MB",
            flush=True,
        )

    cg, sy = _best(results, "chemgauge"), _best(results, "syntheseus")
    cg_runs = _rounds(results, "chemgauge")
    cgs = results["chemgauge exact+stereo_ignored"]
    sys_ = results.get("syntheseus exact+relaxed stereo")
    print(f"\n{args.limit} targets x 50 outputs; {cores} cores; chemgauge jobs={jobs}\n")
    print("| run | wall s | CPU s | peak RSS MB | load avg (1 min) |\n|---|---|---|---|---|")
    for name, r in results.items():
        print(_row(name, r))
    sy_runs = _rounds(results, "syntheseus")
    best_cpu = min(float(r["cpu_s"]) for r in cg_runs)
    sy_cpu = min(float(r["cpu_s"]) for r in sy_runs)
    print(
        f"\nspeed-up, exact: {sy['wall_s'] / cg['wall_s']:.2f}x wall (best of "
        f"{len(cg_runs)} interleaved rounds: chemgauge {_walls(cg_runs)} s, syntheseus "
        f"{_walls(sy_runs)} s), {sy_cpu / best_cpu:.2f}x CPU time"
    )
    if sys_ is not None:
        print(
            f"speed-up, with stereo view: {sys_['wall_s'] / cgs['wall_s']:.2f}x wall, "
            f"{sys_['cpu_s'] / cgs['cpu_s']:.2f}x CPU time"
        )
    one = results["chemgauge exact, 1 core"]
    print(f"speed-up, exact, chemgauge on 1 core: {sy['wall_s'] / one['wall_s']:.2f}x")
    overhead = (
        f"stereo view overhead (wall / CPU, against the best exact run): chemgauge "
        f"+{(cgs['wall_s'] / cg['wall_s'] - 1) * 100:.0f}% / "
        f"+{(cgs['cpu_s'] / best_cpu - 1) * 100:.0f}%"
    )
    if sys_ is not None:
        overhead += (
            f", syntheseus +{(sys_['wall_s'] / sy['wall_s'] - 1) * 100:.0f}% / "
            f"+{(sys_['cpu_s'] / sy['cpu_s'] - 1) * 100:.0f}%"
        )
    print(overhead)
    same = all(r["curve"] == sy["curve"] for r in cg_runs) and (
        sys_ is None or cgs["stereo_curve"] == sys_["stereo_curve"]
    )
    print(
        f"parity (syntheseus convention top-1..50, exact{'' if sys_ is None else ' and stereo'}): "
        f"{'identical' if same else 'DIFFERENT'}; MRR {cg['mrr']:.6f} vs {sy['mrr']:.6f}"
    )
    pairs = [(cg, sy)] if sys_ is None else [(cg, sy), (cgs, sys_)]
    differing = sorted(
        {
            k
            for ours, theirs in pairs
            for k in _FILE_FIELDS
            if theirs["file"][k] is not None and ours["file"][k] != theirs["file"][k]
        }
    )
    print(
        "syntheseus_results.json vs syntheseus's EvalResults ("
        + ", ".join(_FILE_FIELDS)
        + "): "
        + ("identical" if not differing else f"DIFFERENT in {', '.join(differing)}")
    )
    path = record_path(args, "retro_vs_syntheseus", full_size=args.limit >= 5007)
    if path is not None:
        _record(path, results, jobs, same, args.limit, differing)
    report = json.loads((Path(out["stereo"]) / "report.json").read_text())
    print(
        "\n| convention | matcher | "
        + " | ".join(f"top-{k}" for k in (1, 3, 5, 10, 20, 50))
        + " | MRR |\n|---|---|"
        + "---|" * 7
    )
    metrics = report["metrics"]
    for convention in metrics["conventions"]:
        for matcher in metrics["matchers"]:
            block = metrics["accuracy"][convention][matcher]
            rates = {rate["k"]: rate["value"] for rate in block["top_k"]}
            tops = " | ".join(f"{rates[k] * 100:.1f}" for k in (1, 3, 5, 10, 20, 50))
            print(f"| {convention} | {matcher} | {tops} | {block['mrr']['value']:.4f} |")
    outputs = metrics["outputs"]
    print(
        f"\noutputs: {outputs['total']} raw, "
        f"{outputs['invalid_rate']['value'] * 100:.1f}% invalid, "
        f"{outputs['duplicate_rate']['value'] * 100:.1f}% duplicates"
    )


if __name__ == "__main__":
    main()
