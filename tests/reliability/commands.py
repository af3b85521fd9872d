"""Small real runs of each family's CLI, shared by the reliability suites and
``bench/reliability.py``: the argument lists and the inputs they need."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chemgauge.families.p2s.config import BuildConfig

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "src" / "chemgauge" / "families" / "forward" / "data" / "demo_corpus.jsonl"


def run_cli(
    args: list[str], file_size_limit: int | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``python -m chemgauge ARGS`` with no stdin, output captured. ``file_size_limit``
    (RLIMIT_FSIZE, SIGXFSZ ignored) makes every write past it fail with EFBIG, as a full
    disk fails with ENOSPC."""

    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run(
        [sys.executable, "-m", "chemgauge", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
        preexec_fn=None if file_size_limit is None else cap,
    )


def forward_benchmark(out: Path, *extra: str, corpus: Path = DEMO) -> list[str]:
    """``forward benchmark`` on the demo corpus, serial, rows and report in ``out``."""
    return [
        "forward",
        "benchmark",
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--executor",
        "serial",
        "-q",
        *extra,
    ]


def retro_inputs(work: Path, copies: int = 5) -> tuple[Path, Path]:
    """A fold folder of ``2 * copies`` reactions and a predictions file answering one."""
    data = work / "data"
    data.mkdir(parents=True)
    reactions = [("CC(=O)O.CN", "CNC(C)=O"), ("CCO.CC(=O)O", "CCOC(C)=O")]
    lines = [f"{r}{'.C' * i}>>{p}" for i in range(copies) for r, p in reactions]
    (data / "test.smi").write_text("\n".join(lines) + "\n")
    preds = work / "preds.jsonl"
    preds.write_text('{"product": "CNC(C)=O", "predictions": ["CN.CC(=O)O"]}\n')
    return data, preds


def retro_eval(data: Path, preds: Path, out: Path, *extra: str) -> list[str]:
    """``retro eval`` with the predictions model, serial (targets it lacks are misses);
    ``extra`` ``key=value`` pairs add options or replace these."""
    options = {
        "data_dir": str(data),
        "model_class": "predictions",
        "allow_missing": "true",
        "model_dir": str(preds),
        "out": str(out),
        "executor": "serial",
        "quiet": "true",
    }
    for pair in extra:
        key, _, value = pair.partition("=")
        options[key] = value
    return ["retro", "eval", *(f"{key}={value}" for key, value in options.items())]


def ocsr_cohort(work: Path, cases: int) -> tuple[Path, Path]:
    """The first ``cases`` images of the rendered cohort, and a recognizer script that reads
    every image as ethanol."""
    from chemgauge.families.ocsr.cohort import COHORT, build_cohort

    cohort = work / "cohort"
    if not cohort.exists():
        build_cohort(cohort, COHORT[:cases])
    script = work / "recognizer.py"
    script.write_text('print("CCO")\n')
    return cohort / "manifest.json", script


def ocsr_run(manifest: Path, script: Path, out: Path, *extra: str) -> list[str]:
    """``ocsr run`` with the command back-end running ``script`` on each image."""
    return [
        "ocsr",
        "run",
        "--manifest",
        str(manifest),
        "--model",
        "command",
        "--command-arg",
        sys.executable,
        "--command-arg",
        str(script),
        "--command-arg",
        "{image}",
        "--format",
        "smiles",
        "--out",
        str(out),
        "--run",
        "-q",
        *extra,
    ]


def p2s_build_config() -> BuildConfig:
    """The small build every reliability suite uses (dipole, 4 candidates, 1 counterfactual)."""
    from chemgauge.families.p2s.config import BuildConfig

    return BuildConfig(directories=("dipole",), candidates=4, counterfactuals_per_record=1)


def p2s_build_inputs(work: Path) -> tuple[Path, Path]:
    """The p2s test sources and a property table for them (:func:`p2s_build_config`)."""
    from tests.families.p2s.conftest import SOURCES, write_table

    work.mkdir(parents=True, exist_ok=True)
    sources = work / "sources.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    table = work / "table.jsonl"
    write_table(sources, table, p2s_build_config())
    return sources, table


def p2s_data(work: Path) -> Path:
    """A built p2s data folder (from :func:`p2s_build_inputs`)."""
    from chemgauge.families.p2s.build import build_benchmark
    from chemgauge.families.p2s.engine.properties import TableProvider

    sources, table = p2s_build_inputs(work)
    data = work / "data"
    build_benchmark(sources, data, TableProvider(table), p2s_build_config())
    return data


def p2s_build(sources: Path, table: Path, out: Path, *extra: str) -> list[str]:
    """``p2s build`` from the property table."""
    return [
        "p2s",
        "build",
        str(sources),
        "--out",
        str(out),
        "-p",
        "dipole",
        "--provider",
        "table",
        "--table",
        str(table),
        "--counterfactuals",
        "1",
        "-q",
        *extra,
    ]
