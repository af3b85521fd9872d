"""chemgauge.eval: task-agnostic machinery (metrics, statistics, splits, provenance, records).

The everyday names are exported here (``from chemgauge.eval import split_bucket``); the rest
(envelope, executors, records, provenance) live in their own modules.
"""

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
