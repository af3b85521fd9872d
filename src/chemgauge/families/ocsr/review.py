"""Re-score the 2020 OCSR review's shipped tool outputs (JPO, UOB, CLEF) under every policy.

Rajan, Zielesny and Steinbeck (J. Cheminform. 12, 60, 2020) published one molfile per image
per tool and counted standard-InChI equality. Reading their archives directly (no copy, no
extraction) and scoring with :mod:`chemgauge.families.ocsr.scoring` reproduces the
published JPO and UOB counts under ``legacy`` and reports the strict policies beside them.
"""

from __future__ import annotations

import tarfile
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from chemgauge.errors import InputFileError
from chemgauge.families.ocsr.scoring import (
    MATCH,
    POLICIES,
    GraphKeys,
    compare_keys,
    text_keys,
)

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["PUBLISHED_COUNTS", "ReviewScore", "iter_tar_molfiles", "rescore_review"]

#: Exact-match counts published in the review (standard InChI equality).
PUBLISHED_COUNTS: dict[str, dict[str, int]] = {
    "JPO": {"osra": 260, "molvec": 300, "imago": 180},
    "UOB": {"osra": 4965, "molvec": 5055, "imago": 3647},
    "CLEF": {"osra": 912, "molvec": 778, "imago": 629},
}
_TOOL_NAMES = {"osra": "osra", "molvec_15092020": "molvec", "imago": "imago"}
_SUFFIXES = (".mol", ".sdf")


def _open_tar(path: str | Path) -> tarfile.TarFile:
    try:
        return tarfile.open(path, "r:*")
    except (OSError, tarfile.TarError) as exc:
        raise InputFileError(f"cannot read tar archive ({exc})", path=path) from exc


def iter_tar_molfiles(path: str | Path) -> Iterator[tuple[str, str, str]]:
    """Yield (folder name, file stem, text) for every molfile/SDF member of a tar archive."""
    with _open_tar(path) as archive:
        for member in archive:
            name = PurePosixPath(member.name)
            if not member.isfile() or name.suffix.lower() not in _SUFFIXES:
                continue
            handle = archive.extractfile(member)
            if handle is None:
                continue
            text = handle.read().decode("utf-8", errors="replace")
            yield name.parent.name, name.stem, text


@dataclass
class ReviewScore:
    """Matches per tool and policy over one data set's references (one denominator)."""

    dataset: str
    references: int = 0
    unreadable_references: int = 0
    unsupported_references: int = 0
    matches: dict[str, dict[str, int]] = field(default_factory=dict)
    missing_outputs: dict[str, int] = field(default_factory=dict)
    unreadable_outputs: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping with the published counts alongside."""
        return {
            "dataset": self.dataset,
            "references": self.references,
            "unreadable_references": self.unreadable_references,
            "unsupported_references": self.unsupported_references,
            "matches": {t: dict(sorted(p.items())) for t, p in sorted(self.matches.items())},
            "missing_outputs": dict(sorted(self.missing_outputs.items())),
            "unreadable_outputs": dict(sorted(self.unreadable_outputs.items())),
            "published_legacy": PUBLISHED_COUNTS.get(self.dataset, {}),
        }


def _keys_from_text(text: str, policies: tuple[str, ...]) -> tuple[GraphKeys, bool]:
    keys, reading = text_keys(text, "molfile", policies)
    return keys, reading.accepted


def rescore_review(
    dataset: str,
    reference_tar: str | Path,
    results_tar: str | Path,
    *,
    policies: tuple[str, ...] = POLICIES,
) -> ReviewScore:
    """Score every tool's output against every reference; a missing output is a miss."""
    score = ReviewScore(dataset)
    references: dict[str, GraphKeys] = {}
    for _, stem, text in iter_tar_molfiles(reference_tar):
        keys, accepted = _keys_from_text(text, policies)
        references[stem] = keys
        score.unreadable_references += not accepted
        score.unsupported_references += bool(keys.unsupported)
    score.references = len(references)
    outputs: dict[str, dict[str, GraphKeys]] = {}
    unreadable: Counter[str] = Counter()
    for folder, stem, text in iter_tar_molfiles(results_tar):
        tool = _TOOL_NAMES.get(folder, folder)
        if stem not in references:
            continue
        keys, accepted = _keys_from_text(text, policies)
        outputs.setdefault(tool, {})[stem] = keys
        unreadable[tool] += not accepted
    for tool, by_stem in sorted(outputs.items()):
        counts = dict.fromkeys(policies, 0)
        for stem, ref_keys in references.items():
            verdicts = compare_keys(ref_keys, by_stem.get(stem))
            for policy, verdict in verdicts.items():
                counts[policy] += verdict == MATCH
        score.matches[tool] = counts
        score.missing_outputs[tool] = len(references) - len(by_stem)
        score.unreadable_outputs[tool] = unreadable[tool]
    return score


def review_table(result: Mapping[str, Any]) -> Table:
    """The re-scored review as one summary table: matches per recognizer under each policy,
    the published (legacy) count beside, and what could not be read."""
    from chemgauge.cli.summary import summary_table

    policies = sorted(next(iter(result["matches"].values()), {}))
    published = result.get("published_legacy") or {}
    rows = []
    for system, matches in sorted(result["matches"].items()):
        rows.append(
            [
                system,
                *(f"{matches[p]:,}" for p in policies),
                f"{published[system]:,}" if system in published else "n/a",
                f"{result['unreadable_outputs'].get(system, 0):,}",
                f"{result['missing_outputs'].get(system, 0):,}",
            ]
        )
    return summary_table(
        f"ocsr review ({result['dataset']}): {result['references']:,} references",
        ["recognizer", *policies, "published (legacy)", "unreadable", "missing"],
        rows,
        caption=(
            f"{result['unreadable_references']:,} unreadable and "
            f"{result['unsupported_references']:,} unsupported references"
        ),
    )
