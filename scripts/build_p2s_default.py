"""Build the p2s release embedded in the package (the default data of ``chemgauge p2s``).

Scaffolds: the NCI set in the rdkit wheel, one component, at least 6 heavy atoms, smallest
first (``nci_sources``); each record's source is drawn by the build secret among its
candidate block (``--draw-sources``), so the public NCI list does not name the answer. 136
records per directory (the seed's correct/shuffled size), dipole and gap (GFN2-xTB through
tblite), seed 0. The build audits itself and refuses a release with a leak, a tell, a
public-knowledge rule that earns a use claim, or an answer-bearing file beside it.

Written to ``src/chemgauge/families/p2s/data/default``: the task and label files and the
build manifest, nothing else. The private folder (the secret, the build records and the
property journal) goes to ``--private`` (default ``build/p2s_default.private``, git-ignored):
keep it to rebuild the same bytes; without it a rebuild draws a new secret.

    .venv/bin/python scripts/build_p2s_default.py [--private DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from chemgauge.families.p2s.build import MANIFEST, build_benchmark
from chemgauge.families.p2s.config import BuildConfig
from chemgauge.families.p2s.embedded import (
    DEFAULT_DIRECTORIES,
    DEFAULT_RECORDS,
    DEFAULT_SOURCES,
    nci_sources,
)
from chemgauge.families.p2s.engine.registry import get_provider

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src/chemgauge/families/p2s/data/default"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--private", type=Path, default=ROOT / "build/p2s_default.private")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="p2s_default_") as tmp:
        work = Path(tmp)
        sources = args.private / "sources.smi"
        args.private.mkdir(parents=True, exist_ok=True)
        sources.write_text("".join(f"{s}\n" for s in nci_sources(DEFAULT_SOURCES)))
        config = BuildConfig(
            directories=DEFAULT_DIRECTORIES, records=DEFAULT_RECORDS, draw_sources=True
        )
        release = work / "release"
        result = build_benchmark(
            sources, release, get_provider("xtb"), config, private=args.private
        )
        if TARGET.exists():
            shutil.rmtree(TARGET)
        TARGET.mkdir(parents=True)
        shutil.copy(release / MANIFEST, TARGET / MANIFEST)
        for directory in DEFAULT_DIRECTORIES:
            shutil.copytree(release / directory, TARGET / directory)
    print(f"{result.records} records; tasks {result.counts}; skipped {dict(result.skipped)}")
    print(f"audit: {result.audit['tests']} tests, passed {result.audit['passed']}")
    print(f"written to {TARGET}; private folder {args.private}")


if __name__ == "__main__":
    main()
