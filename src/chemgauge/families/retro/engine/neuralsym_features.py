"""NeuralSym's product features: counted ECFP4 folded to 1,000,000 columns, ln(1+x), then the
training set's highest-variance columns.

Segler and Waller describe counted ECFP4 "modulo-folded to 1,000,000 dimensions, then
ln(x+1)-preprocessed", after which "a variance threshold is applied to remove rare features,
leaving 32,681 dimensions". Here the unfolded Morgan identifiers (radius 2, chirality on,
counts) are taken modulo 1,000,000, counts of colliding identifiers added, ``ln(1+count)``
applied, and the ``n_features`` columns with the largest variance over the training products
kept (ties broken by the lower column; a threshold that leaves 32,681 columns is this rule
with ``n_features=32681``). The kept columns are part of the model folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rdkit.Chem import rdFingerprintGenerator

from chemgauge.chem import try_parse_smiles

__all__ = ["FOLD", "RADIUS", "FeatureMap", "fold_counts", "select_features"]

FOLD = 1_000_000
RADIUS = 2


def _generator() -> object:
    return rdFingerprintGenerator.GetMorganGenerator(radius=RADIUS, includeChirality=True)


def fold_counts(smiles: str, generator: object | None = None) -> dict[int, int]:
    """Folded ECFP4 counts of one product (``{column: count}``; empty if unparsable or over
    the structure limits)."""
    mol = try_parse_smiles(smiles)
    if mol is None:
        return {}
    gen = generator or _generator()
    elements = gen.GetSparseCountFingerprint(mol).GetNonzeroElements()  # type: ignore[attr-defined]
    folded: dict[int, int] = {}
    for key, count in elements.items():
        column = int(key) % FOLD
        folded[column] = folded.get(column, 0) + int(count)
    return folded


def _csr_parts(
    products: Sequence[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gen = _generator()
    indptr = [0]
    columns: list[int] = []
    values: list[float] = []
    for smiles in products:
        folded = fold_counts(smiles, gen)
        for column in sorted(folded):
            columns.append(column)
            values.append(float(np.log1p(folded[column])))
        indptr.append(len(columns))
    return (
        np.asarray(indptr, dtype=np.int64),
        np.asarray(columns, dtype=np.int64),
        np.asarray(values, dtype=np.float64),
    )


def select_features(products: Sequence[str], n_features: int) -> np.ndarray:
    """The ``n_features`` folded columns of highest ln(1+x) variance over ``products``."""
    _, columns, values = _csr_parts(products)
    n = max(1, len(products))
    sums = np.bincount(columns, weights=values, minlength=FOLD)
    squares = np.bincount(columns, weights=values * values, minlength=FOLD)
    variance = squares / n - (sums / n) ** 2
    present = np.flatnonzero(sums > 0)
    order = np.lexsort((present, -variance[present]))
    return np.sort(present[order[:n_features]]).astype(np.int64)


@dataclass(frozen=True)
class FeatureMap:
    """Folded column -> input position of the network (the kept columns, ascending)."""

    columns: np.ndarray

    @property
    def size(self) -> int:
        """Number of network inputs."""
        return int(self.columns.shape[0])

    def transform(self, products: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR parts (indptr, indices, float32 data) of the products' kept features."""
        indptr, columns, values = _csr_parts(products)
        position = np.searchsorted(self.columns, columns)
        position = np.minimum(position, max(0, self.size - 1))
        keep = self.columns[position] == columns if self.size else np.zeros(0, bool)
        row = np.repeat(np.arange(len(products)), np.diff(indptr))[keep]
        new_indptr = np.zeros(len(products) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=len(products)), out=new_indptr[1:])
        return new_indptr, position[keep].astype(np.int32), values[keep].astype(np.float32)
