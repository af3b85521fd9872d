"""An outside forward model's precomputed outputs, in the layouts such models write.

- JSONL: one object a line, keyed by ``reaction_id`` or by ``reactants`` (a dot-joined
  string, ``reactants>reagents``, or a list), with ``predictions``: ranked raw product SMILES,
  or a list of such lists (one per augmented input). Several lines for one key add lists.
- CSV: a header with a key column (``reaction_id``/``id``, or ``input``/``reactants``) and
  ranked columns ``target``/``target_1``, ``target_2`` ... in rank order; one row is one list,
  rows with the same key (augmented inputs) add lists.
- Molecular Transformer's pair: a source file (one tokenized reactant string a line) and its
  prediction file (``n_best`` lines per source line, in order); spaces are removed.

Reactant keys are chemgauge's canonical reactant set (reagents merged in, sorted), so any
spelling or order of the inputs finds its reaction. Raw outputs are kept as written.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from chemgauge.chem import Canonicalizer
from chemgauge.errors import InputFileError
from chemgauge.eval.jsonl import read_jsonl
from chemgauge.eval.lines import read_lines
from chemgauge.eval.provenance import sha256_file
from chemgauge.eval.rejections import RejectionStats

__all__ = ["PredictionsFile", "load_predictions", "reactant_set_key"]

_RANK_COLUMN = re.compile(r"^target(?:_(\d+))?$")
Lists = list[tuple[str, ...]]


def reactant_set_key(components: Sequence[str], canon: Canonicalizer) -> str | None:
    """The canonical reactant set of some reactant (and reagent) strings, ``None`` if one
    does not parse: sorted canonical components joined by ``.``."""
    parts = [p for text in components for p in text.replace(">", ".").split(".") if p.strip()]
    keys = [canon(p) for p in parts]
    if not parts or any(k is None for k in keys):
        return None
    return ".".join(sorted(k for k in keys if k is not None))


@dataclass
class PredictionsFile:
    """Lists of raw outputs by reaction id and by canonical reactant set."""

    path: Path
    layout: str
    sha256: str
    stats: RejectionStats
    by_id: dict[str, Lists] = field(default_factory=dict)
    by_reactants: dict[str, Lists] = field(default_factory=dict)

    def lists_for(self, reaction_id: str, reactants_key: str) -> tuple[tuple[str, ...], ...]:
        """The lists answering one reaction (by id first, then by reactant set); ``()``
        when the file has none (a missing reaction, counted by the caller)."""
        found = self.by_id.get(reaction_id)
        if found is None:
            found = self.by_reactants.get(reactants_key)
        return tuple(found or ())

    @property
    def keys(self) -> int:
        """Distinct reactions the file answers."""
        return len(self.by_id) + len(self.by_reactants)


def _add(target: dict[str, Lists], key: str, lists: Lists) -> None:
    target.setdefault(key, []).extend(lists)


def _as_lists(value: object) -> Lists | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [tuple(value)]
    if isinstance(value, list) and all(
        isinstance(v, list) and all(isinstance(s, str) for s in v) for v in value
    ):
        return [tuple(v) for v in value]
    return None


def _read_jsonl(found: PredictionsFile, canon: Canonicalizer) -> None:
    stats = found.stats
    for number, obj in read_jsonl(found.path, stats):
        lists = _as_lists(obj.get("predictions"))
        rid, reactants = obj.get("reaction_id"), obj.get("reactants")
        if lists is None or not (isinstance(rid, str) or isinstance(reactants, str | list)):
            stats.reject(
                number,
                "bad_schema",
                orjson.dumps(obj).decode()[:120],
                'needs "reaction_id" or "reactants", and "predictions": [str] or [[str]]',
            )
            continue
        if isinstance(rid, str):
            _add(found.by_id, rid, lists)
        else:
            parts = [reactants] if isinstance(reactants, str) else list(reactants or [])
            key = reactant_set_key([str(p) for p in parts], canon)
            if key is None:
                stats.reject(number, "unparsable_reactants", str(reactants)[:120])
                continue
            _add(found.by_reactants, key, lists)
        stats.accepted += 1


def _read_csv(found: PredictionsFile, canon: Canonicalizer) -> None:
    stats = found.stats
    text = found.path.read_text(encoding="utf-8")
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise InputFileError("empty CSV predictions file", path=found.path)
    names = [h.strip() for h in header]
    ranked = sorted(
        ((int(m.group(1) or 1), i) for i, h in enumerate(names) if (m := _RANK_COLUMN.match(h))),
    )
    id_col = next((names.index(c) for c in ("reaction_id", "id") if c in names), None)
    input_col = next((names.index(c) for c in ("input", "reactants") if c in names), None)
    if not ranked or (id_col is None and input_col is None):
        raise InputFileError(
            "a CSV predictions file needs reaction_id/id or input/reactants, and target or "
            f"target_1.. columns; header is {','.join(names)}",
            path=found.path,
        )
    for number, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(names):
            stats.reject(number, "bad_schema", ",".join(row)[:120], f"{len(names)} columns")
            continue
        outputs = (tuple(row[i].strip() for _, i in ranked),)
        if id_col is not None and row[id_col].strip():
            _add(found.by_id, row[id_col].strip(), list(outputs))
        else:
            assert input_col is not None
            key = reactant_set_key([row[input_col]], canon)
            if key is None:
                stats.reject(number, "unparsable_reactants", row[input_col][:120])
                continue
            _add(found.by_reactants, key, list(outputs))
        stats.accepted += 1


def _text_lines(path: Path) -> list[str]:
    return [line.text.replace(" ", "").strip() for line in read_lines(path)]


def _read_pair(found: PredictionsFile, src: Path, canon: Canonicalizer) -> None:
    sources = _text_lines(src)
    outputs = _text_lines(found.path)
    if not sources or len(outputs) % len(sources):
        raise InputFileError(
            f"{len(outputs)} prediction lines are not a whole number of n_best lists for "
            f"{len(sources)} source lines",
            path=found.path,
        )
    n_best = len(outputs) // len(sources)
    for index, source in enumerate(sources):
        key = reactant_set_key([source], canon)
        if key is None:
            found.stats.reject(index + 1, "unparsable_reactants", source[:120])
            continue
        _add(found.by_reactants, key, [tuple(outputs[index * n_best : (index + 1) * n_best])])
        found.stats.accepted += 1


def load_predictions(
    path: Path, *, src: Path | None = None, strict: bool = False
) -> PredictionsFile:
    """Read a predictions file (layout from its suffix; with ``src``, the MT pair)."""
    if not path.is_file():
        raise InputFileError("predictions file not found", path=path)
    layout = "src_tgt" if src is not None else path.suffix.lstrip(".").lower()
    if layout not in ("jsonl", "csv", "src_tgt"):
        raise InputFileError(
            "predictions layout unknown: give a .jsonl or .csv file, or --src with a "
            "Molecular Transformer prediction file",
            path=path,
        )
    found = PredictionsFile(
        path, layout, sha256_file(path), RejectionStats(path=str(path), strict=strict)
    )
    canon = Canonicalizer("exact")
    if layout == "jsonl":
        _read_jsonl(found, canon)
    elif layout == "csv":
        _read_csv(found, canon)
    else:
        assert src is not None
        _read_pair(found, src, canon)
    return found


def iter_keys(found: PredictionsFile) -> Iterator[str]:
    """Every key the file answers (ids, then reactant sets)."""
    yield from found.by_id
    yield from found.by_reactants
