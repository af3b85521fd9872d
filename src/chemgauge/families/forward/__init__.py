"""Forward-prediction benchmark: does the candidate pool hold the true product, how well ranked?

The public API (what the ``chemgauge forward`` commands do, as calls) and the everyday types;
each name loads its module on first use, so importing one submodule stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chemgauge.exports import lazy_exports

if TYPE_CHECKING:
    from chemgauge.families.forward.api import benchmark, enumerate_candidates
    from chemgauge.families.forward.config import BenchmarkConfig, EnumerateConfig
    from chemgauge.families.forward.corpus import (
        CORPUS_SCHEMA_VERSION,
        BenchReaction,
        Corpus,
        CorpusLoadStats,
        InvalidRecord,
        demo_corpus_path,
        load_corpus,
    )
    from chemgauge.families.forward.enumeration import Enumeration
    from chemgauge.families.forward.metrics_model import ForwardMetrics
    from chemgauge.families.forward.report import REPORT_SCHEMA_VERSION
    from chemgauge.families.forward.rows import (
        ROW_SCHEMA_VERSION,
        check_status_consistency,
        derive_failure_reason,
    )
    from chemgauge.families.forward.runner import BenchmarkResult, run_benchmark
    from chemgauge.families.forward.sources import TEMPLATE_SOURCES, load_rules_for_source
    from chemgauge.families.forward.systems import FORWARD_SYSTEMS, SystemOptions

_HOMES = {
    "BenchReaction": "corpus",
    "BenchmarkConfig": "config",
    "BenchmarkResult": "runner",
    "CORPUS_SCHEMA_VERSION": "corpus",
    "Corpus": "corpus",
    "CorpusLoadStats": "corpus",
    "EnumerateConfig": "config",
    "Enumeration": "enumeration",
    "FORWARD_SYSTEMS": "systems",
    "ForwardMetrics": "metrics_model",
    "InvalidRecord": "corpus",
    "REPORT_SCHEMA_VERSION": "report",
    "ROW_SCHEMA_VERSION": "rows",
    "SystemOptions": "systems",
    "TEMPLATE_SOURCES": "sources",
    "benchmark": "api",
    "check_status_consistency": "rows",
    "demo_corpus_path": "corpus",
    "derive_failure_reason": "rows",
    "enumerate_candidates": "api",
    "load_corpus": "corpus",
    "load_rules_for_source": "sources",
    "run_benchmark": "runner",
}

__all__ = [
    "CORPUS_SCHEMA_VERSION",
    "FORWARD_SYSTEMS",
    "REPORT_SCHEMA_VERSION",
    "ROW_SCHEMA_VERSION",
    "TEMPLATE_SOURCES",
    "BenchReaction",
    "BenchmarkConfig",
    "BenchmarkResult",
    "Corpus",
    "CorpusLoadStats",
    "EnumerateConfig",
    "Enumeration",
    "ForwardMetrics",
    "InvalidRecord",
    "SystemOptions",
    "benchmark",
    "check_status_consistency",
    "demo_corpus_path",
    "derive_failure_reason",
    "enumerate_candidates",
    "load_corpus",
    "load_rules_for_source",
    "run_benchmark",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
