"""Is the model scored on reactions it was trained on? Checked from the evidence, not trusted.

A model that says what it was trained on (``training_data_sha256``: the file's hash;
``training_reactions``: the reaction SMILES, as the ``templates`` baseline does) is checked
against the evaluated fold: the same file, or any training reaction whose product and
reactant multiset (canonical, atom maps removed) equal an evaluated target's. Either makes the
run in-sample: refused unless ``allow_in_sample``, and the report's ``in_sample`` block says
what was found. A model that says nothing is reported as not checked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chemgauge.chem import canonical_multiset, split_reaction_smiles
from chemgauge.errors import ConfigError, SmilesError

__all__ = ["InSample", "check_in_sample"]


@dataclass(frozen=True)
class InSample:
    """What the in-sample check found (the report's ``in_sample`` block)."""

    checked: bool
    same_file: bool
    shared_reactions: int
    targets: int
    allowed: bool
    evidence: str

    @property
    def in_sample(self) -> bool:
        return self.same_file or self.shared_reactions > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "same_file": self.same_file,
            "shared_reactions": self.shared_reactions,
            "targets": self.targets,
            "allowed": self.allowed,
            "evidence": self.evidence,
        }


def _key(reaction: str) -> tuple[str, tuple[str, ...]] | None:
    try:
        parts = split_reaction_smiles(reaction)
        return ".".join(canonical_multiset(parts.products)), canonical_multiset(parts.reactants)
    except SmilesError:
        return None


def check_in_sample(
    model: Any,
    data_sha256: str,
    data_name: str,
    targets: Iterable[Mapping[str, Any]],
    *,
    allow: bool,
) -> InSample:
    """Compare the model's training evidence with the evaluated targets (see module doc);
    raises :class:`ConfigError` on an in-sample run unless ``allow``."""
    sha = getattr(model, "training_data_sha256", None)
    reactions: Sequence[str] | None = getattr(model, "training_reactions", None)
    if sha is None and reactions is None:
        return InSample(False, False, 0, 0, allow, "the model names no training data")
    by_product: dict[str, Counter[tuple[str, ...]]] = {}
    for target in targets:
        by_product.setdefault(target["product"], Counter())[tuple(target["reactants"])] += 1
    shared = 0
    hit: set[tuple[str, tuple[str, ...]]] = set()
    for reaction in reactions or ():
        key = _key(reaction)
        if key is not None and key[1] in by_product.get(key[0], ()):
            shared += 1
            hit.add(key)
    targets_hit = sum(by_product[product][reactants] for product, reactants in hit)
    same = sha is not None and sha == data_sha256
    found = []
    if same:
        found.append(
            f"the training data is the same file as {data_name} (sha256 {data_sha256[:12]})"
        )
    if shared:
        found.append(
            f"{shared} of its training reactions are evaluated reactions of {data_name} "
            f"({targets_hit} evaluated targets)"
        )
    evidence = "; ".join(found) or (
        f"no training reaction equals an evaluated reaction of {data_name}"
        + ("" if reactions is not None else " (file hash only: no reactions to compare)")
    )
    result = InSample(True, same, shared, targets_hit, allow, evidence)
    if result.in_sample and not allow:
        raise ConfigError(
            f"in-sample evaluation refused: {evidence}. Score the model on a fold it was not "
            "trained on, or pass --allow-in-sample (allow_in_sample=true) to run anyway; the "
            "report then says so"
        )
    return result
