"""Forward reaction rules: the embedded, versioned template set and the strict rule-file loader.

A rule file is JSONL, one rule per line: ``template_id`` and ``smirks`` (an RDKit reaction
SMARTS) are required; ``name``, ``reaction_class``, ``example`` (``{"reactants": [...],
"product": "..."}``) and ``source_reaction_ids`` (the corpus reactions an extracted template
came from, a list of strings) are optional. Blank lines are skipped. A rule whose ``smirks``
is empty is a graph rule this engine cannot run: it is skipped and counted, never a parse
failure.
Anything else that is wrong (a missing, unreadable or empty file, bad JSON, an unknown or
mistyped field, a SMARTS RDKit rejects, a repeated ``template_id``) is a hard
:class:`~chemgauge.errors.RuleFileError` naming the file and line.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rdkit.Chem import rdChemReactions

from chemgauge.chem import try_parse_smiles
from chemgauge.errors import InputFileError, RuleFileError
from chemgauge.eval.lines import open_problem, read_lines
from chemgauge.eval.provenance import sha256_json

__all__ = [
    "EMBEDDED_RULES_SOURCE",
    "EMBEDDED_RULES_VERSION",
    "RULES_CONTENT_HASH_SCHEME",
    "Rule",
    "RuleExample",
    "RuleSet",
    "compile_smirks",
    "load_embedded_rules",
    "load_rule_file",
    "load_rules",
    "parse_rule_lines",
    "rules_content_sha256",
]

# Bump whenever forward_rules.jsonl changes (a rule added, removed or edited).
EMBEDDED_RULES_VERSION = "1"
EMBEDDED_RULES_SOURCE = "chemgauge.families.forward.engine/forward_rules.jsonl"
# SHA-256 of canonical JSON of the sorted [template_id, smirks] pairs; versioned on its own.
RULES_CONTENT_HASH_SCHEME = "rules-content-sha256-v1"

_REQUIRED_KEYS = ("template_id", "smirks")
_OPTIONAL_KEYS = ("name", "reaction_class", "example", "source_reaction_ids")
_ALLOWED_KEYS = frozenset(_REQUIRED_KEYS + _OPTIONAL_KEYS)


@dataclass(frozen=True, slots=True)
class RuleExample:
    """A worked example: these reactants must yield this product (a test runs every one)."""

    reactants: tuple[str, ...]
    product: str


@dataclass(frozen=True, slots=True)
class Rule:
    """One forward template; identity is its id and SMARTS, not where it was read from."""

    template_id: str
    smirks: str
    name: str | None = None
    reaction_class: str | None = None
    example: RuleExample | None = None
    source_reaction_ids: tuple[str, ...] | None = field(default=None, compare=False)
    source: str = field(default=EMBEDDED_RULES_SOURCE, compare=False)
    line: int | None = field(default=None, compare=False)

    @property
    def location(self) -> str:
        """Where the rule came from, as ``source, line N`` for error messages."""
        return self.source if self.line is None else f"{self.source}, line {self.line}"


def rules_content_sha256(rules: Iterable[Rule]) -> str:
    """SHA-256 over the sorted (template_id, smirks) pairs as canonical JSON.

    Two rule files with the same rules in another order, or with other names and examples,
    hash identically: only what changes predictions is hashed.
    """
    pairs = sorted([rule.template_id, rule.smirks] for rule in rules)
    return sha256_json(pairs)


@dataclass(frozen=True, slots=True)
class RuleSet:
    """An ordered, immutable collection of rules with unique ids plus skip accounting."""

    rules: tuple[Rule, ...]
    graph_rules_skipped: int = 0
    sources: tuple[str, ...] = ()
    embedded_version: str | None = None

    def __post_init__(self) -> None:
        seen: dict[str, Rule] = {}
        for rule in self.rules:
            first = seen.setdefault(rule.template_id, rule)
            if first is not rule:
                raise RuleFileError(
                    f"duplicate template_id {rule.template_id!r} (first defined at "
                    f"{first.location})",
                    path=rule.source,
                    line=rule.line,
                    value=rule.template_id,
                )

    def __len__(self) -> int:
        return len(self.rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    @property
    def content_sha256(self) -> str:
        """Content hash of the loaded rules (see :func:`rules_content_sha256`)."""
        return rules_content_sha256(self.rules)

    def get(self, template_id: str) -> Rule | None:
        """The rule with this id, or ``None``."""
        for rule in self.rules:
            if rule.template_id == template_id:
                return rule
        return None

    def subset(self, template_ids: Iterable[str]) -> RuleSet:
        """A rule set holding only the named rules, in this set's order."""
        wanted = set(template_ids)
        return RuleSet(
            rules=tuple(r for r in self.rules if r.template_id in wanted),
            sources=self.sources,
            embedded_version=self.embedded_version,
        )

    def extended(self, other: RuleSet) -> RuleSet:
        """This set followed by ``other``; a repeated template_id is a hard error."""
        return RuleSet(
            rules=self.rules + other.rules,
            graph_rules_skipped=self.graph_rules_skipped + other.graph_rules_skipped,
            sources=self.sources + other.sources,
            embedded_version=self.embedded_version or other.embedded_version,
        )


@functools.lru_cache(maxsize=4096)
def compile_smirks(smirks: str) -> rdChemReactions.ChemicalReaction:
    """Parse and initialize a reaction SMARTS once; raises ``ValueError`` with RDKit's reason.

    Cached by text because RDKit reaction objects are immutable once initialized and
    parsing dominates the cost of a small rule set.
    """
    try:
        rxn = rdChemReactions.ReactionFromSmarts(smirks)
    except Exception as exc:  # RDKit raises ValueError or RuntimeError depending on the fault
        raise ValueError(str(exc).strip() or "RDKit rejected the reaction SMARTS") from exc
    if rxn is None:
        raise ValueError("RDKit rejected the reaction SMARTS")
    if rxn.GetNumReactantTemplates() == 0:
        raise ValueError("reaction SMARTS has no reactant templates")
    if rxn.GetNumProductTemplates() == 0:
        raise ValueError("reaction SMARTS has no product templates")
    rxn.Initialize()
    _, n_errors = rxn.Validate(silent=True)
    if n_errors:
        raise ValueError(f"RDKit found {n_errors} error(s) validating the reaction")
    return rxn


def _fail(message: str, source: str, line: int, value: str | None = None) -> RuleFileError:
    return RuleFileError(message, path=source, line=line, value=value)


def _optional_str(obj: Mapping[str, Any], key: str, source: str, line: int) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise _fail(f"field {key!r} must be a string", source, line, repr(value))
    return value


def _parse_example(value: Any, source: str, line: int) -> RuleExample | None:
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"reactants", "product"}:
        raise _fail(
            "field 'example' must be an object with exactly 'reactants' and 'product'",
            source,
            line,
            repr(value),
        )
    reactants, product = value["reactants"], value["product"]
    if (
        not isinstance(reactants, list)
        or not reactants
        or not all(isinstance(s, str) and s.strip() for s in reactants)
    ):
        raise _fail(
            "example 'reactants' must be a non-empty list of SMILES", source, line, repr(reactants)
        )
    if not isinstance(product, str) or not product.strip():
        raise _fail("example 'product' must be a non-empty SMILES", source, line, repr(product))
    for smiles in [*reactants, product]:
        if try_parse_smiles(smiles) is None:
            raise _fail("example holds an unparsable SMILES", source, line, smiles)
    return RuleExample(reactants=tuple(reactants), product=product)


def _source_ids(value: Any, source: str, line: int) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(
            "'source_reaction_ids' must be a list of non-empty strings", source, line, repr(value)
        )
    return tuple(value)


def _parse_rule(text: str, source: str, line: int) -> Rule | None:
    """One rule from one JSONL line; ``None`` for a graph rule (empty smirks)."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(f"invalid JSON ({exc.msg} at column {exc.colno})", source, line, text) from exc
    except (RecursionError, ValueError) as exc:  # absurd nesting, or an over-long integer
        raise _fail(f"invalid JSON ({type(exc).__name__})", source, line, text[:200]) from exc
    if not isinstance(obj, dict):
        raise _fail("a rule must be a JSON object", source, line, text)
    unknown = sorted(set(obj) - _ALLOWED_KEYS)
    if unknown:
        raise _fail(
            f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_ALLOWED_KEYS))}",
            source,
            line,
            text,
        )
    for key in _REQUIRED_KEYS:
        if key not in obj:
            raise _fail(f"missing required field {key!r}", source, line, text)
    template_id, smirks = obj["template_id"], obj["smirks"]
    if not isinstance(template_id, str) or not template_id.strip():
        raise _fail("'template_id' must be a non-empty string", source, line, repr(template_id))
    if template_id != template_id.strip():
        raise _fail("'template_id' has surrounding whitespace", source, line, repr(template_id))
    if not isinstance(smirks, str):
        raise _fail("'smirks' must be a string", source, line, repr(smirks))
    name = _optional_str(obj, "name", source, line)
    reaction_class = _optional_str(obj, "reaction_class", source, line)
    example = _parse_example(obj.get("example"), source, line)
    sources = _source_ids(obj.get("source_reaction_ids", None), source, line)
    if not smirks.strip():
        return None
    try:
        compile_smirks(smirks)
    except ValueError as exc:
        raise _fail(
            f"unparsable reaction SMARTS for {template_id!r}: {exc}", source, line, smirks
        ) from exc
    return Rule(
        template_id=template_id,
        smirks=smirks,
        name=name,
        reaction_class=reaction_class,
        example=example,
        source_reaction_ids=sources,
        source=source,
        line=line,
    )


def parse_rule_lines(lines: Iterable[str], source: str) -> RuleSet:
    """Parse JSONL rule lines strictly; ``source`` names the file in every error."""
    rules: list[Rule] = []
    skipped = 0
    seen_any = False
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        seen_any = True
        rule = _parse_rule(text, source, number)
        if rule is None:
            skipped += 1
        else:
            rules.append(rule)
    if not seen_any:
        raise RuleFileError("rule file is empty", path=source)
    return RuleSet(rules=tuple(rules), graph_rules_skipped=skipped, sources=(source,))


def _decoded_lines(data: bytes, source: str) -> list[str]:
    """Every line's text (split and decoded by :mod:`chemgauge.eval.lines`, BOM stripped);
    a rule file is all or nothing, so a line that is not UTF-8 is an error naming it."""
    lines: list[str] = []
    try:
        decoded = list(read_lines(data, keep_undecodable=True, name=source))
    except InputFileError as exc:
        raise RuleFileError(str(exc).removeprefix(f"{source}: "), path=source) from None
    for line in decoded:
        if line.problem is not None:
            raise RuleFileError(line.problem, path=source, line=line.number, value=line.text)
        lines.append(line.text)
    return lines


def load_rule_file(path: str | Path) -> RuleSet:
    """Load a JSONL rule file strictly (see the module docstring for what is an error)."""
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = open_problem(path, exc)
        raise RuleFileError(f"cannot read rule file ({reason})", path=source) from None
    return parse_rule_lines(_decoded_lines(data, source), source)


@functools.cache
def load_embedded_rules() -> RuleSet:
    """The rule set shipped inside the package (version :data:`EMBEDDED_RULES_VERSION`)."""
    data = (
        resources.files("chemgauge.families.forward.engine")
        .joinpath("forward_rules.jsonl")
        .read_bytes()
    )
    parsed = parse_rule_lines(_decoded_lines(data, EMBEDDED_RULES_SOURCE), EMBEDDED_RULES_SOURCE)
    return RuleSet(
        rules=parsed.rules,
        graph_rules_skipped=parsed.graph_rules_skipped,
        sources=parsed.sources,
        embedded_version=EMBEDDED_RULES_VERSION,
    )


def load_rules(templates: Sequence[str | Path] = (), *, embedded: bool = True) -> RuleSet:
    """The embedded set (unless ``embedded=False``) extended by each ``--templates`` file."""
    result = load_embedded_rules() if embedded else RuleSet(rules=())
    for path in templates:
        result = result.extended(load_rule_file(path))
    if not embedded and not templates:
        raise RuleFileError("no rules: the embedded set is disabled and no rule file was given")
    return result
