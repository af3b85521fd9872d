"""The ``neuralsym`` retro model: a trained template classifier applied with rdchiral.

For each product the network's softmax ranks the training templates; the templates are run
in that order (at most ``max_templates`` of them) with the same screening and rdchiral
application as the ``templates`` baseline, and each template's reactant sets (canonical,
sorted within the template so the order never depends on rdchiral's set order) are appended
unless an earlier, more probable template already proposed them (duplicates merged, the
first kept). Train a folder with ``chemgauge retro train neuralsym``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from rdkit import Chem

from chemgauge.chem import Canonicalizer, clear_atom_maps, try_parse_smiles
from chemgauge.errors import ConfigError
from chemgauge.eval.provenance import sha256_file
from chemgauge.families.retro.engine.base import RetroModel
from chemgauge.families.retro.engine.neuralsym_features import FeatureMap
from chemgauge.families.retro.engine.replica import Replica
from chemgauge.families.retro.engine.templates import (
    RetroTemplate,
    _compile,
    _Compiled,
    _pattern_bits,
)

__all__ = ["NeuralSymRetroModel", "RankedTemplates", "rank_templates", "template_ranks"]

SCORE_SCHEME = "template-probability-first-kept-v1"
DEFAULT_MAX_TEMPLATES = 200


def rank_templates(logits: np.ndarray, limit: int) -> np.ndarray:
    """Template indices by falling logit, ties by index, at most ``limit`` per row."""
    order = np.lexsort((np.broadcast_to(np.arange(logits.shape[1]), logits.shape), -logits))
    return order[:, :limit]


def template_ranks(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each row's 0-based position of its labelled template in ``rank_templates`` order.

    A label outside ``0..columns-1`` (the re-implementation's "no template" index, one past
    the last training template) is no template the network can rank: its position is -1,
    a miss at every k. Template-matching top-k is ``mean(0 <= rank < k)`` over all rows.
    """
    labels = np.asarray(labels, dtype=np.int64)
    if logits.ndim != 2 or logits.shape[0] != labels.shape[0]:
        raise ValueError(f"{logits.shape[0]} logit rows for {labels.shape[0]} labels")
    known = (labels >= 0) & (labels < logits.shape[1])
    rows = np.arange(len(labels))
    true = logits[rows, np.where(known, labels, 0)][:, None]
    before = np.arange(logits.shape[1])[None, :] < labels[:, None]
    ranks = (logits > true).sum(axis=1) + ((logits == true) & before).sum(axis=1)
    return np.where(known, ranks, -1)


class RankedTemplates:
    """Templates by index, compiled on first use, applied in a given order."""

    def __init__(self, templates: list[str]) -> None:
        self.templates = templates
        self._compiled: dict[int, _Compiled | None] = {}
        self._canon = Canonicalizer("exact")

    def _template(self, index: int) -> _Compiled | None:
        if index not in self._compiled:
            compiled, _ = _compile([RetroTemplate(str(index), self.templates[index], 1)])
            self._compiled[index] = compiled[0] if compiled else None
        return self._compiled[index]

    def apply(self, product: str, ranked: Sequence[int] | np.ndarray, limit: int) -> list[str]:
        """Reactant sets of the templates in ``ranked`` order, the first proposal kept."""
        from rdchiral.main import rdchiralReactants, rdchiralRun

        mol = try_parse_smiles(product)
        if mol is None:
            return []
        clear_atom_maps(mol)
        bits = _pattern_bits(mol)
        prepared = None
        kept: dict[str, None] = {}
        for index in ranked:
            entry = self._template(int(index))
            if entry is None or entry.bits & ~bits or not mol.HasSubstructMatch(entry.pattern):
                continue
            if prepared is None:
                try:
                    prepared = rdchiralReactants(Chem.MolToSmiles(mol))
                except Exception:  # rdchiral cannot prepare this product: no outputs
                    return []
            try:
                outcomes = rdchiralRun(entry.reaction, prepared, combine_enantiomers=False)
            except Exception:  # rdchiral raises on some template/product pairs; skip that pair
                continue
            keys = set()
            for outcome in outcomes:
                key = self._canon(outcome)
                if key is not None:
                    keys.add(".".join(sorted(key.split("."))))
            for key in sorted(keys):
                kept.setdefault(key, None)
            if len(kept) >= limit:
                break
        return list(kept)[:limit]


class NeuralSymRetroModel(RetroModel):
    """NeuralSym (Segler and Waller, 2017) from a model folder."""

    name = "neuralsym"

    def __init__(self, model_dir: Path, *, max_templates: int = DEFAULT_MAX_TEMPLATES) -> None:
        from chemgauge.families.retro.engine.neuralsym_net import NeuralSymNet
        from chemgauge.families.retro.engine.neuralsym_train import MANIFEST

        super().__init__()
        manifest_path = model_dir / MANIFEST
        if not manifest_path.is_file():
            raise ConfigError(
                f"model_dir {str(model_dir)!r} has no {MANIFEST}; train one with "
                "'chemgauge retro train neuralsym --out DIR'"
            )
        if max_templates < 1:
            raise ConfigError("max_templates must be at least 1")
        self.model_dir = model_dir
        self.manifest = orjson.loads(manifest_path.read_bytes())
        self.manifest_sha256 = sha256_file(manifest_path)
        self.max_templates = max_templates
        self.net = NeuralSymNet.load(model_dir)
        self.features = FeatureMap(np.load(model_dir / "features.npy", allow_pickle=False))
        self.templates = (model_dir / "templates.txt").read_text().splitlines()
        if len(self.templates) != self.net.params["out_b"].shape[0]:
            raise ConfigError(
                f"{model_dir}: {len(self.templates)} templates but "
                f"{self.net.params['out_b'].shape[0]} network outputs"
            )
        self.ranked_templates = RankedTemplates(self.templates)

    @classmethod
    def from_options(cls, model_dir: Path | None, **kwargs: Any) -> NeuralSymRetroModel:
        """The model of ``model_dir`` (``max_templates`` the only argument)."""
        if model_dir is None:
            raise ConfigError("model_class=neuralsym needs model_dir (a trained model folder)")
        unknown = sorted(set(kwargs) - {"max_templates"})
        if unknown:
            raise ConfigError(f"model 'neuralsym' takes only max_templates, got {unknown}")
        return cls(model_dir, max_templates=int(kwargs.get("max_templates", DEFAULT_MAX_TEMPLATES)))

    def logits(self, products: list[str]) -> np.ndarray:
        """Template logits for products (rows in input order)."""
        from scipy import sparse

        indptr, indices, data = self.features.transform(products)
        x = sparse.csr_matrix((data, indices, indptr), shape=(len(products), self.features.size))
        return np.asarray(self.net.logits(x))

    def template_ranks(self, products: list[str], labels: np.ndarray) -> np.ndarray:
        """Position of each product's labelled template among the network's ranking."""
        labels = np.asarray(labels, dtype=np.int64)
        if len(products) != len(labels):
            raise ValueError(f"{len(products)} products for {len(labels)} labels")
        parts = [
            template_ranks(self.logits(products[i : i + 256]), labels[i : i + 256])
            for i in range(0, len(products), 256)
        ]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def _apply(self, product: str, ranked: np.ndarray, limit: int) -> list[str]:
        return self.ranked_templates.apply(product, ranked, limit)

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        out: list[list[str]] = []
        for start in range(0, len(products), 256):
            chunk = products[start : start + 256]
            ranked = rank_templates(self.logits(chunk), self.max_templates)
            out.extend(
                self._apply(p, row, num_results) for p, row in zip(chunk, ranked, strict=True)
            )
        return out

    def describe(self) -> dict[str, Any]:
        manifest = self.manifest
        return {
            **super().describe(),
            "score_scheme": SCORE_SCHEME,
            "max_templates": self.max_templates,
            "model_dir": self.model_dir.name,
            "manifest_sha256": self.manifest_sha256,
            "weights_digest": manifest.get("weights_digest"),
            "templates": len(self.templates),
            "templates_sha256": manifest.get("templates", {}).get("sha256"),
            "seed": manifest.get("seed"),
            "hyperparameters": manifest.get("hyperparameters"),
            "training_data": manifest.get("data"),
            "best_epoch": manifest.get("best_epoch"),
            "chemgauge_version_trained": manifest.get("chemgauge_version"),
        }

    def replica(self) -> Replica:
        return Replica.of(
            self, partial(NeuralSymRetroModel, self.model_dir, max_templates=self.max_templates)
        )

    def parameter_counts(self) -> tuple[int | None, int | None]:
        total = sum(int(v.size) for v in self.net.params.values())
        return total, total
