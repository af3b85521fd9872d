"""Forward-prediction benchmark: does the candidate pool hold the true product, how well ranked?

The public API (what the ``chemgauge forward`` commands do, as calls) and the everyday types;
each name loads its module on first use, so importing one submodule stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chemgauge.families.forward.api import benchmark
    from chemgauge.families.forward.corpus import (
        CORPUS_SCHEMA_VERSION,
        BenchReaction,
        Corpus,
        CorpusLoadStats,
        InvalidRecord,
        demo_corpus_path,
        load_corpus,
    )
    from chemgauge.families.forward.rows import (
        ROW_SCHEMA_VERSION,
        check_status_consistency,
        derive_failure_reason,
    )
    from chemgauge.families.forward.runner import (
        REPORT_SCHEMA_VERSION,
        BenchmarkConfig,
        BenchmarkResult,
        run_benchmark,
    )
    from chemgauge.families.forward.sources import TEMPLATE_SOURCES, load_rules_for_source

_HOMES = {
    "BenchReaction": "corpus",
    "BenchmarkConfig": "runner",
    "BenchmarkResult": "runner",
    "CORPUS_SCHEMA_VERSION": "corpus",
    "Corpus": "corpus",
    "CorpusLoadStats": "corpus",
    "InvalidRecord": "corpus",
    "REPORT_SCHEMA_VERSION": "runner",
    "ROW_SCHEMA_VERSION": "rows",
    "TEMPLATE_SOURCES": "sources",
    "benchmark": "api",
    "check_status_consistency": "rows",
    "demo_corpus_path": "corpus",
    "derive_failure_reason": "rows",
    "load_corpus": "corpus",
    "load_rules_for_source": "sources",
    "run_benchmark": "runner",
}

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
    "benchmark",
    "check_status_consistency",
    "demo_corpus_path",
    "derive_failure_reason",
    "load_corpus",
    "load_rules_for_source",
    "run_benchmark",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
