"""Build the p2s release embedded in the package (the default data of ``chemgauge p2s``).

Sources: the NCI set in the rdkit wheel, one component, at least 6 heavy atoms, smallest
first (``nci_sources``); the first 136 records over the directories the shipped xtb provider
computes (dipole and gap, GFN2-xTB through tblite); seed 0. The build audits itself and
refuses a release with a leak or a tell. Written to
``src/chemgauge/families/p2s/data/default``: the task and label files, the source list and
the build manifest (the answer-bearing build records and the property journal stay out).

    .venv/bin/python scripts/build_p2s_default.py
"""

from __future__ import annotations

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

TARGET = Path(__file__).resolve().parents[1] / "src/chemgauge/families/p2s/data/default"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="p2s_default_") as tmp:
        work = Path(tmp)
        sources = work / "release" / "sources.smi"
        sources.parent.mkdir()
        sources.write_text("".join(f"{s}\n" for s in nci_sources(DEFAULT_SOURCES)))
        config = BuildConfig(directories=DEFAULT_DIRECTORIES, max_records=DEFAULT_RECORDS)
        result = build_benchmark(sources, work / "release", get_provider("xtb"), config)
        if TARGET.exists():
            shutil.rmtree(TARGET)
        TARGET.mkdir(parents=True)
        shutil.copy(sources, TARGET / "sources.smi")
        shutil.copy(work / "release" / MANIFEST, TARGET / MANIFEST)
        for directory in DEFAULT_DIRECTORIES:
            shutil.copytree(work / "release" / directory, TARGET / directory)
    print(f"{result.records} records; tasks {result.counts}; skipped {dict(result.skipped)}")
    print(f"audit: {result.audit['tests']} tests, passed {result.audit['passed']}")
    print(f"written to {TARGET}")


if __name__ == "__main__":
    main()
