"""The ``chemgauge`` command as scripts see it: plain metavars and a ``--json`` flag.

Typer labels option values ``<str>``, ``<path>``, ``<list[Path]>`` in help; the built command
gets conventional metavars instead (``TEXT``, ``PATH``, ``N``), and every command that prints
a summary accepts ``--json`` (one JSON object a summary on standard output, see
:mod:`chemgauge.cli.summary`). Help is plain text and ``-h`` works: the app sets those.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer
import typer.main

from chemgauge.chem.limits import DEFAULT_LIMITS, LIMIT_FLAGS, set_limits
from chemgauge.cli.summary import set_json

__all__ = ["FORMATS_EPILOG", "JSON_COMMANDS", "build_command", "leaf_commands"]

#: Commands that print a closing summary, and so take ``--json`` (``compare`` and ``verify``
#: already have ``--json FILE``; ``canon`` writes its keys to standard output).
JSON_COMMANDS = frozenset(
    {
        "matchers",
        "list",
        "report",
        "forward enumerate",
        "forward extract-templates",
        "forward benchmark",
        "retro eval",
        "names coverage",
        "ocsr run",
        "ocsr score",
        "p2s build",
        "p2s tasks",
        "p2s audit",
        "p2s run",
        "p2s score",
    }
)

FORMATS_EPILOG = (
    "File formats, each with an example: docs/files.md; `chemgauge examples DIR` copies "
    "working inputs."
)

_METAVARS = {"str": "TEXT", "path": "PATH", "int": "N", "float": "NUMBER", "Path": "PATH"}


def leaf_commands(command: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(space-joined name, command) for every command that runs (not a group)."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield prefix, command
        return
    for name, sub in subcommands.items():
        yield from leaf_commands(sub, f"{prefix} {name}".strip())


def _full_short_help(command: Any) -> None:
    """List every subcommand with its whole first help paragraph (Click would cut it at ~45
    characters with '...')."""
    for sub in getattr(command, "commands", {}).values():
        if not sub.short_help and sub.help:
            sub.short_help = " ".join(sub.help.strip().split("\n\n")[0].split())
        _full_short_help(sub)


def _metavar(param: Any, ctx: Any) -> str | None:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    if param.param_type_name == "argument":
        return str(param.name).upper()
    label = str(param.display_type(ctx)).strip("<>")
    if label.startswith("list[") and label.endswith("]"):
        label = label[5:-1]
    return _METAVARS.get(label, label if "|" in label else label.upper())


def _no_type(ctx: Any) -> None:
    return None


def _json_flag(ctx: Any, param: Any, value: bool) -> bool:
    set_json(bool(value))
    return value


def _json_option() -> Any:
    """The ``--json`` option as Typer builds it (taken from a one-command app)."""

    def template(
        json: bool = typer.Option(
            False,
            "--json",
            callback=_json_flag,
            expose_value=False,
            is_eager=True,
            help="Print the summary as one JSON object on stdout instead of a table.",
        ),
    ) -> None:
        """Template of the option."""

    holder = typer.Typer()
    holder.command()(template)
    return next(p for p in typer.main.get_command(holder).params if p.name == "json")


def _set_limit(ctx: Any, param: Any, value: int | None) -> int | None:
    if value is not None:
        try:
            set_limits(**{str(param.name): value})
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return value


def _limit_option(flag: str, help_text: str) -> Any:
    return typer.Option(
        None,
        flag,
        callback=_set_limit,
        expose_value=False,
        is_eager=True,
        metavar="N",
        help=help_text,
    )


def _limit_options() -> list[Any]:
    """``--max-atoms``, ``--max-smiles-chars``, ``--max-rings``, ``--max-fragments``,
    ``--max-alternatives``: the
    run's structure limits (:mod:`chemgauge.chem.limits`), on every command (built, like
    ``--json``, from a one-command app)."""

    def helps(field: str) -> str:
        default = getattr(DEFAULT_LIMITS, field)
        return f"Refuse a structure over N {_LIMIT_WORDS[field]} (default {default:,})."

    def template(
        max_smiles_chars: int | None = _limit_option(
            "--max-smiles-chars", helps("max_smiles_chars")
        ),
        max_atoms: int | None = _limit_option("--max-atoms", helps("max_atoms")),
        max_rings: int | None = _limit_option("--max-rings", helps("max_rings")),
        max_fragments: int | None = _limit_option("--max-fragments", helps("max_fragments")),
        max_alternatives: int | None = _limit_option(
            "--max-alternatives", helps("max_alternatives")
        ),
    ) -> None:
        """Template of the options."""

    holder = typer.Typer()
    holder.command()(template)
    return [p for p in typer.main.get_command(holder).params if p.name in LIMIT_FLAGS]


_LIMIT_WORDS = {
    "max_smiles_chars": "SMILES characters",
    "max_atoms": "atoms",
    "max_rings": "rings",
    "max_fragments": "fragments",
    "max_alternatives": "alternatives in one record (a forward record's accepted products)",
}


def build_command(app: typer.Typer) -> Any:
    """The click command of ``app`` with plain metavars and ``--json`` where it applies."""
    command = typer.main.get_command(app)
    json_option = _json_option()
    _full_short_help(command)
    for name, leaf in leaf_commands(command):
        ctx = typer.Context(leaf)
        for param in leaf.params:
            if param.metavar is None and hasattr(param, "display_type"):
                param.metavar = _metavar(param, ctx)
                if param.param_type_name == "argument":  # the name says it: no type tag
                    param.display_type_rich = _no_type
        if not leaf.epilog:
            leaf.epilog = FORMATS_EPILOG
        has_json = any("--json" in getattr(p, "opts", ()) for p in leaf.params)
        if name in JSON_COMMANDS and not has_json:
            leaf.params.append(json_option)
        leaf.params.extend(_limit_options())
    return command
