"""Forward templates from atom-mapped reactions, extracted with rdchiral and checked by replay.

Extraction of one reaction:

1. Reactant atoms whose map number does not occur in the product (leaving groups that some
   data sets still number) are unmapped first: rdchiral treats every mapped atom as part of
   the reaction and fails or over-specifies the template otherwise.
2. ``rdchiral.template_extractor.extract_from_reaction`` gives a retro template
   ``product>>reactants``; its sides are swapped into a forward template.
3. rdchiral renumbers maps and drops the grouping of fragments that came from one molecule,
   so a template whose reactant side has several fragments may need RDKit component-level
   grouping (``(A.B)``) to apply intramolecularly. Every grouping of the fragments is tried,
   all-separate first, and the first one under which the forward engine reproduces the
   recorded product from the reaction's own (unmapped) reactants is kept. A template that
   reproduces the product under no grouping is a counted failure (``does_not_reproduce``),
   never written: a template that cannot redo its own reaction is broken for this engine.

Failures are counted by reason (:data:`FAILURE_REASONS`). Templates are merged by SMARTS
text, counted (support), and sorted by (-support, SMARTS); the id is a hash of the SMARTS so
it never depends on input order. Each template lists the ids of the reactions it came from
(sorted), so its provenance can be checked against a corpus later.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from rdkit import Chem

from chemgauge.chem import canonical_multiset, try_flatten_stereo
from chemgauge.errors import SmilesError
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.provenance import sha256_bytes
from chemgauge.families.forward.engine.predictor import ForwardConfig, predict_products_detailed
from chemgauge.families.forward.engine.rules import Rule, RuleSet, compile_smirks

__all__ = [
    "EXTRACTION_SCHEME",
    "FAILURE_REASONS",
    "ExtractedTemplate",
    "Extraction",
    "ExtractionSummary",
    "extract_each",
    "extract_forward_template",
    "extract_forward_templates",
    "split_top_level",
    "template_id_of",
    "unmap_absent_reactant_atoms",
]

EXTRACTION_SCHEME = "rdchiral-forward-replay-v1"

FAILURE_REASONS = (
    "unparsable_reaction",  # not reactants>reagents>products, or a side RDKit cannot read
    "unmapped_product",  # no product atom carries a map number
    "rdchiral_error",  # rdchiral raised an exception
    "no_template",  # rdchiral found no changed atoms or could not build a valid template
    "forward_template_invalid",  # the swapped template does not compile in RDKit
    "does_not_reproduce",  # no fragment grouping redoes the reaction with the forward engine
)

# Bell(5) = 52 groupings; templates with more reactant fragments try the first 52 only.
_MAX_GROUPINGS = 52
_MAP = re.compile(r":(\d+)\]")
_REPLAY = ForwardConfig(balance=False, max_diagnostics=0)


@dataclass(frozen=True, slots=True)
class Extraction:
    """The outcome for one reaction: a forward template or a failure reason."""

    smirks: str | None
    reason: str | None = None
    detail: str = ""
    grouped: bool = False
    stereo_exact: bool = True


def split_top_level(side: str) -> list[str]:
    """Split one side of a reaction SMARTS at '.' outside brackets and parentheses."""
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(side):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == "." and depth == 0:
            parts.append(side[start:index])
            start = index + 1
    parts.append(side[start:])
    return [p for p in parts if p]


def unmap_absent_reactant_atoms(reaction_smiles: str) -> tuple[str, str]:
    """(reactants, products) with map numbers cleared on reactant atoms absent from the product.

    Raises:
        SmilesError: the text is not a three-part reaction SMILES or a side does not parse.
    """
    core = reaction_smiles.strip().split(maxsplit=1)[0] if reaction_smiles.strip() else ""
    parts = core.split(">")
    if len(parts) != 3 or not parts[0] or not parts[2]:
        raise SmilesError(reaction_smiles, "need reactants>reagents>products")
    reactants, _, products = parts
    product_mol = Chem.MolFromSmiles(products, sanitize=False)
    reactant_mol = Chem.MolFromSmiles(reactants, sanitize=False)
    if product_mol is None or reactant_mol is None:
        raise SmilesError(reaction_smiles, "a side of the reaction does not parse")
    kept = {a.GetAtomMapNum() for a in product_mol.GetAtoms() if a.GetAtomMapNum()}
    if not kept:
        return reactants, products
    changed = False
    for atom in reactant_mol.GetAtoms():
        if atom.GetAtomMapNum() and atom.GetAtomMapNum() not in kept:
            atom.SetAtomMapNum(0)
            changed = True
    if changed:
        reactants = Chem.MolToSmiles(reactant_mol, canonical=False)
    return reactants, products


def _partitions(items: Sequence[str]) -> Iterator[list[list[str]]]:
    """Every set partition of ``items``, all-singletons first."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in _partitions(rest):
        yield [[first], *partition]
        for index in range(len(partition)):
            yield [*partition[:index], [first, *partition[index]], *partition[index + 1 :]]


def _side(groups: Sequence[Sequence[str]]) -> str:
    return ".".join("(" + ".".join(g) + ")" if len(g) > 1 else g[0] for g in groups)


def _unmapped(smiles: str) -> list[str]:
    """Each component of a mapped side as its own plain SMILES (maps cleared, RDKit canonical)."""
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise SmilesError(smiles, "does not parse with sanitization")
    out = []
    for part in Chem.GetMolFrags(mol, asMols=True):
        for atom in part.GetAtoms():
            atom.SetAtomMapNum(0)
        out.append(Chem.MolToSmiles(part))
    return out


def _reproduces(smirks: str, reactants: list[str], product: tuple[str, ...]) -> str | None:
    """``exact``, ``stereo_ignored`` or ``None``: does the template redo this reaction?"""
    rule = Rule(template_id="candidate", smirks=smirks, source="<extraction>")
    report = predict_products_detailed(reactants, RuleSet(rules=(rule,)), _REPLAY)
    if report.rank_of(product) is not None:
        return "exact"
    flat = try_flatten_stereo(".".join(product))
    if flat is None:
        return None
    for candidate in report.candidates:
        if try_flatten_stereo(candidate.smiles) == flat:
            return "stereo_ignored"
    return None


def _rdchiral_retro(reactants: str, products: str) -> dict[str, Any] | None:
    from rdchiral.template_extractor import extract_from_reaction

    with contextlib.redirect_stdout(io.StringIO()):
        result = extract_from_reaction({"reactants": reactants, "products": products, "_id": 0})
    return result if isinstance(result, dict) else None


def extract_forward_template(reaction_smiles: str) -> Extraction:
    """Forward template (``reactants>>product`` SMARTS) of one atom-mapped reaction."""
    try:
        reactants, products = unmap_absent_reactant_atoms(reaction_smiles)
        plain_reactants = _unmapped(reactants)
        product = canonical_multiset(".".join(_unmapped(products)))
    except SmilesError as exc:
        return Extraction(None, "unparsable_reaction", exc.reason)
    if not _MAP.search(products):
        return Extraction(None, "unmapped_product")
    try:
        result = _rdchiral_retro(reactants, products)
    except Exception as exc:  # rdchiral raises assorted errors on unusual mappings
        return Extraction(None, "rdchiral_error", f"{type(exc).__name__}: {exc}"[:200])
    smarts = result.get("reaction_smarts") if result else None
    if not isinstance(smarts, str) or ">>" not in smarts:
        return Extraction(None, "no_template")
    product_side, reactant_side = smarts.split(">>", 1)
    fragments = split_top_level(reactant_side)
    product_fragments = split_top_level(product_side)
    if not fragments or not product_fragments:
        return Extraction(None, "no_template")
    product_groups = [product_fragments] if len(product) == 1 else [[f] for f in product_fragments]
    forward_products = _side(product_groups)
    compiled_any = False
    for partition in itertools.islice(_partitions(fragments), _MAX_GROUPINGS):
        ordered = sorted(partition, key=lambda group: fragments.index(group[0]))
        smirks = f"{_side(ordered)}>>{forward_products}"
        try:
            compile_smirks(smirks)
        except ValueError:
            continue
        compiled_any = True
        outcome = _reproduces(smirks, plain_reactants, product)
        if outcome is not None:
            grouped = any(len(g) > 1 for g in ordered) or len(product_groups[0]) > 1
            return Extraction(smirks, grouped=grouped, stereo_exact=outcome == "exact")
    if not compiled_any:
        return Extraction(None, "forward_template_invalid", smarts[:200])
    return Extraction(None, "does_not_reproduce", smarts[:200])


def _extract_chunk(items: list[str]) -> list[Extraction]:
    return [extract_forward_template(text) for text in items]


def extract_each(texts: Sequence[str], executor: ExecutorConfig | None = None) -> list[Extraction]:
    """:func:`extract_forward_template` of every text, in order, on any executor (a worker
    failure is an ``rdchiral_error`` extraction)."""
    runner = make_executor(executor or ExecutorConfig(kind="serial", jobs=1))
    try:
        out = []
        for result in runner.map(_extract_chunk, list(texts), chunk_size=32):
            if isinstance(result, ItemFailure):
                result = Extraction(None, "rdchiral_error", f"{result.reason}: {result.detail}")
            out.append(result)
        return out
    finally:
        runner.close()


@dataclass(frozen=True, slots=True)
class ExtractedTemplate:
    """One distinct forward template and the reactions that support it.

    ``source_reaction_ids`` (sorted) lets a benchmark check where every template came from
    (``train-extracted`` refuses a template with a source outside its train split).
    """

    template_id: str
    smirks: str
    support: int
    reaction_class: str | None
    source_reaction_ids: tuple[str, ...] = ()

    def to_rule_json(self) -> dict[str, Any]:
        """A line of the rule-file format (see :mod:`chemgauge.families.forward.engine.rules`)."""
        line: dict[str, Any] = {
            "template_id": self.template_id,
            "smirks": self.smirks,
            "name": f"extracted ({self.support} reaction{'s' if self.support != 1 else ''})",
            "source_reaction_ids": list(self.source_reaction_ids),
        }
        if self.reaction_class is not None:
            line["reaction_class"] = self.reaction_class
        return line


@dataclass
class ExtractionSummary:
    """Templates plus exact accounting of every reaction read."""

    templates: list[ExtractedTemplate] = field(default_factory=list)
    reactions: int = 0
    extracted: int = 0
    failures_by_reason: Counter[str] = field(default_factory=Counter)
    grouped_templates: int = 0
    reproduced_stereo_ignored_only: int = 0
    failure_examples: list[dict[str, Any]] = field(default_factory=list)

    def to_jsonl(self) -> bytes:
        """The rule file: one JSON object per template, in template order."""
        return b"".join(
            orjson.dumps(t.to_rule_json(), option=orjson.OPT_SORT_KEYS) + b"\n"
            for t in self.templates
        )

    def to_dict(self) -> dict[str, Any]:
        """Accounting for manifests and reports (no template bodies)."""
        return {
            "extraction_scheme": EXTRACTION_SCHEME,
            "reactions": self.reactions,
            "extracted": self.extracted,
            "failed": sum(self.failures_by_reason.values()),
            "failures_by_reason": {r: self.failures_by_reason.get(r, 0) for r in FAILURE_REASONS},
            "distinct_templates": len(self.templates),
            "reactions_needing_grouped_templates": self.grouped_templates,
            "reproduced_stereo_ignored_only": self.reproduced_stereo_ignored_only,
            "failure_examples": self.failure_examples,
        }


def template_id_of(smirks: str) -> str:
    """Order-independent id: ``ext_`` plus the first 16 hex digits of SHA-256(SMARTS)."""
    return "ext_" + sha256_bytes(smirks.encode("utf-8"))[:16]


def extract_forward_templates(
    reactions: Iterable[tuple[str, str, str | None]],
    *,
    executor: ExecutorConfig | None = None,
    max_examples: int = 20,
) -> ExtractionSummary:
    """Extract, merge and count forward templates.

    Args:
        reactions: ``(reaction_id, mapped reaction SMILES, reaction_class)`` triples.
        executor: where extraction runs (serial by default); never changes the result.
        max_examples: failures kept verbatim (counts are always exact).
    """
    items = list(reactions)
    summary = ExtractionSummary(reactions=len(items))
    sources: dict[str, list[str]] = {}
    classes: dict[str, set[str | None]] = {}
    runner = make_executor(executor or ExecutorConfig(kind="serial", jobs=1))
    try:
        results = runner.map(_extract_chunk, [text for _, text, _ in items], chunk_size=32)
        for (reaction_id, _, reaction_class), result in zip(items, results, strict=True):
            if isinstance(result, ItemFailure):
                result = Extraction(None, "rdchiral_error", f"{result.reason}: {result.detail}")
            if result.smirks is None:
                reason = result.reason or "no_template"
                summary.failures_by_reason[reason] += 1
                if len(summary.failure_examples) < max_examples:
                    summary.failure_examples.append(
                        {"reaction_id": reaction_id, "reason": reason, "detail": result.detail}
                    )
                continue
            summary.extracted += 1
            summary.grouped_templates += result.grouped
            summary.reproduced_stereo_ignored_only += not result.stereo_exact
            sources.setdefault(result.smirks, []).append(reaction_id)
            classes.setdefault(result.smirks, set()).add(reaction_class)
    finally:
        runner.close()
    for smirks, ids in sorted(sources.items(), key=lambda item: (-len(item[1]), item[0])):
        seen = classes[smirks]
        only = next(iter(seen)) if len(seen) == 1 else None
        summary.templates.append(
            ExtractedTemplate(template_id_of(smirks), smirks, len(ids), only, tuple(sorted(ids)))
        )
    return summary
