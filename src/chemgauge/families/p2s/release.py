"""What a p2s release may hold, and the checks that refuse anything else.

A release is what a system under test may be handed: the build manifest and, per property
directory, the task and label files of the three views (the seed's layout). Nothing else
beside them may know an answer: a source list, per-record provenance, the property journal
or the build secret would let a system pick the candidate that appears in it. Those live in
the build's *private* folder (``<out>.private`` unless told), which is never released.

Every record id of every view has one format, ``p2s-`` and 16 hex digits (what
:func:`~chemgauge.families.p2s.selection.record_id` writes), so an id says nothing about its
view; a counterfactual id that can be rebuilt from what the manifest publishes (the seed)
would carry its ordinal, and is refused as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from chemgauge.chem import try_canonical_smiles
from chemgauge.families.p2s.selection import counterfactual_id
from chemgauge.families.p2s.spec import CONDITIONS

__all__ = [
    "ID_PATTERN",
    "MANIFEST",
    "SECRET_FILE",
    "id_problems",
    "private_dir",
    "release_files",
    "replayable_ids",
    "stray_answer_files",
]

MANIFEST = "build_manifest.json"
SECRET_FILE = "build_secret"
ID_PATTERN = re.compile(r"^p2s-[0-9a-f]{16}$")

# A file larger than this is read only this far (a source list holds its SMILES early).
_READ_LIMIT = 64 << 20
# Distinct tokens of one file that are canonicalized to catch another spelling of a candidate.
_CANONICALIZE_LIMIT = 20_000
_TOKEN_SPLIT = re.compile(r'[\s",;\\]+')


def private_dir(out: str | Path) -> Path:
    """Where a build keeps what must not ship: ``<out>.private`` beside the release."""
    path = Path(out)
    return path.with_name(path.name + ".private")


def release_files(directories: Iterable[str]) -> set[str]:
    """The relative paths a release of these directories consists of."""
    names = {MANIFEST}
    for directory in directories:
        for condition in CONDITIONS:
            names.add(f"{directory}/{condition}.jsonl")
            names.add(f"{directory}/{condition}.labels.jsonl")
    return names


def _tokens(text: str) -> set[str]:
    return {t for t in _TOKEN_SPLIT.split(text) if t}


def stray_answer_files(root: str | Path, allowed: set[str], candidates: set[str]) -> list[str]:
    """Files under ``root`` outside the release that hold a candidate SMILES (by spelling or
    by canonical form), as ``path: SMILES`` problems; an unreadable file counts as one."""
    base = Path(root)
    if not base.is_dir():
        return []
    problems = []
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        relative = path.relative_to(base).as_posix()
        if relative in allowed:
            continue
        try:
            with path.open("rb") as handle:
                text = handle.read(_READ_LIMIT).decode("utf-8", "replace")
        except OSError as exc:
            problems.append(f"{relative}: unreadable ({exc.strerror})")
            continue
        tokens = _tokens(text)
        found = sorted(tokens & candidates)
        if not found:
            for token in sorted(tokens)[:_CANONICALIZE_LIMIT]:
                key = try_canonical_smiles(token) if len(token) > 1 else None
                if key is not None and key in candidates:
                    found = [token]
                    break
        if found:
            problems.append(f"{relative} holds candidate {found[0]!r}")
    return problems


def id_problems(ids: Mapping[str, Sequence[str]]) -> list[str]:
    """Views (``"<dir>/<condition>" -> ids``) with an id outside the one shared format."""
    problems = []
    for view, found in ids.items():
        odd = [r for r in found if not ID_PATTERN.match(r)]
        if odd:
            problems.append(
                f"{view}: {len(odd)} record id(s) not in the p2s-<16 hex> format of every "
                f"view, e.g. {odd[0]!r}"
            )
    return problems


def replayable_ids(
    directory: str,
    counterfactual: Sequence[Any],
    base_ids: Mapping[str, str],
    seed: int | None,
    max_ordinal: int = 8,
) -> list[str]:
    """Counterfactual ids that the published seed rebuilds (their ordinal is then public)."""
    if seed is None:
        return []
    hits = []
    for task in counterfactual:
        base = base_ids.get(task.record_id)
        if base is None:
            continue
        for ordinal in range(max_ordinal):
            if counterfactual_id(str(seed), directory, base, ordinal) == task.record_id:
                hits.append(task.record_id)
                break
            if _legacy_id(seed, directory, base, ordinal) == task.record_id:
                hits.append(task.record_id)
                break
    if not hits:
        return []
    return [
        f"{directory}/counterfactual: {len(hits)} id(s) rebuilt from the published seed "
        f"(their ordinal is public), e.g. {hits[0]!r}"
    ]


def _legacy_id(seed: int, directory: str, base: str, ordinal: int) -> str:
    """The counterfactual id of id scheme 2 (seed, not secret): what older releases used."""
    from chemgauge.families.p2s.selection import seeded_hash

    return "p2s-" + seeded_hash(2, seed, "counterfactual", directory, base, ordinal)[:16]


def canonical_candidates(tasks: Iterable[Any]) -> set[str]:
    """Every candidate SMILES of the tasks (as written; builds write them canonical)."""
    return {c for task in tasks for c in task.candidates}
