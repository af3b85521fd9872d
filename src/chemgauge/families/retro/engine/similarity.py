"""The ``similarity`` retro baseline, in the spirit of RetroSim (Coley et al., 2017).

The training products are ranked by Tanimoto similarity to the target (Morgan radius 2,
2,048 bits; ties by training order); the templates of the most similar products, each kept
at its first (most similar) occurrence, are applied in that order with rdchiral exactly as
``neuralsym`` applies its templates. Needs only the training products, their template labels
and the template list (``model_dir``: a folder with ``train_products.smi``,
``labels_train.txt`` and ``training_templates.txt``). RetroSim's second step, re-scoring by
reactant similarity, is left out.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from rdkit import DataStructs
from rdkit.Chem import rdFingerprintGenerator

from chemgauge.chem import try_parse_smiles
from chemgauge.errors import ConfigError
from chemgauge.eval.provenance import sha256_file
from chemgauge.families.retro.engine.base import RetroModel
from chemgauge.families.retro.engine.neuralsym import RankedTemplates
from chemgauge.families.retro.engine.replica import Replica

__all__ = ["SimilarityRetroModel"]

SCORE_SCHEME = "nearest-training-product-template-first-kept-v1"
FILES = ("train_products.smi", "labels_train.txt", "training_templates.txt")


class SimilarityRetroModel(RetroModel):
    """Templates of the most similar training products, applied in similarity order."""

    name = "similarity"

    def __init__(self, model_dir: Path, *, max_templates: int = 100) -> None:
        from chemgauge.families.retro.engine.neuralsym_train import (
            read_labels,
            read_products,
            read_templates,
        )

        super().__init__()
        missing = [name for name in FILES if not (model_dir / name).is_file()]
        if missing:
            raise ConfigError(f"model_dir {str(model_dir)!r} lacks {', '.join(missing)}")
        if max_templates < 1:
            raise ConfigError("max_templates must be at least 1")
        self.model_dir = model_dir
        self.max_templates = max_templates
        templates = read_templates(model_dir / FILES[2])
        products = read_products(model_dir / FILES[0])
        labels = read_labels(model_dir / FILES[1])
        if len(products) != len(labels):
            raise ConfigError(f"{model_dir}: {len(products)} products, {len(labels)} labels")
        self._generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
        self._fps = []
        kept = []
        for smiles, label in zip(products, labels, strict=True):
            mol = try_parse_smiles(smiles)
            if mol is None or not 0 <= label < len(templates):
                continue
            self._fps.append(self._generator.GetFingerprint(mol))
            kept.append(int(label))
        self._labels = np.asarray(kept, dtype=np.int64)
        self.ranked_templates = RankedTemplates(templates)
        self._hashes = {name: sha256_file(model_dir / name) for name in FILES}

    @classmethod
    def from_options(cls, model_dir: Path | None, **kwargs: Any) -> SimilarityRetroModel:
        """The baseline over ``model_dir``'s training files (``max_templates`` its argument)."""
        if model_dir is None:
            raise ConfigError("model_class=similarity needs model_dir (the training files)")
        unknown = sorted(set(kwargs) - {"max_templates"})
        if unknown:
            raise ConfigError(f"model 'similarity' takes only max_templates, got {unknown}")
        return cls(model_dir, max_templates=int(kwargs.get("max_templates", 100)))

    def template_order(self, product: str) -> list[int]:
        """Template indices of the most similar training products, first occurrence kept."""
        mol = try_parse_smiles(product)
        if mol is None or not self._fps:
            return []
        sims = np.asarray(
            DataStructs.BulkTanimotoSimilarity(self._generator.GetFingerprint(mol), self._fps)
        )
        order = np.lexsort((np.arange(len(sims)), -sims))
        seen: dict[int, None] = {}
        for label in self._labels[order]:
            seen.setdefault(int(label), None)
            if len(seen) >= self.max_templates:
                break
        return list(seen)

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        return [
            self.ranked_templates.apply(p, self.template_order(p), num_results) for p in products
        ]

    def replica(self) -> Replica:
        return Replica.of(
            self, partial(SimilarityRetroModel, self.model_dir, max_templates=self.max_templates)
        )

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "score_scheme": SCORE_SCHEME,
            "max_templates": self.max_templates,
            "fingerprint": "Morgan radius 2, 2048 bits, Tanimoto",
            "training_products": len(self._labels),
            "files_sha256": self._hashes,
        }
