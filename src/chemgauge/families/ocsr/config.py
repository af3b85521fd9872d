"""The configuration of ``chemgauge ocsr run``: the run's policy and the back-end's options.

:class:`RunConfig` is everything the command decides about a run (repeats, budgets, the
largest image sent, how many attempts are in flight and where they run);
:class:`RecognizerOptions` is what the system under test (``--model``, a back-end of
:data:`chemgauge.families.ocsr.engine.registry.OCSR_SYSTEMS`) is built from, the one argument of
every back-end factory, built-in or plugin. Field names are the command's flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from chemgauge.errors import ConfigError
from chemgauge.eval.executors import DEFAULT_RAY_TIMEOUT_S, check_jobs
from chemgauge.eval.images import ImageLimits

__all__ = [
    "BOUNDED_OVERALL_SECONDS",
    "BOUNDED_WORKFLOWS",
    "BOUNDED_WORKFLOW_SECONDS",
    "BUDGET_FIELDS",
    "MAX_REPEATS",
    "MAX_REQUESTS",
    "PLACEMENT_FIELDS",
    "RESERVED_WORKFLOWS",
    "RecognizerOptions",
    "RunConfig",
]

#: The protocol's bounded run: at most 16 image workflows, 300 s each, 1,800 s overall, one
#: workflow (and its 300 s) reserved for a separate control run. The defaults of a run whose
#: back-end asks a model or program (http, command, plugins) unless a flag overrides them.
BOUNDED_WORKFLOWS = 16
BOUNDED_WORKFLOW_SECONDS = 300.0
BOUNDED_OVERALL_SECONDS = 1800.0
RESERVED_WORKFLOWS = 1
#: Caps that keep a typo from planning a run nobody meant (a million repeats write about
#: 93 MB of attempts a minute).
MAX_REPEATS = 100
MAX_REQUESTS = 1_000_000

#: Run policy fields that only decide how far a run gets, never what an attempt returns.
BUDGET_FIELDS = ("max_requests", "budget_seconds")
#: Fields that decide where and how many attempts run at once: never a row, never a hash.
PLACEMENT_FIELDS = ("jobs", "executor", "ray_address", "ship_images", "ray_timeout")


@dataclass(frozen=True)
class RunConfig:
    """Run policy: repeats, budgets (``None`` means unbounded), the largest image sent, and
    where attempts run.

    ``executor`` is ``local`` (``jobs`` threads in this process) or ``ray`` (tasks on a Ray
    cluster: ``ray_address`` to join one, ``jobs`` CPUs when one is started here). With Ray,
    ``ship_images`` sends each image's bytes with its task; otherwise a worker reads the
    image from the manifest's path, which must then be the same file on every node (its hash
    is checked). No placement field changes a row (:data:`PLACEMENT_FIELDS`).
    """

    repeats: int = 1
    max_requests: int | None = None
    per_workflow_seconds: float = 60.0
    budget_seconds: float | None = None
    image_limits: ImageLimits = field(default_factory=ImageLimits)
    jobs: int = 1
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    ship_images: bool = True
    ray_timeout: float = DEFAULT_RAY_TIMEOUT_S

    def __post_init__(self) -> None:
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise ConfigError(f"repeats must be 1 to {MAX_REPEATS}, got {self.repeats}")
        if self.max_requests is not None and not 0 <= self.max_requests <= MAX_REQUESTS:
            raise ConfigError(
                f"max_requests must be 0 to {MAX_REQUESTS:,}, got {self.max_requests}"
            )
        if self.per_workflow_seconds <= 0:
            raise ConfigError(f"per-workflow seconds must be > 0, got {self.per_workflow_seconds}")
        if self.budget_seconds is not None and self.budget_seconds <= 0:
            raise ConfigError(f"budget seconds must be > 0, got {self.budget_seconds}")
        remote = self.executor == "ray" and self.ray_address not in (None, "local")
        check_jobs(self.jobs, zero=False, cluster=remote)
        if self.executor not in ("local", "ray"):
            raise ConfigError(
                f"OCSR attempts run on 'local' threads or 'ray', not {self.executor!r}"
            )
        if self.ray_address is not None and self.executor != "ray":
            raise ConfigError("--ray-address needs --executor ray")
        if not self.ray_timeout > 0:
            raise ConfigError(f"--ray-timeout must be > 0 seconds, got {self.ray_timeout}")

    @classmethod
    def bounded(cls, **overrides: Any) -> RunConfig:
        """The protocol's bounded policy: 15 attempts (16 workflows, one reserved for a
        control run), 300 s each, 1,500 s overall (1,800 s less the reserved workflow's)."""
        values: dict[str, Any] = {
            "max_requests": BOUNDED_WORKFLOWS - RESERVED_WORKFLOWS,
            "per_workflow_seconds": BOUNDED_WORKFLOW_SECONDS,
            "budget_seconds": BOUNDED_OVERALL_SECONDS
            - RESERVED_WORKFLOWS * BOUNDED_WORKFLOW_SECONDS,
        }
        values.update(overrides)
        return cls(**values)

    def is_bounded_policy(self) -> bool:
        """Whether the budgets are exactly :meth:`bounded`'s."""
        reference = RunConfig.bounded()
        return all(getattr(self, name) == getattr(reference, name) for name in
                   ("max_requests", "per_workflow_seconds", "budget_seconds"))  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """The run policy as the report records it (``run_config``): placement excluded, it
        never changes results, only where and in which order they are made."""
        out = asdict(self)
        for name in PLACEMENT_FIELDS:
            out.pop(name)
        return out

    def placement(self) -> dict[str, Any]:
        """Where attempts ran, for the report's ``timing`` (never part of a hash)."""
        out: dict[str, Any] = {"executor": self.executor}
        if self.executor == "ray":
            out["ship_images"] = self.ship_images
        out["jobs"] = self.jobs
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, jobs: int = 1) -> RunConfig:
        """The config :meth:`to_dict` recorded (a report's ``run_config``), run locally."""
        values = dict(data)
        limits = ImageLimits(**dict(values.pop("image_limits", {}) or {}))
        placement = sorted(set(values) & set(PLACEMENT_FIELDS))
        if placement:
            raise ConfigError(f"recorded run_config holds placement fields: {placement}")
        try:
            return cls(**values, jobs=jobs, image_limits=limits)
        except TypeError as exc:
            raise ConfigError(f"recorded run_config is not one chemgauge reads: {exc}") from None


@dataclass(frozen=True, slots=True)
class RecognizerOptions:
    """What a back-end is built from beyond its name (each back-end reads only its own
    fields; a plugin's factory receives the same object).

    Attributes:
        command: ``command``: the argument list, ``{image}`` standing for the image path.
        format: ``command``: how its output is read (``smiles``, ``molfile``, ``json`` or
            ``auto``).
        url: ``http``: the OpenAI-compatible base URL.
        endpoint_model: ``http``: the model to request from the endpoint.
        api_key_env: ``http``: the environment variable holding the key.
        reasoning_effort: ``http``: the reasoning effort to request (checked when echoed).
        accept_models: ``http``: served model names accepted besides ``endpoint_model``.
        callable: ``python``: a registered recognizer name or ``module:function``.
    """

    command: tuple[str, ...] = ()
    format: str = "auto"
    url: str | None = None
    endpoint_model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    reasoning_effort: str | None = None
    accept_models: tuple[str, ...] = ()
    callable: str | None = None
