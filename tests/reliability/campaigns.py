"""Kill-and-resume campaigns for the forward benchmark, retro eval and an OCSR run.

Each campaign builds its inputs in ``work``, runs the family's CLI once uninterrupted (the
reference), then runs it again SIGKILLed ``kills`` times at random journal sizes and resumed
to the end (:func:`tests.reliability.faults.kill_and_resume`; every third kill also leaves a
torn last line in the journal), and compares the final files byte for byte. Shared by
``test_kill_resume.py`` and ``bench/reliability.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tests.reliability.faults import (
    FORWARD_DRIVER,
    OCSR_DRIVER,
    RETRO_DRIVER,
    KillReport,
    kill_and_resume,
    run_to_end,
)

__all__ = ["Campaign", "forward_campaign", "ocsr_campaign", "retro_campaign"]

DEMO_CORPUS = (
    Path(__file__).resolve().parents[2]
    / "src"
    / "chemgauge"
    / "families"
    / "forward"
    / "data"
    / "demo_corpus.jsonl"
)


@dataclass
class Campaign:
    """What a campaign found: kills survived, and whether every final file matched."""

    family: str
    items: int
    report: KillReport
    identical: dict[str, bool] = field(default_factory=dict)
    duplicate_ids: int = 0
    missing_ids: int = 0

    @property
    def all_identical(self) -> bool:
        """Every compared file byte-identical, no duplicate and no missing item."""
        return all(self.identical.values()) and not self.duplicate_ids and not self.missing_ids


def _finish(campaign: Campaign, reference: Path, killed: Path, names: list[str]) -> None:
    for name in names:
        campaign.identical[name] = (reference / name).read_bytes() == (killed / name).read_bytes()


def _count_ids(campaign: Campaign, rows: Path, key: str, expected: set[str]) -> None:
    ids = [json.loads(line)[key] for line in rows.read_bytes().splitlines()]
    campaign.duplicate_ids = len(ids) - len(set(ids))
    campaign.missing_ids = len(expected - set(ids))


def _check(done: object, what: str) -> None:
    returncode = getattr(done, "returncode", 1)
    if returncode != 0:
        raise AssertionError(f"{what} exited {returncode}: {getattr(done, 'stderr', '')[-2000:]}")


# --- forward -------------------------------------------------------------------------------


def forward_corpus(path: Path, copies: int = 5) -> int:
    """The demo corpus ``copies`` times, each copy a distinct reaction (an extra spectator
    alkane), invalid lines included; returns the number of lines."""
    lines = [t for t in DEMO_CORPUS.read_text().splitlines() if t.strip()]
    out: list[str] = []
    for copy in range(copies):
        for text in lines:
            try:
                record = dict(json.loads(text))
            except (ValueError, TypeError):  # the demo's deliberately broken lines, verbatim
                out.append(text)
                continue
            record["reaction_id"] = f"{record.get('reaction_id')}-c{copy}"
            if copy and isinstance(record.get("reactants"), list):
                record["reactants"] = [*record["reactants"], "C" * (copy + 1)]
            if isinstance(record.get("group_key"), str):
                record["group_key"] = f"{record['group_key']}-c{copy}"
            out.append(json.dumps(record, sort_keys=True))
    path.write_text("\n".join(out) + "\n")
    return len(out)


def forward_campaign(work: Path, kills: int, seed: int) -> Campaign:
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus.jsonl"
    lines = forward_corpus(corpus)

    def args(folder: Path) -> list[str]:
        folder.mkdir(parents=True, exist_ok=True)
        return [
            "forward", "benchmark", "--corpus", str(corpus), "--out", str(folder),
            "--executor", "serial", "--chunk-size", "1", "-q",
        ]  # fmt: skip

    reference, killed = work / "forward_reference", work / "forward_killed"
    _check(run_to_end(FORWARD_DRIVER, args(reference)), "forward reference run")
    rows = (reference / "rows.jsonl").read_bytes().splitlines()
    journaled = sum(1 for line in rows if json.loads(line)["input_status"] == "valid")
    journal = killed / "rows.jsonl.journal"
    report = kill_and_resume(
        FORWARD_DRIVER, args(killed), [journal], journaled, kills, seed, tear_every=3
    )
    campaign = Campaign("forward", lines, report)
    _finish(campaign, reference, killed, ["rows.jsonl"])
    ids = {json.loads(line)["source_line"] for line in rows}  # the journal's item key
    _count_ids(campaign, killed / "rows.jsonl", "source_line", ids)
    ref = json.loads((reference / "report.json").read_text())
    got = json.loads((killed / "report.json").read_text())
    campaign.identical["report reproducibility_sha256"] = _repro(ref) == _repro(got)
    campaign.identical["journal removed"] = not journal.exists()
    return campaign


def _repro(report: dict[str, object]) -> object:
    return report.get("reproducibility_sha256")


# --- retro ---------------------------------------------------------------------------------


def retro_inputs(folder: Path, n: int = 60) -> int:
    """``n`` amide-formation targets (plus one bad line) and a predictions file for them,
    with seeded synthetic outputs (true answer at a random rank or absent, invalid strings,
    duplicates, stereo-free spellings)."""
    from chemgauge.families.retro.data import DataFile, load_targets
    from chemgauge.families.retro.synthetic import SyntheticSettings, generate_outputs

    data = folder / "data"
    data.mkdir(parents=True)
    reactions = [f"CC(=O)O.N{'C' * i}>>CC(=O)N{'C' * i}" for i in range(1, n + 1)]
    reactions.insert(n // 2, "not a reaction")
    (data / "test.smi").write_text("\n".join(reactions) + "\n")
    targets = load_targets(DataFile("test", "smi", data / "test.smi")).targets
    outputs = generate_outputs(targets, SyntheticSettings(outputs_per_target=8))
    lines = [
        json.dumps({"product": t.product, "predictions": o})
        for t, o in zip(targets, outputs, strict=True)
    ]
    (folder / "predictions.jsonl").write_text("\n".join(lines[:-3]) + "\n")  # 3 targets missing
    return len(targets)


def retro_campaign(work: Path, kills: int, seed: int) -> Campaign:
    work.mkdir(parents=True, exist_ok=True)
    total = retro_inputs(work / "retro")
    data, predictions = work / "retro" / "data", work / "retro" / "predictions.jsonl"

    def args(folder: Path) -> list[str]:
        return [
            "retro", "eval", "chunk_size=1", "--data-dir", str(data),
            "--model", "predictions", "--model-dir", str(predictions),
            "--out", str(folder), "--num-top-results", "8", "--batch-size", "1",
            "--executor", "serial", "-q",
        ]  # fmt: skip

    reference, killed = work / "retro_reference", work / "retro_killed"
    _check(run_to_end(RETRO_DRIVER, args(reference)), "retro reference run")
    journal = killed / "journal.jsonl"
    report = kill_and_resume(
        RETRO_DRIVER, args(killed), [journal], total, kills, seed, tear_every=3
    )
    campaign = Campaign("retro", total, report)
    _finish(campaign, reference, killed, ["rows.jsonl"])
    rows = (reference / "rows.jsonl").read_bytes().splitlines()
    _count_ids(campaign, killed / "rows.jsonl", "target", {json.loads(r)["target"] for r in rows})
    ref = json.loads((reference / "report.json").read_text())
    got = json.loads((killed / "report.json").read_text())
    campaign.identical["report reproducibility_sha256"] = _repro(ref) == _repro(got)
    campaign.identical["report metrics"] = ref["metrics"] == got["metrics"]
    return campaign


# --- ocsr ----------------------------------------------------------------------------------


def ocsr_inputs(folder: Path) -> tuple[Path, Path]:
    """The default rendered cohort and an answer table for the driver's recognizer: right
    answers, wrong ones, a clarification, a provisional draft, an empty answer and a crash."""
    from chemgauge.families.ocsr.cohort import build_cohort

    manifest = build_cohort(folder / "cohort")
    table: dict[str, object] = {}
    for index, case in enumerate(manifest.cases):
        smiles = case.reference.smiles if case.reference is not None else "CCO"
        kind = index % 6
        table[case.sha256] = (
            smiles if kind in (0, 1) else
            "CCN" if kind == 2 else
            {"smiles": None, "clarification": "higher resolution please"} if kind == 3 else
            {"status": "provisional", "smiles": smiles} if kind == 4 else
            ("raise" if index % 12 == 5 else "")
        )  # fmt: skip
    answers = folder / "answers.json"
    answers.write_text(json.dumps(table, sort_keys=True))
    return folder / "cohort" / "manifest.json", answers


def ocsr_campaign(work: Path, kills: int, seed: int, repeats: int = 3) -> Campaign:
    work.mkdir(parents=True, exist_ok=True)
    manifest, answers = ocsr_inputs(work / "ocsr")

    def args(folder: Path) -> list[str]:
        return [
            str(answers), "ocsr", "run", "--manifest", str(manifest), "--model", "python",
            "--callable", "__main__:recognize", "--repeats", str(repeats), "--run",
            "--out", str(folder), "-q",
        ]  # fmt: skip

    reference, killed = work / "ocsr_reference", work / "ocsr_killed"
    _check(run_to_end(OCSR_DRIVER, args(reference)), "ocsr reference run")
    scored = (reference / "scored.jsonl").read_bytes().splitlines()
    journal = killed / "attempts.jsonl"
    report = kill_and_resume(
        OCSR_DRIVER, args(killed), [journal], len(scored), kills, seed, tear_every=3
    )
    campaign = Campaign("ocsr", len(scored), report)
    _finish(campaign, reference, killed, ["attempts.jsonl", "scored.jsonl", "report.html"])
    ids = {json.loads(line)["attempt_id"] for line in scored}
    _count_ids(campaign, killed / "scored.jsonl", "attempt_id", ids)
    ref = json.loads((reference / "report.json").read_text())
    got = json.loads((killed / "report.json").read_text())
    campaign.identical["report reproducibility_sha256"] = _repro(ref) == _repro(got)
    return campaign
