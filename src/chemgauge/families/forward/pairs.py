"""Reaction pairs (``src``/``tgt`` text files, or an ``input,target`` CSV) to a schema-1 corpus.

The layouts forward models are trained and tested on: Molecular Transformer's tokenized
``src``/``tgt`` pair (spaces removed) and the ``input,target`` CSV of the Augmented
Transformer (plain, xz or gzip). An input ``reactants>reagents`` keeps only the reactants
(the corpus schema leaves reagents out, as ``corpus-from-uspto`` does); an input that joins
reactants and reagents with ``.`` keeps them all. Consecutive lines that are the same reaction
(the same canonical reactant set and product: augmented spellings of one input) become one
record, and are counted. A component RDKit cannot read is written as given, so the corpus
loader counts it instead of this step hiding it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from chemgauge.chem import try_canonical_smiles
from chemgauge.errors import ConfigError, InputFileError
from chemgauge.eval.atomic import atomic_open
from chemgauge.families.forward.augmented import open_text
from chemgauge.families.forward.corpus import CORPUS_SCHEMA_VERSION

__all__ = ["PairCounts", "write_pairs_corpus"]


@dataclass(frozen=True)
class PairCounts:
    """What a conversion read and wrote: lines, records, and lines merged into a record."""

    lines: int
    records: int
    merged: int
    reagents_left_out: int

    def to_dict(self) -> dict[str, int]:
        """Plain mapping for messages and reports."""
        return {
            "lines": self.lines,
            "records": self.records,
            "merged": self.merged,
            "reagents_left_out": self.reagents_left_out,
        }


def _components(side: str) -> list[str]:
    return [try_canonical_smiles(t) or t for t in side.split(".") if t.strip()]


def _pairs(
    input_csv: Path | None, src: Path | None, tgt: Path | None
) -> Iterator[tuple[int, str, str]]:
    if input_csv is not None:
        with open_text(input_csv) as handle:
            header = handle.readline().strip().split(",")
            if header[:2] != ["input", "target"]:
                raise InputFileError("needs the header input,target", path=input_csv)
            for number, line in enumerate(handle, start=2):
                source, _, target = line.rstrip("\r\n").partition(",")
                if source or target:
                    yield number, source, target.split(",")[0]
        return
    if src is None or tgt is None:
        raise ConfigError("give --input CSV, or both --src and --tgt")
    with open_text(src) as fs, open_text(tgt) as ft:
        for number, (s, t) in enumerate(zip(fs, ft, strict=True), start=1):
            s, t = s.replace(" ", "").strip(), t.replace(" ", "").strip()
            if s or t:
                yield number, s, t


def write_pairs_corpus(
    out: Path,
    *,
    input_csv: Path | None = None,
    src: Path | None = None,
    tgt: Path | None = None,
) -> PairCounts:
    """Convert one pair layout into a corpus JSONL, atomically; ids are ``<stem>:<line>``."""
    named = input_csv or src
    if named is None:
        raise ConfigError("give --input CSV, or both --src and --tgt")
    prefix = named.name.split(".")[0]
    lines = records = merged = reagents = 0
    last: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    with atomic_open(out) as handle:
        for number, source, target in _pairs(input_csv, src, tgt):
            lines += 1
            reactant_side, has_reagents, _ = source.partition(">")
            reagents += bool(has_reagents)
            reactants, product = _components(reactant_side), _components(target)
            key = (tuple(sorted(reactants)), tuple(sorted(product)))
            if key == last:
                merged += 1
                continue
            last = key
            record: dict[str, Any] = {
                "schema_version": CORPUS_SCHEMA_VERSION,
                "reaction_id": f"{prefix}:{number}",
                "reactants": reactants,
                "accepted_products": [product],
            }
            handle.write(orjson.dumps(record) + b"\n")
            records += 1
    return PairCounts(lines, records, merged, reagents)
