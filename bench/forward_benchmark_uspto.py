"""The forward benchmark harness on USPTO-50k, end to end, under train-extracted templates.

``corpus-from-uspto`` turns ``val.csv`` and ``test_with_class.csv`` into one schema-1 corpus
(patent ids as group keys), ``extract-templates --split train`` extracts forward templates
from its leakage-safe train split only (each template listing its source reactions, whose
split the benchmark recomputes), and the benchmark runs under ``--template-source
train-extracted`` with the manifest. Prints the held-out rows first (val + test together,
then each split; train is in-sample and ``overall`` includes it): coverage and hit rates with
Wilson intervals, MRR and nDCG@10 with seeded bootstrap intervals; then the leakage audit
(reactant sets and products shared across splits, per pair of splits and group-key source)
and the breakdown by reaction class.

Speed, in the same run: harness overhead (wall time outside the engine calls, with one
job) as a share of the total (target: at most 15%), and ``--jobs 2`` against ``--jobs 1``
on the same corpus (target: at least 1.6x faster). Both runs must agree on
``reproducibility_sha256``. ``--no-speed`` runs the parallel benchmark only; its result file
keeps the speed figures already recorded, each with its own date and load. A full run writes
bench/results/forward_benchmark_uspto.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from chemgauge.eval.executors import ExecutorConfig
from chemgauge.families.forward.aggregate import aggregate
from chemgauge.families.forward.config import BenchmarkConfig
from chemgauge.families.forward.extraction import extract_split_templates
from chemgauge.families.forward.runner import run_benchmark
from chemgauge.families.forward.uspto import write_uspto_corpus
from result_files import add_record_options, figure, load_average, record_path, write_result

DATA = Path(
    os.environ.get("CHEMGAUGE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def pct(block: dict[str, Any]) -> str:
    if block["value"] is None:
        return "-"
    low, high = block["interval"]
    return f"{100 * block['value']:5.1f}% [{100 * low:.1f}-{100 * high:.1f}]"


def interval(estimate: dict[str, Any]) -> str:
    value, (low, high) = estimate["value"], estimate["interval"]
    if value is None or low is None or high is None:
        return "-"
    return f"{value:.3f} [{low:.3f}-{high:.3f}]"


def line(name: str, agg: dict[str, Any]) -> str:
    e2e, cond = agg["end_to_end"], agg["conditional"]
    return (
        f"| {name} | {agg['n_valid']} | {pct(agg['proposal_coverage'])} | "
        f"{pct(e2e['top1_hit_rate'])} | {pct(e2e['top5_hit_rate'])} | "
        f"{pct(e2e['top10_hit_rate'])} | {pct(cond['top1_hit_rate'])} | "
        f"{interval(e2e['mrr'])} | "
        f"{interval(e2e['ndcg_at_10'])} |"
        if e2e["mrr"]["value"] is not None
        else f"| {name} | 0 | - | - | - | - | - | - | - |"
    )


HEADER = (
    "| group | valid | coverage | top-1 e2e | top-5 e2e | top-10 e2e | top-1 cond. "
    "| MRR e2e [95% bootstrap] | nDCG@10 e2e [95% bootstrap] |\n"
    "|---|---|---|---|---|---|---|---|---|"
)
PAIRS = ("train/val", "train/test", "val/test")
SPEED_FIGURES = ("harness overhead", "benchmark --jobs", "same reproducibility_sha256")


def shared(block: dict[str, Any]) -> list[str]:
    """Per pair of splits: shared keys (reactions with explicit / fallback group keys)."""
    return [
        f"{c['shared']} ({c['reactions']['explicit']} explicit, "
        f"{c['reactions']['fallback']} fallback)"
        for c in (block["by_split_pair"][pair] for pair in PAIRS)
    ]


def print_leakage(leakage: dict[str, Any]) -> None:
    print("\nLeakage audit (shared across splits; reactions by group-key source):\n")
    print("| kind | distinct | shared | " + " | ".join(PAIRS) + " |")
    print("|---|---|---|" + "---|" * len(PAIRS))
    for kind in ("reactant_sets", "products"):
        block = leakage[kind]
        print(
            f"| {kind.replace('_', ' ')} | {block['distinct']} | "
            f"{block['shared_across_splits']} | " + " | ".join(shared(block)) + " |"
        )
    for warning in leakage["warnings"]:
        print(f"warning: {warning}")


def recorded_speed(path: Path) -> list[dict[str, Any]]:
    """The speed figures of an earlier result file, each with its own date, load, command."""
    if not path.exists():
        return []
    earlier = json.loads(path.read_text())
    return [
        {"date": earlier["date"], "load": earlier["load"], "command": earlier["command"], **f}
        for f in earlier["figures"]
        if f["name"].startswith(SPEED_FIGURES)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N corpus records")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="keep outputs in this folder")
    parser.add_argument(
        "--no-speed", action="store_true", help="skip the --jobs 1 run (no speed comparison)"
    )
    add_record_options(parser)
    args = parser.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="forward_bench_"))
    tmp.mkdir(parents=True, exist_ok=True)
    corpus = tmp / "uspto50k_val_test.jsonl"
    n = write_uspto_corpus(
        [DATA / "uspto50k" / "val.csv", DATA / "uspto50k" / "test_with_class.csv"], corpus
    )
    if args.limit:
        lines = corpus.read_text().splitlines(keepends=True)[: args.limit]
        corpus.write_text("".join(lines))
        n = len(lines)
    print(f"# corpus: {n} records from val.csv + test_with_class.csv")

    parallel = ExecutorConfig(kind="local", jobs=args.jobs, chunk_size=16)
    start = time.perf_counter()
    extraction = extract_split_templates(corpus, "train", tmp / "templates", parallel)
    extract_s = time.perf_counter() - start
    summary = extraction.summary.to_dict()
    print(
        f"# templates from the train split: {extraction.manifest['reactions_in_split']} "
        f"reactions, {summary['extracted']} extracted, {summary['distinct_templates']} "
        f"distinct ({extract_s:.0f} s, {args.jobs} jobs); failures {summary['failures_by_reason']}"
    )

    def bench(name: str, executor: ExecutorConfig) -> tuple[float, dict[str, Any], Path]:
        config = BenchmarkConfig(
            corpus=corpus,
            out=tmp / f"run_{name}",
            template_source="train-extracted",
            templates=extraction.templates_path,
            template_manifest=extraction.manifest_path,
            restart=True,
            executor=executor.kind,
            jobs=executor.jobs,
            chunk_size=executor.chunk_size,
        )
        t0 = time.perf_counter()
        result = run_benchmark(config)
        return time.perf_counter() - t0, result.report, result.rows_path

    parallel_s, report, rows_path = bench(f"jobs{args.jobs}", parallel)
    (tmp / f"report_jobs{args.jobs}.json").write_text(json.dumps(report, indent=1, sort_keys=True))
    metrics = report["metrics"]
    assert metrics["headline"]["basis"] == "held_out"
    sources = metrics["rules"]["template_sources"]
    print(
        f"# template sources verified: {sources['templates']} templates from "
        f"{sources['source_reactions']} reactions, all in split {sources['split']!r}"
    )
    print(f"\n{HEADER}")
    print(line("held out (val + test)", metrics["held_out"]))
    for split in ("val", "test"):
        print(line(f"split {split}", metrics["by_split"][split]))
    print(line("split train (in-sample)", metrics["by_split"]["train"]))
    print(line("overall (includes in-sample train rows)", metrics["overall"]))
    print_leakage(metrics["leakage"])
    rows = [json.loads(text) for text in rows_path.read_text().splitlines()]
    held_out = [r for r in rows if r["split"] in ("val", "test")]
    print("\nBy reaction class (val + test splits):\n")
    print(HEADER)
    classes = sorted({str(r["reaction_class"]) for r in held_out}, key=lambda c: (len(c), c))
    for cls in classes:
        print(
            line(
                f"class {cls}", aggregate([r for r in held_out if str(r["reaction_class"]) == cls])
            )
        )
    stats = metrics["corpus"]["stats"]
    print(f"\ncorpus stats: {stats}")
    cands = metrics["overall"]["candidate_count_distribution"]
    lat = metrics["overall"]["latency_ms"]
    print(
        f"candidates per reaction: mean {cands['mean']:.2f}, p50 {cands['p50']}, p95 {cands['p95']}"
    )
    print(f"latency ms: p50 {lat['p50']:.1f}, p95 {lat['p95']:.1f}")
    load = load_average()
    print(f"\n# speed ({os.cpu_count()} cores, load {os.getloadavg()})")
    print(f"--jobs {args.jobs}: {parallel_s:.1f} s wall")
    speed: list[dict[str, Any]] = []
    if not args.no_speed:
        serial_s, report1, _ = bench("jobs1", ExecutorConfig(kind="serial", jobs=1))
        elapsed = report1["timing"]["elapsed_ms"]
        overhead = 1 - elapsed["engine_calls_sum"] / (serial_s * 1000)
        same = report["reproducibility_sha256"] == report1["reproducibility_sha256"]
        print(
            f"--jobs 1: {serial_s:.1f} s wall, "
            f"engine calls {elapsed['engine_calls_sum'] / 1000:.1f} s, "
            f"harness overhead {100 * overhead:.1f}% (target <= 15%)"
        )
        print(
            f"speed-up {serial_s / parallel_s:.2f}x (target >= 1.6x); "
            f"identical reproducibility_sha256: {same}"
        )
        speed = [
            figure(
                "forward",
                "harness overhead, --jobs 1",
                round(100 * overhead, 1),
                "%",
                target="<= 15",
                detail=(
                    f"{serial_s:.0f} s wall, {elapsed['engine_calls_sum'] / 1000:.0f} s in "
                    "engine calls"
                ),
            ),
            figure(
                "forward",
                f"benchmark --jobs {args.jobs} speed-up over --jobs 1",
                round(serial_s / parallel_s, 2),
                "x",
                target=">= 1.6",
                detail=f"{parallel_s:.0f} s against {serial_s:.0f} s",
            ),
            figure(
                "forward",
                f"same reproducibility_sha256 at --jobs 1 and {args.jobs}",
                "yes" if same else "no",
                target="== yes",
            ),
        ]
    if args.keep is None:
        shutil.rmtree(tmp)
    path = record_path(args, "forward_benchmark_uspto", full_size=not args.limit)
    if path is None:
        return

    def rates(block: dict[str, Any]) -> str:
        e2e = block["end_to_end"]
        values = (block["proposal_coverage"], e2e["top1_hit_rate"], e2e["top10_hit_rate"])
        return " / ".join(f"{100 * v['value']:.1f}" for v in values)

    held, splits = metrics["held_out"], metrics["by_split"]
    e2e = held["end_to_end"]
    leakage = metrics["leakage"]
    write_result(
        "forward_benchmark_uspto",
        title="Forward benchmark harness on USPTO-50k, train-extracted templates",
        method=(
            "USPTO-50k validation + test (with classes) as one schema-1 corpus via "
            "corpus-from-uspto, forward templates extracted from the corpus's own train split "
            "only (each listing its source reactions, whose split the benchmark recomputes), "
            "benchmark under --template-source train-extracted with the manifest. The train "
            "split is in-sample, so the held-out rows (val + test) are the headline. Rates "
            "with 95% Wilson intervals, MRR and nDCG@10 with a seeded percentile bootstrap "
            "(seed 0, 2,000 resamples). Harness overhead is the wall time outside the engine "
            "calls with one job; both runs must give the same reproducibility_sha256."
        ),
        figures=[
            *(speed or recorded_speed(path)),
            figure(
                "forward",
                "held out (val + test): coverage / top-1 / top-10 end to end",
                rates(held),
                "%",
                detail=(
                    f"{held['n_valid']:,} valid rows; val {rates(splits['val'])}%, "
                    f"test {rates(splits['test'])}%; in-sample train "
                    f"{rates(splits['train'])}%, overall (includes in-sample train rows) "
                    f"{rates(metrics['overall'])}%"
                ),
            ),
            figure(
                "forward",
                "held out (val + test): MRR / nDCG@10 end to end",
                f"{e2e['mrr']['value']:.3f} / {e2e['ndcg_at_10']['value']:.3f}",
                detail=(f"95% bootstrap {interval(e2e['mrr'])} / {interval(e2e['ndcg_at_10'])}"),
            ),
            figure(
                "forward",
                "leakage audit: reactant sets / products in more than one split",
                f"{leakage['reactant_sets']['shared_across_splits']} / "
                f"{leakage['products']['shared_across_splits']}",
                detail=(
                    f"of {leakage['reactant_sets']['distinct']:,} / "
                    f"{leakage['products']['distinct']:,} distinct; products "
                    + ", ".join(
                        f"{pair} {cell}"
                        for pair, cell in zip(PAIRS, shared(leakage["products"]), strict=True)
                    )
                ),
            ),
            figure(
                "forward",
                "train-extracted template sources verified in the train split",
                f"{sources['source_reactions']:,} reactions",
                detail=f"{sources['templates']:,} templates",
            ),
        ],
        load=load,
        path=path,
    )


if __name__ == "__main__":
    main()
