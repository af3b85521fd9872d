"""The README's layout section names every part of the package, every family and the parts of
one family's folder."""

from __future__ import annotations

import re
from pathlib import Path

import chemgauge

ROOT = Path(chemgauge.__file__).resolve().parent
README = ROOT.parents[1] / "README.md"


def _layout_block() -> str:
    text = README.read_text()
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```text\n(.*?)```", section, re.S)
    assert match, "README's Layout section has no ```text block"
    return match.group(1)


def _packages(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


def test_layout_lists_every_top_level_package() -> None:
    block = _layout_block()
    listed = set(re.findall(r"^  ([a-z_]+)/", block, re.M))
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert listed == folders


def test_layout_lists_every_family_and_the_parts_of_one() -> None:
    from chemgauge.families import FAMILIES

    block = _layout_block()
    for family in FAMILIES.names():
        assert family in block, family
    for part in ("__init__.py", "cli.py", "adapter.py", "config.py", "engine/", "examples/"):
        assert part in block, part
