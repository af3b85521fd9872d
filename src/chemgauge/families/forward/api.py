"""Python API of the forward family: what ``chemgauge forward benchmark`` and ``forward
enumerate`` do, as calls taking the flags' names.

>>> import chemgauge.families.forward
>>> report = chemgauge.families.forward.benchmark(out="runs/forward")  # the shipped demo corpus
>>> report["metrics"]["overall"]["end_to_end"]["top1_hit_rate"]["value"]

The run folder gets ``rows.jsonl`` and ``report.json`` (``chemgauge report`` reads it); the
outputs are checked against the inputs and locked for the run, as on the command line, and
an interrupted call resumes when made again. The commands call these functions, so a call
and a command with the same arguments are the same run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from chemgauge.eval.envelope import write_envelope
from chemgauge.eval.executors import DEFAULT_RAY_TIMEOUT_S
from chemgauge.eval.outputs import claim_outputs
from chemgauge.families.forward.config import DEFAULT_OUT, BenchmarkConfig, EnumerateConfig
from chemgauge.families.forward.corpus import demo_corpus_path
from chemgauge.families.forward.enumeration import Enumeration, Note, ProgressBar, enumerate_file
from chemgauge.families.forward.runner import check_answered, run_benchmark

__all__ = ["benchmark", "enumerate_candidates"]

PathLike = str | Path


def _path(value: PathLike | None) -> Path | None:
    return None if value is None else Path(value)


def benchmark(
    corpus: PathLike | None = None,
    out: PathLike = DEFAULT_OUT,
    *,
    model: str = "templates",
    template_source: str = "embedded",
    templates: PathLike | None = None,
    template_manifest: PathLike | None = None,
    max_results: int | None = None,
    strict: bool = False,
    restart: bool = False,
    seed: int = 0,
    executor: str = "local",
    jobs: int = 0,
    ray_address: str | None = None,
    ray_timeout: float = DEFAULT_RAY_TIMEOUT_S,
    chunk_size: int | None = None,
    progress: Callable[[int], None] | None = None,
    **outside: Any,
) -> dict[str, Any]:
    """Benchmark a forward system on ``corpus`` (default: the shipped demo corpus) into the
    run folder ``out``; return the report (what ``report.json`` holds).

    The keywords are the flags of ``chemgauge forward benchmark`` under the same names and
    defaults (``-h`` says what each means); ``progress(n)`` hears of every ``n`` reactions
    done. ``outside`` takes the outside-system flags (``predictions``, ``src``, ``command``,
    ``batch_size``, ``timeout``, ``allow_missing``, ``convention``, ``output_identity``).
    """
    for name in ("predictions", "src"):
        if outside.get(name) is not None:
            outside[name] = Path(outside[name])
    if "command" in outside:
        outside["command"] = tuple(outside["command"])
    config = BenchmarkConfig(
        corpus=demo_corpus_path() if corpus is None else Path(corpus),
        out=Path(out),
        model=model,
        template_source=template_source,
        templates=_path(templates),
        template_manifest=_path(template_manifest),
        max_results=max_results,
        strict=strict,
        restart=restart,
        seed=seed,
        executor=executor,
        jobs=jobs,
        ray_address=ray_address,
        ray_timeout=ray_timeout,
        chunk_size=chunk_size,
        **outside,
    )
    outputs, inputs = config.files()
    with claim_outputs(outputs, inputs):
        result = run_benchmark(config, progress)
        write_envelope(config.report_path, result.envelope)
    check_answered(result, config)
    return result.report


def enumerate_candidates(
    input: PathLike,  # the flag's name (--input)
    out: PathLike,
    *,
    templates: Iterable[PathLike] = (),
    max_results: int | None = None,
    strict: bool = False,
    executor: str = "local",
    jobs: int = 0,
    ray_address: str | None = None,
    ray_timeout: float = DEFAULT_RAY_TIMEOUT_S,
    chunk_size: int | None = None,
    progress: ProgressBar | None = None,
    note: Note | None = None,
) -> Enumeration:
    """Predict the candidates of every line of ``input`` (``SMILES [id]``, dot-separated
    reactants) into the JSONL file ``out``, one record a line in input order.

    The keywords are the flags of ``chemgauge forward enumerate``; ``templates`` extend the
    embedded rule set. ``note(line, detail)`` hears of each unreadable line and failed
    prediction; ``progress(total)`` is a context giving ``advance(n)``.
    """
    config = EnumerateConfig(
        input=Path(input),
        out=Path(out),
        templates=tuple(Path(p) for p in templates),
        max_results=max_results,
        strict=strict,
        executor=executor,
        jobs=jobs,
        ray_address=ray_address,
        ray_timeout=ray_timeout,
        chunk_size=chunk_size,
    )
    return enumerate_file(config, progress=progress, note=note)
