"""Chemical checks of loaded p2s views: candidates parse, are distinct structures, fit the mask.

The structural checks (keys, labels, view agreement) run in ``taskfile`` with the standard
library; these need RDKit, through ``chemgauge.chem``.
"""

from __future__ import annotations

from chemgauge.chem import describe_parse_failure, try_canonical_smiles
from chemgauge.chem.fragments import canonical_fragment, completes_scaffold
from chemgauge.errors import InputFileError, SmilesError
from chemgauge.families.p2s.taskfile import Task, ViewData

__all__ = ["check_candidates", "check_view"]


def check_candidates(task: Task, path: str) -> None:
    """Raise :class:`InputFileError` unless every candidate is a valid, distinct completion."""
    try:
        canonical_fragment(task.masked_smiles)
    except SmilesError as exc:
        raise InputFileError(
            f"masked_smiles: {exc.reason}", path=path, line=task.line, value=task.masked_smiles
        ) from None
    keys: dict[str, int] = {}
    for index, smiles in enumerate(task.candidates):
        key = try_canonical_smiles(smiles)
        if key is None:
            raise InputFileError(
                f"candidate {index}: {describe_parse_failure(smiles)}",
                path=path,
                line=task.line,
                value=smiles,
            )
        if key in keys:
            raise InputFileError(
                f"candidates {keys[key]} and {index} are the same structure",
                path=path,
                line=task.line,
                value=smiles,
            )
        keys[key] = index
        if not completes_scaffold(task.masked_smiles, smiles):
            raise InputFileError(
                f"candidate {index} does not complete the masked scaffold",
                path=path,
                line=task.line,
                value=smiles,
            )


def check_view(view: ViewData, checked: set[tuple[str, tuple[str, ...]]] | None = None) -> int:
    """Check every task of a view; returns how many distinct candidate lists were checked.

    ``checked`` carries (masked SMILES, candidates) pairs already checked in other views,
    since the three views of a directory share them.
    """
    seen = checked if checked is not None else set()
    done = 0
    for task in view.tasks:
        key = (task.masked_smiles, task.candidates)
        if key in seen:
            continue
        check_candidates(task, str(view.task_path))
        seen.add(key)
        done += 1
    return done
