"""Path confinement: a path named inside a manifest or data file must stay under its root.

A manifest that says ``../../etc/passwd``, ``/home/me/.ssh/id_rsa`` or names a symlink that
points outside the data folder is refused with an error naming the root and the value, so a
hostile data set can neither read nor overwrite files elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from chemgauge.errors import InputFileError

__all__ = ["confined_path"]


def _refusal(relative: str) -> str | None:
    if not relative or not relative.strip():
        return "empty path"
    if "\x00" in relative:
        return "path contains a NUL byte"
    posix, windows = PurePosixPath(relative), PureWindowsPath(relative)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or windows.root:
        return "absolute paths are not allowed"
    if ".." in posix.parts or ".." in windows.parts:
        return "'..' is not allowed"
    return None


def confined_path(root: str | Path, relative: str | Path, *, must_exist: bool = False) -> Path:
    """Resolve ``relative`` under ``root``; refuse anything that could leave the root.

    Refused: empty paths, NUL bytes, absolute paths (POSIX or Windows, drive letters and UNC
    included), any ``..`` component, and paths whose resolved location (following every
    symlink, in the root itself or below it) is outside the resolved root.

    Returns:
        The resolved path (symlinks followed), which lies inside the resolved root.

    Raises:
        InputFileError: naming the root and the offending value.
    """
    text = os.fspath(relative)
    problem = _refusal(text)
    base = Path(root)
    if problem is not None:
        raise InputFileError(f"path escapes its root folder {base}: {problem}", value=text)
    try:
        real_root = base.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise InputFileError(f"root folder is not accessible ({exc})", path=base) from None
    if not real_root.is_dir():
        raise InputFileError("root is not a folder", path=base)
    try:
        target = (real_root / text).resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # a symlink loop raises RuntimeError before 3.13
        raise InputFileError(f"path cannot be resolved ({exc})", path=base, value=text) from None
    if not target.is_relative_to(real_root):
        raise InputFileError(
            f"path escapes its root folder {base} (through a symlink to {target})", value=text
        )
    if must_exist and not target.exists():
        raise InputFileError(f"file not found under {base}", value=text)
    return target
