"""Single-step retrosynthesis models: one batch-first base class, one registry, open to plugins.

A model maps a batch of product SMILES to ranked raw outputs (dot-separated reactant SMILES,
invalid ones included). The base class owns what every back-end would otherwise redo: input
deduplication, the output-count limit (extra outputs are cut and counted, never scored),
timing and call counting. A back-end implements one hook, ``_predict(products, n)``.

Built-ins: ``predictions`` (precomputed outputs from a JSONL file), ``templates`` (rdchiral
template baseline, :mod:`chemgauge.engines.retro_templates`) and ``syntheseus:<ModelClass>``
(a syntheseus backward model, when syntheseus and that model's extras are installed).
Third-party packages register factories under the entry-point group
``chemgauge.retro_models``; any Python callable works through :class:`CallableRetroModel`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple, Protocol

import orjson

from chemgauge.chem import Canonicalizer
from chemgauge.errors import BackendError, ConfigError, InputFileError, MissingDependencyError
from chemgauge.eval.provenance import sha256_file
from chemgauge.eval.records import (
    Diagnostic,
    RejectionStats,
    iter_line_spans,
    json_object,
    read_span,
)
from chemgauge.registry import Registry

__all__ = [
    "RETRO_MODELS",
    "CallableRetroModel",
    "ModelOutput",
    "PredictionsFileModel",
    "RetroModel",
    "RetroModelFactory",
    "SyntheseusModel",
    "build_retro_model",
    "retro_model_names",
]


@dataclass(frozen=True, slots=True)
class ModelOutput:
    """Ranked raw outputs for one product plus how many the model returned before the cut."""

    outputs: tuple[str, ...]
    returned: int
    seconds: float


class RetroModel:
    """Base of every retro model: batching, dedup of inputs, output limit, timing, counting.

    Attributes:
        name: registry name (recorded in reports).
        prefiltered: the back-end already drops invalid and duplicate outputs itself, so the
            ``raw_slots`` convention cannot see them (reported, never hidden).
    """

    name = "retro-model"
    prefiltered = False

    def __init__(self) -> None:
        self.calls = 0
        self.products_predicted = 0

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        """Back-end hook: ranked raw outputs for each distinct product, best first."""
        raise NotImplementedError

    def expect_product(self, product: str) -> None:
        """Hint before predicting: this canonical product will be asked for (a back-end may
        use it to skip work; answers never depend on it)."""

    def prepare(self) -> None:
        """Called after every product was announced and before the first prediction."""

    def close(self) -> None:
        """Release what the run held (files, processes); the model may be used again."""

    def predict(self, products: Sequence[str], num_results: int) -> list[ModelOutput]:
        """Ranked raw outputs for each product (in input order), cut at ``num_results``."""
        distinct = list(dict.fromkeys(products))
        start = time.perf_counter()
        raw = self._predict(distinct, num_results) if distinct else []
        elapsed = time.perf_counter() - start
        if len(raw) != len(distinct):
            raise BackendError(
                f"model {self.name!r} returned {len(raw)} output lists for {len(distinct)} products"
            )
        self.calls += 1
        self.products_predicted += len(distinct)
        share = elapsed / max(1, len(distinct))
        by_product: dict[str, ModelOutput] = {}
        for product, outputs in zip(distinct, raw, strict=True):
            if isinstance(outputs, str) or not all(isinstance(o, str) for o in outputs):
                raise BackendError(
                    f"model {self.name!r} must return a list of SMILES strings per product; "
                    f"got {type(outputs).__name__} for {product!r}"
                )
            by_product[product] = ModelOutput(tuple(outputs[:num_results]), len(outputs), share)
        return [by_product[p] for p in products]

    def describe(self) -> dict[str, Any]:
        """Name and arguments for provenance and the config hash (no timing)."""
        return {"name": self.name, "prefiltered": self.prefiltered}


class RetroModelFactory(Protocol):
    """Builds a model from its folder (or file) and keyword arguments."""

    def __call__(self, model_dir: Path | None, **kwargs: Any) -> RetroModel: ...


RETRO_MODELS: Registry[RetroModelFactory] = Registry("retro_model")


class CallableRetroModel(RetroModel):
    """Wrap any callable ``products -> ranked outputs`` (the Python API for a model)."""

    def __init__(
        self,
        fn: Callable[[list[str]], Sequence[Sequence[str]]],
        name: str = "callable",
        *,
        arguments: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._fn = fn
        self.name = name
        self._arguments = dict(arguments or {})

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        result: list[list[str]] = []
        for outputs in self._fn(products):
            if isinstance(outputs, str):
                raise BackendError(
                    f"model {self.name!r} must return a list of SMILES strings per product; "
                    f"got a bare string {outputs[:80]!r}"
                )
            result.append(list(outputs))
        return result

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "arguments": self._arguments}


class PredictionsFileModel(RetroModel):
    """Precomputed ranked outputs: JSONL lines ``{"product": ..., "predictions": [...]}``.

    Products are matched to targets by canonical SMILES (``exact``), so any spelling works.
    Two lines for the same product with different predictions is an error naming both
    lines; a repeated identical line is counted as accepted (every line is accounted for); a
    target with no line gets no outputs (counted by the runner as a miss).

    Memory: one product key and one byte offset per line; predictions are read back from the
    file when asked for. Products are canonicalized once, at :meth:`prepare` (or the first
    lookup); a line spelled exactly like a product announced by :meth:`expect_product` (the
    runner announces the targets' canonical products) needs no canonicalization at all.
    """

    name = "predictions"

    def __init__(self, path: Path, *, strict: bool = False, jobs: int = 0) -> None:
        super().__init__()
        self.path = path
        self.sha256 = sha256_file(path)
        self.stats = RejectionStats(path=str(path), strict=strict)
        self._jobs = jobs
        self._canon = Canonicalizer("exact")
        # file order: a usable line (number, byte span, product text) or a deferred rejection
        self._lines: list[_Line | Diagnostic] | None = list(self._scan())
        self._texts = {entry.product for entry in self._lines if isinstance(entry, _Line)}
        self._by_key: dict[str, _Line] = {}
        self._handle: IO[bytes] | None = None
        self.missing = 0

    def _scan(self) -> Iterator[_Line | Diagnostic]:
        """Check every line's JSON and schema; rejections are reported in line order at
        :meth:`prepare`, or at once under ``strict`` (before any other work)."""

        def reject(line: int, reason: str, text: str, detail: str = "") -> Diagnostic:
            if self.stats.strict:
                self.stats.reject(line, reason, text, detail)  # raises
            return Diagnostic(line, reason, text, detail)

        for span in iter_line_spans(self.path):
            number, text = span.number, span.text
            if not text.strip():
                continue
            obj = json_object(text)
            if isinstance(obj, str):
                yield reject(number, "malformed_json", text, obj)
                continue
            product, predictions = obj.get("product"), obj.get("predictions")
            if not isinstance(product, str) or not isinstance(predictions, list):
                yield reject(
                    number,
                    "bad_schema",
                    orjson.dumps(obj).decode()[:120],
                    'needs {"product": str, "predictions": [str, ...]}',
                )
                continue
            if not all(isinstance(p, str) for p in predictions):
                yield reject(number, "bad_schema", product, "predictions must all be strings")
                continue
            yield _Line(number, span.offset, span.size, product)

    def expect_product(self, product: str) -> None:
        """``product`` is a canonical SMILES that will be asked for: a line spelled exactly
        like it has it as its key (canonical SMILES are fixed points), so it is not
        canonicalized again."""
        if self._lines is not None and product in self._texts:
            self._canon.remember(product, product)

    def prepare(self) -> None:
        """Canonicalize the file's products and index them (once); conflicting lines for
        one product are an error naming both."""
        if self._lines is None:
            return
        lines, self._lines, self._texts = self._lines, None, set()
        texts = [e.product for e in lines if isinstance(e, _Line)]
        workers = self._jobs if self._jobs > 0 else (os.cpu_count() or 1)
        todo = [t for t in dict.fromkeys(texts) if not self._canon.known(t)]
        self._canon.many(todo, jobs=workers if len(todo) > 4096 else 1)  # fills the memo
        for entry in lines:
            if isinstance(entry, Diagnostic):
                self.stats.reject(entry.line, entry.reason, entry.excerpt, entry.detail)
                continue
            key = self._canon(entry.product)
            if key is None:
                self.stats.reject(entry.number, "unparsable_product", entry.product)
                continue
            first = self._by_key.get(key)
            if first is not None:
                if self._read(first) != self._read(entry):
                    raise InputFileError(
                        f"product also on line {first.number} with different predictions",
                        path=self.path,
                        line=entry.number,
                        value=entry.product,
                    )
                self.stats.accepted += 1  # the same answer again: consistent, so counted as read
                continue
            self._by_key[key] = entry
            self.stats.accepted += 1

    def _read(self, line: _Line) -> list[str]:
        """The predictions of one line (checked when scanned)."""
        if self._handle is None:
            self._handle = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        raw = read_span(self._handle, (line.offset, line.size))
        predictions: list[str] = orjson.loads(raw)["predictions"]
        return predictions

    def close(self) -> None:
        """Close the file handle predictions are read from (reopened if needed)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def has(self, product: str) -> bool:
        """True iff the file has a line for this product (any spelling)."""
        self.prepare()
        key = self._canon(product)
        return key is not None and key in self._by_key

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        self.prepare()
        out: list[list[str]] = []
        for product in products:
            key = self._canon(product)
            entry = self._by_key.get(key) if key is not None else None
            if entry is None:
                self.missing += 1
            out.append(self._read(entry) if entry is not None else [])
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "file": self.path.name, "file_sha256": self.sha256}


class _Line(NamedTuple):
    """A usable line of a predictions file: its number, byte span and product text."""

    number: int
    offset: int
    size: int
    product: str


def _resolve_predictions_file(model_dir: Path | None) -> Path:
    if model_dir is None:
        raise ConfigError("model_class=predictions needs model_dir (a JSONL file or its folder)")
    if model_dir.is_file():
        return model_dir
    if not model_dir.is_dir():
        raise ConfigError(f"model_dir {str(model_dir)!r} does not exist")
    candidates = sorted(model_dir.glob("*.jsonl"))
    if len(candidates) != 1:
        names = ", ".join(p.name for p in candidates) or "none"
        raise ConfigError(
            f"model_dir {str(model_dir)!r} must hold exactly one *.jsonl predictions file "
            f"(found: {names}); or pass the file itself"
        )
    return candidates[0]


def _predictions_factory(model_dir: Path | None, **kwargs: Any) -> RetroModel:
    strict = bool(kwargs.pop("strict", False))
    jobs = int(kwargs.pop("jobs", 0))
    if kwargs:
        raise ConfigError(
            f"model 'predictions' takes only strict and jobs arguments, got {sorted(kwargs)}"
        )
    return PredictionsFileModel(_resolve_predictions_file(model_dir), strict=strict, jobs=jobs)


def _templates_factory(model_dir: Path | None, **kwargs: Any) -> RetroModel:
    from chemgauge.engines.retro_templates import TemplateRetroModel

    return TemplateRetroModel.from_dir(model_dir, **kwargs)


RETRO_MODELS.register("predictions", _predictions_factory)
RETRO_MODELS.register("templates", _templates_factory)


#: syntheseus 0.9 extras per backward model class (torch and the model's own code).
_SYNTHESEUS_EXTRAS = {
    "Chemformer": "chemformer",
    "Graph2Edits": "graph2edits",
    "LocalRetro": "local-retro",
    "MEGAN": "megan",
    "MHNreact": "mhn-react",
    "RetroChimera": "retrochimera",
    "RetroChimeraDeNovo": "retrochimera",
    "RetroChimeraEdit": "retrochimera",
    "RetroKNN": "retro-knn",
    "RootAligned": "root-aligned",
}


class SyntheseusModel(RetroModel):
    """A syntheseus backward model; its outputs arrive already parsed and deduplicated."""

    prefiltered = True

    def __init__(self, model_class: str, model_dir: Path | None, **kwargs: Any) -> None:
        super().__init__()
        try:
            from syntheseus import Molecule
            from syntheseus.reaction_prediction.inference.config import BackwardModelClass
        except ImportError as exc:
            raise MissingDependencyError(
                "model_class=syntheseus:<ModelClass> needs syntheseus: "
                "pip install 'chemgauge[syntheseus]' (plus that model's own extras)"
            ) from exc
        known = [c.name for c in BackwardModelClass]
        if model_class not in known:
            import difflib

            close = difflib.get_close_matches(model_class, known, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise ConfigError(
                f"unknown syntheseus model class {model_class!r}.{hint} Known: {', '.join(known)}"
            )
        self.name = f"syntheseus:{model_class}"
        self._molecule = Molecule
        self._kwargs = dict(kwargs)
        self._model_dir = model_dir
        try:
            cls = BackwardModelClass[model_class].value
            self._model = cls(model_dir=None if model_dir is None else str(model_dir), **kwargs)
        except ImportError as exc:
            extra = _SYNTHESEUS_EXTRAS.get(model_class, "all-single-step")
            raise MissingDependencyError(
                f"syntheseus model {model_class} needs its extras (and torch): "
                f"pip install 'syntheseus[{extra}]' ({exc})"
            ) from exc

    def _predict(self, products: list[str], num_results: int) -> list[list[str]]:
        inputs = [self._molecule(p) for p in products]
        results = self._model(inputs, num_results=num_results)
        return [[rxn.reactants_str for rxn in reactions] for reactions in results]

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "model_dir": None if self._model_dir is None else str(self._model_dir),
            "arguments": self._kwargs,
        }


def retro_model_names() -> list[str]:
    """Registered model names plus the ``syntheseus:<ModelClass>`` family."""
    return [*RETRO_MODELS.names(), "syntheseus:<ModelClass>"]


def build_retro_model(
    model_class: str, model_dir: str | Path | None = None, **kwargs: Any
) -> RetroModel:
    """Build a model by registry name ("did you mean" on a typo)."""
    path = None if model_dir is None or model_dir == "" else Path(model_dir)
    if model_class.startswith("syntheseus:"):
        return SyntheseusModel(model_class.split(":", 1)[1], path, **kwargs)
    factory = RETRO_MODELS.get(model_class)
    model = factory(path, **kwargs)
    if not isinstance(model, RetroModel):
        raise ConfigError(f"retro model factory {model_class!r} did not return a RetroModel")
    return model
