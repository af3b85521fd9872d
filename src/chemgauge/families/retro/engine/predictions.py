"""The ``predictions`` model: precomputed ranked outputs read from a JSONL file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson

from chemgauge.chem import Canonicalizer
from chemgauge.errors import InputFileError
from chemgauge.eval.jsonl import json_object
from chemgauge.eval.lines import read_lines, read_span
from chemgauge.eval.provenance import sha256_file
from chemgauge.eval.rejections import Diagnostic, RejectionStats
from chemgauge.families.retro.engine.base import RetroModel

__all__ = [
    "PredictionsFileModel",
]


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

        for span in read_lines(self.path, keep_undecodable=True):
            number, text = span.number, span.text
            if span.problem is not None:
                yield reject(number, "invalid_utf8", text, span.problem)
                continue
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

    def make_strict(self) -> None:
        """From now on a rejected line is an error (a run's ``--strict``): lines rejected
        while scanning raise at :meth:`prepare`, before any scoring."""
        self.stats.strict = True

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
