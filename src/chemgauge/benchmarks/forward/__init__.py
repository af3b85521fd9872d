"""Forward-prediction benchmark: does the candidate pool hold the true product, how well ranked?

Built exactly per the forward-prediction benchmark protocol: a schema-1 corpus, reaction
identity and leakage-safe group keys, hash-based splits, four template source modes (with an
attested manifest for ``train-extracted``), rows with four orthogonal statuses, aggregates
that are pure functions of rows, and a report byte-identical across runs and worker counts
except timing fields.
"""

from chemgauge.benchmarks.forward.corpus import (
    CORPUS_SCHEMA_VERSION,
    BenchReaction,
    Corpus,
    CorpusLoadStats,
    InvalidRecord,
    load_corpus,
)
from chemgauge.benchmarks.forward.rows import (
    ROW_SCHEMA_VERSION,
    check_status_consistency,
    derive_failure_reason,
)
from chemgauge.benchmarks.forward.runner import (
    REPORT_SCHEMA_VERSION,
    BenchmarkConfig,
    BenchmarkResult,
    run_benchmark,
)
from chemgauge.benchmarks.forward.sources import TEMPLATE_SOURCES, load_rules_for_source

__all__ = [
    "CORPUS_SCHEMA_VERSION",
    "REPORT_SCHEMA_VERSION",
    "ROW_SCHEMA_VERSION",
    "TEMPLATE_SOURCES",
    "BenchReaction",
    "BenchmarkConfig",
    "BenchmarkResult",
    "Corpus",
    "CorpusLoadStats",
    "InvalidRecord",
    "check_status_consistency",
    "derive_failure_reason",
    "load_corpus",
    "load_rules_for_source",
    "run_benchmark",
]
