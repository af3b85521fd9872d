"""``chemgauge examples DIR``: copy the small example inputs shipped in the package.

Every command in the README runs as written in a folder these files were copied to (a test
extracts the README's commands and runs them so). Existing identical files are left alone;
an existing file with other content is never overwritten.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

import typer

from chemgauge.errors import ConfigError
from chemgauge.eval.records import atomic_write_bytes

__all__ = ["copy_examples", "examples"]


def copy_examples(target: Path) -> list[Path]:
    """Copy every shipped example file under ``target``; return the files written."""
    written: list[Path] = []
    with as_file(files("chemgauge").joinpath("examples")) as source:
        sources = sorted(p for p in Path(source).rglob("*") if p.is_file())
        clashes = []
        for path in sources:
            relative = path.relative_to(source)
            if "__pycache__" in relative.parts:
                continue
            destination = target / relative
            data = path.read_bytes()
            if destination.exists():
                if not destination.is_file() or destination.read_bytes() != data:
                    clashes.append(str(destination))
                continue
            written.append(destination)
        if clashes:
            raise ConfigError(
                f"{len(clashes)} example file(s) exist with other content, nothing copied "
                f"(first: {clashes[0]}); choose an empty folder"
            )
        for destination in written:  # atomically: an interrupted copy leaves no half file
            data = (Path(source) / destination.relative_to(target)).read_bytes()
            atomic_write_bytes(destination, data)
    return written


def examples(
    target: Path = typer.Argument(
        Path("."), help="Folder to copy the example inputs into (created if needed)."
    ),
) -> None:
    """Copy the example inputs (SMILES, corpus CSVs, retro predictions, name pairs, images,
    p2s sources) that every README command uses; see EXAMPLES.md in the copy."""
    written = copy_examples(target)
    typer.echo(f"copied {len(written)} example file(s) into {target}", err=True)
