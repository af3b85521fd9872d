"""Score attempt rows: candidate validation, identity per policy and localized errors.

Validation (the candidate reads and sanitizes as a graph) is recorded apart from exactness:
a chemically wrong but well-formed graph passes validation. Localized errors come from the
bounded common-topology diff, run in a worker process; its timeouts are kept in the row.
Rows are scored one at a time as they stream past (:func:`iter_scored`); only a bounded
cache of recently used reference graphs is kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from rdkit import Chem

from chemgauge.chem.graphdiff import DiffSettings
from chemgauge.chem.graphdiff_worker import GraphDiffer
from chemgauge.chem.molfile import read_graph
from chemgauge.families.ocsr.manifest import Manifest
from chemgauge.families.ocsr.scoring import (
    POLICIES,
    GraphKeys,
    compare_keys,
    graph_keys,
    label_recall,
    text_keys,
)

__all__ = ["candidate_mol", "iter_scored", "score_attempts"]

#: Reference graphs kept for reuse (repeats of one case, or a case drawn twice).
REFERENCE_CACHE = 256


def score_attempts(
    manifest: Manifest,
    rows: Sequence[dict[str, Any]],
    *,
    policies: tuple[str, ...] = POLICIES,
    diff_settings: DiffSettings | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Scored copies of attempt rows (input order kept), as a list (see :func:`iter_scored`)."""
    return list(
        iter_scored(
            manifest, rows, policies=policies, diff_settings=diff_settings, progress=progress
        )
    )


Reference = tuple[Chem.Mol, GraphKeys] | None


def _reference(
    manifest: Manifest, case_id: str, policies: tuple[str, ...], cache: OrderedDict[str, Reference]
) -> Reference:
    """A case's reference graph and keys, from a small least-recently-used cache."""
    if case_id in cache:
        cache.move_to_end(case_id)
        return cache[case_id]
    mol = manifest.reference_mol(manifest.by_id[case_id])
    reference = None if mol is None else (mol, graph_keys(mol, policies))
    cache[case_id] = reference
    if len(cache) > REFERENCE_CACHE:
        cache.popitem(last=False)
    return reference


def iter_scored(
    manifest: Manifest,
    rows: Iterable[dict[str, Any]],
    *,
    policies: tuple[str, ...] = POLICIES,
    diff_settings: DiffSettings | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Score attempt rows one at a time, in input order (the diff worker lives as long as
    the iteration)."""
    references: OrderedDict[str, Reference] = OrderedDict()
    with GraphDiffer(diff_settings) as differ:
        for row in rows:
            case = manifest.by_id[row["case_id"]]
            reference = _reference(manifest, case.id, policies, references)
            out = dict(row)
            out["has_reference"] = reference is not None
            out["no_reference_reason"] = case.no_reference_reason
            out["reference_smiles"] = None if case.reference is None else case.reference.smiles
            recognition = row.get("recognition") or {}
            text = str(recognition.get("candidate_text") or "")
            fmt = str(recognition.get("candidate_format") or "smiles")
            candidate: dict[str, Any] = {"present": bool(text.strip())}
            keys: GraphKeys | None = None
            pred_mol: Chem.Mol | None = None
            if candidate["present"]:
                keys, reading = text_keys(text, fmt, policies)
                pred_mol = reading.mol
                candidate.update(
                    accepted=reading.accepted,
                    reason=reading.reason,
                    smiles=keys.smiles,
                    records=reading.records,
                )
            out["candidate"] = candidate
            out["identity"] = None
            out["graph_diff"] = None
            out["abbreviations"] = (
                None if reference is None else label_recall(reference[0], pred_mol)
            )
            if reference is not None and row["status"] != "not_run":
                ref_mol, ref_keys = reference
                out["identity"] = compare_keys(ref_keys, keys)
                if pred_mol is not None:
                    out["graph_diff"] = differ.diff(ref_mol, pred_mol).to_dict()
            yield out
            if progress is not None:
                progress(1)


def candidate_mol(row: dict[str, Any]) -> Chem.Mol | None:
    """Re-read a row's candidate graph (for drawing); ``None`` when there is none."""
    recognition = row.get("recognition") or {}
    text = str(recognition.get("candidate_text") or "")
    if not text.strip():
        return None
    return read_graph(text, str(recognition.get("candidate_format") or "smiles")).mol
