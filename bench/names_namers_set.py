"""The fixed structure set of bench/names_namers.py: USPTO-50k test products and the
structures of OPSIN's own test names, written once to bench/data/ with its SHA-256.

Products: the product side of each test reaction in file order, atom maps removed, canonical
SMILES, distinct, the first 1,000. OPSIN: every InChI of OPSIN's name-to-InChI test files RDKit
reads, as canonical SMILES, distinct and not already among the products.

    .venv/bin/python bench/names_namers_set.py    # rewrites bench/data/names_namers.smi
"""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path

from rdkit import Chem, RDLogger

RDLogger.DisableLog("rdApp.*")  # type: ignore[attr-defined]

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))
SET = REPO / "bench" / "data" / "names_namers.smi"
PRODUCTS = 1000


def _canonical(mol: Chem.Mol | None) -> str | None:
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    for atom in mol.GetAtoms():
        atom.SetAtomMapNum(0)
    return str(Chem.MolToSmiles(mol))


def products() -> list[str]:
    """The first PRODUCTS distinct USPTO-50k test products."""
    seen: dict[str, None] = {}
    with open(DATA / "uspto50k" / "test.csv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            product = row["reactants>reagents>production"].split(">")[-1]
            smiles = _canonical(Chem.MolFromSmiles(product))
            if smiles is not None:
                seen.setdefault(smiles)
            if len(seen) >= PRODUCTS:
                break
    return list(seen)


def opsin_structures(exclude: set[str]) -> list[str]:
    """Distinct structures of OPSIN's name-to-InChI test pairs that RDKit reads."""
    seen: dict[str, None] = {}
    for source in sorted((DATA / "opsin" / "name_to_inchi").glob("*.txt")):
        for line in source.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith(("//", "#")) or "\t" not in line:
                continue
            smiles = _canonical(Chem.MolFromInchi(line.split("\t")[1]))  # type: ignore[no-untyped-call]
            if smiles is not None and smiles not in exclude:
                seen.setdefault(smiles)
    return list(seen)


def main() -> None:
    """Write the set (``uspto:N`` then ``opsin:N`` ids) and print its hash."""
    first = products()
    rest = opsin_structures(set(first))
    lines = [f"{s} uspto50k-test:{i}" for i, s in enumerate(first, 1)]
    lines += [f"{s} opsin:{i}" for i, s in enumerate(rest, 1)]
    SET.parent.mkdir(parents=True, exist_ok=True)
    SET.write_text("\n".join(lines) + "\n", encoding="utf-8")
    digest = hashlib.sha256(SET.read_bytes()).hexdigest()
    SET.with_suffix(".sha256").write_text(f"{digest}  {SET.name}\n", encoding="utf-8")
    print(f"{len(first)} products + {len(rest)} OPSIN structures -> {SET} ({digest})")


if __name__ == "__main__":
    main()
