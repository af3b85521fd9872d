"""The 2020 OCSR review's shipped outputs re-score to the published counts (legacy policy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import shared_file
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.families.ocsr.review import PUBLISHED_COUNTS, rescore_review

pytestmark = pytest.mark.slow


def _score(dataset: str) -> dict[str, dict[str, int]]:
    reference = shared_file(f"ocsr_review/assets/reference/{dataset}_mol_ref.tar.gz")
    results = shared_file(f"ocsr_review/assets/results/{dataset}.tar.gz")
    score = rescore_review(dataset, reference, results)
    assert score.references == {"JPO": 450, "UOB": 5740}[dataset]
    return score.matches


def test_jpo_legacy_reproduces_published_counts_with_strict_beside() -> None:
    matches = _score("JPO")
    for tool, published in PUBLISHED_COUNTS["JPO"].items():
        assert abs(matches[tool]["legacy"] - published) <= 1, (tool, matches[tool])
    # Measured with RDKit 2026.09: strict policies beside the legacy rule.
    assert matches["osra"] == {"exact": 258, "inchi": 259, "legacy": 260, "stereo_ignored": 265}
    assert matches["molvec"]["exact"] == 301 and matches["imago"]["exact"] == 180


def test_uob_legacy_reproduces_published_counts_and_tautomers_move_exact() -> None:
    matches = _score("UOB")
    for tool, published in PUBLISHED_COUNTS["UOB"].items():
        assert abs(matches[tool]["legacy"] - published) <= 1, (tool, matches[tool])
    assert matches["osra"]["exact"] == 4521
    # Standard InChI merges tautomers: the lenient count is far above the strict one.
    assert matches["molvec"]["inchi"] - matches["molvec"]["exact"] == 452


def test_the_review_command_prints_a_table_and_json_on_request(tmp_path: Path) -> None:
    shared_file("ocsr_review/assets/reference/JPO_mol_ref.tar.gz")
    data = shared_file("ocsr_review/assets/results/JPO.tar.gz").parents[2]
    runner = CliRunner()
    plain = runner.invoke(app, ["ocsr", "review", "--data", str(data), "--dataset", "JPO"])
    assert plain.exit_code == 0, plain.output
    lines = plain.output.splitlines()
    assert lines[0] == "ocsr review (JPO): 450 references"
    assert lines[1].startswith("| recognizer | exact | inchi | legacy | stereo_ignored |")
    assert "| osra | 258 | 259 | 260 | 265 |" in plain.output

    out = tmp_path / "review.json"
    as_json = runner.invoke(
        app, ["ocsr", "review", "--data", str(data), "--dataset", "JPO", "--json", "-o", str(out)]
    )
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output) == json.loads(out.read_text())
    assert json.loads(as_json.output)["matches"]["osra"]["legacy"] == 260
