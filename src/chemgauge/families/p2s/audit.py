"""Shortcut audit of a p2s release: can a task be answered without reading the property?

The attack runs first and reads task files only (:func:`attack_directory`): every strategy of
:mod:`~chemgauge.families.p2s.shortcuts` picks a candidate per task, or abstains. Only
then are the labels read and each strategy scored per view on the tasks it answered:
accuracy against chance (the mean of 1/K over those tasks) with a one-sided exact binomial
p-value (Poisson-binomial when K varies). The leak and tell tests of the whole release form
one Holm family; a strategy *beats chance* when its Holm-adjusted p is below ``alpha``.

The ``structure_only`` baseline is scored beside them as the structural prior (which
completion is chemically likelier). It may beat chance, since the shuffled and
counterfactual views exist to control for it, and it never fails an audit by itself; the
public-knowledge attacks of :mod:`.publicattack` combine it with every rule a system could
read (file order, ids, the published seed, the view) and run each through the claim's
statistics, and any that wins fails the audit. The release itself is checked too
(:mod:`.release`): one id format in every view, no counterfactual id the published seed
rebuilds, and no file beside the release that holds a candidate SMILES.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from chemgauge.errors import InputFileError
from chemgauge.eval.stats import binomial_test_greater, holm_adjust, poisson_binomial_greater
from chemgauge.families.p2s.engine.models import StructureOnlyBaseline
from chemgauge.families.p2s.publicattack import LabelFacts, public_attacks
from chemgauge.families.p2s.release import (  # MANIFEST: build.py reads it here
    MANIFEST,
    id_problems,
    release_files,
    replayable_ids,
    stray_answer_files,
)
from chemgauge.families.p2s.selection import SelectionConfig
from chemgauge.families.p2s.shortcuts import STRATEGIES, StrategyContext
from chemgauge.families.p2s.spec import CONDITIONS, PROPERTY_DIRECTORIES
from chemgauge.families.p2s.taskfile import (
    Task,
    iter_objects,
    load_directory,
    parse_task,
    present_directories,
    tasks_path,
)

__all__ = [
    "AUDIT_SCHEME_VERSION",
    "Attack",
    "attack_directory",
    "attack_views",
    "audit_dataset",
    "format_audit",
    "published_selection",
    "release_attacks",
    "score_attack",
]

AUDIT_SCHEME_VERSION = 2  # 2: public-knowledge attacks and release checks
PRIOR = "structure_only"

Picks = list[int | None]


@dataclass(frozen=True)
class Attack:
    """Every strategy's picks on one view, made without its labels."""

    directory: str
    condition: str
    record_ids: tuple[str, ...]
    candidates: tuple[int, ...]
    picks: dict[str, Picks]


def _base_ids(correct: Sequence[Task], tasks: Sequence[Task]) -> dict[str, str]:
    """Counterfactual task -> the correct-view record with the same masked graph and
    candidates (what anyone can link from the task files alone)."""
    by_graph: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for task in correct:
        by_graph.setdefault((task.masked_smiles, task.candidates), []).append(task.record_id)
    out = {}
    for task in tasks:
        found = by_graph.get((task.masked_smiles, task.candidates), [])
        if len(found) == 1:
            out[task.record_id] = found[0]
    return out


def _prior(tasks: Sequence[Task]) -> Picks:
    model = StructureOnlyBaseline()
    answers = model.predict([{**t.to_json(), "properties": {}} for t in tasks])
    return [a.get("selected_candidate_index") for a in answers]


def attack_views(
    directory: str,
    views: Mapping[str, Sequence[Task]],
    selection: SelectionConfig | None = None,
    only: Sequence[str] | None = None,
) -> list[Attack]:
    """Run every strategy on the tasks of a directory's views (no labels involved);
    ``selection`` (the build's seed and settings) lets the selection be replayed; ``only``
    limits the attack to those views (the counterfactual one reads the correct view's ids)."""
    correct = views.get("correct", ())
    out = []
    for condition in CONDITIONS:
        if condition not in views or (only is not None and condition not in only):
            continue
        tasks = views[condition]
        base = _base_ids(correct, tasks) if condition == "counterfactual" else {}
        context = StrategyContext(directory, base, selection)
        picks = {s.name: s.pick(tasks, context) for s in STRATEGIES}
        picks[PRIOR] = _prior(tasks)
        out.append(
            Attack(
                directory,
                condition,
                tuple(t.record_id for t in tasks),
                tuple(len(t.candidates) for t in tasks),
                picks,
            )
        )
    return out


def _read_tasks(data_dir: Path, directory: str, condition: str) -> list[Task]:
    path = tasks_path(data_dir, directory, condition)
    tasks = []
    for number, text, obj in iter_objects(path):
        task, problem = parse_task(directory, obj, number)
        if task is None:
            raise InputFileError(problem, path=path, line=number, value=text)
        tasks.append(task)
    return tasks


def attack_directory(
    data_dir: str | Path, directory: str, selection: SelectionConfig | None = None
) -> list[Attack]:
    """Read one directory's task files (never its label files) and attack every view."""
    root = Path(data_dir)
    views = {c: _read_tasks(root, directory, c) for c in CONDITIONS}
    return attack_views(directory, views, selection)


def published_selection(data_dir: str | Path) -> SelectionConfig | None:
    """The selection settings a release's build manifest publishes (seed included), if any."""
    path = Path(data_dir) / MANIFEST
    if not path.is_file():
        return None
    try:
        config = json.loads(path.read_text(encoding="utf-8")).get("config", {})
        return SelectionConfig(
            candidates=int(config["candidates"]),
            seed=int(config["seed"]),
            min_scaffold_heavy_atoms=int(config["min_scaffold_heavy_atoms"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _test(picks: Picks, labels: Sequence[int], candidates: Sequence[int]) -> dict[str, Any]:
    decided = [i for i, p in enumerate(picks) if p is not None]
    hits = sum(1 for i in decided if picks[i] == labels[i])
    ks = [candidates[i] for i in decided]
    chance = sum(1 / k for k in ks) / len(ks) if ks else None
    if not ks:
        p_value = 1.0
    elif len(set(ks)) == 1:
        p_value = binomial_test_greater(hits, len(ks), Fraction(1, ks[0]))
    else:
        p_value = poisson_binomial_greater(hits, [1 / k for k in ks])
    return {
        "decided": len(decided),
        "hits": hits,
        "accuracy": hits / len(decided) if decided else None,
        "chance": chance,
        "p_value": p_value,
    }


def score_attack(
    attacks: Iterable[Attack], labels: Mapping[str, Mapping[str, int]], alpha: float = 0.05
) -> dict[str, Any]:
    """Score attacks against labels (``"<dir>/<condition>" -> record id -> label``).

    Returns the audit block: per view the tasks, chance and every strategy's test, the
    structural prior apart, and ``passed`` with the failures listed.
    """
    kinds = {s.name: s.kind for s in STRATEGIES}
    views: dict[str, Any] = {}
    family: list[tuple[str, str]] = []
    for attack in attacks:
        name = f"{attack.directory}/{attack.condition}"
        wanted = labels[name]
        truth = [wanted[r] for r in attack.record_ids]
        block: dict[str, Any] = {
            "tasks": len(truth),
            "chance": sum(1 / k for k in attack.candidates) / len(truth) if truth else None,
            "leaks": {},
            "tells": {},
        }
        for strategy, picks in attack.picks.items():
            test = _test(picks, truth, attack.candidates)
            if strategy == PRIOR:
                block["structural_prior"] = {"model": PRIOR, **test}
                continue
            block["leaks" if kinds[strategy] == "leak" else "tells"][strategy] = test
            if test["decided"]:
                family.append((name, strategy))
        views[name] = block
    adjusted = holm_adjust([_find(views, v, s)["p_value"] for v, s in family])
    failures = []
    for (view, strategy), holm in zip(family, adjusted, strict=True):
        test = _find(views, view, strategy)
        test["holm_p"] = holm
        beats = holm < alpha and (test["accuracy"] or 0) > (test["chance"] or 1)
        test["beats_chance"] = beats
        if beats:
            failures.append(
                f"{view}: {kinds[strategy]} {strategy} {100 * test['accuracy']:.1f}% of "
                f"{test['decided']} (chance {100 * test['chance']:.1f}%), Holm p={holm:.3g}"
            )
    for block in views.values():
        for kind in ("leaks", "tells"):
            for test in block[kind].values():
                test.setdefault("holm_p", None)
                test.setdefault("beats_chance", False)
    return {
        "audit_scheme_version": AUDIT_SCHEME_VERSION,
        "alpha": alpha,
        "tests": len(family),
        "passed": not failures,
        "failures": failures,
        "views": views,
    }


def _find(views: Mapping[str, Any], view: str, strategy: str) -> dict[str, Any]:
    block = views[view]
    found: dict[str, Any] = block["leaks"].get(strategy) or block["tells"][strategy]
    return found


def release_attacks(
    tasks: Mapping[str, Mapping[str, Sequence[Task]]],
    labels: Mapping[str, Mapping[str, Mapping[str, LabelFacts]]],
    seed: int | None,
    alpha: float,
    root: Path | None = None,
    allowed: Iterable[str] = (),
) -> dict[str, Any]:
    """The public-knowledge attacks and the release checks of a release (``tasks`` and
    ``labels`` by directory, then view); ``root``: the folder to scan for stray files, where
    the view files of the ``allowed`` directories (and the manifest) are the release."""
    bases = {
        d: _base_ids(views.get("correct", ()), views.get("counterfactual", ()))
        for d, views in tasks.items()
    }
    public = public_attacks({d: (tasks[d], labels[d]) for d in tasks}, bases, seed, alpha)
    problems = id_problems(
        {
            f"{d}/{c}": [t.record_id for t in ts]
            for d, views in tasks.items()
            for c, ts in views.items()
        }
    )
    for directory, views in tasks.items():
        problems += replayable_ids(
            directory, views.get("counterfactual", ()), bases[directory], seed
        )
    if root is not None:
        candidates = {
            c for views in tasks.values() for ts in views.values() for t in ts for c in t.candidates
        }
        problems += stray_answer_files(root, release_files([*tasks, *allowed]), candidates)
    return {"public_knowledge": public, "release": {"problems": problems, "passed": not problems}}


def merge_release_attacks(report: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """The audit report with the public-knowledge and release blocks folded in."""
    report.update(extra)
    report["failures"] = [
        *report["failures"],
        *(f"release: {p}" for p in extra["release"]["problems"]),
        *(f"public knowledge: {f}" for f in extra["public_knowledge"]["failures"]),
    ]
    report["passed"] = not report["failures"]
    return report


def published_seed(data_dir: str | Path) -> int | None:
    """The seed a release's build manifest publishes, if any."""
    chosen = published_selection(data_dir)
    return None if chosen is None else chosen.seed


def audit_dataset(data_dir: str | Path, alpha: float = 0.05) -> dict[str, Any]:
    """Attack every directory of a released data folder from its task files, then score.

    A build manifest beside the directories lends its seed to the selection replay and to
    the public-knowledge attacks; every file in the folder is checked for answers.
    """
    root, present = present_directories(data_dir)
    selection = published_selection(root)
    attacks = [a for d in present for a in attack_directory(root, d, selection)]
    labels: dict[str, dict[str, int]] = {}
    tasks: dict[str, dict[str, list[Task]]] = {}
    facts: dict[str, dict[str, dict[str, LabelFacts]]] = {}
    for directory in present:
        loaded = load_directory(root, directory)
        tasks[directory] = {c: list(v.tasks) for c, v in loaded.items()}
        facts[directory] = {
            c: {
                r: LabelFacts(lab.label, lab.base_record_id, lab.source_label)
                for r, lab in v.labels.items()
            }
            for c, v in loaded.items()
        }
        for condition, view in loaded.items():
            labels[f"{directory}/{condition}"] = {r: lab.label for r, lab in view.labels.items()}
    report = score_attack(attacks, labels, alpha)
    seed = None if selection is None else selection.seed
    extra = release_attacks(tasks, facts, seed, alpha, root, PROPERTY_DIRECTORIES)
    return merge_release_attacks(report, extra)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def format_audit(report: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """Table rows: view, kind, strategy, answered, accuracy, chance, p, Holm p, verdict."""
    rows: list[tuple[str, ...]] = []
    for view, block in report["views"].items():
        for kind in ("leaks", "tells"):
            for name, test in block[kind].items():
                if not test["decided"]:
                    continue
                rows.append(
                    (
                        view,
                        kind[:-1],
                        name,
                        f"{test['decided']}/{block['tasks']}",
                        _pct(test["accuracy"]),
                        _pct(test["chance"]),
                        f"{test['p_value']:.3g}",
                        f"{test['holm_p']:.3g}",
                        "BEATS CHANCE" if test["beats_chance"] else "ok",
                    )
                )
        prior = block.get("structural_prior")
        if prior is not None:
            rows.append(
                (
                    view,
                    "prior",
                    prior["model"],
                    f"{prior['decided']}/{block['tasks']}",
                    _pct(prior["accuracy"]),
                    _pct(prior["chance"]),
                    f"{prior['p_value']:.3g}",
                    "-",
                    "(structural prior)",
                )
            )
    return rows
