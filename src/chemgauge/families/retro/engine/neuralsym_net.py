"""NeuralSym's network in numpy: one highway-ELU layer over sparse features, then a softmax.

The head is the paper's highway block: ``h = g * elu(x Wn) + (1 - g) * (x Wl)`` with the gate
``g = sigmoid(x Wg)``, dropout after it, then a linear layer to one logit per training
template. The three head matrices are stored side by side in one ``(features, 3 * hidden)``
array. Training uses Adam; the head's rows are updated only where the batch has a feature
(lazy Adam, as sparse-input optimisers do), every other parameter densely. All arithmetic is
float32 with fixed reduction orders (scipy's sparse products are single-threaded loops), so
one seed gives the same bytes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

__all__ = ["WEIGHT_FILES", "Adam", "NeuralSymNet"]

WEIGHT_FILES = ("head_w", "head_b", "out_w", "out_b")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = (1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))).astype(np.float32)
    return out


def _elu(z: np.ndarray) -> np.ndarray:
    return np.where(z > 0, z, np.expm1(np.minimum(z, 0.0))).astype(np.float32)


@dataclass
class _Cache:
    z: np.ndarray
    gate: np.ndarray
    nonlinear: np.ndarray
    h: np.ndarray
    keep: np.ndarray | None


class NeuralSymNet:
    """Parameters and the forward / backward passes."""

    def __init__(self, params: dict[str, np.ndarray]) -> None:
        self.params = params
        self.hidden = int(params["out_w"].shape[0])

    @classmethod
    def initialise(
        cls, n_features: int, hidden: int, n_classes: int, rng: np.random.Generator
    ) -> NeuralSymNet:
        """Uniform(+-1/sqrt(fan_in)) weights and biases, as common linear layers start."""

        def uniform(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
            bound = 1.0 / np.sqrt(fan_in)
            return rng.uniform(-bound, bound, size=shape).astype(np.float32)

        return cls(
            {
                "head_w": uniform((n_features, 3 * hidden), n_features),
                "head_b": uniform((3 * hidden,), n_features),
                "out_w": uniform((hidden, n_classes), hidden),
                "out_b": uniform((n_classes,), hidden),
            }
        )

    def _head(
        self, x: sparse.csr_matrix, dropout: float, rng: np.random.Generator | None
    ) -> _Cache:
        z = np.asarray(x @ self.params["head_w"], dtype=np.float32) + self.params["head_b"]
        hid = self.hidden
        gate = _sigmoid(z[:, :hid])
        nonlinear = _elu(z[:, hid : 2 * hid])
        h = gate * nonlinear + (1.0 - gate) * z[:, 2 * hid :]
        keep = None
        if dropout > 0 and rng is not None:
            keep = (rng.random(h.shape, dtype=np.float32) >= dropout).astype(np.float32)
            keep /= np.float32(1.0 - dropout)
            h = h * keep
        return _Cache(z, gate, nonlinear, h.astype(np.float32), keep)

    def logits(self, x: sparse.csr_matrix) -> np.ndarray:
        """Template logits for a batch (no dropout)."""
        cache = self._head(x, 0.0, None)
        out: np.ndarray = cache.h @ self.params["out_w"] + self.params["out_b"]
        return out

    def loss_and_grads(
        self,
        x: sparse.csr_matrix,
        labels: np.ndarray,
        dropout: float,
        rng: np.random.Generator,
    ) -> tuple[float, dict[str, np.ndarray], np.ndarray]:
        """Mean cross-entropy, gradients, and the feature rows the head gradient covers."""
        cache = self._head(x, dropout, rng)
        logits = cache.h @ self.params["out_w"] + self.params["out_b"]
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        total = exp.sum(axis=1, keepdims=True)
        rows = np.arange(len(labels))
        loss = float(np.mean(np.log(total[:, 0]) - logits[rows, labels]))
        dlogits = exp / total
        dlogits[rows, labels] -= 1.0
        dlogits /= np.float32(len(labels))
        dlogits = dlogits.astype(np.float32)
        grads = {
            "out_w": cache.h.T @ dlogits,
            "out_b": dlogits.sum(axis=0),
        }
        dh = dlogits @ self.params["out_w"].T
        if cache.keep is not None:
            dh *= cache.keep
        hid = self.hidden
        linear = cache.z[:, 2 * hid :]
        gate = cache.gate
        dz = np.empty_like(cache.z)
        dz[:, :hid] = dh * (cache.nonlinear - linear) * gate * (1.0 - gate)
        elu_grad = np.where(cache.z[:, hid : 2 * hid] > 0, 1.0, cache.nonlinear + 1.0)
        dz[:, hid : 2 * hid] = dh * gate * elu_grad
        dz[:, 2 * hid :] = dh * (1.0 - gate)
        grads["head_b"] = dz.sum(axis=0)
        touched = np.unique(x.indices)
        local = sparse.csr_matrix(
            (x.data, np.searchsorted(touched, x.indices), x.indptr),
            shape=(x.shape[0], len(touched)),
        )
        grads["head_w"] = np.asarray(local.T @ dz, dtype=np.float32)
        return loss, grads, touched

    def save(self, folder: Path) -> dict[str, str]:
        """Write one ``.npy`` per parameter; their SHA-256 by name."""
        digests = {}
        for name in WEIGHT_FILES:
            path = folder / f"{name}.npy"
            np.save(path, np.ascontiguousarray(self.params[name]), allow_pickle=False)
            digests[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        return digests

    @classmethod
    def load(cls, folder: Path) -> NeuralSymNet:
        """Read the parameters :meth:`save` wrote."""
        return cls(
            {name: np.load(folder / f"{name}.npy", allow_pickle=False) for name in WEIGHT_FILES}
        )

    def copy(self) -> NeuralSymNet:
        """A snapshot of the parameters."""
        return NeuralSymNet({k: v.copy() for k, v in self.params.items()})


class Adam:
    """Adam (beta 0.9 / 0.999, eps 1e-8); the head's weight rows lazily."""

    def __init__(self, params: dict[str, np.ndarray], lr: float) -> None:
        self.lr = lr
        self.t = 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(
        self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray], rows: np.ndarray
    ) -> None:
        """One update; ``grads['head_w']`` holds only the rows ``rows``."""
        self.t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        c1 = 1.0 - b1**self.t
        c2 = 1.0 - b2**self.t
        step = np.float32(self.lr / c1)
        root_c2 = np.float32(np.sqrt(c2))
        for name, grad in grads.items():
            if name == "head_w":
                m = self.m[name][rows]
                v = self.v[name][rows]
            else:
                m = self.m[name]
                v = self.v[name]
            m *= np.float32(b1)
            m += np.float32(1 - b1) * grad
            v *= np.float32(b2)
            v += np.float32(1 - b2) * grad * grad
            update = step * m / (np.sqrt(v) / root_c2 + np.float32(eps))
            if name == "head_w":
                self.m[name][rows] = m
                self.v[name][rows] = v
                params[name][rows] -= update
            else:
                params[name] -= update
