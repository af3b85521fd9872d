"""The run plan: every attempt a run intends, its policy, and the hashes that name it.

The plan is repeat-major (every case once, then every case again), so a budget that runs out
cuts repeats before first attempts. Two hashes name a run: :func:`attempts_config_sha256`
covers what decides each attempt's row (manifest, back-end, repeats, per-attempt limit,
image limits) and keys the resumable journal, so a larger request or time budget resumes it;
the report's ``config_sha256`` also covers the budgets.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from chemgauge.eval.provenance import sha256_json
from chemgauge.families.ocsr.attempts import PlannedAttempt
from chemgauge.families.ocsr.config import BUDGET_FIELDS, RunConfig
from chemgauge.families.ocsr.manifest import Manifest

__all__ = [
    "attempts_config_sha256",
    "describe_budgets",
    "describe_plan",
    "iter_plan",
    "plan_attempts",
    "planned_count",
]


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


def _seconds(value: float) -> str:
    return f"{value:,.0f} s" if value == int(value) else f"{value:,g} s"


def describe_budgets(config: RunConfig) -> str:
    """The run's budgets in words (each limit, or that there is none)."""
    requests = (
        "no limit on attempts started"
        if config.max_requests is None
        else f"at most {config.max_requests:,} attempt(s) started"
    )
    overall = (
        "no overall time limit"
        if config.budget_seconds is None
        else f"{_seconds(config.budget_seconds)} overall (elapsed time)"
    )
    text = f"{requests}; {_seconds(config.per_workflow_seconds)} per attempt; {overall}"
    if config.is_bounded_policy():
        text += (
            " (the protocol's bounded policy: 16 workflows of 300 s within 1,800 s, one "
            "workflow and its 300 s reserved for a separate control run)"
        )
    return text


def describe_plan(manifest: Manifest, config: RunConfig, backend: dict[str, Any]) -> str:
    """Human-readable dry-run plan."""
    planned = planned_count(manifest, config)
    with_reference = config.repeats * sum(1 for c in manifest.cases if c.reference is not None)
    reachable = planned if config.max_requests is None else min(planned, config.max_requests)
    lines = [
        f"manifest {manifest.name}: {len(manifest.cases)} images",
        f"backend: {backend}",
        f"planned attempts: {planned} ({config.repeats} repeat(s); {with_reference} with a "
        f"finite reference, {planned - with_reference} qualitative)",
        f"budgets: {describe_budgets(config)}",
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
            "manifest": manifest.dump(),
            "backend": dict(backend),
            "config": policy,
        }
    )
