"""A command line loads only the command it runs; help and the ``app`` attribute see them all."""

from __future__ import annotations

import json
import subprocess
import sys

import typer
from typer.testing import CliRunner

from chemgauge.cli.app import COMMAND_MODULES, _requested, make_app
from chemgauge.families import BUILT_IN as FAMILY_MODULES

_LOADED = """
import json, sys
sys.argv = ["chemgauge", *json.loads(sys.argv[1])]
from chemgauge.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("chemgauge."))), file=sys.stderr)
"""


def _modules_after(*argv: str) -> set[str]:
    """The chemgauge modules a fresh process has imported after running ``chemgauge ARGV``."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, json.dumps(list(argv))],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_a_family_command_loads_no_other_family_or_top_level_command() -> None:
    loaded = _modules_after("p2s", "build", "--help")
    assert "chemgauge.families.p2s.cli" in loaded
    for other in ("board", "canon", "report"):
        assert f"chemgauge.cli.{other}" not in loaded
    for family in ("forward", "retro", "names", "ocsr"):
        assert not {m for m in loaded if m.startswith(f"chemgauge.families.{family}")}


def test_a_top_level_command_loads_only_its_module() -> None:
    loaded = _modules_after("matchers", "--help")
    assert "chemgauge.cli.matchers" in loaded
    assert not {m for m in loaded if m.startswith("chemgauge.families.")}


def test_top_level_help_lists_every_command() -> None:
    result = CliRunner().invoke(make_app(), ["--help"])
    assert result.exit_code == 0
    for name in (*COMMAND_MODULES, *FAMILY_MODULES):
        assert f" {name} " in result.output or f" {name}\n" in result.output


def test_only_known_names_pick_one_command() -> None:
    assert _requested(["p2s", "build"]) == "p2s"
    assert _requested(["compare", "a", "b"]) == "compare"
    # help, the version, nothing, and a misspelling build the whole tree (Click's "did you
    # mean" needs every name)
    assert _requested(["--help"]) is None
    assert _requested(["--version"]) is None
    assert _requested([]) is None
    assert _requested(["p2ss"]) is None


def test_one_command_app_runs_like_the_whole_app() -> None:
    whole = CliRunner().invoke(make_app(), ["matchers", "--known"])
    alone = CliRunner().invoke(make_app("matchers"), ["matchers", "--known"])
    assert whole.exit_code == alone.exit_code == 0
    assert whole.output == alone.output


def test_the_package_and_module_attribute_is_the_whole_typer_app() -> None:
    import chemgauge.cli
    from chemgauge.cli import app
    from chemgauge.cli.app import app as same

    assert isinstance(app, typer.Typer)
    assert same is app is chemgauge.cli.app
    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert {"canon", "board", "report", "compare", "verify", *FAMILY_MODULES} <= names
