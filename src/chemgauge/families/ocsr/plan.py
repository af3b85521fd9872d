"""The run plan: every attempt a run intends, its policy, and the hashes that name it.

The plan is repeat-major (every case once, then every case again), so a budget that runs out
cuts repeats before first attempts. Two hashes name a run: :func:`attempts_config_sha256`
covers what decides each attempt's row (manifest, back-end, repeats, per-attempt limit,
image limits) and keys the resumable journal, so a larger request or time budget resumes it;
the report's ``config_sha256`` also covers the budgets.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from chemgauge.errors import ConfigError
from chemgauge.eval.executors import DEFAULT_RAY_TIMEOUT_S
from chemgauge.eval.images import ImageLimits
from chemgauge.eval.provenance import sha256_json
from chemgauge.families.ocsr.attempts import PlannedAttempt
from chemgauge.families.ocsr.manifest import Manifest

__all__ = [
    "BUDGET_FIELDS",
    "Execution",
    "RunConfig",
    "attempts_config_sha256",
    "describe_plan",
    "iter_plan",
    "plan_attempts",
    "planned_count",
]

#: Run policy fields that only decide how far a run gets, never what an attempt returns.
BUDGET_FIELDS = ("max_requests", "budget_seconds")


@dataclass(frozen=True)
class RunConfig:
    """Run policy: repeats, budgets (``None`` means unbounded) and the largest image sent."""

    repeats: int = 1
    max_requests: int | None = None
    per_workflow_seconds: float = 60.0
    budget_seconds: float | None = None
    jobs: int = 1
    image_limits: ImageLimits = field(default_factory=ImageLimits)

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise ConfigError(f"repeats must be at least 1, got {self.repeats}")
        if self.max_requests is not None and self.max_requests < 0:
            raise ConfigError(f"max_requests must be >= 0, got {self.max_requests}")
        if self.per_workflow_seconds <= 0:
            raise ConfigError(f"per-workflow seconds must be > 0, got {self.per_workflow_seconds}")
        if self.budget_seconds is not None and self.budget_seconds <= 0:
            raise ConfigError(f"budget seconds must be > 0, got {self.budget_seconds}")
        if self.jobs < 1:
            raise ConfigError(f"jobs must be at least 1, got {self.jobs}")

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping (jobs excluded: it never changes results, only their order of work)."""
        out = asdict(self)
        out.pop("jobs")
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, jobs: int = 1) -> RunConfig:
        """The config :meth:`to_dict` recorded (a report's ``run_config``)."""
        values = dict(data)
        limits = ImageLimits(**dict(values.pop("image_limits", {}) or {}))
        try:
            return cls(**values, jobs=jobs, image_limits=limits)
        except TypeError as exc:
            raise ConfigError(f"recorded run_config is not one chemgauge reads: {exc}") from None


@dataclass(frozen=True)
class Execution:
    """Where attempts run: ``local`` threads (``RunConfig.jobs`` in flight) or ``ray`` tasks.

    With Ray, ``ship_images`` sends each image's bytes with its task; otherwise a worker
    reads the image from the manifest's path, which must then be the same file on every node
    (its hash is checked). Neither setting changes a row.
    """

    kind: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    ship_images: bool = True
    ray_timeout_s: float = DEFAULT_RAY_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.kind not in ("local", "ray"):
            raise ConfigError(f"OCSR attempts run on 'local' threads or 'ray', not {self.kind!r}")
        if self.ray_address is not None and self.kind != "ray":
            raise ConfigError("--ray-address needs --executor ray")
        if not self.ray_timeout_s > 0:
            raise ConfigError(f"--ray-timeout must be > 0 seconds, got {self.ray_timeout_s}")

    def describe(self) -> dict[str, Any]:
        """Settings for provenance (never part of a hash: they do not change rows)."""
        out: dict[str, Any] = {"executor": self.kind}
        if self.kind == "ray":
            out["ship_images"] = self.ship_images
        return out


def iter_plan(manifest: Manifest, config: RunConfig) -> Iterator[PlannedAttempt]:
    """Every attempt the run intends, repeat-major, in manifest order (generated lazily)."""
    index = 0
    for repeat in range(1, config.repeats + 1):
        for case in manifest.cases:
            yield PlannedAttempt(index, f"{case.id}#r{repeat}", case.id, repeat)
            index += 1


def plan_attempts(manifest: Manifest, config: RunConfig) -> list[PlannedAttempt]:
    """The whole plan as a list (see :func:`iter_plan`)."""
    return list(iter_plan(manifest, config))


def planned_count(manifest: Manifest, config: RunConfig) -> int:
    """How many attempts the plan holds."""
    return len(manifest.cases) * config.repeats


def describe_plan(manifest: Manifest, config: RunConfig, backend: dict[str, Any]) -> str:
    """Human-readable dry-run plan."""
    planned = planned_count(manifest, config)
    with_reference = config.repeats * sum(1 for c in manifest.cases if c.reference is not None)
    reachable = planned if config.max_requests is None else min(planned, config.max_requests)
    max_requests = "unbounded" if config.max_requests is None else config.max_requests
    overall = "unbounded" if config.budget_seconds is None else f"{config.budget_seconds:g}"
    lines = [
        f"manifest {manifest.name}: {len(manifest.cases)} images",
        f"backend: {backend}",
        f"planned attempts: {planned} ({config.repeats} repeat(s); {with_reference} with a "
        f"finite reference, {planned - with_reference} qualitative)",
        f"budgets: max requests {max_requests}, {config.per_workflow_seconds:g} s per "
        f"workflow, overall {overall} s",
        f"at most {reachable} attempt(s) can start; the rest would be recorded not_run",
        "dry run: nothing was sent to the back-end; add --run to execute",
    ]
    return "\n".join(lines)


def attempts_config_sha256(
    manifest: Manifest, backend: Mapping[str, Any], config: RunConfig
) -> str:
    """Hash of everything that decides an attempt's row: manifest content, back-end, repeats,
    the per-attempt limit and image limits (budgets excluded: see the module docstring)."""
    policy = config.to_dict()
    for name in BUDGET_FIELDS:
        policy.pop(name)
    return sha256_json(
        {
            "manifest": manifest.model_dump(mode="json", exclude={"root"}),
            "backend": dict(backend),
            "config": policy,
        }
    )
