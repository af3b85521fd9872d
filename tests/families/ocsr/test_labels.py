"""The http prompt asks for the requested display labels of abbreviations (not only their
expansion), and an answer that names them is scored for label recall; a model's own visual
review is stored on the row and reported in its own section, never as ground truth."""

from __future__ import annotations

import json
from pathlib import Path

from tests.families.ocsr.conftest import ChatServer, chat_answer

from chemgauge.families.ocsr.config import RunConfig
from chemgauge.families.ocsr.engine.base import parse_structured_answer
from chemgauge.families.ocsr.engine.http import HTTP_PROMPT, HttpRecognizer, HttpSpec
from chemgauge.families.ocsr.evaluate import score_attempts
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.report import aggregate
from chemgauge.families.ocsr.runner import run_attempts
from chemgauge.families.ocsr.scoring import POLICIES

BOC = "CC(C)(C)OC(=O)N[C@@H](C)C(=O)[O-].[Na+]"


def test_the_prompt_asks_for_display_labels() -> None:
    assert "Expand abbreviations into atoms" not in HTTP_PROMPT
    assert '"abbreviations"' in HTTP_PROMPT and "label" in HTTP_PROMPT


def test_a_labelled_answer_becomes_a_superatom_group() -> None:
    answer = {"smiles": BOC, "abbreviations": [{"label": "Boc", "atoms": list(range(7))}]}
    out = parse_structured_answer(json.dumps(answer))
    assert out.status == "completed" and out.fmt == "molfile" and "Boc" in out.text
    bad = {"smiles": BOC, "abbreviations": [{"label": "Boc", "atoms": [0, 99]}]}
    out = parse_structured_answer(json.dumps(bad))
    assert (out.status, out.fmt, out.text) == ("completed", "smiles", BOC)
    assert "abbreviation" in out.message


def _answer(content: dict[str, object]) -> str:
    return json.dumps(content)


def test_label_recall_and_visual_review(small_cohort: Manifest, tmp_path: Path) -> None:
    labelled = {
        "smiles": BOC,
        "abbreviations": [{"label": "Boc", "atoms": list(range(7))}],
        "review": "the Boc group and the sodium counter-ion are both drawn",
    }
    boc_hash = small_cohort.by_id["boc_l_ala_sodium"].sha256

    def respond(body: dict[str, object]) -> tuple[int, dict[str, object]]:
        import base64
        import hashlib

        url = body["messages"][0]["content"][1]["image_url"]["url"]  # type: ignore[index]
        data = base64.b64decode(str(url).split(",", 1)[1])
        if hashlib.sha256(data).hexdigest() == boc_hash:
            return chat_answer("vision-1", _answer(labelled))
        return chat_answer("vision-1", _answer({"smiles": None, "clarification": "unclear"}))

    with ChatServer(respond) as server:
        rows = run_attempts(
            small_cohort, HttpRecognizer(HttpSpec(server.url, "vision-1")), RunConfig(), tmp_path
        )
    scored = score_attempts(small_cohort, rows)
    report = aggregate(small_cohort, scored, POLICIES, {})
    assert report["abbreviations"]["by_label"]["Boc"] == {"planned": 2, "recalled": 1}
    boc = next(row for row in scored if row["case_id"] == "boc_l_ala_sodium")
    assert boc["identity"]["exact"] == "match"
    assert boc["recognition"]["model_review"] == labelled["review"]
    review = report["model_review"]
    assert review["attempts_with_review"] == 1
    assert review["reviews"][0]["case_id"] == "boc_l_ala_sodium"
    assert "never ground truth" in review["note"]
