"""One way to name things on the command line: ``--out`` (``-o``) is every command's output,
``-m`` is ``--model`` (the system under test) wherever it exists, and no command keeps an
older output spelling."""

from __future__ import annotations

from typing import Any

from chemgauge.cli.app import make_app
from chemgauge.cli.scripting import build_command, leaf_commands

#: Output spellings the commands used before there was one.
RETIRED = {"--output", "--output-rows", "--output-report", "--html", "--md", "--results-dir"}


def _options() -> list[tuple[str, Any]]:
    command = build_command(make_app())
    return [
        (name, param)
        for name, leaf in leaf_commands(command)
        for param in leaf.params
        if param.param_type_name == "option"
    ]


def test_short_flags_mean_one_thing_everywhere() -> None:
    """-o is --out everywhere; -m is --model everywhere (a family may also spell the system
    under test its own way on the same option: names' --namer)."""
    meanings: dict[str, set[str]] = {"-o": set(), "-m": set()}
    for name, param in _options():
        if "-m" in param.opts:
            assert "--model" in param.opts, name
        for short in meanings:
            if short in param.opts:
                meanings[short].update(o for o in param.opts if o.startswith("--"))
    assert meanings == {"-o": {"--out"}, "-m": {"--model", "--namer"}}


def test_no_command_keeps_a_retired_output_spelling() -> None:
    found = sorted(
        f"{name} {opt}"
        for name, param in _options()
        for opt in param.opts
        if opt in RETIRED and not param.is_flag  # a toggle such as --html/--no-html names no path
    )
    assert found == []


def test_every_command_that_writes_a_run_folder_takes_out() -> None:
    writers = {
        "forward benchmark", "forward enumerate", "forward corpus-from-uspto",
        "forward extract-templates", "retro eval", "names coverage", "ocsr run", "ocsr score",
        "ocsr render", "ocsr import", "p2s build", "p2s run", "p2s score", "canon", "board",
        "compare", "report", "verify",
    }  # fmt: skip
    takes_out = {name for name, param in _options() if "--out" in param.opts}
    assert writers - takes_out == set()
