"""Real check of the p2s family: xtb-built dipole and gap views, the audit, three baselines.

Sources are the NCI set shipped inside the rdkit wheel, smallest molecules first. The script
builds ``dipole`` and ``gap`` with the ``xtb`` provider (GFN2-xTB via tblite), or takes the
release embedded in the package (``--embedded``); prints the shortcut audit of the release
(targets: no leak and no single-feature tell beats chance, Holm-adjusted p >= 0.05 on every
view; the id-hash attack answers nothing); runs the structure-only, random and
property-oracle baselines on all three views and prints each claim (target: the oracle makes
the use claim, structure-only and random do not). Also printed: build time per molecule,
split into the RDKit geometry (embedding + force field) and the xTB single point.

Writes bench/results/p2s_xtb.json on a full run (``--sources 400`` or more) and
bench/results/p2s_embedded.json with ``--embedded``.

    python bench/p2s_xtb.py --sources 400 --out /tmp/p2s_bench
    python bench/p2s_xtb.py --embedded
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from chemgauge.chem.properties import embed_geometry
from chemgauge.families.p2s.audit import audit_dataset
from chemgauge.families.p2s.build import build_benchmark
from chemgauge.families.p2s.claim import claim_report, prediction_paths
from chemgauge.families.p2s.config import BuildConfig, RunConfig
from chemgauge.families.p2s.embedded import default_data, nci_sources
from chemgauge.families.p2s.engine.models import ModelOptions
from chemgauge.families.p2s.engine.registry import get_model, get_provider
from chemgauge.families.p2s.runner import run_model
from result_files import add_record_options, figure, record_path, write_result

MODELS = ("property_oracle", "structure_only", "random")
PROPERTIES = ("dipole", "gap")


def pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:5.1f}"


def build(count: int, out: Path) -> tuple[Path, dict[str, Any]]:
    """Build dipole and gap from ``count`` NCI sources into ``out/data``; print the costs."""
    sources = out / "sources.smi"
    out.mkdir(parents=True, exist_ok=True)
    molecules = nci_sources(count)
    sources.write_text("".join(f"{s}\n" for s in molecules))
    provider = get_provider("xtb")
    start = time.perf_counter()
    result = build_benchmark(sources, out / "data", provider, BuildConfig(directories=PROPERTIES))
    wall = time.perf_counter() - start
    computed = result.provider_molecules
    sample = list(dict.fromkeys(molecules))[:100]
    t0 = time.perf_counter()
    for smiles in sample:
        embed_geometry(smiles)
    embed_each = (time.perf_counter() - t0) / len(sample)
    xtb_each = result.provider_seconds / max(1, computed)
    print(f"sources {len(molecules)} (NCI first_5K, >= 6 heavy atoms, smallest first)")
    print(f"records {result.records}; tasks {result.counts}; skipped {dict(result.skipped)}")
    print(
        f"build wall {wall:.1f} s for {len(molecules)} sources; {computed} distinct molecules "
        f"through xtb at {1000 * xtb_each:.1f} ms each, of which the RDKit geometry "
        f"(ETKDG + MMFF) is {1000 * embed_each:.1f} ms ({embed_each / xtb_each:.0%})"
    )
    info = {
        "sources": len(molecules),
        "records": result.records,
        "skipped": dict(result.skipped),
        "xtb_ms": round(1000 * xtb_each, 1),
        "embed_ms": round(1000 * embed_each, 1),
        "molecules": computed,
    }
    return out / "data", info


def print_audit(report: dict[str, Any]) -> None:
    """Per view: the strongest leak and tell (accuracy, chance, raw and Holm p), the tasks
    the id-hash and selection-replay attacks answer, the hetero-bond tell and the prior."""
    print(f"audit: {report['tests']} tests, passed {report['passed']}")
    print(
        f"{'view':22} {'strongest leak':34} {'strongest tell':34} {'id_hash':>7} "
        f"{'replay':>7} {'attach bond':>12} {'structure_only':>15}"
    )
    for view, block in report["views"].items():
        cells = []
        for kind in ("leaks", "tells"):
            tests = [(t["p_value"], n, t) for n, t in block[kind].items() if t["decided"]]
            p, name, t = min(tests, key=lambda x: (x[0], x[1]))
            cells.append(
                f"{name} {pct(t['accuracy'])}/{pct(t['chance'])} p={p:.2g} H={t['holm_p']:.2g}"
            )
        ids = block["leaks"]["id_hash"]
        replay = block["leaks"]["selection_replay"]
        bond = block["tells"]["attachment_bond"]
        prior = block["structural_prior"]
        print(
            f"{view:22} {cells[0]:34} {cells[1]:34} {ids['decided']:>7} {replay['decided']:>7} "
            f"{pct(bond['accuracy']):>6} of {bond['decided']:<4} {pct(prior['accuracy']):>8}"
        )


def audit_figures(report: dict[str, Any], release: str) -> list[dict[str, Any]]:
    """The audit's targets as result figures."""
    tests = [
        t
        for block in report["views"].values()
        for kind in ("leaks", "tells")
        for t in block[kind].values()
        if t["decided"]
    ]
    lowest = min((t["holm_p"] for t in tests), default=1.0)

    def answered(name: str) -> int:
        return sum(int(b["leaks"][name]["decided"]) for b in report["views"].values())

    return [
        figure(
            "p2s",
            f"{release}: leaks and tells beating chance (any view)",
            len(report["failures"]),
            target="== 0",
            detail=f"{report['tests']} tests; lowest Holm-adjusted p {lowest:.2g}",
        ),
        figure(
            "p2s",
            f"{release}: tasks the id-hash attack answers",
            answered("id_hash"),
            target="== 0",
        ),
        figure(
            "p2s",
            f"{release}: tasks the selection replay answers",
            answered("selection_replay"),
            target="== 0",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=400, help="source molecules to try")
    parser.add_argument("--embedded", action="store_true", help="use the embedded release")
    parser.add_argument("--out", type=Path, default=None, help="folder (default: a temp dir)")
    add_record_options(parser)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="p2s_bench_"))
    info: dict[str, Any] = {}
    if args.embedded:
        data = default_data()
    else:
        data, info = build(args.sources, out)
    print(f"data {data}")
    audit = audit_dataset(data)
    print_audit(audit)
    claims: dict[tuple[str, str], dict[str, Any]] = {}

    for name in MODELS:
        options = ModelOptions(provider=get_provider("xtb") if name == "property_oracle" else None)
        t0 = time.perf_counter()
        run_model(data, out / "runs", lambda d, n=name, o=options: get_model(n, o), RunConfig())
        print(f"run {name}: {time.perf_counter() - t0:.1f} s")

    header = (
        f"{'model':16} {'prop':6} {'chance':>6} {'corr':>5} {'shuf':>5} {'cf':>5}  "
        f"{'drop [95% CI]':>21} {'p':>9}  {'flip vs base':>13} {'p':>9}  claim"
    )
    print(header)
    for prop in PROPERTIES:
        for name in MODELS:
            r = claim_report(data, prop, prediction_paths(out / "runs" / name, prop), model=name)
            claims[name, prop] = r
            d, f = r["shuffle_drop"], r["counterfactual_flip"]
            diff = d["difference"]
            print(
                f"{name:16} {prop:6} {pct(r['chance']):>6} "
                f"{pct(r['views']['correct']['accuracy']['value']):>5} "
                f"{pct(r['views']['shuffled']['accuracy']['value']):>5} "
                f"{pct(r['views']['counterfactual']['accuracy']['value']):>5}  "
                f"{pct(diff['value'])} [{pct(diff['interval'][0])},{pct(diff['interval'][1])}] "
                f"{d['mcnemar']['p_value']:9.2g}  "
                f"{pct(f['flip_rate']['value'])}/{pct(f['donor_pick_rate_under_correct']['value'])}"
                f" {f['mcnemar']['p_value']:9.2g}  {'YES' if r['use_claim'] else 'no'}"
            )
    print(f"files in {out}")
    bench = "p2s_embedded" if args.embedded else "p2s_xtb"
    path = record_path(args, bench, full_size=args.embedded or args.sources >= 400)
    if path is None:
        return
    release = "embedded release" if args.embedded else f"{args.sources} sources"
    expected = {"property_oracle": "yes", "structure_only": "no", "random": "no"}

    def detail(r: dict[str, Any]) -> str:
        diff = r["shuffle_drop"]["difference"]
        flip = r["counterfactual_flip"]["flip_rate"]["value"]
        correct = r["views"]["correct"]["accuracy"]["value"]
        return (
            f"correct {pct(correct).strip()}%, shuffle drop {pct(diff['value']).strip()} "
            f"points, donor picked {pct(flip).strip()}% under the counterfactual"
        )

    figures = [
        figure(
            "p2s",
            f"{release}: {name}: use claim, {prop}",
            "yes" if claims[name, prop]["use_claim"] else "no",
            target=f"== {expected[name]}",
            detail=detail(claims[name, prop]),
        )
        for name in MODELS
        for prop in PROPERTIES
    ]
    figures += audit_figures(audit, release)
    if info:
        figures.append(
            figure(
                "p2s",
                "xTB build time a molecule",
                info["xtb_ms"],
                "ms",
                detail=f"{info['molecules']:,} molecules; RDKit geometry {info['embed_ms']} ms",
            )
        )
    tasks = audit["views"]["dipole/correct"]["tasks"]
    where = (
        "the release embedded in the package"
        if args.embedded
        else f"{info['sources']} NCI sources (at least 6 heavy atoms, smallest first), "
        f"{info['records']} records"
    )
    write_result(
        bench,
        title=f"Property-grounded completion with GFN2-xTB views ({release})",
        method=(
            f"Dipole and gap views of {where} ({tasks} tasks per correct view), built with "
            "GFN2-xTB via tblite; the shortcut audit attacks every view from its task files; "
            "the property oracle, structure-only and random baselines answer all three views "
            "and the use claim (a significant shuffle drop and a significant counterfactual "
            "flip towards the donor) is decided per model and property."
        ),
        figures=figures,
        path=path,
        script="p2s_xtb.py",
    )


if __name__ == "__main__":
    main()
