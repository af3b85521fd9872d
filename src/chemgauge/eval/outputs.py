"""Output guards: every output path of a command is checked before any work starts.

Refused, each with a one-line message naming the option: an output that is the same file
as an input or as another output (same inode, or same resolved path before it exists); an
output that is an existing directory, device, FIFO, socket or other non-regular file
(``/dev/stdout`` included: outputs are written to a temporary file and renamed into place,
which would replace the device entry, so a special file is refused rather than written
through); an output whose folder cannot be created or written. A folder output lists the
files the command writes inside it, and each is checked the same way.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chemgauge.errors import OutputPathError
from chemgauge.eval.runlock import run_lock

__all__ = ["Output", "OutputPathError", "check_outputs", "claim_outputs"]


@dataclass(frozen=True)
class Output:
    """One output of a command: the option that names it and its path.

    ``folder`` makes it a folder output, ``files`` the names written inside it (each checked
    like a file output); ``derived`` are extra files beside a file output (a journal).
    """

    option: str
    path: Path
    files: tuple[str, ...] = ()
    derived: tuple[Path, ...] = field(default=())
    folder: bool = False

    @property
    def is_folder(self) -> bool:
        """Whether the output is a folder (the run lock then lives inside it)."""
        return self.folder or bool(self.files)


@dataclass(frozen=True)
class _Named:
    label: str
    path: Path


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _resolved(path: Path) -> str:
    return os.path.realpath(path)


def _same(a: Path, b: Path) -> bool:
    """One file (same inode, hard links included) or one path once symlinks are resolved."""
    identity = _identity(a)
    return (identity is not None and identity == _identity(b)) or _resolved(a) == _resolved(b)


def _special(path: Path) -> str | None:
    """Why ``path`` (following symlinks) cannot be an output, or ``None``."""
    # /dev/stdout names whatever fd 1 is (a terminal, a pipe, or a redirected regular file):
    # judged by the name given as well as by where it leads.
    for name in (os.path.abspath(path), _resolved(path)):
        if name.startswith(("/dev/", "/proc/")) or name in ("/dev", "/proc"):
            return f"is a special file ({name})"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be checked ({exc.strerror})"
    if stat.S_ISREG(mode):
        return None
    return f"is {_kind(mode)}"


def _folder_problem(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (created later if missing), or ``None``."""
    probe = folder
    while True:
        try:
            mode = os.stat(probe).st_mode
        except FileNotFoundError:
            if probe.parent == probe:
                return None
            probe = probe.parent
            continue
        except OSError as exc:
            return f"its folder {probe} cannot be checked ({exc.strerror})"
        if not stat.S_ISDIR(mode):
            return f"{probe} is a file, not a folder"
        if not os.access(probe, os.W_OK | os.X_OK):
            return f"its folder {probe} is not writable"
        return None


def _files(outputs: Iterable[Output]) -> list[_Named]:
    named: list[_Named] = []
    for output in outputs:
        if output.is_folder:
            named += [
                _Named(f"{output.option} ({name})", output.path / name) for name in output.files
            ]
        else:
            named.append(_Named(output.option, output.path))
        named += [_Named(f"{output.option} ({p.name})", p) for p in output.derived]
    return named


def _check_folder(output: Output) -> None:
    try:
        mode = os.stat(output.path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        why = f"cannot be checked ({exc.strerror})"
        raise OutputPathError(f"{output.option} {output.path} {why}") from None
    if mode is not None and not stat.S_ISDIR(mode):
        kind = "a file" if stat.S_ISREG(mode) else _kind(mode)
        raise OutputPathError(f"{output.option} {output.path} is {kind}; give a folder")
    problem = _folder_problem(output.path)
    if problem is not None:
        raise OutputPathError(f"{output.option} {output.path}: {problem}")


def check_outputs(
    outputs: Sequence[Output], inputs: Sequence[tuple[str, Path | None]] = ()
) -> None:
    """Refuse any output that would clobber an input or another output, or cannot be
    written (see the module docstring); called by every command before any work starts.

    Args:
        outputs: what the command writes.
        inputs: ``(option, path)`` of everything it reads (``None`` entries are skipped).
    """
    sources = [_Named(option, Path(path)) for option, path in inputs if path is not None]
    for output in outputs:
        if str(output.path) in ("", "-"):
            raise OutputPathError(f"{output.option} must be a path, got {str(output.path)!r}")
        if output.is_folder:
            _check_folder(output)
            for source in sources:
                if _same(output.path, source.path):
                    raise OutputPathError(
                        f"{output.option} is the same folder as {source.label} "
                        f"({source.path}); choose another folder"
                    )
    named = _files(outputs)
    for index, out in enumerate(named):
        problem = _folder_problem(out.path.parent)
        if problem is not None:
            raise OutputPathError(f"{out.label} {out.path}: {problem}")
        why = _special(out.path)
        if why is not None:
            raise OutputPathError(
                f"{out.label} {out.path} {why}; outputs are written to a temporary file and "
                "renamed into place, so give a regular file path"
            )
        for source in sources:
            if _same(out.path, source.path):
                raise OutputPathError(
                    f"{out.label} is the same file as {source.label} ({source.path}); "
                    "choose another path"
                )
        for other in named[:index]:
            if _same(out.path, other.path):
                raise OutputPathError(
                    f"{out.label} is the same file as {other.label} ({other.path}); "
                    "choose another path"
                )


@contextlib.contextmanager
def claim_outputs(
    outputs: Sequence[Output],
    inputs: Sequence[tuple[str, Path | None]] = (),
    *,
    command: str | None = None,
) -> Iterator[None]:
    """Check every output (:func:`check_outputs`), then hold the run lock of each
    (:func:`~chemgauge.eval.runlock.run_lock`) until the block ends: what every command
    that writes files does before any work."""
    check_outputs(outputs, inputs)
    with run_lock([(o.path, o.is_folder) for o in outputs], command):
        yield
