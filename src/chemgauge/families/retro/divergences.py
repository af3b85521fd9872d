"""Where chemgauge's ``syntheseus`` convention and syntheseus's own evaluator part, and how
often each way did in this run.

Every row carries syntheseus's own verdict (``row["syntheseus"]``, from
:mod:`~chemgauge.families.retro.syntheseus_verdict`) beside chemgauge's, and the ids of the
divergences that apply to it (``row["syntheseus_divergences"]``). :class:`DivergenceTally`
counts, per divergence, the targets it applies to and the targets whose numbers it changed
(best rank under ``exact``, under the stereo view when asked for, or the prediction count
differs between the two); a changed target no listed divergence applies to is counted as
``unexplained`` (a bug if ever non-zero).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chemgauge.families.retro.scoring import ScoreSettings

__all__ = ["SYNTHESEUS_DIVERGENCES", "DivergenceTally", "applying_divergences"]

#: Every way chemgauge's ``syntheseus`` convention deliberately differs from syntheseus's own
#: code, by id (each has a test in ``tests/families/retro/test_divergences.py``).
SYNTHESEUS_DIVERGENCES: dict[str, str] = {
    "empty_output": "an empty output or empty component ('', 'A..B', 'A.') is invalid; "
    "syntheseus parses it as an empty molecule, which holds a rank",
    "whitespace_in_output": "an output component with text after whitespace ('CC O') is "
    "invalid (reason 'whitespace'); syntheseus, through RDKit, drops the text after the "
    "whitespace and scores 'CC'",
    "atom_maps_in_outputs": "atom-map numbers in outputs are ignored, for correctness and for "
    "repeats; syntheseus compares mapped SMILES as written, so a mapped correct answer is "
    "wrong there and not a repeat of its unmapped spelling",
    "atom_maps_in_jsonl_truth": "atom maps in JSONL data are removed, as in CSV and SMI data; "
    "syntheseus keeps them in JSONL data (it assumes JSONL is unmapped), where no unmapped "
    "output can match",
    "dot_in_jsonl_entry": "a JSONL reactant or product entry holding several molecules "
    "({'smiles': 'A.B'}) is split into its molecules; syntheseus keeps it as one molecule, "
    "which no output (always split on '.') can equal",
    "stereo_ignored_keeps_isotopes": "stereo_ignored keeps isotopes and flattens stereo "
    "structurally; syntheseus's include_results_modulo_stereo writes non-isomeric SMILES, "
    "dropping isotopes too",
    "outputs_beyond_num_top_results": "outputs beyond num_top_results are cut and counted; "
    "syntheseus raises after the model call, losing the run, when more than num_top_results "
    "of them survive its filtering",
    "unreadable_data_lines": "a data line that is no reaction, has an unparsable side or "
    "several products is rejected, counted and named, and blank lines are skipped; syntheseus "
    "stops the run with an exception",
    "failed_model_calls": "a model call that raises is retried product by product and the "
    "products that still fail are misses with status model_error; syntheseus stops the run",
    "dummy_atoms_in_outputs": "an output component with a dummy atom ('*', '[1*]', "
    "'[*:1]C': a placeholder, not a reactant anyone can buy) is invalid (reason "
    "'dummy_atom'); syntheseus parses and scores it",
    "size_limits": "a component over the structure limits (--max-atoms, --max-smiles-chars, "
    "--max-rings, --max-fragments) is invalid; syntheseus parses it",
}


#: Divergences that stop syntheseus's run rather than change a target's numbers.
RUN_STOPPING = ("unreadable_data_lines", "failed_model_calls", "outputs_beyond_num_top_results")

_ATOM_MAP = re.compile(r":\d+\]")
_ISOTOPE = re.compile(r"\[\d")
_SIZE = frozenset({"too_long", "too_many_atoms", "too_many_rings", "too_many_fragments"})


def applying_divergences(
    row: Mapping[str, Any],
    outputs: Sequence[str],
    settings: ScoreSettings,
) -> list[str]:
    """Ids of the listed divergences that apply to one scored target, in list order."""
    reasons = set(row["invalid_reasons"])
    theirs = row.get("syntheseus_reactants")
    found = set()
    if reasons & {"empty", "empty_component"}:
        found.add("empty_output")
    if "whitespace" in reasons:
        found.add("whitespace_in_output")
    if reasons & _SIZE:
        found.add("size_limits")
    if "dummy_atom" in reasons:
        found.add("dummy_atoms_in_outputs")
    joined = "\n".join(outputs)
    if ":" in joined and _ATOM_MAP.search(joined):
        found.add("atom_maps_in_outputs")
    if theirs is None:
        found.add("unreadable_data_lines")
    else:
        if any(_ATOM_MAP.search(t) for t in theirs):
            found.add("atom_maps_in_jsonl_truth")
        if any("." in t for t in theirs):
            found.add("dot_in_jsonl_entry")
    if settings.syntheseus_stereo and (
        _ISOTOPE.search(joined) or any(_ISOTOPE.search(t) for t in row["reactants"])
    ):
        found.add("stereo_ignored_keeps_isotopes")
    if row["n_returned"] > row["n_outputs"]:
        found.add("outputs_beyond_num_top_results")
    # a verdict that differs for none of these reasons (RDKit spelling one molecule two ways
    # across passes: chemgauge keys are fixed points, syntheseus canonicalizes once) is
    # counted as unexplained
    return [d for d in SYNTHESEUS_DIVERGENCES if d in found]


def _ours(row: Mapping[str, Any], convention: str, stereo: bool) -> tuple[Any, ...]:
    hits = row.get("hits")
    if not hits:
        return (None, None if stereo else 0, 0)
    mine = hits[convention]
    if convention == "syntheseus":
        n = row["n_valid_unique"]
    else:
        n = row["n_outputs"] - len(row["invalid_ranks"])
    return (mine["exact"], mine.get("stereo_ignored") if stereo else 0, n)


def _theirs(row: Mapping[str, Any], stereo: bool) -> tuple[Any, ...]:
    verdict = row.get("syntheseus")
    if not verdict:
        return (None, None if stereo else 0, 0)
    return (verdict["exact"], verdict.get("stereo") if stereo else 0, verdict["n"])


class DivergenceTally:
    """Per divergence, targets it applies to and targets whose numbers it changed."""

    def __init__(self, convention: str, stereo: bool) -> None:
        self.convention = convention
        self.stereo = stereo
        self.applies: Counter[str] = Counter()
        self.changed: Counter[str] = Counter()
        self.targets_changed = 0
        self.unexplained = 0
        self.model_errors = 0

    def add(self, row: Mapping[str, Any]) -> None:
        """Fold one row in."""
        if row["status"] == "model_error":
            self.model_errors += 1
        ids = row.get("syntheseus_divergences") or ()
        self.applies.update(ids)
        if _ours(row, self.convention, self.stereo) == _theirs(row, self.stereo):
            return
        self.targets_changed += 1
        self.changed.update(ids)
        if not ids:
            self.unexplained += 1

    def result(self, rejected_lines: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The report's ``divergences_from_syntheseus`` list and its ``syntheseus_agreement``
        summary."""
        listed = []
        for key, text in SYNTHESEUS_DIVERGENCES.items():
            applies, changed = self.applies[key], self.changed[key]
            if key == "unreadable_data_lines":
                applies += rejected_lines
            if key == "failed_model_calls":
                applies = self.model_errors
            listed.append(
                {
                    "id": key,
                    "divergence": text,
                    "targets": applies,
                    "targets_changed": changed,
                    "stops_syntheseus": key in RUN_STOPPING and applies > 0,
                }
            )
        return listed, {
            "convention": self.convention,
            "changed_means": "best rank under exact"
            + (" or under the stereo view" if self.stereo else "")
            + " or the prediction count differs between chemgauge's convention and "
            "syntheseus's own evaluator",
            "targets_changed": self.targets_changed,
            "unexplained": self.unexplained,
        }


def agreement_note(metrics: Mapping[str, Any]) -> str | None:
    """One summary line: on how many targets syntheseus's own evaluator gives other numbers
    than chemgauge's convention, and which divergences changed them (counted this run)."""
    agreement = metrics.get("syntheseus_agreement")
    if agreement is None:
        return None
    changed = [
        f"{d['id']} {d['targets_changed']}"
        for d in metrics["divergences_from_syntheseus"]
        if d.get("targets_changed")
    ]
    text = (
        f"syntheseus's own evaluator (in {metrics['syntheseus_results']['file']}) differs from "
        f"the {agreement['convention']!r} convention on {agreement['targets_changed']} of "
        f"{metrics['targets']} targets"
    )
    if changed:
        text += ": " + ", ".join(changed)
    if agreement["unexplained"]:
        text += f"; {agreement['unexplained']} by no listed divergence"
    return text


def run_warnings(metrics: Mapping[str, Any]) -> list[str]:
    """Warnings a run prints even under ``--quiet``: an allowed in-sample run, and outputs
    cut at num_top_results."""
    out: list[str] = []
    in_sample = metrics.get("in_sample") or {}
    if in_sample.get("same_file") or in_sample.get("shared_reactions"):
        out.append(
            f"warning: in-sample run (allowed by --allow-in-sample): {in_sample['evidence']}; "
            "these numbers measure recall of training data, not generalization"
        )
    cut = metrics["outputs"]["cut_at_num_top_results"]
    listed = {d["id"]: d for d in metrics["divergences_from_syntheseus"]}
    if cut:
        targets = (listed.get("outputs_beyond_num_top_results") or {}).get("targets")
        out.append(
            f"warning: {cut} outputs beyond num_top_results={metrics['num_top_results']} were "
            f"cut ({targets} targets) and not scored; raise num_top_results to score them"
        )
    return out
