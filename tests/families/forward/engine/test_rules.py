"""The embedded forward rule set and the strict JSONL rule loader."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from chemgauge.chem import canonical_multiset
from chemgauge.errors import InputFileError, RuleFileError
from chemgauge.families.forward.engine.predictor import predict_products_detailed
from chemgauge.families.forward.engine.rules import (
    EMBEDDED_RULES_VERSION,
    Rule,
    RuleSet,
    load_embedded_rules,
    load_rule_file,
    load_rules,
    rules_content_sha256,
)

EMBEDDED = load_embedded_rules()

# The reaction families issue 3 asks the embedded set to cover (class -> at least one rule).
REQUIRED_CLASSES = {
    "amide_coupling",
    "esterification",
    "deprotection",
    "alkylation",
    "reductive_amination",
    "suzuki_coupling",
    "buchwald_hartwig_coupling",
    "sonogashira_coupling",
    "heck_coupling",
    "negishi_coupling",
    "snar",
    "mitsunobu",
    "olefination",
    "organometallic_addition",
    "reduction",
    "oxidation",
    "sulfonylation",
    "urea_formation",
    "carbamate_formation",
    "cycloaddition",
    "heterocycle_formation",
}

# Specific transformations the issue names, by template id.
REQUIRED_RULES = {
    "amide_acid_amine_v1",
    "amide_acyl_chloride_amine_v1",
    "amide_ester_aminolysis_v1",
    "boc_deprotection_v1",
    "cbz_deprotection_v1",
    "o_benzyl_deprotection_v1",
    "ester_hydrolysis_v1",
    "silyl_ether_deprotection_v1",
    "n_alkylation_alkyl_halide_v1",
    "o_alkylation_williamson_v1",
    "wittig_v1",
    "grignard_aldehyde_v1",
    "organolithium_carbonyl_v1",
    "nitro_reduction_v1",
    "ketone_reduction_v1",
    "ester_reduction_v1",
    "nitrile_reduction_v1",
    "sulfonamide_v1",
    "cuaac_triazole_v1",
}


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rule_line(template_id: str, smirks: str, **extra: object) -> str:
    return json.dumps({"template_id": template_id, "smirks": smirks, **extra})


GOOD = _rule_line("ester_v1", "[C:1](=[O:2])[OH].[OH:3][CH3]>>[C:1](=[O:2])[O:3]C")


# --- embedded set -----------------------------------------------------------


def test_embedded_set_is_large_versioned_and_complete() -> None:
    assert len(EMBEDDED) >= 60
    assert EMBEDDED.embedded_version == EMBEDDED_RULES_VERSION
    assert EMBEDDED.graph_rules_skipped == 0
    for rule in EMBEDDED:
        assert rule.name and rule.reaction_class and rule.example is not None, rule.template_id
        assert rule.template_id.endswith(("_v1", "_v2", "_v3")), rule.template_id


def test_embedded_set_covers_the_requested_reaction_families() -> None:
    classes = {rule.reaction_class for rule in EMBEDDED}
    assert classes >= REQUIRED_CLASSES, REQUIRED_CLASSES - classes
    ids = {rule.template_id for rule in EMBEDDED}
    assert ids >= REQUIRED_RULES, REQUIRED_RULES - ids


@pytest.mark.parametrize("rule", EMBEDDED.rules, ids=lambda r: r.template_id)
def test_every_embedded_example_reproduces(rule: Rule) -> None:
    assert rule.example is not None
    report = predict_products_detailed(
        list(rule.example.reactants), EMBEDDED.subset([rule.template_id])
    )
    expected = canonical_multiset(rule.example.product)
    assert report.rank_of(expected) is not None, [c.smiles for c in report.candidates]
    assert report.stats.invalid_outcomes_rejected == 0
    assert report.stats.application_errors == 0


def test_embedded_examples_survive_the_full_rule_set() -> None:
    """With all rules competing, each example's product is still in the pool."""
    missing = []
    for rule in EMBEDDED:
        assert rule.example is not None
        report = predict_products_detailed(list(rule.example.reactants), EMBEDDED)
        if report.rank_of(canonical_multiset(rule.example.product)) is None:
            missing.append(rule.template_id)
    assert missing == []


def test_content_hash_is_sha256_of_sorted_pairs_as_canonical_json() -> None:
    pairs = sorted([r.template_id, r.smirks] for r in EMBEDDED)
    expected = hashlib.sha256(
        json.dumps(pairs, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    assert EMBEDDED.content_sha256 == expected


def test_content_hash_ignores_order_names_and_examples() -> None:
    a = Rule("a_v1", "[C:1]=[O:2]>>[C:1][O:2]", name="one")
    b = Rule("b_v1", "[N:1]>>[N:1]C")
    renamed = Rule("a_v1", "[C:1]=[O:2]>>[C:1][O:2]", name="other", reaction_class="x")
    assert rules_content_sha256([a, b]) == rules_content_sha256([b, renamed])
    edited = Rule("a_v1", "[C:1]=[O:2]>>[C:1]-[O:2]")
    assert rules_content_sha256([a, b]) != rules_content_sha256([edited, b])


# --- strict loader ----------------------------------------------------------


def test_load_rule_file_reads_rules_and_optional_fields(tmp_path: Path) -> None:
    example = {"reactants": ["CC(=O)O", "CO"], "product": "COC(C)=O"}
    path = _write(
        tmp_path / "rules.jsonl",
        [GOOD, "", _rule_line("b_v1", "[N:1]>>[N:1]C", name="methylate", example=example)],
    )
    rules = load_rule_file(path)
    assert [r.template_id for r in rules] == ["ester_v1", "b_v1"]
    assert rules.get("b_v1") is not None
    b = rules.get("b_v1")
    assert b is not None and b.name == "methylate" and b.line == 3 and b.source == str(path)
    assert b.example is not None and b.example.reactants == ("CC(=O)O", "CO")


def test_empty_smirks_rules_are_skipped_and_counted(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "rules.jsonl", [GOOD, _rule_line("graph_v1", ""), _rule_line("g2", "  ")]
    )
    rules = load_rule_file(path)
    assert len(rules) == 1
    assert rules.graph_rules_skipped == 2
    report = predict_products_detailed(["CC(=O)O", "CO"], rules)
    assert report.stats.graph_rules_skipped == 2
    assert report.stats.rules_loaded == 1


@pytest.mark.parametrize(
    ("lines", "line", "fragment"),
    [
        ([GOOD, "{not json"], 2, "invalid JSON"),
        ([GOOD, "", "[1, 2]"], 3, "JSON object"),
        ([json.dumps({"template_id": "x"})], 1, "missing required field 'smirks'"),
        ([json.dumps({"smirks": "[C:1]>>[C:1]"})], 1, "missing required field 'template_id'"),
        ([_rule_line("x", "[C:1]>>[C:1]", smirk="typo")], 1, "unknown field"),
        ([_rule_line("", "[C:1]>>[C:1]")], 1, "template_id"),
        ([_rule_line("x", 5)], 1, "'smirks' must be a string"),
        ([GOOD, _rule_line("bad_v1", "[C:1]>>[C:1")], 2, "unparsable reaction SMARTS"),
        ([_rule_line("bad_v1", "[C:1]=[O:2]")], 1, "unparsable reaction SMARTS"),
        ([GOOD, _rule_line("x", "[C:1]>>[C:1]", name=3)], 2, "'name' must be a string"),
        (
            [_rule_line("x", "[C:1]>>[C:1]", example={"reactants": ["C1CC"], "product": "C"})],
            1,
            "unparsable SMILES",
        ),
        ([_rule_line("x", "[C:1]>>[C:1]", example={"reactants": []})], 1, "'example'"),
        ([GOOD, GOOD.replace("ester_v1", "x"), GOOD], 3, "duplicate template_id 'ester_v1'"),
    ],
)
def test_strict_loader_names_file_and_line(
    tmp_path: Path, lines: list[str], line: int, fragment: str
) -> None:
    path = _write(tmp_path / "rules.jsonl", lines)
    with pytest.raises(RuleFileError) as info:
        load_rule_file(path)
    assert info.value.line == line
    assert info.value.path == str(path)
    assert fragment in str(info.value)
    assert f"{path}, line {line}" in str(info.value)


def test_missing_directory_and_empty_files_are_hard_errors(tmp_path: Path) -> None:
    for target, fragment in [
        (tmp_path / "absent.jsonl", "cannot read rule file"),
        (tmp_path, "cannot read rule file"),
        (_write(tmp_path / "empty.jsonl", []), "empty"),
        (_write(tmp_path / "blank.jsonl", ["", "   ", ""]), "empty"),
    ]:
        with pytest.raises(RuleFileError, match=fragment) as info:
            load_rule_file(target)
        assert isinstance(info.value, InputFileError)
        assert info.value.path == str(target)


def test_non_utf8_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(GOOD.encode() + b"\n" + b'{"template_id": "caf\xe9"}\n')
    with pytest.raises(RuleFileError, match="UTF-8") as info:
        load_rule_file(path)
    assert info.value.line == 2


def test_templates_extend_the_embedded_set(tmp_path: Path) -> None:
    path = _write(tmp_path / "extra.jsonl", [GOOD, _rule_line("graph_v1", "")])
    combined = load_rules([path])
    assert len(combined) == len(EMBEDDED) + 1
    assert combined.graph_rules_skipped == 1
    assert combined.sources[-1] == str(path)
    assert combined.embedded_version == EMBEDDED_RULES_VERSION
    only = load_rules([path], embedded=False)
    assert [r.template_id for r in only] == ["ester_v1"]
    with pytest.raises(RuleFileError, match="no rules"):
        load_rules(embedded=False)


def test_extending_with_an_embedded_id_is_a_hard_error(tmp_path: Path) -> None:
    clash = _rule_line("amide_acid_amine_v1", "[C:1]=[O:2]>>[C:1][O:2]")
    path = _write(tmp_path / "clash.jsonl", ["", clash])
    with pytest.raises(RuleFileError, match="duplicate template_id") as info:
        load_rules([path])
    assert info.value.path == str(path)
    assert info.value.line == 2
    assert "forward_rules.jsonl" in str(info.value)


def test_rule_set_is_immutable_value() -> None:
    rule = Rule("a_v1", "[C:1]=[O:2]>>[C:1][O:2]", source="x.jsonl", line=4)
    same = Rule("a_v1", "[C:1]=[O:2]>>[C:1][O:2]", source="y.jsonl", line=9)
    assert rule == same
    assert rule.location == "x.jsonl, line 4"
    with pytest.raises(AttributeError):
        rule.smirks = "[C:1]>>[C:1]"  # type: ignore[misc]
    assert RuleSet((rule,)).subset(["nope"]).rules == ()
