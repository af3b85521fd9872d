"""p2s property providers: cost per molecule and whether each built directory supports a claim.

For each provider setting, the smallest NCI molecules (bench/p2s_xtb.py's list) are built
into the directories it fills (serial, one thread, so the cost is per core). Then the
property oracle (reading the build's own journaled values, which is what recomputing with
the same deterministic provider gives) and the structure-only baseline run on all three
views, and the use claim is printed. Expected: the oracle claims use on every directory,
structure_only on none.

    .venv/bin/python bench/p2s_providers.py [--only mopac] [--sources 100] [--nmr-sources 30]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import orjson

from chemgauge.eval.journal import iter_journal
from chemgauge.families.p2s.build import build_benchmark
from chemgauge.families.p2s.claim import claim_report, prediction_paths
from chemgauge.families.p2s.compute import PROPERTY_JOURNAL, ComputeExecution
from chemgauge.families.p2s.config import BuildConfig, RunConfig
from chemgauge.families.p2s.embedded import nci_sources
from chemgauge.families.p2s.engine.models import ModelOptions
from chemgauge.families.p2s.engine.properties import ProviderOptions, TableProvider
from chemgauge.families.p2s.engine.registry import get_model, get_provider
from chemgauge.families.p2s.release import private_dir
from chemgauge.families.p2s.runner import run_model
from result_files import add_record_options, figure, record_path, write_result

# name -> (provider, options, directories, which --*-sources count to use)
SETTINGS: dict[str, tuple[str, ProviderOptions, tuple[str, ...], str]] = {
    "xtb": ("xtb", ProviderOptions(), ("dipole", "gap"), "sources"),
    "xtb-vibrational": (
        "xtb",
        ProviderOptions(infrared=True, raman=True),
        ("infrared", "raman", "vibrational"),
        "vibrational_sources",
    ),
    "mopac": ("mopac", ProviderOptions(), ("ultraviolet_visible",), "sources"),
    "nmr": (
        "nmr",
        ProviderOptions(),
        ("proton_nmr_integration", "carbon_nmr_degeneracy", "magnetic_resonance"),
        "nmr_sources",
    ),
}


def journal_table(folder: Path) -> Path:
    """The build's journaled values as a property table (the oracle's provider)."""
    table = private_dir(folder) / "oracle_table.jsonl"  # every value: never beside a release
    with open(table, "wb") as handle:
        for row in iter_journal(private_dir(folder) / PROPERTY_JOURNAL):
            if row["error"] is None and row["values"]:
                line = {"smiles": row["smiles"], "properties": row["values"]}
                handle.write(orjson.dumps(line) + b"\n")
    return table


def run_setting(name: str, sources: Sequence[str], root: Path) -> list[dict[str, object]]:
    """Build one provider setting, run the two models on it; the figures it gives."""
    provider_name, options, directories, _ = SETTINGS[name]
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)  # a rerun resumes the build's journal
    smi = folder / "sources.smi"
    smi.write_text("".join(f"{s}\n" for s in sources))
    provider = get_provider(provider_name, options)
    result = build_benchmark(
        smi, folder / "data", provider, BuildConfig(directories=directories),
        execution=ComputeExecution(),
    )  # fmt: skip
    per = result.provider_seconds / max(1, result.provider_molecules)
    manifest = orjson.loads((folder / "data" / "build_manifest.json").read_bytes())
    print(
        f"{name}: {len(sources)} sources, {result.records} records, "
        f"{result.provider_molecules} molecules at {per:.3f} s each (1 core); "
        f"failures {manifest['property_failures']}; tasks {result.counts}",
        flush=True,
    )
    failures = sum(manifest["property_failures"].values()) if manifest["property_failures"] else 0
    figures = [
        figure(
            "p2s",
            f"{provider_name} ({', '.join(directories)}): seconds a molecule, one core",
            round(per, 2),
            "s",
            detail=(
                f"{len(sources)} sources, {result.records} records, "
                f"{result.provider_molecules} molecules, {failures} refused or failed"
            ),
        )
    ]
    expected = {"property_oracle": "yes", "structure_only": "no"}
    oracle_provider = TableProvider(journal_table(folder / "data"))
    for model in ("property_oracle", "structure_only"):
        model_options = ModelOptions(provider=oracle_provider)
        run_model(
            folder / "data",
            folder / "runs",
            lambda d, m=model, o=model_options: get_model(m, o),
            RunConfig(restart=True),  # the build may have grown since a previous bench run
        )
        for directory in directories:
            report = claim_report(
                folder / "data",
                directory,
                prediction_paths(folder / "runs" / model, directory),
                model=model,
            )
            views = report["views"]
            print(
                f"  {model:16} {directory:24} correct {views['correct']['accuracy']['value']:.3f} "
                f"shuffled {views['shuffled']['accuracy']['value']:.3f} "
                f"counterfactual {views['counterfactual']['accuracy']['value']:.3f} "
                f"use claim {'YES' if report['use_claim'] else 'no'}",
                flush=True,
            )
            figures.append(
                figure(
                    "p2s",
                    f"{model}: use claim, {directory} ({provider_name})",
                    "yes" if report["use_claim"] else "no",
                    target=f"== {expected[model]}",
                    detail=(
                        f"correct {100 * views['correct']['accuracy']['value']:.1f}%, shuffled "
                        f"{100 * views['shuffled']['accuracy']['value']:.1f}%, counterfactual "
                        f"{100 * views['counterfactual']['accuracy']['value']:.1f}%"
                    ),
                )
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=sorted(SETTINGS), default=[])
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--vibrational-sources", type=int, default=40)
    parser.add_argument("--nmr-sources", type=int, default=30)
    parser.add_argument("--out", type=Path, default=None)
    add_record_options(parser)
    args = parser.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="chemgauge-p2s-providers-"))
    print(f"# bench/p2s_providers.py, load {os.getloadavg()[0]:.2f}, files in {root}")
    load = f"{os.getloadavg()[0]:.1f}"
    figures = []
    for name in args.only or list(SETTINGS):
        count = getattr(args, SETTINGS[name][3])
        figures += run_setting(name, nci_sources(count), root)
    print(f"load at the end {os.getloadavg()[0]:.2f}")
    full = not args.only and args.sources >= 100 and args.nmr_sources >= 30
    path = record_path(args, "p2s_providers", full_size=full)
    if path is not None:
        write_result(
            "p2s_providers",
            title="p2s property providers: cost and use claim per directory",
            method=(
                "Each provider builds the directories it fills from the smallest NCI molecules "
                "(serial, one thread, so the cost is per core); the property oracle (reading "
                "the build's journaled values, which is what recomputing with the same "
                "deterministic provider gives) and the structure-only baseline answer all "
                "three views, and the use claim is decided per directory."
            ),
            figures=figures,
            load=f"{load} -> {os.getloadavg()[0]:.1f}",
            path=path,
        )


if __name__ == "__main__":
    main()
