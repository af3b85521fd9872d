"""``ocsr run``'s one config type: run policy and placement, recorded apart."""

from __future__ import annotations

import pytest

from chemgauge.errors import ConfigError
from chemgauge.eval.images import ImageLimits
from chemgauge.families.ocsr.config import PLACEMENT_FIELDS, RunConfig


def test_the_report_records_the_policy_and_timing_the_placement() -> None:
    config = RunConfig(repeats=2, max_requests=8, jobs=3, executor="ray", ship_images=False)
    assert config.to_dict() == {
        "repeats": 2,
        "max_requests": 8,
        "per_workflow_seconds": 60.0,
        "budget_seconds": None,
        "image_limits": {
            "max_pixels": ImageLimits().max_pixels,
            "max_bytes": ImageLimits().max_bytes,
        },
    }
    assert config.placement() == {"executor": "ray", "ship_images": False, "jobs": 3}
    assert RunConfig(jobs=2).placement() == {"executor": "local", "jobs": 2}
    # What the report recorded reads back as the same policy, run locally.
    again = RunConfig.from_dict(config.to_dict())
    assert again.to_dict() == config.to_dict() and again.placement()["executor"] == "local"


def test_a_recorded_run_config_holding_placement_is_refused() -> None:
    recorded = {**RunConfig().to_dict(), "executor": "ray"}
    with pytest.raises(ConfigError, match=r"placement fields: \['executor'\]"):
        RunConfig.from_dict(recorded)
    assert set(PLACEMENT_FIELDS).isdisjoint(RunConfig().to_dict())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"executor": "dask"}, "'local' threads or 'ray'"),
        ({"ray_address": "auto"}, "--ray-address needs --executor ray"),
        ({"executor": "ray", "ray_timeout": 0}, "--ray-timeout must be > 0"),
        ({"jobs": 0}, "--jobs must be between 1 and"),
        ({"repeats": 0}, "repeats must be 1 to 100"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RunConfig(**kwargs)  # type: ignore[arg-type]
