"""SMILES parsing and canonicalization: the single place that turns text into chemical identity.

RDKit returns ``None`` instead of raising; the strict/lenient pairs here make that explicit.
Canonical forms never carry atom-map numbers: a mapped reaction leaks its reaction centre.
"""

from __future__ import annotations

import re

from rdkit import Chem, RDLogger

from chemgauge.chem.limits import LIMIT_FLAGS, structure_limits
from chemgauge.errors import SmilesError

# RDKit prints parse failures to stderr; chemgauge counts them with reasons instead.
RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]

__all__ = [
    "HYDROGEN_ATOM",
    "MAX_ATOMS",
    "MAX_SMILES_CHARS",
    "PARSE_FAILURE_KINDS",
    "any_second_pass",
    "canonical_multiset",
    "canonical_smiles",
    "clear_atom_maps",
    "describe_parse_failure",
    "mol_to_canonical",
    "needed_second_pass",
    "parse_failure_kind",
    "parse_smiles",
    "size_refusal",
    "smiles_refusal",
    "strip_atom_maps",
    "try_canonical_multiset",
    "try_canonical_smiles",
    "try_parse_smiles",
    "try_parse_smiles_for_key",
]


def MAX_ATOMS() -> int:
    """The run's atom limit (:mod:`chemgauge.chem.limits`: ``--max-atoms``)."""
    return structure_limits().max_atoms


def MAX_SMILES_CHARS() -> int:
    """The run's SMILES text limit (``--max-smiles-chars``)."""
    return structure_limits().max_smiles_chars


def _over(kind: str, what: str, found: int, limit: int, field: str) -> tuple[str, str]:
    return (
        kind,
        f"{what} {found:,}, over the limit of {limit:,} (raise it with {LIMIT_FLAGS[field]})",
    )


def _refusal(smiles: str) -> tuple[str, str] | None:
    """Kind and text of why a text is refused before RDKit sees it, or ``None``."""
    limits = structure_limits()
    if len(smiles) > limits.max_smiles_chars:
        return _over(
            "too_long", "SMILES characters", len(smiles), limits.max_smiles_chars,
            "max_smiles_chars",
        )  # fmt: skip
    fragments = smiles.count(".") + 1
    if fragments > limits.max_fragments:
        return _over(
            "too_many_fragments", "fragments", fragments, limits.max_fragments, "max_fragments"
        )
    if not smiles.isascii():
        try:
            smiles.encode("utf-8")
        except UnicodeEncodeError:
            return "encoding", "SMILES is not valid Unicode text (lone surrogate)"
    if " " in smiles or "\t" in smiles or "\n" in smiles or "\r" in smiles:
        # RDKit reads text after whitespace as a name and silently drops it ("CC O" -> CC);
        # only a CXSMILES extension ("... |o1:1|") may follow.
        parts = smiles.split(maxsplit=1)
        if len(parts) == 2 and not parts[1].startswith("|"):
            return (
                "whitespace",
                "whitespace inside SMILES (the text after it would be silently dropped)",
            )
    return None


def smiles_refusal(smiles: str) -> str | None:
    """Why a text is refused before RDKit sees it (too long, not encodable), or ``None``."""
    refusal = _refusal(smiles)
    return None if refusal is None else refusal[1]


def _parse_within_limits(
    smiles: str, params: Chem.SmilesParserParams | None = None
) -> Chem.Mol | None:
    """RDKit's parse (its defaults unless ``params``) of a text the size and text checks let
    through; ``None`` if refused, rejected, empty or over :data:`MAX_ATOMS`."""
    if not smiles or smiles.isspace() or smiles_refusal(smiles) is not None:
        return None
    mol = Chem.MolFromSmiles(smiles) if params is None else Chem.MolFromSmiles(smiles, params)
    if mol is None or size_refusal(mol) is not None:
        return None
    return mol


def size_refusal(mol: Chem.Mol) -> tuple[str, str] | None:
    """Kind and text of why a parsed molecule is over the run's atom or ring limit (a
    molfile, a reaction's product), or ``None``; an empty molecule is ``no_atoms``.

    Rings are counted as the cyclomatic number (bonds - atoms + fragments: the size of the
    smallest set of smallest rings), which needs no ring perception, so a molecule read
    without sanitization is measured as cheaply as one that was."""
    limits = structure_limits()
    atoms = mol.GetNumAtoms()
    if atoms == 0:
        return "no_atoms", "molecule has no atoms"
    if atoms > limits.max_atoms:
        return _over("too_many_atoms", "atoms", atoms, limits.max_atoms, "max_atoms")
    excess = mol.GetNumBonds() - atoms
    if excess + limits.max_fragments <= limits.max_rings:
        return None  # cannot be over: fragments are limited in the text already
    rings = excess + len(Chem.GetMolFrags(mol))
    if rings > limits.max_rings:
        return _over("too_many_rings", "rings", rings, limits.max_rings, "max_rings")
    return None


def heavy_atom_count(smiles: str) -> int | None:
    """Heavy atoms of a SMILES read without sanitization (linear in its length, so a size
    guard can refuse a molecule before any chemistry on it); ``None`` if the text is refused
    or unreadable."""
    if not smiles or smiles.isspace() or smiles_refusal(smiles) is not None:
        return None
    mol = Chem.MolFromSmiles(smiles, sanitize=False)
    return None if mol is None else sum(1 for atom in mol.GetAtoms() if atom.GetAtomicNum() > 1)


def try_parse_smiles(smiles: str) -> Chem.Mol | None:
    """Parse and sanitize a SMILES; ``None`` if it is empty, too large or RDKit rejects it."""
    return _parse_within_limits(smiles)


#: A hydrogen written as an atom of its own ([H], [2H], [H+]), which RDKit's parser then
#: removes; '[Hg]' and '[CH3]' are not.
HYDROGEN_ATOM = re.compile(r"\[\d*H(?![a-z])")
_KEEP_HS = Chem.SmilesParserParams()
setattr(_KEEP_HS, "removeHs", False)  # noqa: B010 - the stubs mistype this attribute


def try_parse_smiles_for_key(smiles: str) -> Chem.Mol | None:
    """:func:`try_parse_smiles` for a molecule that is only written back out (canonical keys,
    formulas), about 20% cheaper.

    RDKit's parser ends with a hydrogen-removal pass that sanitizes the molecule a second
    time. When the text has no hydrogen atom of its own the pass removes nothing, so it is
    skipped; the canonical SMILES are identical (a test checks this on real data). The
    molecule is not handed to code that could tell the difference, such as reaction
    templates, which keep :func:`try_parse_smiles`.
    """
    return _parse_within_limits(smiles, None if HYDROGEN_ATOM.search(smiles) else _KEEP_HS)


#: Codes of :func:`parse_failure_kind`, in the order they are checked.
PARSE_FAILURE_KINDS = (
    "empty",
    "too_long",
    "encoding",
    "whitespace",
    "syntax",
    "no_atoms",
    "too_many_fragments",
    "too_many_atoms",
    "too_many_rings",
    "valence",
    "kekulization",
    "sanitization",
    "unwritable",
)


def _parse_failure(smiles: str) -> tuple[str, str]:
    """Kind (one of :data:`PARSE_FAILURE_KINDS`) and text of why RDKit rejects a SMILES."""
    if not smiles or smiles.isspace():
        return "empty", "empty SMILES"
    refusal = _refusal(smiles)
    if refusal is not None:
        return refusal
    raw = Chem.MolFromSmiles(smiles, sanitize=False)
    if raw is None:
        return "syntax", "SMILES syntax error"
    if raw.GetNumAtoms() == 0:
        return "no_atoms", "SMILES has no atoms"
    over = size_refusal(raw)
    if over is not None:
        return over
    try:
        Chem.SanitizeMol(raw)
    except Chem.AtomValenceException as exc:
        return "valence", f"sanitization failed: {exc}".strip()
    except (Chem.KekulizeException, Chem.AtomKekulizeException) as exc:
        return "kekulization", f"sanitization failed: {exc}".strip()
    except Exception as exc:  # RDKit raises several unrelated exception types here
        return "sanitization", f"sanitization failed: {exc}".strip()
    try:
        Chem.MolToSmiles(raw)
    except (RuntimeError, ValueError) as exc:
        return "unwritable", _write_failure(exc)
    return "sanitization", "unparsable SMILES"


def describe_parse_failure(smiles: str) -> str:
    """Say why RDKit rejects a SMILES (syntax, valence, ...); used on the failure path only."""
    return _parse_failure(smiles)[1]


def parse_failure_kind(smiles: str) -> str:
    """Short code of why RDKit rejects a SMILES (one of :data:`PARSE_FAILURE_KINDS`), for
    counting failures by reason; call it only on a text already found unparsable."""
    return _parse_failure(smiles)[0]


def _write_failure(exc: Exception) -> str:
    # e.g. "Too many rings open at once": RDKit reads the structure but cannot write it
    return f"RDKit cannot write this molecule as SMILES ({str(exc).rstrip('.')})"


def parse_smiles(smiles: str) -> Chem.Mol:
    """Parse and sanitize a SMILES string, raising :class:`SmilesError` with the reason."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        raise SmilesError(smiles, describe_parse_failure(smiles))
    return mol


def clear_atom_maps(mol: Chem.Mol) -> Chem.Mol:
    """Set every atom-map number to zero, in place, and return the molecule."""
    atom_at = mol.GetAtomWithIdx  # by index: about 1.5x cheaper than RDKit's atom sequence
    for index in range(mol.GetNumAtoms()):
        atom = atom_at(index)
        if atom.GetAtomMapNum():
            atom.SetAtomMapNum(0)
    return mol


_MAX_CANON_PASSES = 4


def mol_to_canonical(mol: Chem.Mol, *, isomeric: bool = True, source: str | None = None) -> str:
    """Canonical SMILES of a molecule whose atom maps are already cleared.

    RDKit's output for some ring stereo (1,4-disubstituted cyclohexanes) depends on the
    spelling it was built from, so a stereo-bearing result is re-parsed until it is a fixed
    point; then canonicalizing any spelling, or the output itself, gives the same string.
    ``source``: the SMILES the molecule was parsed from (sanitized, nothing else done to it);
    when the output equals it, it is a fixed point already and is not parsed again.
    """
    try:
        text = str(Chem.MolToSmiles(mol, isomericSmiles=isomeric))
    except (RuntimeError, ValueError) as exc:  # a structure RDKit reads but cannot write
        raise SmilesError(source or "", _write_failure(exc)) from None
    if not isomeric or "@" not in text or text == source:
        return text
    first = text
    text = _FIXED.get(first) or _remember_fixed(first)
    if text != first and source is not None:
        _SECOND_PASS.add(source)
    return text


def _fixed_point(text: str) -> str:
    """Re-parse a first canonical pass until it is a fixed point (a function of the text)."""
    for _ in range(_MAX_CANON_PASSES):
        again = Chem.MolFromSmiles(text)
        if again is None:
            break
        nxt = str(Chem.MolToSmiles(again))
        if nxt == text:
            break
        text = nxt
    return text


#: First canonical pass -> :func:`_fixed_point` of it: the re-parsing depends on the text
#: alone, so spellings of one stereo molecule (duplicates, the truth) re-parse it once.
_FIXED: dict[str, str] = {}
_MAX_FIXED = 100_000


def _remember_fixed(first: str) -> str:
    if len(_FIXED) >= _MAX_FIXED:
        _FIXED.clear()
    text = _FIXED[first] = _fixed_point(first)
    return text


#: Sources whose first canonical pass was not a fixed point (rare; only ever grows by them).
_SECOND_PASS: set[str] = set()


def any_second_pass() -> bool:
    """True once any :func:`needed_second_pass` source was seen in this process."""
    return bool(_SECOND_PASS)


def needed_second_pass(source: str) -> bool:
    """True if :func:`mol_to_canonical` of a molecule parsed from ``source`` (in this process)
    wrote something other than RDKit's first canonical pass (so the first pass, which is all
    a one-pass canonicalizer such as syntheseus's computes, differs from chemgauge's key)."""
    return source in _SECOND_PASS


def try_canonical_smiles(smiles: str, *, isomeric: bool = True) -> str | None:
    """Canonical (isomeric by default) SMILES with atom maps removed; ``None`` if unparsable."""
    mol = try_parse_smiles_for_key(smiles)
    if mol is None:
        return None
    if ":" in smiles:
        clear_atom_maps(mol)
    try:
        return mol_to_canonical(mol, isomeric=isomeric)
    except SmilesError:
        return None


def canonical_smiles(smiles: str, *, isomeric: bool = True) -> str:
    """Canonical SMILES with atom maps removed; raises :class:`SmilesError` if unparsable."""
    result = try_canonical_smiles(smiles, isomeric=isomeric)
    if result is None:
        raise SmilesError(smiles, describe_parse_failure(smiles))
    return result


def strip_atom_maps(smiles: str) -> str:
    """Remove atom-map numbers from a SMILES, returning canonical SMILES of the result."""
    return canonical_smiles(smiles)


def try_canonical_multiset(smiles: str) -> tuple[str, ...] | None:
    """Sorted canonical components of a dot-separated SMILES (multiplicity kept), or ``None``."""
    canon = try_canonical_smiles(smiles)
    if canon is None:
        return None
    return tuple(sorted(canon.split(".")))


def canonical_multiset(smiles: str) -> tuple[str, ...]:
    """Sorted canonical components of a dot-separated SMILES; raises on unparsable input.

    A canonical SMILES only contains '.' between components, so splitting its text is exact.
    """
    return tuple(sorted(canonical_smiles(smiles).split(".")))
