"""Runs built by the real names pipeline with a dict-backed OPSIN at its injected boundary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson
import pytest

from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.rejections import RejectionStats
from chemgauge.families.names.config import CoverageConfig
from chemgauge.families.names.inputs import read_pairs
from chemgauge.families.names.runner import ReadBack, build_report, score_pairs

# What the fake OPSIN reads each name back as (absent: not parsed).
FAKE_OPSIN: dict[str, str] = {
    "ethanol": "OCC",
    "L-alanine": "N[C@@H](C)C(=O)O",
    "D-alanine": "N[C@H](C)C(=O)O",
    "acetate": "CC(=O)[O-]",
    "acetic acid": "CC(=O)O",
    "methanol": "CO",
    "benzene": "c1ccccc1",
    "toluene": "Cc1ccccc1",
    "phenol": "Oc1ccccc1",
    "propane": "CCC",
    "butane": "CCCC",
    "pyridine": "c1ccncc1",
}

# (smiles, name) per item for two runs over the same corpus.
CORPUS = (
    "OCC",
    "C[C@H](N)C(=O)O",
    "CC(=O)O",
    "c1ccccc1",
    "Cc1ccccc1",
    "Oc1ccccc1",
    "CCC",
    "CCCC",
    "c1ccncc1",
    "C[N+](C)(C)C",
)
NAMES_A = (
    "ethanol",
    "L-alanine",
    "acetic acid",
    "benzene",
    "toluene",
    "phenol",
    "propane",
    "butane",
    "pyridine",
    "",
)
NAMES_B = (
    "methanol",  # wrong
    "D-alanine",  # wrong under exact only
    "acetate",  # wrong under strict/exact
    "benzene",
    "",  # abstains
    "phenol",
    "propane",
    "gibberish",  # unparseable
    "pyridine",
    "",
)


def write_pairs(path: Path, smiles: Sequence[str], names: Sequence[str]) -> Path:
    lines = [
        orjson.dumps({"id": f"m{i:02d}", "smiles": s, "name": n})
        for i, (s, n) in enumerate(zip(smiles, names, strict=True))
    ]
    atomic_write_bytes(path, b"\n".join(lines) + b"\n")
    return path


def make_names_run(
    run_dir: Path,
    names: Sequence[str],
    *,
    smiles: Sequence[str] = CORPUS,
    opsin: Mapping[str, str] = FAKE_OPSIN,
    input_path: Path | None = None,
    max_opsin_errors: float = 0.01,
    reference_lenses: bool = False,
) -> Path:
    """Write rows.jsonl and report.json exactly as ``chemgauge names coverage`` does
    (``reference_lenses``: as ``--reference-lenses`` does)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    source = input_path or write_pairs(run_dir / "pairs.jsonl", smiles, names)
    # ``input_path`` reuses an existing pairs file (and its names) as the run's input.
    stats = RejectionStats()
    pairs = read_pairs(source, stats)

    def resolve(batch: Sequence[str]) -> list[ReadBack]:
        return [
            ReadBack(opsin[n], "ok")
            if n in opsin
            else ReadBack(None, "timeout", "no answer within 0.001 s")
            if n.startswith("slow")
            else ReadBack(None, "failed", "unparsable")
            for n in batch
        ]

    config = CoverageConfig(max_opsin_errors=max_opsin_errors, reference_lenses=reference_lenses)
    rows = score_pairs(pairs, resolve, config)
    report = build_report(
        rows,
        config=config,
        input_path=source,
        input_stats=stats,
        engine={"name": "fake-opsin"},
        timing={"load_s": 0.1, "score_s": 0.2},
        rows_path=run_dir / "rows.jsonl",
    )
    body = b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in rows)
    atomic_write_bytes(run_dir / "rows.jsonl", body)
    write_envelope(run_dir / "report.json", report)
    return run_dir


@pytest.fixture
def names_run(tmp_path: Path) -> Path:
    return make_names_run(tmp_path / "run_a", NAMES_A)


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """Runs A and B of two namers over the same structures (different pairs files), with
    the reference lenses."""
    return (
        make_names_run(tmp_path / "run_a", NAMES_A, reference_lenses=True),
        make_names_run(tmp_path / "run_b", NAMES_B, reference_lenses=True),
    )
