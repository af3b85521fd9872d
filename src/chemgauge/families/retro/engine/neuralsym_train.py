"""Training NeuralSym: inputs, the seeded loop with early stopping, and the model folder.

Inputs are the re-implementation's files (``../shared/data/neuralsym/``): one product SMILES
a line, one template index a line (an index past the last template means "no template"; such
rows are dropped from training and counted), and the templates as ``SMARTS: count`` lines
(index = line number). The validation products come from ``valid.csv`` (its ``prod_smi``
column; note that file's ``temp_idx`` and ``template`` headers are swapped, so the labels
are read from ``labels_valid.txt``).

The folder holds one ``.npy`` per parameter, ``features.npy`` (the kept fingerprint columns),
``templates.txt`` (one SMARTS a line, class order) and ``manifest.json`` (data hashes,
hyper-parameters, seed, training curve, chemgauge version, weight hashes, time and memory).
"""

from __future__ import annotations

import csv
import hashlib
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

import chemgauge
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.atomic import atomic_write_bytes, atomic_write_json
from chemgauge.eval.provenance import sha256_file
from chemgauge.families.retro.engine.neuralsym_features import (
    FOLD,
    RADIUS,
    FeatureMap,
    select_features,
)

__all__ = [
    "DEFAULT_DATA",
    "MANIFEST",
    "TrainConfig",
    "TrainInputs",
    "read_labels",
    "read_products",
    "read_templates",
    "train_neuralsym",
]

MANIFEST = "manifest.json"
FORMAT = "chemgauge-neuralsym-v1"
DEFAULT_DATA = Path("../shared/data/neuralsym")
#: BLAS threads while training: one, because OpenBLAS at two threads splits the dense
#: products' reductions differently and the weights' bytes change (measured); with one the
#: bytes are the same whatever the machine's core count.
BLAS_THREADS = 1


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters (defaults: the re-implementation's logged run, ``depth 0``: one
    highway layer of 300, dropout 0.3, Adam 1e-3, batches of 300, at most 30 epochs, early
    stopping after 2 epochs without a better validation top-1)."""

    hidden: int = 300
    dropout: float = 0.3
    lr: float = 1e-3
    batch_size: int = 300
    max_epochs: int = 30
    patience: int = 2
    #: an epoch counts as better only above the best validation top-1 plus this (0.2 points,
    #: about 8 of USPTO-50k's 4,164 validation products with a template)
    min_delta: float = 0.002
    lr_factor: float = 0.3
    lr_patience: int = 1
    n_features: int = 32681
    seed: int = 1337
    eval_batch: int = 1000


@dataclass(frozen=True)
class TrainInputs:
    """The files a training run reads."""

    products: Path
    labels: Path
    templates: Path
    valid_products: Path | None = None
    valid_labels: Path | None = None

    @classmethod
    def defaults(cls, folder: Path = DEFAULT_DATA) -> TrainInputs:
        """The re-implementation's files in ``folder``."""
        return cls(
            folder / "train_products.smi",
            folder / "labels_train.txt",
            folder / "training_templates.txt",
            folder / "valid.csv",
            folder / "labels_valid.txt",
        )


def read_products(path: Path) -> list[str]:
    """Products: one SMILES a line (``.smi``) or the ``prod_smi`` column of a CSV."""
    if path.suffix == ".csv":
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            if reader.fieldnames is None or "prod_smi" not in reader.fieldnames:
                raise InputFileError("CSV needs a prod_smi column", path=path, line=1)
            return [row["prod_smi"] for row in reader]
    return [line.split()[0] if line.strip() else "" for line in path.read_text().splitlines()]


def read_labels(path: Path) -> np.ndarray:
    """Template indices, one a line."""
    values = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            values.append(int(line.strip()))
        except ValueError:
            raise InputFileError("needs one integer a line", path=path, line=number) from None
    return np.asarray(values, dtype=np.int64)


def read_templates(path: Path) -> list[str]:
    """Template SMARTS in index order from ``SMARTS: count`` (or bare SMARTS) lines."""
    templates = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        smarts, sep, count = line.rpartition(": ")
        templates.append(smarts if sep and count.strip().isdigit() else line.strip())
    return templates


def _csr(features: FeatureMap, products: Sequence[str]) -> Any:
    from scipy import sparse

    indptr, indices, data = features.transform(products)
    return sparse.csr_matrix((data, indices, indptr), shape=(len(products), features.size))


def _evaluate(net: Any, x: Any, labels: np.ndarray, batch: int) -> dict[str, float]:
    """Loss and top-1/10 template accuracy on the rows with a template."""
    if len(labels) == 0:
        return {"loss": float("nan"), "top1": 0.0, "top10": 0.0}
    losses, top1, top10 = 0.0, 0, 0
    for start in range(0, len(labels), batch):
        logits = net.logits(x[start : start + batch])
        y = labels[start : start + batch]
        logits = logits - logits.max(axis=1, keepdims=True)
        logsum = np.log(np.exp(logits).sum(axis=1))
        true = logits[np.arange(len(y)), y]
        losses += float(np.sum(logsum - true))
        higher = (logits > true[:, None]).sum(axis=1)
        top1 += int(np.sum(higher < 1))
        top10 += int(np.sum(higher < 10))
    n = len(labels)
    return {"loss": losses / n, "top1": top1 / n, "top10": top10 / n}


def _file_entry(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    return {"name": path.name, "sha256": sha256_file(path)}


def train_neuralsym(
    inputs: TrainInputs,
    out: Path,
    config: TrainConfig | None = None,
    *,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Train, keep the epoch with the best validation top-1, write the folder; the manifest."""
    from threadpoolctl import threadpool_limits

    from chemgauge.families.retro.engine.neuralsym_net import Adam, NeuralSymNet

    config = config or TrainConfig()
    started = time.perf_counter()
    cpu_started = time.process_time()
    say = log or (lambda _: None)
    advance = progress or (lambda _: None)
    templates = read_templates(inputs.templates)
    products = read_products(inputs.products)
    labels = read_labels(inputs.labels)
    if len(products) != len(labels):
        raise ConfigError(
            f"{inputs.products.name} has {len(products)} products, "
            f"{inputs.labels.name} {len(labels)} labels"
        )
    if limit is not None:
        products, labels = products[:limit], labels[:limit]
    covered = (labels >= 0) & (labels < len(templates))
    train_products = [p for p, c in zip(products, covered, strict=True) if c]
    train_labels = labels[covered]
    if len(train_labels) == 0:
        raise ConfigError("no training product has a template")
    valid_products: list[str] = []
    valid_labels = np.zeros(0, dtype=np.int64)
    if inputs.valid_products is not None and inputs.valid_labels is not None:
        valid_products = read_products(inputs.valid_products)
        valid_labels = read_labels(inputs.valid_labels)
        if len(valid_products) != len(valid_labels):
            raise ConfigError("validation products and labels differ in length")
    valid_covered = (valid_labels >= 0) & (valid_labels < len(templates))
    say(f"features: folding {len(train_products)} training products")
    features = FeatureMap(select_features(train_products, config.n_features))
    x_train = _csr(features, train_products)
    x_valid = _csr(features, [p for p, c in zip(valid_products, valid_covered, strict=True) if c])
    y_valid = valid_labels[valid_covered]
    rng = np.random.default_rng(config.seed)
    curve: list[dict[str, Any]] = []
    with threadpool_limits(limits=BLAS_THREADS):
        net = NeuralSymNet.initialise(features.size, config.hidden, len(templates), rng)
        adam = Adam(net.params, config.lr)
        best, best_score, best_epoch = net.copy(), -1.0, 0
        stale = lr_stale = 0
        n = len(train_labels)
        for epoch in range(1, config.max_epochs + 1):
            tick = time.perf_counter()
            order = rng.permutation(n)
            total_loss = 0.0
            for start in range(0, n, config.batch_size):
                rows = np.sort(order[start : start + config.batch_size])
                loss, grads, touched = net.loss_and_grads(
                    x_train[rows], train_labels[rows], config.dropout, rng
                )
                adam.step(net.params, grads, touched)
                total_loss += loss * len(rows)
                advance(1)
            scores = _evaluate(net, x_valid, y_valid, config.eval_batch)
            point = {
                "epoch": epoch,
                "lr": adam.lr,
                "train_loss": round(total_loss / n, 6),
                "valid_loss": round(scores["loss"], 6),
                "valid_top1": round(scores["top1"], 6),
                "valid_top10": round(scores["top10"], 6),
                "seconds": round(time.perf_counter() - tick, 2),
            }
            curve.append(point)
            say(
                f"epoch {epoch}: train loss {point['train_loss']:.4f}, valid loss "
                f"{point['valid_loss']:.4f}, top-1 {point['valid_top1']:.4f}, "
                f"top-10 {point['valid_top10']:.4f} ({point['seconds']} s)"
            )
            if scores["top1"] > best_score + config.min_delta:
                best, best_score, best_epoch = net.copy(), scores["top1"], epoch
                stale = lr_stale = 0
            else:
                stale += 1
                lr_stale += 1
                if lr_stale > config.lr_patience:
                    adam.lr *= config.lr_factor
                    lr_stale = 0
                if stale >= config.patience:
                    break
    out.mkdir(parents=True, exist_ok=True)
    digests = best.save(out)
    np.save(out / "features.npy", features.columns, allow_pickle=False)
    atomic_write_bytes(out / "templates.txt", "".join(f"{t}\n" for t in templates).encode())
    combined = hashlib.sha256()
    for name in sorted(digests):
        combined.update(f"{name}:{digests[name]}\n".encode())
    manifest = {
        "format": FORMAT,
        "chemgauge_version": chemgauge.__version__,
        "model_class": "neuralsym",
        "seed": config.seed,
        "hyperparameters": asdict(config),
        "features": {
            "fingerprint": f"ECFP radius {RADIUS}, counts, chirality, folded mod {FOLD}, ln(1+x)",
            "selection": "highest training variance",
            "kept": features.size,
            "sha256": sha256_file(out / "features.npy"),
        },
        "data": {
            "products": _file_entry(inputs.products),
            "labels": _file_entry(inputs.labels),
            "templates": _file_entry(inputs.templates),
            "valid_products": _file_entry(inputs.valid_products),
            "valid_labels": _file_entry(inputs.valid_labels),
            "limit": limit,
            "train_rows": len(train_labels),
            "train_rows_without_template": int(len(labels) - len(train_labels)),
            "valid_rows": len(y_valid),
            "valid_rows_without_template": int(len(valid_labels) - len(y_valid)),
        },
        "templates": {"count": len(templates), "sha256": sha256_file(out / "templates.txt")},
        "curve": curve,
        "best_epoch": best_epoch,
        "best_valid_top1": round(best_score, 6),
        "weights_sha256": digests,
        "weights_digest": combined.hexdigest(),
        "run": {
            "seconds": round(time.perf_counter() - started, 1),
            "cpu_seconds": round(time.process_time() - cpu_started, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "blas_threads": BLAS_THREADS,
        },
    }
    atomic_write_json(out / MANIFEST, manifest)
    return manifest
