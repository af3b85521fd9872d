"""The forward benchmark harness on USPTO-50k, end to end, under train-extracted templates.

``corpus-from-uspto`` turns ``val.csv`` and ``test_with_class.csv`` into one schema-1 corpus
(patent ids as group keys), ``extract-templates --split train`` extracts forward templates
from its leakage-safe train split only (each template listing its source reactions, whose
split the benchmark recomputes), and the benchmark runs under ``--template-source
train-extracted`` with the manifest. Prints the held-out headline first (val + test
together, then each split; train is in-sample and ``overall`` includes it), coverage and hit
rates with Wilson intervals, MRR and nDCG@10 with seeded bootstrap intervals, the leakage
audit (reactant sets and products shared across splits, per pair of splits and group-key
source) and the breakdown by reaction class.

Speed, in the same run: harness overhead (wall time outside the engine calls, with one
job) as a share of the total (target: at most 15%), and ``--jobs 2`` against ``--jobs 1``
on the same corpus (target: at least 1.6x faster). Both runs must agree on
``reproducibility_sha256``. ``--no-speed`` runs the parallel benchmark only (the figures
without the speed comparison).
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

from chemgauge.benchmarks.forward.aggregate import aggregate
from chemgauge.benchmarks.forward.extraction import extract_split_templates
from chemgauge.benchmarks.forward.runner import BenchmarkConfig, run_benchmark
from chemgauge.benchmarks.forward.uspto import write_uspto_corpus
from chemgauge.eval.executors import ExecutorConfig

DATA = Path(
    os.environ.get("CHEMGAUGE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def pct(block: dict[str, Any]) -> str:
    if block["value"] is None:
        return "-"
    low, high = block["wilson95"]
    return f"{100 * block['value']:5.1f}% [{100 * low:.1f}-{100 * high:.1f}]"


def interval(value: float | None, bounds: list[float | None]) -> str:
    if value is None or bounds[0] is None or bounds[1] is None:
        return "-"
    return f"{value:.3f} [{bounds[0]:.3f}-{bounds[1]:.3f}]"


def line(name: str, agg: dict[str, Any]) -> str:
    e2e, cond = agg["end_to_end"], agg["conditional"]
    return (
        f"| {name} | {agg['n_valid']} | {pct(agg['proposal_coverage'])} | "
        f"{pct(e2e['top1_hit_rate'])} | {pct(e2e['top5_hit_rate'])} | "
        f"{pct(e2e['top10_hit_rate'])} | {pct(cond['top1_hit_rate'])} | "
        f"{interval(e2e['mrr'], e2e['mrr_bootstrap95'])} | "
        f"{interval(e2e['ndcg_at_10'], e2e['ndcg_at_10_bootstrap95'])} |"
        if e2e["mrr"] is not None
        else f"| {name} | 0 | - | - | - | - | - | - | - |"
    )


HEADER = (
    "| group | valid | coverage | top-1 e2e | top-5 e2e | top-10 e2e | top-1 cond. "
    "| MRR e2e [95% bootstrap] | nDCG@10 e2e [95% bootstrap] |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def print_leakage(leakage: dict[str, Any]) -> None:
    print("\nLeakage audit (shared across splits; reactions by group-key source):\n")
    print("| kind | distinct | shared | " + " | ".join(PAIRS) + " |")
    print("|---|---|---|" + "---|" * len(PAIRS))
    for kind in ("reactant_sets", "products"):
        block = leakage[kind]
        cells = [
            f"{c['shared']} ({c['reactions']['explicit']} explicit, "
            f"{c['reactions']['fallback']} fallback)"
            for c in (block["by_split_pair"][pair] for pair in PAIRS)
        ]
        print(
            f"| {kind.replace('_', ' ')} | {block['distinct']} | "
            f"{block['shared_across_splits']} | " + " | ".join(cells) + " |"
        )
    for warning in leakage["warnings"]:
        print(f"warning: {warning}")


PAIRS = ("train/val", "train/test", "val/test")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N corpus records")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="keep outputs in this folder")
    parser.add_argument(
        "--no-speed", action="store_true", help="skip the --jobs 1 run (no speed comparison)"
    )
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
            output_rows=tmp / f"rows_{name}.jsonl",
            template_source="train-extracted",
            templates=extraction.templates_path,
            template_manifest=extraction.manifest_path,
            restart=True,
        )
        t0 = time.perf_counter()
        result = run_benchmark(config, executor)
        return time.perf_counter() - t0, result.report, result.rows_path

    parallel_s, report, rows_path = bench(f"jobs{args.jobs}", parallel)
    (tmp / f"report_jobs{args.jobs}.json").write_text(json.dumps(report, indent=1, sort_keys=True))
    assert report["headline"]["basis"] == "held_out"
    sources = report["rules"]["template_sources"]
    print(
        f"# template sources verified: {sources['templates']} templates from "
        f"{sources['source_reactions']} reactions, all in split {sources['split']!r}"
    )

    print(f"\n{HEADER}")
    print(line("held out (val + test)", report["held_out"]))
    for split in ("val", "test"):
        print(line(f"split {split}", report["by_split"][split]))
    print(line("split train (in-sample)", report["by_split"]["train"]))
    print(line("overall (includes in-sample train rows)", report["overall"]))
    print_leakage(report["leakage"])
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
    stats = report["corpus"]["stats"]
    print(f"\ncorpus stats: {stats}")
    cands = report["overall"]["candidate_count_distribution"]
    lat = report["overall"]["latency_ms"]
    print(
        f"candidates per reaction: mean {cands['mean']:.2f}, p50 {cands['p50']}, p95 {cands['p95']}"
    )
    print(f"latency ms: p50 {lat['p50']:.1f}, p95 {lat['p95']:.1f}")
    print(f"\n# speed ({os.cpu_count()} cores, load {os.getloadavg()})")
    print(f"--jobs {args.jobs}: {parallel_s:.1f} s wall")
    if not args.no_speed:
        serial_s, report1, _ = bench("jobs1", ExecutorConfig(kind="serial", jobs=1))
        elapsed = report1["elapsed_ms"]
        overhead = 1 - elapsed["engine_calls_sum"] / (serial_s * 1000)
        same = (
            report["provenance"]["reproducibility_sha256"]
            == report1["provenance"]["reproducibility_sha256"]
        )
        print(
            f"--jobs 1: {serial_s:.1f} s wall, "
            f"engine calls {elapsed['engine_calls_sum'] / 1000:.1f} s, "
            f"harness overhead {100 * overhead:.1f}% (target <= 15%)"
        )
        print(
            f"speed-up {serial_s / parallel_s:.2f}x (target >= 1.6x); "
            f"identical reproducibility_sha256: {same}"
        )
    if args.keep is None:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
