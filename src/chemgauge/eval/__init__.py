"""chemgauge.eval: task-agnostic machinery (metrics, statistics, splits, provenance, records).

The everyday names are exported here (``from chemgauge.eval import split_bucket``); the rest
(envelope, executors, lines, records, provenance) live in their own modules. The exports load
on first use, so importing one submodule (``chemgauge.eval.lines`` on the standard-library
scorer path) never pulls in numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chemgauge.exports import lazy_exports

if TYPE_CHECKING:
    from chemgauge.eval.ranking import ndcg_at_k
    from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION, Split, assign_split, split_bucket
    from chemgauge.eval.stats import (
        Interval,
        McNemarResult,
        bootstrap_interval,
        holm_adjust,
        mcnemar_exact,
        paired_bootstrap_difference,
        wilson_interval,
    )

_HOMES = {
    "ndcg_at_k": "ranking",
    "SPLIT_PROTOCOL_VERSION": "splits",
    "Split": "splits",
    "assign_split": "splits",
    "split_bucket": "splits",
    "Interval": "stats",
    "McNemarResult": "stats",
    "bootstrap_interval": "stats",
    "holm_adjust": "stats",
    "mcnemar_exact": "stats",
    "paired_bootstrap_difference": "stats",
    "wilson_interval": "stats",
}

__all__ = [
    "SPLIT_PROTOCOL_VERSION",
    "Interval",
    "McNemarResult",
    "Split",
    "assign_split",
    "bootstrap_interval",
    "holm_adjust",
    "mcnemar_exact",
    "ndcg_at_k",
    "paired_bootstrap_difference",
    "split_bucket",
    "wilson_interval",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
