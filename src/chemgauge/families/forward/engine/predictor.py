"""Template forward predictor: apply every rule to the reactants, merge, rank, and account.

The reactants are used exactly as the caller wrote them (text and order): stereo tags can
come out differently when a molecule is built from another spelling, so a benchmark must
measure the engine on the caller's input, never on its own canonical rewrite. A string with
several dot-separated components contributes each component, in order, as one molecule.
The one adjustment is hydrogen bookkeeping: hydrogen counts written inside brackets (every
atom of an atom-mapped SMILES) become implicit where that gives the same count, so a template
updates hydrogens the same way for mapped and unmapped input. Stereocentres keep theirs (it
is part of their neighbour order), so a template that removes a hydrogen from a written
``[C@H]`` must say the product's hydrogen count.

For each rule, every assignment of distinct input molecules to its reactant slots whose
molecules match the slot templates is run through RDKit ``RunReactants``. Each outcome is
sanitized and re-parsed (a failure is an *invalid* outcome), compared with the inputs (an
outcome whose every product is identical to an input molecule is a *no-op*), and merged with
other outcomes by its canonical product multiset. Stereocentres move the way RDKit reaction
SMARTS specify: kept when the template is silent, inverted or set when it says so.

Speed without changing results: each rule's reaction and slot keys are prepared once per
rule-set object, and a slot template is matched against the inputs once per call per
distinct map-free SMARTS (extracted rule sets repeat the same fragment under many
templates); identical outcome texts are canonicalized once per call.

Ranking (:data:`SCORE_SCHEME`): a candidate's score is the number of distinct templates that
produced it (independent routes to the same products are consensus); ties are broken by the
canonical product string, ascending. The ranking never depends on rule order.
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

from rdkit import Chem
from rdkit.Chem import rdChemReactions

from chemgauge.chem import parse_smiles, try_canonical_smiles
from chemgauge.errors import ConfigError, SmilesError
from chemgauge.families.forward.engine import rules as rules_module
from chemgauge.families.forward.engine.balance import Balance, atom_counts, compute_balance
from chemgauge.families.forward.engine.rules import (
    Rule,
    RuleSet,
    compile_smirks,
    load_embedded_rules,
)

__all__ = [
    "SCORE_SCHEME",
    "ApplicationIssue",
    "Candidate",
    "ForwardConfig",
    "ForwardReport",
    "ForwardStats",
    "predict_products",
    "predict_products_detailed",
]

SCORE_SCHEME = "distinct-template-count-v1"

IssueKind = Literal["error", "warning", "invalid"]


@dataclass(frozen=True, slots=True)
class ForwardConfig:
    """Run policy for one prediction call.

    Attributes:
        max_results: keep at most this many ranked candidates (``None`` keeps all); when it
            cuts the pool, :attr:`ForwardStats.capped` is set so absence is "unknown".
        max_products_per_application: RDKit's ``maxProducts`` for one assignment of
            molecules to a rule's slots; reaching it is counted as a truncation warning.
        max_diagnostics: how many issues are kept verbatim (counts are always exact).
        balance: compute the atom and charge balance of each candidate.
    """

    max_results: int | None = None
    max_products_per_application: int = 1000
    max_diagnostics: int = 20
    balance: bool = True

    def __post_init__(self) -> None:
        if self.max_results is not None and self.max_results < 1:
            raise ConfigError(f"max_results must be at least 1 or None, got {self.max_results}")
        if self.max_products_per_application < 1:
            raise ConfigError(
                "max_products_per_application must be at least 1, got "
                f"{self.max_products_per_application}"
            )
        if self.max_diagnostics < 0:
            raise ConfigError(f"max_diagnostics must be >= 0, got {self.max_diagnostics}")


@dataclass(frozen=True, slots=True)
class ApplicationIssue:
    """One diagnostic from applying a rule: an RDKit error, a warning, or an invalid outcome."""

    kind: IssueKind
    template_id: str
    message: str


@dataclass(frozen=True, slots=True)
class ForwardStats:
    """Exact accounting of one prediction call, so no outcome disappears unexplained.

    Attributes:
        rules_loaded: runnable rules in the rule set.
        graph_rules_skipped: rules with empty SMARTS the loader skipped (never a failure).
        reactant_molecules: input molecules after splitting dot-separated strings.
        templates_attempted: rules with no more reactant slots than input molecules.
        templates_matched: attempted rules that produced at least one raw outcome (every slot
            matched a distinct input molecule at least once).
        templates_partially_matched: attempted rules where some slot matched an input molecule
            but no complete assignment produced an outcome (often: a reactant is missing).
        raw_outcomes: RDKit outcomes before validity, no-op filtering and merging.
        invalid_outcomes_rejected: outcomes that failed sanitization or re-parsing, were empty,
            or held radicals that no input had.
        no_op_outcomes_rejected: valid outcomes whose every product equals an input molecule.
        application_errors: RDKit exceptions while running a rule (the rule is skipped for
            that assignment, the call goes on).
        application_warnings: truncations of an application at ``max_products_per_application``.
        candidates_before_cap: distinct candidates after merging, before ``max_results``.
        capped: ``max_results`` cut the pool, so a missing product is unknown, not absent.
    """

    rules_loaded: int
    graph_rules_skipped: int
    reactant_molecules: int
    templates_attempted: int
    templates_matched: int
    templates_partially_matched: int
    raw_outcomes: int
    invalid_outcomes_rejected: int
    no_op_outcomes_rejected: int
    application_errors: int
    application_warnings: int
    candidates_before_cap: int
    capped: bool

    @property
    def pool_complete(self) -> bool:
        """True when neither ``max_results`` nor an RDKit product limit truncated anything."""
        return not self.capped and self.application_warnings == 0

    def as_dict(self) -> dict[str, int | bool]:
        """Plain dict for rows and reports."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One ranked, merged prediction: a canonical product multiset and who produced it.

    Attributes:
        rank: 0-based position in the ranked pool.
        products: sorted canonical SMILES of the product molecules (multiplicity kept).
        score: number of distinct templates that produced this multiset (:data:`SCORE_SCHEME`).
        template_ids: those templates, sorted.
        outcome_count: raw RDKit outcomes merged into this candidate.
        balance: atom and charge balance of the best-balanced contributing outcome.
    """

    rank: int
    products: tuple[str, ...]
    score: int
    template_ids: tuple[str, ...]
    outcome_count: int
    balance: Balance | None

    @property
    def smiles(self) -> str:
        """The product multiset as one dot-separated canonical SMILES."""
        return ".".join(self.products)


@dataclass(frozen=True, slots=True)
class ForwardReport:
    """Everything one call produced: ranked candidates, exact stats, bounded diagnostics."""

    reactants: tuple[str, ...]
    candidates: tuple[Candidate, ...]
    stats: ForwardStats
    issues: tuple[ApplicationIssue, ...]
    rules_content_sha256: str
    score_scheme: str = SCORE_SCHEME

    def rank_of(self, products: Sequence[str]) -> int | None:
        """0-based rank of a canonical product multiset (any order), or ``None`` if absent."""
        wanted = tuple(sorted(products))
        for candidate in self.candidates:
            if candidate.products == wanted:
                return candidate.rank
        return None


_Step = tuple[Rule, rdChemReactions.ChemicalReaction, tuple[str, ...]]
_CONTENT_HASHES: dict[int, tuple[RuleSet, str]] = {}


def _content_sha256(rule_set: RuleSet) -> str:
    """The rule set's content hash, computed once per rule-set object (it is immutable)."""
    entry = _CONTENT_HASHES.get(id(rule_set))
    if entry is not None and entry[0] is rule_set:
        return entry[1]
    if len(_CONTENT_HASHES) >= 64:
        _CONTENT_HASHES.clear()
    digest = rule_set.content_sha256
    _CONTENT_HASHES[id(rule_set)] = (rule_set, digest)  # holding the set keeps its id unique
    return digest


_PLANS: dict[int, tuple[RuleSet, list[_Step]]] = {}


def _plan(rule_set: RuleSet) -> list[_Step]:
    """Each rule with its compiled reaction and slot keys, built once per rule-set object."""
    entry = _PLANS.get(id(rule_set))
    if entry is not None and entry[0] is rule_set:
        return entry[1]
    if len(_PLANS) >= 16:
        _PLANS.clear()
    plan = [(rule, compile_smirks(rule.smirks), _slot_keys(rule.smirks)) for rule in rule_set]
    _PLANS[id(rule_set)] = (rule_set, plan)
    return plan


@functools.lru_cache(maxsize=65536)
def _slot_keys(smirks: str) -> tuple[str, ...]:
    """One key per reactant slot: the slot template's SMARTS with atom maps cleared.

    Map numbers never change what a template matches, so slots with equal keys match the
    same inputs and are matched once per call (extracted rule sets repeat the same reactant
    fragment under many templates).
    """
    rxn = rules_module.compile_smirks(smirks)
    keys = []
    for k in range(rxn.GetNumReactantTemplates()):
        plain = Chem.Mol(rxn.GetReactantTemplate(k))
        for atom in plain.GetAtoms():
            atom.SetAtomMapNum(0)
        keys.append(Chem.MolToSmarts(plain))
    return tuple(keys)


@dataclass(frozen=True, slots=True)
class _Input:
    mol: Chem.Mol
    canonical: str
    counts: Counter[str]
    charge: int


@dataclass(slots=True)
class _Merged:
    template_ids: set[str] = field(default_factory=set)
    outcome_count: int = 0
    balance_key: tuple[int, str, tuple[int, ...]] | None = None
    balance: Balance | None = None


def _implicit_hydrogens(mol: Chem.Mol, canonical: str) -> Chem.Mol:
    """A copy whose bracket H counts are implicit wherever the valence model gives the same count.

    RDKit copies a bracket atom's fixed H count into the product, so a template that changes
    a bond order on ``[CH3:1]`` yields a radical or a valence error where the same template
    on ``C`` works: an atom-mapped SMILES would score worse than its unmapped twin. Only the
    H bookkeeping of non-stereocentres changes (graph, charges, stereo tags and atom order do
    not); if the canonical SMILES moved anyway, the caller's molecule is used.
    """
    copy = Chem.Mol(mol)
    changed: list[tuple[Chem.Atom, int, int]] = []
    for atom in copy.GetAtoms():
        # A stereocentre's bracket H takes part in its neighbour order: leave it alone.
        if (
            atom.GetNoImplicit()
            and not atom.GetNumRadicalElectrons()
            and atom.GetChiralTag() == Chem.ChiralType.CHI_UNSPECIFIED
        ):
            changed.append((atom, atom.GetTotalNumHs(), atom.GetNumExplicitHs()))
            atom.SetNoImplicit(False)
            atom.SetNumExplicitHs(0)
    if not changed:
        return mol
    copy.UpdatePropertyCache(strict=False)
    reverted = False
    for atom, total, explicit in changed:
        if atom.GetTotalNumHs() != total:  # e.g. aromatic [nH]: no implicit H is inferred
            atom.SetNoImplicit(True)
            atom.SetNumExplicitHs(explicit)
            reverted = True
    if reverted:
        copy.UpdatePropertyCache(strict=False)
    if try_canonical_smiles(Chem.MolToSmiles(copy)) != canonical:
        return mol
    return copy


def _prepare_inputs(reactants: Sequence[str]) -> list[_Input]:
    """Parse the caller's strings in order; dot-separated strings give one molecule each part."""
    if isinstance(reactants, str):
        raise SmilesError(reactants, "reactants must be a sequence of SMILES, not one string")
    if not reactants:
        raise SmilesError("", "no reactants given")
    inputs: list[_Input] = []
    for text in reactants:
        mol = parse_smiles(text)
        parts = [mol] if "." not in text else list(Chem.GetMolFrags(mol, asMols=True))
        for part in parts:
            canonical = try_canonical_smiles(Chem.MolToSmiles(part))
            if canonical is None:  # a fragment of a valid molecule re-parses; guard anyway
                raise SmilesError(text, "a component does not round-trip through SMILES")
            charge = sum(atom.GetFormalCharge() for atom in part.GetAtoms())
            runnable = _implicit_hydrogens(part, canonical)
            inputs.append(_Input(runnable, canonical, atom_counts(part), charge))
    return inputs


class _Run:
    """Mutable accumulator for one call; turned into frozen results at the end."""

    def __init__(self, inputs: list[_Input], config: ForwardConfig) -> None:
        self.inputs = inputs
        self.config = config
        self.input_canonicals = {i.canonical for i in inputs}
        self.inputs_have_radicals = any(
            atom.GetNumRadicalElectrons() for i in inputs for atom in i.mol.GetAtoms()
        )
        self.counts: Counter[str] = Counter()
        self.issues: list[ApplicationIssue] = []
        self.merged: dict[tuple[str, ...], _Merged] = {}
        self.matches: dict[str, list[int]] = {}
        self.canonical: dict[str, str | None] = {}

    def issue(self, kind: IssueKind, rule: Rule, message: str) -> None:
        if len(self.issues) < self.config.max_diagnostics:
            self.issues.append(ApplicationIssue(kind, rule.template_id, message))

    def slot_matches(self, key: str, rxn: rdChemReactions.ChemicalReaction, k: int) -> list[int]:
        """Inputs matching slot ``k``; computed once per call per map-free slot SMARTS."""
        template = rxn.GetReactantTemplate(k)
        found = [i for i, item in enumerate(self.inputs) if item.mol.HasSubstructMatch(template)]
        self.matches[key] = found
        return found

    def apply(
        self, rule: Rule, rxn: rdChemReactions.ChemicalReaction, keys: tuple[str, ...]
    ) -> None:
        n_slots = len(keys)
        if n_slots > len(self.inputs):
            return
        self.counts["attempted"] += 1
        memo = self.matches
        slots = []
        for k, key in enumerate(keys):
            found = memo.get(key)
            slots.append(self.slot_matches(key, rxn, k) if found is None else found)
        if not all(slots):  # some slot matches nothing: no assignment can run
            if any(slots):
                self.counts["partial"] += 1
            return
        limit = self.config.max_products_per_application
        matched = False
        for assignment in itertools.product(*slots):
            if len(set(assignment)) != n_slots:
                continue
            try:
                outcomes = rxn.RunReactants(tuple(self.inputs[i].mol for i in assignment), limit)
            except Exception as exc:  # RDKit raises several unrelated types; count, go on
                self.counts["errors"] += 1
                self.issue("error", rule, f"RunReactants failed on {assignment}: {exc}")
                continue
            if len(outcomes) >= limit:
                self.counts["warnings"] += 1
                self.issue("warning", rule, f"outcomes truncated at {limit} for {assignment}")
            matched = matched or bool(outcomes)
            for products in outcomes:
                self.counts["raw"] += 1
                self.take(rule, assignment, products)
        if matched:
            self.counts["matched"] += 1
        elif any(slots):
            self.counts["partial"] += 1

    def canonical_of(self, smiles: str) -> str | None:
        """Canonical SMILES of a sanitized outcome's text, once per distinct text per call."""
        try:
            return self.canonical[smiles]
        except KeyError:
            result = self.canonical[smiles] = try_canonical_smiles(smiles)
            return result

    def take(self, rule: Rule, assignment: tuple[int, ...], products: Sequence[Chem.Mol]) -> None:
        components: list[str] = []
        for product in products:
            reason, text = self._product_problem(product)
            canonical = None if text is None else self.canonical_of(text)
            if canonical is None:
                self.counts["invalid"] += 1
                self.issue("invalid", rule, reason or "product SMILES does not re-parse")
                return
            components.extend(canonical.split("."))
        if not components:
            self.counts["invalid"] += 1
            self.issue("invalid", rule, "empty product")
            return
        key = tuple(sorted(components))
        if all(c in self.input_canonicals for c in key):
            self.counts["no_op"] += 1
            return
        merged = self.merged.setdefault(key, _Merged())
        merged.template_ids.add(rule.template_id)
        merged.outcome_count += 1
        same_origin = merged.balance_key is not None and merged.balance_key[1:] == (
            rule.template_id,
            assignment,
        )
        if self.config.balance and not same_origin:  # same rule, inputs, products: same balance
            balance = compute_balance(
                (self.inputs[i].counts for i in assignment),
                sum(self.inputs[i].charge for i in assignment),
                products,
                rule.template_id,
            )
            balance_key = (balance.imbalance, rule.template_id, assignment)
            if merged.balance_key is None or balance_key < merged.balance_key:
                merged.balance_key, merged.balance = balance_key, balance

    def _product_problem(self, product: Chem.Mol) -> tuple[str | None, str | None]:
        """(why a raw product is invalid, or ``None``; its SMILES when valid); sanitizes it.

        A radical atom always needs brackets in SMILES, so the atom scan for radicals only
        runs when the product's SMILES has a bracket atom.
        """
        if product.GetNumAtoms() == 0:
            return "empty product", None
        try:
            Chem.SanitizeMol(product)
        except Exception as exc:  # RDKit sanitization raises several exception types
            return f"sanitization failed: {exc}", None
        text = str(Chem.MolToSmiles(product))
        if (
            not self.inputs_have_radicals
            and "[" in text
            and any(atom.GetNumRadicalElectrons() for atom in product.GetAtoms())
        ):
            return "product has radical electrons (template H count mismatch)", None
        return None, text


def predict_products_detailed(
    reactants: Sequence[str],
    rules: RuleSet | None = None,
    config: ForwardConfig | None = None,
) -> ForwardReport:
    """Apply every rule to the reactants as given; merged, ranked candidates plus stats.

    Args:
        reactants: SMILES strings in the caller's own text and order (never pre-canonicalize).
        rules: the rule set; the embedded set when ``None``.
        config: run policy; defaults when ``None``.

    Raises:
        SmilesError: an input string is empty or unparsable.
    """
    config = config or ForwardConfig()
    rule_set = rules if rules is not None else load_embedded_rules()
    run = _Run(_prepare_inputs(reactants), config)
    for rule, rxn, keys in _plan(rule_set):
        run.apply(rule, rxn, keys)

    ordered = sorted(
        run.merged.items(), key=lambda item: (-len(item[1].template_ids), ".".join(item[0]))
    )
    total = len(ordered)
    capped = config.max_results is not None and total > config.max_results
    if capped:
        ordered = ordered[: config.max_results]
    candidates = tuple(
        Candidate(
            rank=rank,
            products=key,
            score=len(merged.template_ids),
            template_ids=tuple(sorted(merged.template_ids)),
            outcome_count=merged.outcome_count,
            balance=merged.balance,
        )
        for rank, (key, merged) in enumerate(ordered)
    )
    counts = run.counts
    stats = ForwardStats(
        rules_loaded=len(rule_set),
        graph_rules_skipped=rule_set.graph_rules_skipped,
        reactant_molecules=len(run.inputs),
        templates_attempted=counts["attempted"],
        templates_matched=counts["matched"],
        templates_partially_matched=counts["partial"],
        raw_outcomes=counts["raw"],
        invalid_outcomes_rejected=counts["invalid"],
        no_op_outcomes_rejected=counts["no_op"],
        application_errors=counts["errors"],
        application_warnings=counts["warnings"],
        candidates_before_cap=total,
        capped=capped,
    )
    return ForwardReport(
        reactants=tuple(reactants),
        candidates=candidates,
        stats=stats,
        issues=tuple(run.issues),
        rules_content_sha256=_content_sha256(rule_set),
    )


def predict_products(
    reactants: Sequence[str],
    rules: RuleSet | None = None,
    config: ForwardConfig | None = None,
) -> list[str]:
    """Ranked candidate product SMILES only (dot-joined multisets), best first."""
    return [c.smiles for c in predict_products_detailed(reactants, rules, config).candidates]
