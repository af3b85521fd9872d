"""One config type per ``chemgauge forward`` command, with the flags' names and defaults.

The command line and the Python API build the same object (the API's keywords are the
flags' names), so a run means the same whichever way it was started. The execution flags
(:class:`ExecutionFlags`) decide where work runs, never a result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from chemgauge.errors import ConfigError
from chemgauge.eval.executors import DEFAULT_RAY_TIMEOUT_S, ExecutorConfig, ExecutorKind, check_jobs
from chemgauge.eval.outputs import Output
from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION, TRAIN_MAX_BUCKET, VAL_MAX_BUCKET
from chemgauge.families.forward.aggregate import Bootstrap
from chemgauge.families.forward.corpus import demo_corpus_path
from chemgauge.families.forward.engine.predictor import SCORE_SCHEME, ForwardConfig
from chemgauge.families.forward.rows import ROW_SCHEMA_VERSION

__all__ = [
    "DEFAULT_CHUNK",
    "DEFAULT_OUT",
    "REPORT_FILE",
    "ROWS_FILE",
    "BenchmarkConfig",
    "EnumerateConfig",
    "ExecutionFlags",
    "Inputs",
]

#: The benchmark's run folder when ``--out`` is not given.
DEFAULT_OUT = Path("runs/forward")
#: Reactions per task when ``--chunk-size`` is not given.
DEFAULT_CHUNK = 16
ROWS_FILE = "rows.jsonl"
REPORT_FILE = "report.json"
_MAX_PRODUCTS = ForwardConfig().max_products_per_application

#: ``(flag, path)`` of every file a command reads (``None``: not given).
Inputs = list[tuple[str, Path | None]]


@dataclass(frozen=True, kw_only=True)
class ExecutionFlags:
    """``--executor``, ``--jobs``, ``--ray-address``, ``--ray-timeout``, ``--chunk-size``:
    where the work runs (serial, a local process pool, Ray); results are identical."""

    executor: str = "local"
    jobs: int = 0
    ray_address: str | None = None
    ray_timeout: float = DEFAULT_RAY_TIMEOUT_S
    chunk_size: int | None = None

    def __post_init__(self) -> None:
        kinds = get_args(ExecutorKind)
        if self.executor not in kinds:
            raise ConfigError(
                f"--executor must be one of {', '.join(kinds)}, got {self.executor!r}"
            )
        check_jobs(
            self.jobs, cluster=self.executor == "ray" and self.ray_address not in (None, "local")
        )
        if self.chunk_size is not None and self.chunk_size < 1:
            raise ConfigError(f"--chunk-size must be >= 1, got {self.chunk_size}")
        if not self.ray_timeout > 0:
            raise ConfigError(f"--ray-timeout must be > 0 seconds, got {self.ray_timeout}")

    def execution(self) -> ExecutorConfig:
        """The executor these flags describe (chunks of :data:`DEFAULT_CHUNK` by default)."""
        return ExecutorConfig(
            kind=self.executor,  # type: ignore[arg-type]  # checked in __post_init__
            jobs=self.jobs,
            chunk_size=self.chunk_size or DEFAULT_CHUNK,
            ray_address=self.ray_address,
            ray_timeout_s=self.ray_timeout,
        )


def _check_max_results(max_results: int | None) -> None:
    if max_results is not None and max_results < 1:
        raise ConfigError(f"--max-results must be >= 1, got {max_results}")


@dataclass(frozen=True, kw_only=True)
class BenchmarkConfig(ExecutionFlags):
    """``chemgauge forward benchmark``: everything that decides the rows and the report,
    where they go, and where the work runs.

    Attributes:
        corpus: schema-1 JSONL corpus file (default: the shipped demo corpus).
        out: the run folder (``rows.jsonl`` and ``report.json`` inside).
        model: the forward system under test (a name in ``FORWARD_SYSTEMS``).
        template_source: ``embedded``, ``file``, ``train-extracted`` or ``scorer-conditioned``.
        templates: rule file for ``file``/``train-extracted``.
        template_manifest: manifest for ``train-extracted``.
        max_results: engine pool cap (``None``: no cap, so absence is always confirmed).
        strict: data-quality issues are hard errors (see the command's help for the list).
        restart: discard an earlier journal instead of resuming it.
        seed: seed of the MRR / nDCG@10 bootstrap intervals (recorded in the metrics; it
            decides the report, never the rows).
        predictions, src: an outside model's predictions file (and MT source file).
        command, batch_size, timeout: an outside model run as a command.
        allow_missing: reactions an outside system did not answer are accepted (still misses).
        convention: the ranking convention the outside-system report leads with.
        output_identity: how outside outputs are keyed (``exact`` or ``as_written``).
    """

    corpus: Path = field(default_factory=demo_corpus_path)
    out: Path = DEFAULT_OUT
    model: str = "templates"
    template_source: str = "embedded"
    templates: Path | None = None
    template_manifest: Path | None = None
    max_results: int | None = None
    strict: bool = False
    restart: bool = False
    seed: int = 0
    predictions: Path | None = None
    src: Path | None = None
    command: tuple[str, ...] = ()
    batch_size: int = 64
    timeout: float = 60.0
    allow_missing: bool = False
    convention: str = "deduplicated"
    output_identity: str = "exact"

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_max_results(self.max_results)
        from chemgauge.families.forward.conventions import CONVENTIONS
        from chemgauge.families.forward.output_keys import OUTPUT_IDENTITIES

        if self.convention not in CONVENTIONS:
            raise ConfigError(
                f"--convention must be one of {', '.join(CONVENTIONS)}, got {self.convention!r}"
            )
        if self.output_identity not in OUTPUT_IDENTITIES:
            raise ConfigError(
                f"--output-identity must be one of {', '.join(OUTPUT_IDENTITIES)}, "
                f"got {self.output_identity!r}"
            )

    @property
    def rows_path(self) -> Path:
        """The rows file inside the run folder."""
        return self.out / ROWS_FILE

    @property
    def report_path(self) -> Path:
        """The report inside the run folder."""
        return self.out / REPORT_FILE

    @property
    def journal_path(self) -> Path:
        """The resume journal beside the rows (removed when the run ends)."""
        return self.out / f"{ROWS_FILE}.journal"

    @property
    def bootstrap(self) -> Bootstrap:
        """The MRR / nDCG@10 bootstrap of this run (its seed, the default size)."""
        return Bootstrap(seed=self.seed)

    def deterministic_config(self) -> dict[str, Any]:
        """What ``config_sha256`` covers (no paths: content is hashed separately)."""
        outside = self.model != "templates"
        return {
            "template_source": "outside" if outside else self.template_source,
            "split_protocol_version": SPLIT_PROTOCOL_VERSION,
            "train_max_bucket": TRAIN_MAX_BUCKET,
            "val_max_bucket": VAL_MAX_BUCKET,
            "max_results": self.max_results,
            "max_products_per_application": _MAX_PRODUCTS,
            "score_scheme": SCORE_SCHEME,
            "row_schema_version": ROW_SCHEMA_VERSION,
            **self._outside_config(),
        }

    def _outside_config(self) -> dict[str, Any]:
        """An outside system's settings that decide its rows (none for the engine)."""
        if self.model == "templates":
            return {}
        return {
            "model": self.model,
            "convention": self.convention,
            "output_identity": self.output_identity,
            "command": list(self.command),
            "batch_size": self.batch_size,
        }

    def files(self) -> tuple[list[Output], Inputs]:
        """The run folder (with the files written in it) and the inputs, by flag: what is
        checked and locked before the run starts."""
        # verified_templates.jsonl: the checked subset of a train-extracted rule file (the
        # templates/ folder of an in-run extraction is only written when --templates is not
        # given, so it can never be an input)
        written = (ROWS_FILE, self.journal_path.name, REPORT_FILE, "verified_templates.jsonl")
        inputs: Inputs = [
            ("--corpus", self.corpus),
            ("--templates", self.templates),
            ("--template-manifest", self.template_manifest),
            ("--predictions", self.predictions),
            ("--src", self.src),
        ]
        return [Output("--out", self.out, files=written)], inputs


@dataclass(frozen=True, kw_only=True)
class EnumerateConfig(ExecutionFlags):
    """``chemgauge forward enumerate``: candidates for every line of a reactants file.

    Attributes:
        input: reactants file, one ``SMILES [id]`` a line (dot-separated reactants).
        out: the candidates JSONL (written atomically).
        templates: extra rule files, each extending the embedded set.
        max_results: keep at most this many candidates a line.
        strict: stop at the first unreadable line or failed prediction.
    """

    input: Path
    out: Path
    templates: tuple[Path, ...] = ()
    max_results: int | None = None
    strict: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_max_results(self.max_results)

    def files(self) -> tuple[list[Output], Inputs]:
        """The output file and the inputs, by flag."""
        inputs: Inputs = [("--input", self.input), *(("--templates", p) for p in self.templates)]
        return [Output("--out", self.out)], inputs
