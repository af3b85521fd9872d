"""Python API of the forward benchmark: what ``chemgauge forward benchmark`` does, as a call.

>>> import chemgauge.families.forward
>>> report = chemgauge.families.forward.benchmark(out="runs/forward")  # the shipped demo corpus
>>> report["metrics"]["overall"]["end_to_end"]["top1_hit_rate"]["value"]

The run folder gets ``rows.jsonl`` and ``report.json`` (``chemgauge report`` reads it); the
outputs are checked against the inputs and locked for the run, as on the command line, and
an interrupted call resumes when made again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.executors import ExecutorConfig
from chemgauge.eval.outputs import Output, claim_outputs
from chemgauge.families.forward.aggregate import Bootstrap
from chemgauge.families.forward.corpus import demo_corpus_path
from chemgauge.families.forward.runner import (
    DEFAULT_CHUNK,
    BenchmarkConfig,
    journal_path,
    run_benchmark,
)

__all__ = ["benchmark"]


def benchmark(
    corpus: str | Path | None = None,
    out: str | Path = "runs/forward",
    *,
    template_source: str = "embedded",
    templates: str | Path | None = None,
    template_manifest: str | Path | None = None,
    max_results: int | None = None,
    strict: bool = False,
    restart: bool = False,
    seed: int = 0,
    execution: ExecutorConfig | None = None,
) -> dict[str, Any]:
    """Benchmark the forward engine on ``corpus`` (default: the shipped demo corpus) into the
    run folder ``out``; return the report (what ``report.json`` holds).

    The keywords mean what the command's flags of the same names mean
    (``chemgauge forward benchmark -h``); ``execution`` defaults to a local pool on every
    core with the command's chunk size.
    """
    folder = Path(out)
    rows, report = folder / "rows.jsonl", folder / "report.json"
    config = BenchmarkConfig(
        corpus=Path(corpus) if corpus is not None else demo_corpus_path(),
        output_rows=rows,
        template_source=template_source,
        templates=None if templates is None else Path(templates),
        template_manifest=None if template_manifest is None else Path(template_manifest),
        max_results=max_results,
        strict=strict,
        restart=restart,
        output_report=report,
        bootstrap=Bootstrap(seed=seed),
    )
    outputs = [
        Output("out", rows, derived=(journal_path(rows),)),
        Output("out", report),
    ]
    inputs = [
        ("corpus", config.corpus),
        ("templates", config.templates),
        ("template_manifest", config.template_manifest),
    ]
    with claim_outputs(outputs, inputs, command="chemgauge.families.forward.benchmark"):
        result = run_benchmark(config, execution or ExecutorConfig(chunk_size=DEFAULT_CHUNK))
        write_envelope(report, result.envelope)
    return result.report
