"""Attacks on the use claim that use only public knowledge (no property value is read).

What a system could know besides the property: the manifest and its published seed, the
file order, the ids and the view a file comes from, and a structural prior (the
``structure_only`` baseline). Three kinds of test, each scored against the labels only after
the picks are made:

* **offset uniformity**: the counterfactual label's offset from the correct one,
  ``(label - source_label) mod K``, must be uniform over ``1..K-1`` (chi-square): a donor
  rule tied to the answer's position shows here first;
* **answer rules**: ``label = source_label + s + ordinal (mod K)`` for every shift ``s`` and
  every ordinal a system can read (none, file order among the tasks of one graph, the id's
  sort rank, the id rebuilt from the published seed) must hit at most ``1/(K-1)`` (an
  exact one-sided test: a record's offsets are distinct draws, enumerated);
* **claim attacks**: the prior on the correct view, the prior shifted by one on the shuffled
  view (wrong on purpose) and ``prior + s + ordinal`` on the counterfactual view, run
  through the claim's own statistics (:func:`~chemgauge.families.p2s.claim.claim_statistics`);
  a claim attack's p is the larger of the drop's and the flip's McNemar p (both must hold).

All the p values of a release form one Holm family; any below ``alpha`` fails the audit.
These are per-view attacks: a system that is told the view can always behave differently
per view, which is why ``p2s run`` is blind by default (see the family docs).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chemgauge.eval.stats import holm_adjust
from chemgauge.families.p2s.config import ClaimConfig
from chemgauge.families.p2s.engine.models import StructureOnlyBaseline
from chemgauge.families.p2s.selection import counterfactual_id
from chemgauge.families.p2s.taskfile import Task

__all__ = ["LabelFacts", "chi_square_sf", "public_attacks"]

# The bootstrap only draws intervals; the claim's decision is McNemar's, so a few resamples do.
_CLAIM = ClaimConfig(resamples=200)
_ORDINALS = ("none", "file", "id_sort", "id_replay")


@dataclass(frozen=True)
class LabelFacts:
    """One label line as the attacks score it."""

    label: int
    base_record_id: str | None = None
    source_label: int | None = None


def chi_square_sf(x: float, dof: int) -> float:
    """P(X >= x) for a chi-square variable with ``dof`` degrees of freedom (closed form)."""
    if dof < 1:
        return 1.0
    if x <= 0:
        return 1.0
    half = x / 2
    if dof % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, dof // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    total = math.erfc(math.sqrt(half))
    k = 1
    while k + 2 <= dof:
        total += math.exp((k / 2) * math.log(half) - half - math.lgamma(k / 2 + 1))
        k += 2
    return min(1.0, total)


def _prior(tasks: Sequence[Task]) -> dict[tuple[str, tuple[str, ...]], int | None]:
    """The structural prior's pick per distinct graph (it never reads a property)."""
    graphs: dict[tuple[str, tuple[str, ...]], Task] = {}
    for task in tasks:
        graphs.setdefault((task.masked_smiles, task.candidates), task)
    model = StructureOnlyBaseline()
    answers = model.predict([{**t.to_json(), "properties": {}} for t in graphs.values()])
    return {key: a.get("selected_candidate_index") for key, a in zip(graphs, answers, strict=True)}


def _ordinals(
    directory: str, tasks: Sequence[Task], bases: Mapping[str, str], seed: int | None
) -> dict[str, dict[str, int]]:
    """Each counterfactual task's ordinal under every public reading."""
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        groups.setdefault(bases.get(task.record_id, task.record_id), []).append(task)
    out: dict[str, dict[str, int]] = {name: {} for name in _ORDINALS}
    for base, members in groups.items():
        ranked = sorted(members, key=lambda t: t.record_id)
        for rank, task in enumerate(members):
            out["none"][task.record_id] = 0
            out["file"][task.record_id] = rank
            out["id_sort"][task.record_id] = ranked.index(task)
            replayed = 0
            if seed is not None:
                for ordinal in range(8):
                    if counterfactual_id(str(seed), directory, base, ordinal) == task.record_id:
                        replayed = ordinal
                        break
            out["id_replay"][task.record_id] = replayed
    return out


def _group_distribution(group: Sequence[tuple[int, int, int]]) -> list[float]:
    """P(hits = h) for one record under a leak-free release: its counterfactual offsets are
    distinct uniform draws from ``1..K-1`` (every ordered draw enumerated)."""
    k = group[0][0]
    targets = [t for _, t, _ in group]
    draws = list(itertools.permutations(range(1, k), len(group))) if k > len(group) else []
    if not draws:
        return [1.0]
    counts = [0] * (len(group) + 1)
    for draw in draws:
        counts[sum(1 for o, t in zip(draw, targets, strict=True) if o == t)] += 1
    return [c / len(draws) for c in counts]


def _rule_p(groups: Sequence[Sequence[tuple[int, int, int]]]) -> tuple[int, float]:
    """Hits of a rule and its exact one-sided p. ``groups``: per base record, ``(K, target
    offset, offset)`` of each of its counterfactuals; a record's hits are dependent (its
    offsets are distinct), so the null is the convolution of each record's exact law."""
    hits = sum(1 for group in groups for _, t, o in group if t == o)
    law = [1.0]
    for group in groups:
        part = _group_distribution(group)
        merged = [0.0] * (len(law) + len(part) - 1)
        for i, a in enumerate(law):
            for j, b in enumerate(part):
                merged[i + j] += a * b
        law = merged
    return hits, min(1.0, max(0.0, sum(law[hits:])))


def _uniformity(offsets: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """Chi-square of offsets (K, offset) against uniform over 1..K-1, pooled over K."""
    statistic, dof, n = 0.0, 0, 0
    by_k: dict[int, Counter[int]] = {}
    for k, offset in offsets:
        by_k.setdefault(k, Counter())[offset] += 1
    for k, counts in sorted(by_k.items()):
        total = sum(counts.values())
        if k < 3:
            continue  # one possible offset: nothing to test
        expected = total / (k - 1)
        statistic += sum((counts[o] - expected) ** 2 / expected for o in range(1, k))
        dof += k - 2
        n += total
    return {
        "tasks": n,
        "chi_square": round(statistic, 6),
        "dof": dof,
        "p_value": chi_square_sf(statistic, dof) if dof else 1.0,
        "counts": {str(k): {str(o): c[o] for o in range(k)} for k, c in sorted(by_k.items())},
    }


def _mcnemar_p(report: Mapping[str, Any]) -> float:
    """The intersection-union p of a claim: both differences positive, the larger p."""
    drop, flip = report["shuffle_drop"], report["counterfactual_flip"]
    if not (drop["difference"]["value"] or 0) > 0 or not (flip["difference"]["value"] or 0) > 0:
        return 1.0
    return float(max(drop["mcnemar"]["p_value"], flip["mcnemar"]["p_value"]))


def _directory_attacks(
    directory: str,
    tasks: Mapping[str, Sequence[Task]],
    labels: Mapping[str, Mapping[str, LabelFacts]],
    bases: Mapping[str, str],
    seed: int | None,
) -> tuple[dict[str, Any], list[tuple[str, float]]]:
    """The block of one directory and its (name, p) tests."""
    from chemgauge.families.p2s.claim import claim_statistics  # claim imports scoring

    correct = list(tasks.get("correct", ()))
    shuffled = list(tasks.get("shuffled", ()))
    cf = [t for t in tasks.get("counterfactual", ()) if labels["counterfactual"][t.record_id]
          .source_label is not None]  # fmt: skip
    block: dict[str, Any] = {"counterfactual_tasks": len(cf)}
    tests: list[tuple[str, float]] = []
    if not cf:
        return block, tests
    cf_labels = labels["counterfactual"]
    ks = [len(t.candidates) for t in cf]
    offsets = []
    for task, k in zip(cf, ks, strict=True):
        fact = cf_labels[task.record_id]
        assert fact.source_label is not None
        offsets.append((k, (fact.label - fact.source_label) % k))
    block["offset_uniformity"] = _uniformity(offsets)
    tests.append(
        (f"{directory}: counterfactual offset uniformity", block["offset_uniformity"]["p_value"])
    )
    ordinals = _ordinals(directory, cf, bases, seed)
    max_k = max(ks)
    rules: dict[str, Any] = {}
    for scheme in _ORDINALS:
        for shift in range(1, max_k):
            groups: dict[str, list[tuple[int, int, int]]] = {}
            for task, k in zip(cf, ks, strict=True):
                fact = cf_labels[task.record_id]
                assert fact.source_label is not None
                target = (shift + ordinals[scheme][task.record_id]) % k
                offset = (fact.label - fact.source_label) % k
                groups.setdefault(fact.base_record_id or task.record_id, []).append(
                    (k, target, offset)
                )
            hits, p = _rule_p(list(groups.values()))
            name = f"answer+{shift}+{scheme}"
            rules[name] = {"hits": hits, "tasks": len(cf), "p_value": p}
            tests.append((f"{directory}: rule label = {name} ordinal", p))
    block["answer_rules"] = rules
    # the claim attacks: the structural prior, shifted per view by public rules
    prior = _prior([*correct, *cf])
    by_id = {t.record_id: t for t in correct}
    ids = [t.record_id for t in correct if t.record_id in {s.record_id for s in shuffled}]
    truth = labels["correct"]
    correct_pick = {r: prior[(by_id[r].masked_smiles, by_id[r].candidates)] for r in ids}
    correct_hits = [correct_pick[r] == truth[r].label for r in ids]
    shuffled_hits = [
        correct_pick[r] is not None
        and (correct_pick[r] + 1) % len(by_id[r].candidates) == labels["shuffled"][r].label  # type: ignore[operator]
        for r in ids
    ]
    claims: dict[str, Any] = {}
    for scheme in _ORDINALS:
        for shift in range(0, max_k):
            if shift == 0 and scheme != "none":
                continue
            flips, base_picks = [], []
            for task, k in zip(cf, ks, strict=True):
                fact = cf_labels[task.record_id]
                pick = prior[(task.masked_smiles, task.candidates)]
                base = fact.base_record_id
                base_pick = correct_pick.get(base) if base is not None else None
                moved = (
                    None if pick is None else (pick + shift + ordinals[scheme][task.record_id]) % k
                )
                flips.append(moved == fact.label)
                base_picks.append(base_pick == fact.label)
            stats = claim_statistics(correct_hits, shuffled_hits, flips, base_picks, _CLAIM)
            p = _mcnemar_p(stats)
            name = f"prior+{shift}+{scheme}"
            claims[name] = {
                "use_claim": stats["use_claim"],
                "shuffle_drop_p": stats["shuffle_drop"]["mcnemar"]["p_value"],
                "flip_p": stats["counterfactual_flip"]["mcnemar"]["p_value"],
                "flip_rate": stats["counterfactual_flip"]["flip_rate"]["value"],
                "p_value": p,
            }
            tests.append((f"{directory}: claim attack {name} (shuffled answered wrong)", p))
    block["claim_attacks"] = claims
    return block, tests


def public_attacks(
    views: Mapping[
        str, tuple[Mapping[str, Sequence[Task]], Mapping[str, Mapping[str, LabelFacts]]]
    ],
    bases: Mapping[str, Mapping[str, str]],
    seed: int | None,
    alpha: float,
) -> dict[str, Any]:
    """Every public-knowledge test of a release (``views``: directory -> (tasks by view,
    labels by view); ``bases``: directory -> counterfactual id -> base id as the task files
    link them), Holm-adjusted as one family; ``passed`` and the failures listed."""
    blocks: dict[str, Any] = {}
    family: list[tuple[str, float]] = []
    for directory, (tasks, labels) in views.items():
        block, tests = _directory_attacks(directory, tasks, labels, bases.get(directory, {}), seed)
        blocks[directory] = block
        family.extend(tests)
    adjusted = holm_adjust([p for _, p in family])
    failures = [
        f"{name}: p={p:.3g}, Holm p={holm:.3g}"
        for (name, p), holm in zip(family, adjusted, strict=True)
        if holm < alpha
    ]
    earned = [
        f"{d}: {name}"
        for d, block in blocks.items()
        for name, attack in block.get("claim_attacks", {}).items()
        if attack["use_claim"]
    ]
    return {
        "alpha": alpha,
        "tests": len(family),
        "passed": not failures,
        "failures": failures,
        "claim_attacks_with_unadjusted_use_claim": earned,
        "directories": blocks,
    }
