"""Template-based single-step retro baseline: rdchiral templates from mapped training reactions.

Extraction: for each atom-mapped training reaction, reactant atoms whose map number does not
occur in the product (leaving groups that some data sets still number) are unmapped first,
because rdchiral treats every mapped atom as part of the reaction centre and fails or
produces over-specific templates otherwise; then ``rdchiral.template_extractor`` gives a
retro template (``product>>reactants`` SMARTS). Identical templates are merged and counted.

Application: a product is screened against each template's product pattern (pattern
fingerprint subset test, then substructure match) and the matching templates are run with
``rdchiralRun``. Candidates are canonical reactant multisets, ranked by the count of the most
frequent template that proposes them, then by how many templates do, then by their
canonical text (so the ranking never depends on file order).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from rdkit import Chem

from chemgauge.chem import Canonicalizer, clear_atom_maps, try_parse_smiles
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.eval.lines import parse_delimited, read_lines
from chemgauge.eval.provenance import sha256_bytes, sha256_file
from chemgauge.families.retro.engine.base import RetroModel
from chemgauge.families.retro.engine.replica import Replica

__all__ = [
    "RetroTemplate",
    "TemplateRetroModel",
    "TemplateSet",
    "apply_templates",
    "extract_template",
    "extract_templates",
    "unmap_leaving_groups",
]

TEMPLATE_FILE = "templates.jsonl"
SCORE_SCHEME = "max-template-count-then-template-votes-v1"


def unmap_leaving_groups(reaction_smiles: str) -> str:
    """Clear map numbers of reactant atoms whose number is absent from the product side.

    Raises :class:`ValueError` when a side cannot be parsed.
    """
    reactants, reagents, products = reaction_smiles.split(" ")[0].split(">")
    product_mol = Chem.MolFromSmiles(products, sanitize=False)
    reactant_mol = Chem.MolFromSmiles(reactants, sanitize=False)
    if product_mol is None or reactant_mol is None:
        raise ValueError(f"unparsable reaction SMILES: {reaction_smiles!r}")
    kept = {a.GetAtomMapNum() for a in product_mol.GetAtoms() if a.GetAtomMapNum()}
    changed = False
    for atom in reactant_mol.GetAtoms():
        if atom.GetAtomMapNum() and atom.GetAtomMapNum() not in kept:
            atom.SetAtomMapNum(0)
            changed = True
    if not changed:
        return f"{reactants}>{reagents}>{products}"
    new_reactants = Chem.MolToSmiles(reactant_mol, canonical=False)
    return f"{new_reactants}>{reagents}>{products}"


def extract_template(reaction_smiles: str) -> str | None:
    """rdchiral retro template (``product>>reactants``) of a mapped reaction, or ``None``."""
    from rdchiral.template_extractor import extract_from_reaction

    try:
        cleaned = unmap_leaving_groups(reaction_smiles)
    except ValueError:
        return None
    reactants, _, products = cleaned.split(">")
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink):
            result = extract_from_reaction({"reactants": reactants, "products": products, "_id": 0})
    except Exception:  # rdchiral raises assorted errors on unusual mappings
        return None
    smarts = result.get("reaction_smarts") if isinstance(result, dict) else None
    if not isinstance(smarts, str) or not smarts:
        return None
    # rdchiral wraps the product side in parentheses for multi-fragment patterns; keep it
    return smarts


def _extract_chunk(items: list[str]) -> list[str | None]:
    return [extract_template(text) for text in items]


@dataclass(frozen=True, slots=True)
class RetroTemplate:
    """One distinct retro template and how many training reactions produced it."""

    template_id: str
    smarts: str
    count: int


@dataclass(frozen=True)
class TemplateSet:
    """Templates sorted by (-count, smarts), plus extraction accounting."""

    templates: tuple[RetroTemplate, ...]
    reactions_seen: int
    extraction_failures: int
    source: str
    source_sha256: str

    def content_sha256(self) -> str:
        """Hash of the templates and their counts (what the model's ranking depends on)."""
        return sha256_bytes(self.to_jsonl())

    def to_jsonl(self) -> bytes:
        """One JSON line per template (``template_id``, ``smarts``, ``count``)."""
        return b"".join(
            orjson.dumps(
                {"template_id": t.template_id, "smarts": t.smarts, "count": t.count},
                option=orjson.OPT_SORT_KEYS,
            )
            + b"\n"
            for t in self.templates
        )

    def save(self, path: str | Path) -> Path:
        """Write the templates file atomically."""
        return atomic_write_bytes(path, self.to_jsonl())

    @classmethod
    def load(cls, path: str | Path) -> TemplateSet:
        """Read a templates file; a bad line is an error naming file and line."""
        counts: dict[str, int] = {}
        for line, text, *_ in read_lines(path):
            if not text.strip():
                continue
            try:
                obj = orjson.loads(text)
            except orjson.JSONDecodeError as exc:
                raise InputFileError(f"malformed JSON ({exc})", path=path, line=line) from None
            smarts, count = (
                (obj.get("smarts"), obj.get("count"))
                if isinstance(obj, dict)
                else (
                    None,
                    None,
                )
            )
            if not isinstance(smarts, str) or not isinstance(count, int) or count < 1:
                raise InputFileError(
                    'needs {"smarts": str, "count": positive int}',
                    path=path,
                    line=line,
                    value=text,
                )
            counts[smarts] = counts.get(smarts, 0) + count
        return cls._from_counts(counts, sum(counts.values()), 0, str(path), sha256_file(path))

    @classmethod
    def _from_counts(
        cls, counts: dict[str, int], seen: int, failures: int, source: str, source_sha: str
    ) -> TemplateSet:
        ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        templates = tuple(
            RetroTemplate(sha256_bytes(smarts.encode())[:16], smarts, count)
            for smarts, count in ordered
        )
        return cls(templates, seen, failures, source, source_sha)


def _mapped_reactions(path: Path) -> list[str]:
    if path.suffix == ".csv":
        column = "reactants>reagents>production"
        rows = read_lines(path)
        first = next(rows, None)
        header = [] if first is None else parse_delimited(first.text)
        if isinstance(header, str) or column not in header:
            raise InputFileError(f"CSV header has no {column!r} column", path=path, line=1)
        index = header.index(column)
        reactions = []
        for line, text, *_ in rows:
            cells = parse_delimited(text)
            if isinstance(cells, str):
                raise InputFileError(cells, path=path, line=line, value=text)
            if len(cells) > index and cells[index]:
                reactions.append(cells[index])
        return reactions
    if path.suffix == ".smi":
        return [text.split()[0] for _, text, *_ in read_lines(path) if text.strip()]
    raise ConfigError(
        f"{path}: templates need atom-mapped reactions (a *train.csv or *train.smi file); "
        "JSONL data is unmapped"
    )


def extract_templates(
    reactions: Sequence[str],
    *,
    source: str = "<memory>",
    source_sha256: str = "",
    executor: ExecutorConfig | None = None,
) -> TemplateSet:
    """Extract and count templates from mapped reaction SMILES (failures are counted)."""
    runner = make_executor(executor or ExecutorConfig(kind="serial", jobs=1))
    counts: dict[str, int] = {}
    failures = 0
    try:
        for result in runner.map(_extract_chunk, list(reactions), chunk_size=64):
            if result is None or isinstance(result, ItemFailure):
                failures += 1
            else:
                counts[result] = counts.get(result, 0) + 1
    finally:
        runner.close()
    return TemplateSet._from_counts(counts, len(reactions), failures, source, source_sha256)


@dataclass
class _Compiled:
    template: RetroTemplate
    pattern: Chem.Mol
    bits: int
    reaction: Any


def _pattern_bits(mol: Chem.Mol) -> int:
    fp = Chem.PatternFingerprint(mol, fpSize=1024)
    return int(fp.ToBitString(), 2)


def _compile(templates: Iterable[RetroTemplate]) -> tuple[list[_Compiled], int]:
    from rdchiral.main import rdchiralReaction

    compiled: list[_Compiled] = []
    failed = 0
    for template in templates:
        product_side = template.smarts.split(">>")[0]
        pattern = Chem.MolFromSmarts(product_side)
        if pattern is None:
            failed += 1
            continue
        try:
            pattern.UpdatePropertyCache(strict=False)
            Chem.FastFindRings(pattern)
            reaction = rdchiralReaction(template.smarts)
            bits = _pattern_bits(pattern)
        except Exception:  # an rdchiral or RDKit failure on one template skips that template
            failed += 1
            continue
        compiled.append(_Compiled(template, pattern, bits, reaction))
    return compiled, failed


def apply_templates(
    product: str, compiled: Sequence[_Compiled], canon: Canonicalizer, limit: int
) -> list[str]:
    """Ranked canonical reactant sets for one product (best first, at most ``limit``)."""
    from rdchiral.main import rdchiralReactants, rdchiralRun

    mol = try_parse_smiles(product)
    if mol is None:
        return []
    clear_atom_maps(mol)
    bits = _pattern_bits(mol)
    prepared = None
    scores: dict[str, tuple[int, int]] = {}
    for entry in compiled:
        if entry.bits & ~bits or not mol.HasSubstructMatch(entry.pattern):
            continue
        if prepared is None:
            try:
                prepared = rdchiralReactants(Chem.MolToSmiles(mol))
            except Exception:
                return []
        try:
            outcomes = rdchiralRun(entry.reaction, prepared, combine_enantiomers=False)
        except Exception:  # rdchiral raises on some template/product pairs; skip that pair
            continue
        for outcome in outcomes:
            key = canon(outcome)
            if key is None:
                continue
            key = ".".join(sorted(key.split(".")))
            best, votes = scores.get(key, (0, 0))
            scores[key] = (max(best, entry.template.count), votes + 1)
    ranked = sorted(scores.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    return [key for key, _ in ranked[:limit]]


class TemplateRetroModel(RetroModel):
    """The ``templates`` baseline model."""

    name = "templates"

    def __init__(
        self, templates: TemplateSet, training_reactions: Sequence[str] | None = None
    ) -> None:
        super().__init__()
        self.templates = templates
        #: what the in-sample check compares with the evaluated fold (None: a templates file,
        #: whose training reactions are not known)
        self.training_reactions = None if training_reactions is None else tuple(training_reactions)
        self.training_data_sha256 = (
            templates.source_sha256 if training_reactions is not None else None
        )
        self._compiled, self.compile_failures = _compile(templates.templates)
        self._canon = Canonicalizer("exact")

    @classmethod
    def from_dir(
        cls,
        model_dir: Path | None,
        *,
        max_reactions: int | None = None,
        jobs: int = 1,
        save_templates: str | None = None,
    ) -> TemplateRetroModel:
        """Templates from ``model_dir``: a ``templates.jsonl`` there, else its training fold."""
        if model_dir is None:
            raise ConfigError("model_class=templates needs model_dir (training data or templates)")
        if model_dir.is_file():
            path = model_dir
        elif (model_dir / TEMPLATE_FILE).is_file():
            path = model_dir / TEMPLATE_FILE
        elif model_dir.is_dir():
            matches = sorted(
                p
                for p in model_dir.iterdir()
                if p.name.endswith(("train.csv", "train.smi", "train.jsonl"))
            )
            if len(matches) != 1:
                names = ", ".join(p.name for p in matches) or "none"
                raise ConfigError(
                    f"model_dir {str(model_dir)!r} needs {TEMPLATE_FILE} or exactly one "
                    f"*train.{{csv,smi}} file (found: {names})"
                )
            path = matches[0]
        else:
            raise ConfigError(f"model_dir {str(model_dir)!r} does not exist")
        if path.suffix == ".jsonl" and not path.name.endswith("train.jsonl"):
            return cls(TemplateSet.load(path))
        reactions = _mapped_reactions(path)
        if max_reactions is not None:
            reactions = reactions[:max_reactions]
        executor = ExecutorConfig(kind="local" if jobs != 1 else "serial", jobs=jobs)
        templates = extract_templates(
            reactions, source=path.name, source_sha256=sha256_file(path), executor=executor
        )
        if save_templates:
            templates.save(save_templates)
        return cls(templates, reactions)

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        return [apply_templates(p, self._compiled, self._canon, num_results) for p in products]

    def replica(self) -> Replica:
        # the in-sample check runs in the main process: a worker needs the templates only
        return Replica.of(self, partial(TemplateRetroModel, self.templates))

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "score_scheme": SCORE_SCHEME,
            "templates": len(self.templates.templates),
            "templates_sha256": self.templates.content_sha256(),
            "template_source": Path(self.templates.source).name,
            "template_source_sha256": self.templates.source_sha256,
            "reactions_seen": self.templates.reactions_seen,
            "extraction_failures": self.templates.extraction_failures,
            "compile_failures": self.compile_failures,
        }
