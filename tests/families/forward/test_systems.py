"""Forward systems under test come from one registry (``--model``, default ``templates``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import ConfigError, UnknownNameError
from chemgauge.families.forward.engine.rules import load_embedded_rules
from chemgauge.families.forward.systems import (
    FORWARD_SYSTEMS,
    SystemOptions,
    TemplatePredictor,
    build_system,
)


def test_the_template_engine_is_the_registered_system() -> None:
    assert FORWARD_SYSTEMS.kind == "forward system"
    assert FORWARD_SYSTEMS.group == "chemgauge.forward_systems"
    assert FORWARD_SYSTEMS.names()[0] == "templates"
    system = build_system("templates", SystemOptions(max_results=3, corpus_sha256="x"))
    assert isinstance(system, TemplatePredictor) and system.max_results == 3
    assert system.loaded.template_source == "embedded"
    assert system.rules_spec().content_sha256 == load_embedded_rules().content_sha256


def test_the_options_reach_the_template_source_checks() -> None:
    with pytest.raises(ConfigError, match="needs --templates"):
        build_system("templates", SystemOptions(template_source="file"))


def test_an_unknown_system_is_refused_with_close_names(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="templates"):
        build_system("template", SystemOptions())
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["forward", "benchmark", "-m", "template", "-o", str(out)])
    assert result.exit_code != 0 and "templates" in str(result.exception)
    assert not (out / "rows.jsonl").exists()


def test_list_names_the_forward_systems() -> None:
    result = CliRunner().invoke(app, ["list", "forward system"])
    assert result.exit_code == 0, result.output
    assert "| forward system | templates | chemgauge's template forward predictor" in result.stdout
