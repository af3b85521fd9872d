"""The docs' file-format page: every JSON example parses and every shipped example is named."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "files.md"


def test_every_json_example_parses() -> None:
    blocks = re.findall(r"^```json\n(.*?)^```", PAGE.read_text(), re.M | re.S)
    assert len(blocks) >= 8
    for block in blocks:
        json.loads(block)


def test_every_shipped_example_file_is_listed() -> None:
    examples = ROOT / "src" / "chemgauge" / "examples"
    listing = (examples / "EXAMPLES.md").read_text()
    for path in examples.rglob("*"):
        if path.is_file() and path.name != "EXAMPLES.md" and "__pycache__" not in path.parts:
            folder = path.parent.relative_to(examples).as_posix()
            named = path.relative_to(examples).as_posix()
            assert named in listing or f"`{folder}/*{path.suffix}`" in listing, named
