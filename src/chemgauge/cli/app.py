"""The ``chemgauge`` command: a Typer app whose family modules only parse arguments.

Exit statuses, the same for every command (:data:`EXIT_STATUSES`, also in ``--help``):

* 0: success.
* 1: a check failed: ``verify`` found differences between a report and its rows, ``p2s
  audit`` found a leak or a tell.
* 2: a usage or input error, in one line on stderr without a traceback: a bad option, a
  refused input, a data problem under ``--strict``, an output that would clobber an input or
  another output, another run writing the same outputs, a full disk.
* 3: an input file that does not exist (``verify``: a recorded input that cannot be found).
* 129, 130, 143: stopped by SIGHUP, Ctrl-C (SIGINT) or SIGTERM; child processes are stopped
  first, no output is replaced, and the same command resumes the run.

Standard output closed early (the reader of a pipe exited) ends the command quietly.

A run imports only the command it names (``chemgauge p2s build`` never loads the forward or
board code: 0.1-0.3 s of every start, by command); help, an unknown name and the ``app``
attribute build the whole command tree.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import signal
import sys
from typing import Any, NoReturn

import typer

import chemgauge
from chemgauge.cli.scripting import build_command
from chemgauge.errors import ChemgaugeError, excerpt, printable
from chemgauge.eval import lifeline
from chemgauge.eval.interrupts import install_handlers, interrupted, stop_descendants
from chemgauge.families import FAMILIES, get_family

EXIT_STATUSES = (
    "Exit status: 0 ok; 1 a check failed (verify, p2s audit); 2 usage or input error (one line on "
    "stderr: a bad option or file, a --strict data problem, an output that would clobber an "
    "input, another run writing the same outputs, a full disk); 3 a missing input file; "
    "129/130/143 stopped by SIGHUP/Ctrl-C/SIGTERM (children stopped, rerun to resume)."
)

#: Top-level command name -> the module of ``chemgauge.cli`` that defines it (families are
#: Typer sub-apps named like their module; ``report`` registers three commands).
COMMAND_MODULES = {
    "canon": "canon",
    "matchers": "matchers",
    "list": "listing",
    "examples": "examples",
    "report": "report",
    "compare": "report",
    "verify": "report",
    "board": "board",
}
# Each benchmark family is a registered Family (chemgauge.families.FAMILIES) whose ``cli``
# is a Typer sub-app; it is imported for real, so a broken one fails loudly.


def _version(value: bool) -> None:
    if value:
        from rdkit import rdBase

        typer.echo(f"chemgauge {chemgauge.__version__} (RDKit {rdBase.rdkitVersion})")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Honest, reproducible benchmarks for chemical structure-prediction systems."""


#: The function of a top-level command, where it is not named like the command.
_FUNCTIONS = {"list": "list_command"}
_SHORT_HELP = {"board": "Rank many runs: intervals, pairwise tests, letter groups."}


def _register(root: typer.Typer, command: str) -> None:
    """Add one top-level command (a family: its sub-app) to the root app; ``report``,
    ``compare`` and ``verify`` come together from their module."""
    if command not in COMMAND_MODULES:
        family_app = get_family(command).app()
        family_app.rich_markup_mode = None
        root.add_typer(family_app, name=command)
        return
    module_name = COMMAND_MODULES[command]
    module = importlib.import_module(f"chemgauge.cli.{module_name}")
    if module_name == "report":
        module.register(root)
    else:
        function = getattr(module, _FUNCTIONS.get(command, command))
        root.command(command, short_help=_SHORT_HELP.get(command))(function)


def make_app(command: str | None = None) -> typer.Typer:
    """The ``chemgauge`` app: every command, or only the top-level ``command`` (a run needs
    no other module)."""
    root = typer.Typer(
        name="chemgauge",
        help="Honest, reproducible benchmarks for chemical structure-prediction systems.",
        epilog=EXIT_STATUSES,
        no_args_is_help=True,
        # Plain help (no boxes, no type tags) and -h everywhere: see chemgauge.cli.scripting.
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    root.callback()(_root)
    if command is not None:
        _register(root, command)
        return root
    for name in COMMAND_MODULES:
        if name not in ("compare", "verify"):  # registered with report
            _register(root, name)
    for family in FAMILIES.names():
        _register(root, family)
    return root


def _requested(argv: list[str]) -> str | None:
    """The top-level command a command line runs, when it names a known one and is not a
    request for the top-level help or version; otherwise ``None`` (build every command)."""
    if not argv or argv[0].startswith("-"):
        return None
    name = argv[0]
    return name if name in COMMAND_MODULES or name in FAMILIES else None


_FULL_APP: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    """``app``: the whole command tree, built on first use (tests, help, documentation)."""
    global _FULL_APP
    if name == "app":
        if _FULL_APP is None:
            _FULL_APP = make_app()
        return _FULL_APP
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# OS errors that are the environment's, not a bug: reported in one line, like a ChemgaugeError.
_ENVIRONMENT_ERRORS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EFBIG, errno.EMFILE, errno.ENFILE}
)


# Click's usage errors (Typer re-exports the class, or vendors Click, by version): the base
# class of typer.BadParameter named ClickException.
_USAGE_ERROR: Any = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def describe_usage_error(exc: Any) -> str:
    """Click's usage error as one line: the command, Click's message and where help is."""
    message = " ".join(str(exc.format_message()).split())
    ctx = getattr(exc, "ctx", None)
    if ctx is None:
        return message
    return f"{ctx.command_path}: {message} (see '{ctx.command_path} -h')"


def _fail(message: str, code: int) -> NoReturn:
    stop_descendants()
    typer.secho(f"error: {printable(excerpt(message, 1000))}", err=True, fg=typer.colors.RED)
    sys.exit(code)


def _interrupted() -> NoReturn:
    stop_descendants()
    signum = interrupted() or signal.SIGINT
    name = signal.Signals(signum).name
    typer.secho(
        f"interrupted ({name}): no output was replaced; rerun the same command to resume",
        err=True,
    )
    sys.exit(128 + signum)


def main() -> None:
    """Console entry point (exit statuses in the module docstring): a user-fixable error is
    one line on stderr, without a traceback; SIGTERM, SIGHUP and Ctrl-C stop every child
    process first."""
    install_handlers()
    lifeline.enable()
    try:
        code = build_command(make_app(_requested(sys.argv[1:])))(standalone_mode=False)
    except ChemgaugeError as exc:
        _fail(str(exc), exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _interrupted()
    except _USAGE_ERROR as exc:  # a bad option or argument: one line, exit 2
        _fail(describe_usage_error(exc), exc.exit_code)
    except BrokenPipeError:  # the reader of stdout went away (`| head`): stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        stop_descendants()
        sys.exit(141)
    except OSError as exc:
        if exc.errno not in _ENVIRONMENT_ERRORS:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        _fail(f"{where}{exc.strerror or exc}", 2)
    if interrupted() is not None:  # Typer turns KeyboardInterrupt into a plain exit 130
        _interrupted()
    sys.exit(code if isinstance(code, int) else 0)
