"""Pathological chemistry through every matcher and the canonicalizer: each item finishes
with a key or a recorded refusal, and never takes the process down.

Per-item limits are enforced by the code under test (atom and text-size limits, the parity
tautomer work budget); these tests assert the recorded outcome, never a timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chemgauge.chem import (
    Canonicalizer,
    describe_parse_failure,
    get_matcher,
    matcher_names,
    parse_smiles,
    try_canonical_smiles,
)
from chemgauge.chem.limits import CEILINGS, DEFAULT_LIMITS, set_limits
from chemgauge.chem.reactant_sets import ReactantSetScorer
from chemgauge.chem.standardize import DEFAULT_SETTINGS, parity_outcome
from chemgauge.errors import SmilesError

MAX_ATOMS = DEFAULT_LIMITS.max_atoms
MAX_SMILES_CHARS = DEFAULT_LIMITS.max_smiles_chars


@pytest.fixture
def raised_limits(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A run that raised every structure limit to its ceiling (``--max-atoms 10000`` ...)."""
    for name in ("CHEMGAUGE_MAX_SMILES_CHARS", "CHEMGAUGE_MAX_ATOMS", "CHEMGAUGE_MAX_RINGS",
                 "CHEMGAUGE_MAX_FRAGMENTS"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    set_limits(**CEILINGS.to_dict())
    yield
    for name in ("CHEMGAUGE_MAX_SMILES_CHARS", "CHEMGAUGE_MAX_ATOMS", "CHEMGAUGE_MAX_RINGS",
                 "CHEMGAUGE_MAX_FRAGMENTS"):  # fmt: skip
        os.environ.pop(name, None)


# Moderate-size oddities every matcher must answer (a key or None, never an exception).
ODDITIES = {
    "hypervalent_sf6": "FS(F)(F)(F)(F)F",
    "hypervalent_if7": "FI(F)(F)(F)(F)(F)F",
    "pentavalent_carbon": "C(C)(C)(C)(C)C",
    "xenon_octafluoride": "[Xe](F)(F)(F)(F)(F)(F)(F)F",
    "charged_zoo": "[NH4+].[O-][N+](=O)[O-].[Na+].[Cl-].[Fe+3].[O-2]",
    "zwitterion": "[NH3+]CC(=O)[O-]",
    "radical": "[CH3].[O]",
    "isotopes": "[2H]C([3H])([13CH3])[18OH]",
    "dative": "[Cu]<-N",
    "quadruple_bond": "[Mo]$[Mo]",
    "wildcards": "*C(*)*",
    "aromatic_lies": "c1cccc1",
    "kekule_fail": "c1ccccc1c",
    "nested_branches": "C" + "(C" * 200 + ")" * 200,
    "high_ring_numbers": "C%99CC%99",
    "huge_charge": "[C+15]",
    "empty_brackets": "[]",
    "dots_only": "...",
    "fullerene_c60": (
        "c12c3c4c5c1c1c6c7c2c2c8c3c3c9c4c4c%10c5c5c1c1c6c6c%11c7c2c2c7c8c3c3c8c9c4c4"
        "c9c%10c5c5c1c1c6c6c%11c2c2c7c3c3c8c4c4c9c5c1c1c6c2c3c41"
    ),
    "tautomer_rich_small": "Oc1nc(O)c(O)c(O)n1",
    "many_stereo": "C[C@H](O)[C@@H](O)[C@H](O)[C@@H](O)[C@H](O)[C@@H](O)C",
    "ez_chain": "C/C=C/C=C/C=C/C=C/C=C/C",
}

# Large molecules that stress the tautomer search (each finishes under the work budget).
TAUTOMER_STRESS = {
    "polyamide_200": "CC(=O)N" * 200,
    "polyketone_150": "CC(=O)C" * 150,
    "polyguanidine_150": "NC(=N)N" * 150,
    "polyhydroxypyridine_30": "Oc1cc(O)nc(O)c1" * 30,
}


@pytest.mark.parametrize("policy", matcher_names())
@pytest.mark.parametrize("name", sorted(ODDITIES))
def test_oddities_get_a_key_or_none(policy: str, name: str) -> None:
    """Exactly the unparsable oddities, and the parsable ones InChI cannot express under the
    InChI-based matchers, have no key; every other key is a non-empty string."""
    key = get_matcher(policy).key(ODDITIES[name])
    keyless = name in UNPARSABLE or (policy in INCHI_BASED and name in NO_INCHI)
    assert (key is None) == keyless, (policy, name, key)
    assert key is None or (isinstance(key, str) and key)


# The oddities RDKit refuses (checked one by one with RDKit 2026.09); every other one parses.
UNPARSABLE = frozenset(
    {
        "aromatic_lies",
        "dots_only",
        "empty_brackets",
        "hypervalent_if7",
        "kekule_fail",
        "pentavalent_carbon",
        "xenon_octafluoride",
    }
)


# Parsable oddities with no InChI (a dative bond, a quadruple bond, wildcard atoms), and the
# matchers whose key is built from the InChI.
NO_INCHI = frozenset({"dative", "quadruple_bond", "wildcards"})
INCHI_BASED = frozenset({"inchi", "inchikey", "strict_key"})


@pytest.mark.parametrize("name", sorted(ODDITIES))
def test_oddities_parse_or_carry_a_reason(name: str) -> None:
    smiles = ODDITIES[name]
    canonical = try_canonical_smiles(smiles)
    if name in UNPARSABLE:
        assert canonical is None
        assert describe_parse_failure(smiles)
        with pytest.raises(SmilesError, match=r"SMILES|sanitization|atoms"):
            parse_smiles(smiles)
    else:
        # A parsed oddity has a canonical form that is a fixed point of canonicalization.
        assert canonical, describe_parse_failure(smiles)
        assert parse_smiles(smiles).GetNumAtoms() > 0
        assert try_canonical_smiles(canonical) == canonical


def test_lone_surrogate_is_refused_not_raised() -> None:
    text = "C\ud800C"
    for policy in matcher_names():
        assert get_matcher(policy).key(text) is None
    assert "Unicode" in describe_parse_failure(text)
    assert Canonicalizer("exact").many([text, "CCO"]) == [None, "CCO"]


def test_nul_and_control_characters_are_invalid_not_crashes() -> None:
    for text in ("C\x00C", "\x00", "C\x1bC", "\x07", "C\x7fC"):
        for policy in matcher_names():
            assert get_matcher(policy).key(text) is None
        assert describe_parse_failure(text)


def test_text_over_the_size_limit_is_refused_before_parsing() -> None:
    text = "C" * (MAX_SMILES_CHARS + 1)
    assert try_canonical_smiles(text) is None
    assert f"over the limit of {MAX_SMILES_CHARS:,}" in describe_parse_failure(text)


def test_chain_that_overflows_rdkit_is_refused_in_process() -> None:
    # 20,000 chain atoms overflow RDKit's recursive SMILES writer (a segfault); run it in a
    # child so a regression fails this test instead of killing pytest.
    code = (
        "from chemgauge.chem import try_canonical_smiles, describe_parse_failure\n"
        "s = 'C' * 20000\n"
        "assert try_canonical_smiles(s) is None\n"
        "print(describe_parse_failure(s))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (
        f"over the limit of {MAX_SMILES_CHARS:,} (raise it with --max-smiles-chars)" in done.stdout
    )


def test_reactant_set_parser_applies_the_same_limits() -> None:
    scorer = ReactantSetScorer(("exact", "parity"))
    big = "C" * (MAX_ATOMS + 5)
    result = scorer.compare(["CCO"], [big, "C\ud800", "x" * (MAX_SMILES_CHARS + 1), "OCC"])
    assert result.valid == (False, False, False, True)
    assert result.correct["exact"] == (False, False, False, True)
    assert result.correct["parity"] == (False, False, False, True)


@pytest.mark.slow
@pytest.mark.parametrize("policy", matcher_names())
@pytest.mark.usefixtures("raised_limits")
def test_thousands_of_atoms_finish_when_the_limits_are_raised(policy: str) -> None:
    ring_chain = "".join("C1CC1" for _ in range(700))  # 2,100 atoms, 700 rings
    polyphenylene = "c1ccc(cc1)" * 300 + "C"  # 1,801 atoms, aromatic chain
    for smiles in (ring_chain, polyphenylene):
        key = get_matcher(policy).key(smiles)
        if policy in ("exact", "stereo_ignored", "parity"):
            assert key
        else:  # InChI refuses molecules over its own atom limit: a recorded None
            assert key is None


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TAUTOMER_STRESS))
@pytest.mark.usefixtures("raised_limits")
def test_tautomer_search_is_capped_by_the_work_budget(name: str) -> None:
    outcome = parity_outcome(TAUTOMER_STRESS[name])
    assert outcome.key is not None
    assert outcome.tautomer_cap < DEFAULT_SETTINGS.max_tautomers
    assert outcome.search_status in ("Completed", "MaxTautomersReached", "MaxTransformsReached")


def test_drug_like_molecules_keep_the_full_tautomer_cap() -> None:
    outcome = parity_outcome("Oc1ccccn1")
    assert outcome.tautomer_cap == DEFAULT_SETTINGS.max_tautomers
    assert outcome.search_status == "Completed"
    assert outcome.key == get_matcher("parity").key("O=c1cccc[nH]1")


def test_parity_outcome_of_garbage() -> None:
    assert parity_outcome("not a smiles").search_status == "not_run"
    assert parity_outcome("not a smiles").key is None


_ATOMS = st.sampled_from(
    [
        "C",
        "N",
        "O",
        "S",
        "P",
        "F",
        "Cl",
        "Br",
        "I",
        "B",
        "c",
        "n",
        "o",
        "s",
        "[nH]",
        "[NH4+]",
        "[O-]",
        "[Fe]",
        "[Si]",
        "[Se]",
        "[2H]",
        "[C@H]",
        "[C@@H]",
        "*",
    ]
)
_GLUE = st.sampled_from(["", "", "=", "#", "(", ")", "1", "2", "%10", ".", "/", "\\", "-", ":"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_ATOMS, _GLUE), min_size=1, max_size=40))
def test_random_smiles_fragments_never_raise(parts: list[tuple[str, str]]) -> None:
    smiles = "".join(a + g for a, g in parts)
    for policy in matcher_names():
        key = get_matcher(policy).key(smiles)
        assert key is None or isinstance(key, str)
    if try_canonical_smiles(smiles) is None:
        assert describe_parse_failure(smiles)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_never_raises(text: str) -> None:
    for policy in ("exact", "stereo_ignored", "strict_key", "parity"):
        key = get_matcher(policy).key(text)
        assert key is None or isinstance(key, str)
    describe_parse_failure(text)


def test_a_10000_atom_ring_is_refused_quickly_under_every_policy(tmp_path: Path) -> None:
    """H1: one molecule cost 6.4 GB and 55 s under parity; now the text is refused unread."""
    source = tmp_path / "ring.smi"
    source.write_text("C1" + "C" * 9997 + "1\n" + "CCO\n")
    for policy in ("exact", "parity"):
        out = tmp_path / f"{policy}.txt"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "chemgauge", "canon", str(source), "--policy", policy,
             "--out", str(out), "-q"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        ring, ethanol = out.read_text().splitlines()
        assert ring == "" and ethanol
        assert "raise it with --max-smiles-chars" in done.stderr
        assert time.monotonic() - started < 60  # a bound on the refusal, not a timing claim


def test_limits_are_raised_and_lowered_by_flags_and_reach_workers(tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("CCCCCC\nC12CC1C2\nC.C.C\nCCO\n")
    out = tmp_path / "keys.txt"
    args = [sys.executable, "-m", "chemgauge", "canon", str(source), "--out", str(out), "-q"]
    limits = ["--max-atoms", "5", "--max-rings", "1", "--max-fragments", "2"]
    done = subprocess.run(
        [*args, *limits, "--jobs", "2", "--chunk-size", "1"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_text().splitlines() == ["", "", "", "CCO"]
    for reason in ("--max-atoms", "--max-rings", "--max-fragments"):
        assert f"raise it with {reason}" in done.stderr
    refused = subprocess.run([*args, "--max-atoms", "0"], capture_output=True, text=True)
    assert refused.returncode == 2
    assert "--max-atoms must be between 1 and 10,000" in refused.stderr
