"""Molfile and SDF reading, graph validation and abbreviation (superatom) groups.

Recognizers answer with molfiles as often as with SMILES, and benchmark references are
molfiles so that a collapsed abbreviation can be recorded as a superatom S-group. This module
turns either text into a sanitized RDKit molecule, says why when it cannot, and lists the
features the OCSR scorer has no certified policy for (dummy atoms, query features, haptic or
dative bonds, polymer brackets), so they are reported as unsupported rather than wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rdkit import Chem

from chemgauge.chem.smiles import (
    clear_atom_maps,
    describe_parse_failure,
    mol_to_canonical,
    try_parse_smiles,
)
from chemgauge.errors import InputFileError

__all__ = [
    "AbbreviationGroup",
    "GraphReading",
    "abbreviation_groups",
    "add_abbreviation",
    "load_reference",
    "mol_inchi",
    "mol_to_molfile",
    "read_graph",
    "read_molfile",
    "reference_checks",
    "split_sdf",
    "unsupported_features",
]

_SDF_SEPARATOR = "$$$$"
_UNSUPPORTED_SGROUPS = frozenset({"SRU", "COP", "MON", "MER", "CRO", "GRA", "ANY", "MOD", "MUL"})


@dataclass(frozen=True)
class GraphReading:
    """The outcome of reading one candidate or reference graph.

    ``mol`` is the sanitized molecule, or ``None`` when the text is empty, unreadable or fails
    sanitization; ``accepted`` is that validation verdict (the seed's "native acceptance") and
    says nothing about whether the structure is the right one.
    """

    mol: Chem.Mol | None
    accepted: bool
    reason: str
    records: int = 0

    @property
    def smiles(self) -> str | None:
        """Canonical isomeric SMILES of the accepted graph, or ``None``."""
        if self.mol is None:
            return None
        return mol_to_canonical(self.mol)


@dataclass(frozen=True)
class AbbreviationGroup:
    """A superatom S-group: a display label collapsing member atoms onto anchor atoms outside."""

    label: str
    members: tuple[int, ...]
    anchors: tuple[int, ...]
    listed_bonds: tuple[int, ...]
    crossing_bonds: tuple[int, ...]

    def problems(self, mol: Chem.Mol) -> list[str]:
        """Integrity problems of this group in ``mol`` (empty list when well formed)."""
        found: list[str] = []
        if not self.label.strip():
            found.append("empty label")
        if not self.members:
            found.append("no member atoms")
            return found
        if not _connected(mol, set(self.members)):
            found.append("member atoms are not connected")
        if set(self.listed_bonds) != set(self.crossing_bonds):
            found.append(
                f"listed crossing bonds {sorted(self.listed_bonds)} != actual "
                f"{sorted(self.crossing_bonds)}"
            )
        if not self.crossing_bonds:
            found.append("no attachment to the rest of the molecule")
        return found


def _connected(mol: Chem.Mol, atoms: set[int]) -> bool:
    start = min(atoms)
    seen = {start}
    stack = [start]
    while stack:
        current = stack.pop()
        for neighbour in mol.GetAtomWithIdx(current).GetNeighbors():
            index = neighbour.GetIdx()
            if index in atoms and index not in seen:
                seen.add(index)
                stack.append(index)
    return seen == atoms


def split_sdf(text: str) -> list[str]:
    """Split SDF text into molfile blocks (a single molfile without ``$$$$`` is one block)."""
    blocks: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.strip() == _SDF_SEPARATOR:
            if any(part.strip() for part in current):
                blocks.append("\n".join(current) + "\n")
            current = []
        else:
            current.append(line)
    if any(part.strip() for part in current):
        blocks.append("\n".join(current) + "\n")
    return [block for block in blocks if "M  END" in block or "V2000" in block or "V3000" in block]


def _read_block(block: str) -> tuple[Chem.Mol | None, str]:
    mol = Chem.MolFromMolBlock(block, sanitize=True, removeHs=True, strictParsing=False)
    if mol is not None and mol.GetNumAtoms() > 0:
        return clear_atom_maps(mol), "ok"
    raw = Chem.MolFromMolBlock(block, sanitize=False, removeHs=False, strictParsing=False)
    if raw is None:
        return None, "unreadable molfile"
    if raw.GetNumAtoms() == 0:
        return None, "molfile has no atoms"
    try:
        Chem.SanitizeMol(raw)
    except Exception as exc:  # RDKit raises several unrelated exception types here
        return None, f"sanitization failed: {exc}".strip()
    return None, "unreadable molfile (stereo or hydrogen processing failed)"


def read_molfile(text: str, *, first_record_only: bool = False) -> GraphReading:
    """Read molfile or SDF text; several records are combined into one multi-fragment graph.

    With ``first_record_only`` only the first record is read, as RDKit's ``MolFromMolBlock``
    does (the rule the 2020 OCSR review's scoring script applied, kept for ``legacy``).
    """
    if not text or not text.strip():
        return GraphReading(None, False, "empty output")
    blocks = split_sdf(text)
    if not blocks:
        return GraphReading(None, False, "no molfile record")
    if first_record_only:
        blocks = blocks[:1]
    mols: list[Chem.Mol] = []
    for number, block in enumerate(blocks, start=1):
        mol, reason = _read_block(block)
        if mol is None:
            where = f"record {number}: " if len(blocks) > 1 else ""
            return GraphReading(None, False, where + reason, len(blocks))
        mols.append(mol)
    combined = mols[0]
    for extra in mols[1:]:
        combined = Chem.CombineMols(combined, extra)
    return GraphReading(combined, True, "ok", len(blocks))


def read_graph(text: str, fmt: str, *, first_record_only: bool = False) -> GraphReading:
    """Read a candidate graph given as ``smiles`` or ``molfile`` text (validation included).

    SMILES output with several lines is one multi-fragment graph, like a multi-record SDF.
    """
    if fmt == "molfile":
        return read_molfile(text, first_record_only=first_record_only)
    if fmt != "smiles":
        raise ValueError(f"unknown graph format {fmt!r} (expected 'smiles' or 'molfile')")
    lines = [line.split()[0] for line in text.splitlines() if line.strip()]
    if first_record_only:
        lines = lines[:1]
    if not lines:
        return GraphReading(None, False, "empty output")
    joined = ".".join(lines)
    mol = try_parse_smiles(joined)
    if mol is None:
        return GraphReading(None, False, describe_parse_failure(joined), len(lines))
    clear_atom_maps(mol)
    return GraphReading(mol, True, "ok", len(lines))


def load_reference(path: str, text: str) -> Chem.Mol:
    """Read a reference molfile, raising :class:`InputFileError` naming it when it fails."""
    reading = read_molfile(text)
    if reading.mol is None:
        raise InputFileError(f"reference molfile is not a valid graph: {reading.reason}", path=path)
    return reading.mol


def mol_inchi(mol: Chem.Mol | None) -> str | None:
    """Standard InChI of a molecule, or ``None`` (an empty InChI is never an identity)."""
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    try:
        inchi = Chem.MolToInchi(mol)  # type: ignore[no-untyped-call]
    except Exception:
        return None
    return str(inchi) or None


def unsupported_features(mol: Chem.Mol) -> list[str]:
    """Features with no certified identity policy here: their comparison is ``unsupported``."""
    found: list[str] = []
    dummies = [a.GetIdx() for a in mol.GetAtoms() if a.GetAtomicNum() == 0]
    if dummies:
        found.append(f"dummy/R-group/alias atoms at {dummies[:10]}")
    if any(a.HasQuery() for a in mol.GetAtoms()):
        found.append("query atoms")
    if any(b.HasQuery() for b in mol.GetBonds()):
        found.append("query bonds")
    dative = (Chem.BondType.DATIVE, Chem.BondType.DATIVEL, Chem.BondType.DATIVER)
    if any(b.GetBondType() in dative for b in mol.GetBonds()):
        found.append("dative (coordination) bonds")
    if any(b.HasProp("_MolFileBondEndPts") for b in mol.GetBonds()):
        found.append("haptic or variable attachment bonds")
    kinds = sorted(
        {
            str(sg.GetProp("TYPE"))
            for sg in Chem.GetMolSubstanceGroups(mol)
            if sg.HasProp("TYPE") and str(sg.GetProp("TYPE")) in _UNSUPPORTED_SGROUPS
        }
    )
    if kinds:
        found.append(f"S-groups of type {', '.join(kinds)}")
    return found


def abbreviation_groups(mol: Chem.Mol) -> list[AbbreviationGroup]:
    """Superatom (SUP) S-groups with their members, anchors and crossing bonds."""
    groups: list[AbbreviationGroup] = []
    for sg in Chem.GetMolSubstanceGroups(mol):
        if not sg.HasProp("TYPE") or sg.GetProp("TYPE") != "SUP":
            continue
        label = str(sg.GetProp("LABEL")) if sg.HasProp("LABEL") else ""
        members = tuple(sorted(int(i) for i in sg.GetAtoms()))
        member_set = set(members)
        crossing: list[int] = []
        anchors: set[int] = set()
        for bond in mol.GetBonds():
            begin, end = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
            if (begin in member_set) != (end in member_set):
                crossing.append(bond.GetIdx())
                anchors.add(end if begin in member_set else begin)
        groups.append(
            AbbreviationGroup(
                label=label,
                members=members,
                anchors=tuple(sorted(anchors)),
                listed_bonds=tuple(sorted(int(b) for b in sg.GetBonds())),
                crossing_bonds=tuple(sorted(crossing)),
            )
        )
    return groups


def add_abbreviation(mol: Chem.Mol, label: str, members: Sequence[int]) -> Chem.Mol:
    """Copy of ``mol`` with a superatom S-group ``label`` over ``members`` (anchored by bonds)."""
    out = Chem.Mol(mol)
    member_set = set(members)
    group = Chem.CreateMolSubstanceGroup(out, "SUP")
    for index in sorted(member_set):
        group.AddAtomWithIdx(index)
    group.SetProp("LABEL", label)
    for bond in out.GetBonds():
        begin, end = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        if (begin in member_set) != (end in member_set):
            group.AddBondWithIdx(bond.GetIdx())
            inside, outside = (begin, end) if begin in member_set else (end, begin)
            group.AddAttachPoint(inside, outside, "1")
    return out


def mol_to_molfile(mol: Chem.Mol) -> str:
    """V3000 molfile text (V3000 keeps superatom attachment points readable by RDKit)."""
    return str(Chem.MolToV3KMolBlock(mol))


def reference_checks(mol: Chem.Mol) -> dict[str, Any]:
    """Facts a reference is checked against: formula, counts, specified CIP labels, fragments."""
    from rdkit.Chem import rdCIPLabeler, rdMolDescriptors

    labelled = Chem.Mol(mol)
    rdCIPLabeler.AssignCIPLabels(labelled)
    cip = [
        f"{atom.GetIdx()}{atom.GetSymbol()}:{atom.GetProp('_CIPCode')}"
        for atom in labelled.GetAtoms()
        if atom.HasProp("_CIPCode")
    ]
    cip += [
        f"bond{bond.GetIdx()}:{bond.GetProp('_CIPCode')}"
        for bond in labelled.GetBonds()
        if bond.HasProp("_CIPCode")
    ]
    return {
        "formula": rdMolDescriptors.CalcMolFormula(mol),
        "heavy_atoms": mol.GetNumHeavyAtoms(),
        "bonds": mol.GetNumBonds(),
        "fragments": len(Chem.GetMolFrags(mol)),
        "cip_labels": cip,
    }
