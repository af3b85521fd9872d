"""Forward engine on real data: templates from USPTO-50k val, predictions on USPTO-50k test.

Extracts forward templates (rdchiral, replay-checked) from every reaction of
``val.csv`` (``--split all``), then predicts products for the unmapped reactants of the
5,007 ``test.csv`` reactions and reports proposal coverage (exact and stereo-ignored),
top-1/5/10, candidates per reaction, latency p50/p95 and extraction failures by reason.

Speed, in the same run over the same templates and reactions: the engine serially against
a plain loop of RDKit ``RunReactants`` over every template and every ordered choice of
distinct reactant molecules, with canonicalization (target: engine within 1.3x of it), and
the engine through the executor with 2 jobs against serial (target: at least 1.6x faster).
A full run writes bench/results/forward_uspto.json.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from rdkit import Chem, RDLogger
from rdkit.Chem import rdChemReactions

from chemgauge.chem import canonical_multiset, try_flatten_stereo
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.eval.ranking import distribution
from chemgauge.eval.stats import wilson_interval
from chemgauge.families.forward.batch import EnumerateItem, RulesSpec, iter_enumerated
from chemgauge.families.forward.engine.predictor import predict_products_detailed
from chemgauge.families.forward.engine.rules import load_rules
from chemgauge.families.forward.extraction import extract_split_templates
from chemgauge.families.forward.uspto import uspto_records
from result_files import add_record_options, figure, record_path, write_result

RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]
DATA = Path(
    os.environ.get("CHEMGAUGE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def pct(k: int, n: int) -> str:
    interval = wilson_interval(k, n)
    if interval.estimate is None:
        return "-"
    return f"{100 * interval.estimate:.1f}% [{100 * interval.low:.1f}-{100 * interval.high:.1f}]"  # type: ignore[operator]


def plain_loop(smirks: list[str], reactions: list[list[str]]) -> tuple[float, int]:
    """RDKit RunReactants over every template and ordered choice of distinct molecules."""
    compiled = []
    for s in smirks:
        rxn = rdChemReactions.ReactionFromSmarts(s)
        rxn.Initialize()
        compiled.append((rxn, rxn.GetNumReactantTemplates()))
    start = time.perf_counter()
    total = 0
    for reactants in reactions:
        mols = [Chem.MolFromSmiles(r) for r in reactants]
        products: set[str] = set()
        for rxn, n in compiled:
            if n > len(mols):
                continue
            for combo in itertools.permutations(mols, n):
                for outcome in rxn.RunReactants(combo, 1000):
                    parts = []
                    for mol in outcome:
                        try:
                            Chem.SanitizeMol(mol)
                        except Exception:
                            parts = []
                            break
                        parts.append(Chem.MolToSmiles(mol))
                    if parts:
                        canon = Chem.MolFromSmiles(".".join(parts))
                        if canon is not None:
                            products.add(Chem.MolToSmiles(canon))
        total += len(products)
    return time.perf_counter() - start, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N test reactions")
    parser.add_argument("--jobs", type=int, default=2)
    add_record_options(parser)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="forward_uspto_"))
    start = time.perf_counter()
    run = extract_split_templates(
        DATA / "uspto50k" / "val.csv",
        "all",
        tmp,
        ExecutorConfig(kind="local", jobs=args.jobs, chunk_size=32),
    )
    extract_s = time.perf_counter() - start
    rules = load_rules([run.templates_path], embedded=False)
    spec = RulesSpec.of(rules, (str(run.templates_path),), False)
    summary = run.summary.to_dict()
    print(
        f"# templates from val.csv (--split all): {run.manifest['reactions_in_split']} "
        f"reactions, {summary['extracted']} extracted, {summary['distinct_templates']} distinct "
        f"templates, {extract_s:.0f} s with {args.jobs} jobs"
    )
    print(f"extraction failures by reason: {summary['failures_by_reason']}")
    print(
        f"grouped (intramolecular) templates needed: "
        f"{summary['reactions_needing_grouped_templates']}; replayed only stereo-ignored: "
        f"{summary['reproduced_stereo_ignored_only']}"
    )

    test = [rec for _, rec in uspto_records(DATA / "uspto50k" / "test.csv")]
    if args.limit:
        test = test[: args.limit]
    reactants = [rec["reactants"] for rec in test]
    truth = [canonical_multiset(".".join(rec["accepted_products"][0])) for rec in test]

    ranks: list[int | None] = []
    flat_hits = 0
    latencies: list[float] = []
    pool_sizes: list[int] = []
    start = time.perf_counter()
    reports = []
    for r in reactants:
        t0 = time.perf_counter()
        report = predict_products_detailed(r, rules)
        latencies.append((time.perf_counter() - t0) * 1000)
        reports.append(report)
    serial_s = time.perf_counter() - start
    for report, product in zip(reports, truth, strict=True):
        ranks.append(report.rank_of(product))
        pool_sizes.append(len(report.candidates))
        flat = try_flatten_stereo(".".join(product))
        if flat is not None and any(
            try_flatten_stereo(c.smiles) == flat for c in report.candidates
        ):
            flat_hits += 1
    n = len(truth)
    print(f"\n# predictions on test.csv: {n} reactions, {len(rules)} templates")
    print(f"proposal coverage exact:          {pct(sum(r is not None for r in ranks), n)}")
    print(f"proposal coverage stereo-ignored: {pct(flat_hits, n)}")
    for k in (1, 5, 10):
        print(f"top-{k:<2} {pct(sum(r is not None and r < k for r in ranks), n)}")
    pools = distribution(pool_sizes)
    lat = distribution(latencies)
    print(
        f"candidates per reaction: mean {pools.mean:.2f}, p50 {pools.p50}, p95 {pools.p95}, "
        f"max {pools.max}"
    )
    print(f"latency ms: p50 {lat.p50:.1f}, p95 {lat.p95:.1f}, mean {lat.mean:.1f}")

    plain_s, _ = plain_loop([rule.smirks for rule in rules], reactants)
    items = [EnumerateItem(i, None, tuple(r)) for i, r in enumerate(reactants)]
    start = time.perf_counter()
    for _ in iter_enumerated(
        items, spec, ExecutorConfig(kind="local", jobs=args.jobs, chunk_size=16)
    ):
        pass
    parallel_s = time.perf_counter() - start
    print(f"\n# speed ({platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()})")
    print(f"plain RDKit RunReactants loop: {plain_s:8.1f} s")
    print(
        f"chemgauge serial:              {serial_s:8.1f} s  ratio {serial_s / plain_s:.2f}x "
        "(target <= 1.3x)"
    )
    print(
        f"chemgauge --jobs {args.jobs}:              {parallel_s:8.1f} s  speed-up "
        f"{serial_s / parallel_s:.2f}x (target >= 1.6x)"
    )
    shutil.rmtree(tmp)
    path = record_path(args, "forward_uspto", full_size=not args.limit)
    if path is None:
        return
    hits = [sum(r is not None and r < k for r in ranks) / n * 100 for k in (1, 5, 10)]
    write_result(
        "forward_uspto",
        title="Forward engine on USPTO-50k",
        method=(
            "Forward templates extracted with rdchiral (replay-checked) from all of USPTO-50k "
            f"validation ({summary['distinct_templates']:,} distinct templates); products "
            f"predicted for the unmapped reactants of the {n:,} test reactions. Speed: the "
            "engine serially against a plain loop of RDKit RunReactants over every template "
            "and ordered choice of reactants, with canonicalization, on the same templates "
            f"and reactions; then the engine with {args.jobs} jobs against serial."
        ),
        figures=[
            figure(
                "forward",
                "engine serial / plain RunReactants loop",
                round(serial_s / plain_s, 2),
                "x",
                target="<= 1.3",
                detail=f"{serial_s:.1f} s against {plain_s:.1f} s",
            ),
            figure(
                "forward",
                f"engine --jobs {args.jobs} speed-up over serial",
                round(serial_s / parallel_s, 2),
                "x",
                target=">= 1.6",
                detail=f"{parallel_s:.1f} s",
            ),
            figure(
                "forward",
                "proposal coverage, exact (test)",
                round(sum(r is not None for r in ranks) / n * 100, 1),
                "%",
                detail=f"stereo ignored {flat_hits / n * 100:.1f}%",
            ),
            figure(
                "forward",
                "top-1 / top-5 / top-10 (test)",
                " / ".join(f"{h:.1f}" for h in hits),
                "%",
            ),
            figure(
                "forward",
                "latency per reaction, p50",
                round(lat.p50, 1),
                "ms",
                detail=f"p95 {lat.p95:.1f} ms; {pools.mean:.2f} candidates a reaction",
            ),
        ],
        path=path,
    )


if __name__ == "__main__":
    main()
