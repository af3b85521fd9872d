"""SIGKILL each resumable family's run ten times at random points, resume, and compare the
final rows byte for byte with an uninterrupted run: no duplicate, no missing item.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.reliability.faults import NAMES_DRIVER, P2S_DRIVER, kill_and_resume, run_to_end

pytestmark = pytest.mark.slow

KILLS = 10

NAMES = {
    "methane": "C",
    "ethane": "CC",
    "propane": "CCC",
    "butane": "CCCC",
    "pentane": "CCCCC",
    "hexane": "CCCCCC",
    "ethanol": "CCO",
    "methanol": "CO",
    "propan-1-ol": "CCCO",
    "propan-2-ol": "CC(C)O",
    "benzene": "c1ccccc1",
    "toluene": "Cc1ccccc1",
    "phenol": "Oc1ccccc1",
    "aniline": "Nc1ccccc1",
    "acetic acid": "CC(=O)O",
    "pyridine": "c1ccncc1",
    "not a real name": "CCN",
    "ethylamine": "CCC",  # a confidently wrong name
    "": "CCCl",  # an abstention
    "chloroethane": "CCCl",
}


def _pairs(path: Path, repeats: int) -> int:
    lines = ["smiles\tname\tid"]
    for r in range(repeats):
        for i, (name, smiles) in enumerate(NAMES.items()):
            lines.append(f"{smiles}\t{name}\tm{r:02d}-{i:02d}")
    path.write_text("\n".join(lines) + "\n")
    return len(lines) - 1


@pytest.mark.external
def test_names_coverage_survives_ten_kills(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    total = _pairs(pairs, 6)

    def args(folder: Path) -> list[str]:
        folder.mkdir(exist_ok=True)
        return [
            "names", "coverage", "-i", str(pairs), "--out", str(folder), "-j", "1", "-q",
        ]  # fmt: skip

    reference = tmp_path / "reference"
    done = run_to_end(NAMES_DRIVER, args(reference))
    assert done.returncode == 0, done.stderr[-2000:]
    killed = tmp_path / "killed"
    journal = killed / "rows.jsonl.journal"
    report = kill_and_resume(NAMES_DRIVER, args(killed), [journal], total, KILLS, seed=11)
    assert report.kills == KILLS, report
    expected = (reference / "rows.jsonl").read_bytes()
    assert (killed / "rows.jsonl").read_bytes() == expected
    ids = [json.loads(line)["id"] for line in expected.splitlines()]
    assert len(ids) == len(set(ids)) == total
    assert not journal.exists()
    ref = json.loads((reference / "report.json").read_text())
    got = json.loads((killed / "report.json").read_text())
    assert got["reproducibility_sha256"] == ref["reproducibility_sha256"]


@pytest.fixture(scope="module")
def p2s_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.families.p2s.conftest import SOURCES, write_table

    from chemgauge.families.p2s.build import build_benchmark
    from chemgauge.families.p2s.config import BuildConfig
    from chemgauge.families.p2s.engine.properties import TableProvider

    root = tmp_path_factory.mktemp("p2s_kill")
    sources = root / "sources.smi"
    sources.write_text("\n".join(SOURCES) + "\n")
    config = BuildConfig(directories=("dipole",), candidates=4, counterfactuals_per_record=2)
    table = root / "table.jsonl"
    write_table(sources, table, config)
    build_benchmark(sources, root / "data", TableProvider(table), config)
    return root / "data"


@pytest.mark.parametrize("model", ["random"])
def test_p2s_run_survives_ten_kills(p2s_data: Path, tmp_path: Path, model: str) -> None:
    def args(out: Path) -> list[str]:
        return [
            "p2s", "run", str(p2s_data), "-m", model, "-o", str(out), "--batch-size", "1",
            "--seed", "5", "-q",
        ]  # fmt: skip

    reference = tmp_path / "reference"
    done = run_to_end(P2S_DRIVER, args(reference))
    assert done.returncode == 0, done.stderr[-2000:]
    finals = sorted(p.relative_to(reference) for p in reference.rglob("*.jsonl"))
    finals = [p for p in finals if not p.name.endswith(".journal.jsonl")]
    views = [p for p in finals if p.name != "rows.jsonl"]  # journaled per view; rows at the end
    assert len(views) == 3
    total = sum(len((reference / p).read_bytes().splitlines()) for p in views)
    killed = tmp_path / "killed"
    journals = [killed / p.with_name(p.stem + ".journal.jsonl") for p in views]
    report = kill_and_resume(P2S_DRIVER, args(killed), journals, total, KILLS, seed=23)
    assert report.kills == KILLS, report
    for path in finals:
        expected = (reference / path).read_bytes()
        assert (killed / path).read_bytes() == expected, path
        if path in views:  # rows.jsonl holds every view's rows: its ids repeat across views
            ids = [json.loads(line)["record_id"] for line in expected.splitlines()]
            assert len(ids) == len(set(ids))
    shutil.rmtree(killed)


@pytest.mark.parametrize(("family", "seed"), [("forward", 31), ("retro", 37), ("ocsr", 41)])
def test_family_run_survives_ten_kills(family: str, seed: int, tmp_path: Path) -> None:
    """Forward benchmark, retro eval (``predictions`` model) and an OCSR run (a Python
    recognizer behind the injected boundary): ten SIGKILLs, then the final rows (and, for
    OCSR, the attempts journal and the HTML report) are byte-identical to an uninterrupted
    run's, with no duplicate and no missing item."""
    from tests.reliability import campaigns

    run = getattr(campaigns, f"{family}_campaign")
    campaign = run(tmp_path, KILLS, seed)
    assert campaign.report.kills == KILLS, campaign.report
    assert campaign.identical and all(campaign.identical.values()), campaign.identical
    assert (campaign.duplicate_ids, campaign.missing_ids) == (0, 0)
