"""The three views of one property directory, built from selected records and their values.

* ``correct``: the source's property, label = the source's index;
* ``shuffled``: the property of another record's source (the next one on a secret ring whose
  value differs from the record's own within the property's rounding), label unchanged; a
  record whose every possible donor carries its own value is skipped, counted;
* ``counterfactual``: the property of another candidate, label = that candidate. Donors are
  drawn uniformly among the other candidates by the build *secret* (never published; the
  manifest holds only its commitment hash), skipping any whose value equals the source's
  within rounding (the evidence could not tell them apart): the offset of a counterfactual
  label from the correct one is uniform over the non-zero values and no public rule
  (candidate order, file order, the id, the published seed) predicts it. Label lines also
  carry ``base_record_id`` and ``source_label``.

Every counterfactual id is an opaque hash of the secret, in the same ``p2s-`` + 16 hex format
as a record id, and each view's file order is a secret shuffle of its own: no id and no line
position carries an ordinal or a view-specific mark. ``records`` keeps the first N records
(in source order) that have every view, so a directory holds exactly N when the sources allow.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chemgauge.errors import InputFileError
from chemgauge.families.p2s.engine.properties import PropertyResult
from chemgauge.families.p2s.selection import Record, counterfactual_id, seeded_hash
from chemgauge.families.p2s.spec import CONDITIONS, components_of, validate_property_value

__all__ = [
    "ViewCounts",
    "Views",
    "directory_views",
    "donor_order",
    "file_order",
    "same_evidence",
]

# Decimals kept per numeric field when deciding whether two values are the same evidence:
# the precision the xtb provider writes (3 decimals) and a spectrum's resolution.
_DECIMALS = {"value": 3, "position": 1, "intensity": 3, "shift": 2, "integration": 2}

Views = dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]


@dataclass
class ViewCounts:
    """What building the views skipped, re-drew or found tied (all written to the manifest)."""

    skipped: Counter[str] = field(default_factory=Counter)
    redrawn: Counter[str] = field(default_factory=Counter)
    ties: Counter[str] = field(default_factory=Counter)


def _rounded(obj: Any, key: str = "") -> Any:
    if isinstance(obj, dict):
        return {k: _rounded(v, k) for k, v in sorted(obj.items()) if k != "method"}
    if isinstance(obj, list):
        return [_rounded(v, key) for v in obj]
    if isinstance(obj, float | int) and not isinstance(obj, bool) and key in _DECIMALS:
        return round(float(obj), _DECIMALS[key]) + 0.0  # -0.0 and 0.0 alike
    return obj


def same_evidence(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two property objects are equal once rounded to each field's precision."""
    return bool(_rounded(dict(a)) == _rounded(dict(b)))


def _values(
    result: PropertyResult, components: tuple[str, ...], origin: str
) -> dict[str, Any] | None:
    """The components of one provider result, validated; ``None`` if any is absent."""
    if result.error is not None or any(c not in result.values for c in components):
        return None
    out = {}
    for name in components:
        problem = validate_property_value(name, result.values[name])
        if problem:
            raise InputFileError(f"bad property value: {problem}", path=result.origin or origin)
        out[name] = result.values[name]
    return out


def _task(record: Record, properties: dict[str, Any], rid: str) -> dict[str, Any]:
    return {
        "record_id": rid,
        "masked_smiles": record.masked_smiles,
        "mask": record.mask(),
        "properties": properties,
        "candidate_completed_smiles": list(record.candidates),
    }


def _shuffle_donors(
    directory: str, records: list[Record], own: dict[str, dict[str, Any]], secret: str
) -> tuple[dict[str, str], Counter[str]]:
    """Each record's shuffled donor (record id -> donor id) and how many were re-drawn."""
    ring = sorted(records, key=lambda r: seeded_hash(secret, "shuffle", directory, r.record_id))
    donors: dict[str, str] = {}
    redrawn: Counter[str] = Counter()
    for start, record in enumerate(ring):
        rid = record.record_id
        for step in range(1, len(ring)):
            donor = ring[(start + step) % len(ring)].record_id
            if not same_evidence(own[donor], own[rid]):
                donors[rid] = donor
                redrawn[f"{directory}:shuffled_value_equal_to_own"] += step > 1
                break
    return donors, redrawn


def donor_order(secret: str, directory: str, record: Record) -> list[int]:
    """The other candidates of a record in a uniform order drawn from the secret: the
    counterfactual donors are the first valid ones (independent of candidate order and of
    where the answer sits)."""
    others = [i for i in range(len(record.candidates)) if i != record.answer]
    return sorted(
        others,
        key=lambda i: seeded_hash(
            secret, "donor", directory, record.record_id, record.candidates[i]
        ),
    )


def file_order(
    secret: str,
    directory: str,
    condition: str,
    tasks: list[dict[str, Any]],
    labels: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A view's tasks and labels (line for line) in a secret order of its own."""
    order = sorted(
        range(len(tasks)),
        key=lambda i: seeded_hash(
            secret, "file-order", directory, condition, tasks[i]["record_id"]
        ),
    )
    return [tasks[i] for i in order], [labels[i] for i in order]


def directory_views(
    directory: str,
    records: list[Record],
    values: Mapping[str, PropertyResult],
    *,
    secret: str,
    counterfactuals: int,
    counts: ViewCounts,
    records_wanted: int | None = None,
) -> Views:
    """Tasks and labels of the three views of one directory, each in its secret file order."""
    components = components_of(directory)
    own: dict[str, dict[str, Any]] = {}
    for record in records:
        found = _values(values[record.source], components, record.source)
        if found is None:
            counts.skipped[f"{directory}:source_without_property"] += 1
        else:
            own[record.record_id] = found
    kept = [r for r in records if r.record_id in own]
    views: Views = {c: ([], []) for c in CONDITIONS}
    if len(kept) < 2:
        if kept:
            counts.skipped[f"{directory}:too_few_records_to_shuffle"] += len(kept)
        return views
    donors, redrawn = _shuffle_donors(directory, kept, own, secret)
    counts.redrawn.update(+redrawn)
    released = 0
    for record in kept:
        rid = record.record_id
        if rid not in donors:
            counts.skipped[f"{directory}:every_shuffled_value_equal_to_own"] += 1
            continue
        if records_wanted is not None and released >= records_wanted:
            counts.skipped[f"{directory}:beyond_records_wanted"] += 1
            continue
        released += 1
        views["correct"][0].append(_task(record, own[rid], rid))
        views["correct"][1].append({"record_id": rid, "label": record.answer})
        views["shuffled"][0].append(_task(record, own[donors[rid]], rid))
        views["shuffled"][1].append({"record_id": rid, "label": record.answer})
        chosen: list[tuple[int, dict[str, Any]]] = []
        tied = False
        for index in donor_order(secret, directory, record):
            found = _values(values[record.candidates[index]], components, record.candidates[index])
            if found is not None and same_evidence(found, own[rid]):
                tied = True  # even a perfect property reader cannot separate these two
            elif found is not None and len(chosen) < counterfactuals:
                chosen.append((index, found))
        if tied:
            counts.ties[directory] += 1
        if not chosen:
            counts.skipped[f"{directory}:no_counterfactual_donor"] += 1
        for ordinal, (index, found) in enumerate(chosen):
            cf_id = counterfactual_id(secret, directory, rid, ordinal)
            views["counterfactual"][0].append(_task(record, found, cf_id))
            views["counterfactual"][1].append(
                {
                    "record_id": cf_id,
                    "label": index,
                    "base_record_id": rid,
                    "source_label": record.answer,
                }
            )
    return {c: file_order(secret, directory, c, *views[c]) for c in CONDITIONS}
