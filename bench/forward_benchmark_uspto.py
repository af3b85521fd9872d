"""The forward benchmark harness on USPTO-50k, end to end, under train-extracted templates.

``corpus-from-uspto`` turns ``val.csv`` and ``test_with_class.csv`` into one
schema-1 corpus (patent ids as group keys), ``extract-templates --split train`` extracts
forward templates from its leakage-safe train split only, and the benchmark runs under
``--template-source train-extracted`` with the manifest. Prints coverage and hit rates with
Wilson intervals for the val and test splits and the breakdown by reaction class.

Speed, in the same run: harness overhead (wall time outside the engine calls, with one
job) as a share of the total (target: at most 15%), and ``--jobs 2`` against ``--jobs 1``
on the same corpus (target: at least 1.6x faster). Both runs must agree on
``reproducibility_sha256``. A full run writes bench/results/forward_benchmark_uspto.json.
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
from result_files import add_record_options, figure, record_path, write_result

DATA = Path(
    os.environ.get("CHEMGAUGE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def pct(block: dict[str, Any]) -> str:
    if block["value"] is None:
        return "-"
    low, high = block["wilson95"]
    return f"{100 * block['value']:5.1f}% [{100 * low:.1f}-{100 * high:.1f}]"


def line(name: str, agg: dict[str, Any]) -> str:
    e2e, cond = agg["end_to_end"], agg["conditional"]
    return (
        f"| {name} | {agg['n_valid']} | {pct(agg['proposal_coverage'])} | "
        f"{pct(e2e['top1_hit_rate'])} | {pct(e2e['top5_hit_rate'])} | "
        f"{pct(e2e['top10_hit_rate'])} | {pct(cond['top1_hit_rate'])} | "
        f"{e2e['mrr']:.3f} |"
        if e2e["mrr"] is not None
        else f"| {name} | 0 | - | - | - | - | - | - |"
    )


HEADER = (
    "| group | valid | coverage | top-1 e2e | top-5 e2e | top-10 e2e | top-1 cond. | MRR e2e |\n"
    "|---|---|---|---|---|---|---|---|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N corpus records")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="keep outputs in this folder")
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
            output_rows=tmp / f"rows_{name}.jsonl",
            template_source="train-extracted",
            templates=extraction.templates_path,
            template_manifest=extraction.manifest_path,
            restart=True,
        )
        t0 = time.perf_counter()
        result = run_benchmark(config, executor)
        return time.perf_counter() - t0, result.report, result.rows_path

    serial_s, report, rows_path = bench("jobs1", ExecutorConfig(kind="serial", jobs=1))
    (tmp / "report_jobs1.json").write_text(json.dumps(report, indent=1, sort_keys=True))
    elapsed = report["timing"]["elapsed_ms"]
    overhead = 1 - elapsed["engine_calls_sum"] / (serial_s * 1000)
    parallel_s, report2, _ = bench(f"jobs{args.jobs}", parallel)
    same = report["reproducibility_sha256"] == report2["reproducibility_sha256"]
    metrics = report["metrics"]

    print(f"\n{HEADER}")
    for split in ("val", "test"):
        print(line(f"split {split}", metrics["by_split"][split]))
    print(line("overall (all valid rows)", metrics["overall"]))
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
    print(f"\n# speed ({os.cpu_count()} cores, load {os.getloadavg()})")
    print(
        f"--jobs 1: {serial_s:.1f} s wall, "
        f"engine calls {elapsed['engine_calls_sum'] / 1000:.1f} s, "
        f"harness overhead {100 * overhead:.1f}% (target <= 15%)"
    )
    print(
        f"--jobs {args.jobs}: {parallel_s:.1f} s wall, speed-up {serial_s / parallel_s:.2f}x "
        f"(target >= 1.6x); identical reproducibility_sha256: {same}"
    )
    if args.keep is None:
        shutil.rmtree(tmp)
    path = record_path(args, "forward_benchmark_uspto", full_size=not args.limit)
    if path is None:
        return

    def rates(split: str) -> str:
        block = metrics["by_split"][split]
        e2e = block["end_to_end"]
        values = (block["proposal_coverage"], e2e["top1_hit_rate"], e2e["top10_hit_rate"])
        return " / ".join(f"{100 * v['value']:.1f}" for v in values)

    write_result(
        "forward_benchmark_uspto",
        title="Forward benchmark harness on USPTO-50k, train-extracted templates",
        method=(
            "USPTO-50k validation + test (with classes) as one schema-1 corpus via "
            "corpus-from-uspto, forward templates extracted from the corpus's own train split "
            "only, benchmark under --template-source train-extracted with the manifest. "
            "Harness overhead is the wall time outside the engine calls with one job; both "
            "runs must give the same reproducibility_sha256."
        ),
        figures=[
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
            figure(
                "forward",
                "test split: coverage / top-1 / top-10 end to end",
                rates("test"),
                "%",
                detail=f"val: {rates('val')}%",
            ),
        ],
        path=path,
    )


if __name__ == "__main__":
    main()
