"""One config type per p2s command, named like its flags, and the published metrics schema."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import get_args

import pytest
import typer

from chemgauge.errors import ConfigError
from chemgauge.eval.metrics import metrics_json_schema
from chemgauge.families.p2s import RunConfig
from chemgauge.families.p2s.cli import app
from chemgauge.families.p2s.family import FAMILY
from chemgauge.families.p2s.metrics_model import Condition, P2SMetrics, write_schema
from chemgauge.families.p2s.spec import CONDITIONS

# What p2s run takes besides its config: the data folder, the system, where it goes, quiet.
NOT_CONFIG = {"data", "model", "out", "quiet"}


def _flags(command: str) -> dict[str, list[str]]:
    """Each parameter of a p2s command by its long name (``batch_size`` for ``--batch-size``)."""
    group = typer.main.get_command(app)
    params = group.commands[command].params  # type: ignore[attr-defined]
    out = {}
    for param in params:
        long = [o for o in param.opts if o.startswith("--")]
        name = long[0][2:].replace("-", "_") if long else param.name
        out[name] = param.opts
    return out


def test_run_config_fields_are_the_run_flags_by_name() -> None:
    """The command line and the Python API take one config: every flag of p2s run but the
    data, model, output and quiet is the field of that name, and every field is a flag."""
    flags = set(_flags("run")) - NOT_CONFIG
    assert flags == {f.name for f in fields(RunConfig)}


def test_every_p2s_output_is_out_and_m_is_only_the_model() -> None:
    for command in ("audit", "score", "claim", "build", "run"):
        flags = _flags(command)
        assert flags["out"][:2] == ["--out", "-o"], command
        assert not any(o.startswith("--output") or o == "--run" for o in flags["out"]), command
        short_m = [name for name, opts in flags.items() if "-m" in opts]
        assert short_m in ([], ["model"]), command
    assert "-m" in _flags("run")["model"]


def test_run_config_checks_name_the_flag() -> None:
    assert RunConfig(condition=()).condition == CONDITIONS  # none given: all three views
    with pytest.raises(ConfigError, match="--condition 'wrong' is not a view"):
        RunConfig(condition=("wrong",))
    with pytest.raises(ConfigError, match="--batch-size must be >= 1, got 0"):
        RunConfig(batch_size=0)
    assert RunConfig().chat() is None
    with pytest.raises(ConfigError, match="needs both --base-url and --chat-model"):
        RunConfig(base_url="http://127.0.0.1:1").chat()
    chat = RunConfig(base_url="http://127.0.0.1:1", chat_model="m", api_key_env="KEY").chat()
    assert chat is not None and (chat.model, chat.api_key_env) == ("m", "KEY")


def test_the_conditions_of_the_schema_are_the_views() -> None:
    assert get_args(Condition) == CONDITIONS


def test_the_shipped_metrics_schema_is_the_model(tmp_path: Path) -> None:
    """Regenerate after changing metrics_model.py:
    ``python -c "from chemgauge.families.p2s.metrics_model import write_schema; write_schema()"``
    (and bump ``schema_version`` in family.py if a report of the old shape no longer fits)."""
    shipped = json.loads(FAMILY.metrics_schema_path().read_text())
    assert FAMILY.metrics_schema_path().name == f"metrics.v{FAMILY.schema_version}.schema.json"
    assert shipped == metrics_json_schema(P2SMetrics, shipped["title"]), (
        "metrics schema out of date: run write_schema() (see this test's docstring)"
    )
    written = write_schema(tmp_path / "schema.json")
    assert json.loads(written.read_text()) == shipped
