"""JSON-object lines read through the one line reader, every rejection counted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from chemgauge.eval.lines import read_lines
from chemgauge.eval.rejections import RejectionStats

__all__ = ["json_object", "read_jsonl"]


def json_object(text: str) -> dict[str, Any] | str:
    """The JSON object on one line, or why it is not one (the detail of a ``malformed_json``
    rejection)."""
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    return obj if isinstance(obj, dict) else "line is not a JSON object"


def read_jsonl(path: str | Path, stats: RejectionStats) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each JSON-object line; blank lines are skipped silently.

    Lines that are not JSON objects are counted as ``malformed_json`` in ``stats``, lines
    that are not UTF-8 as ``invalid_utf8``.
    """
    for number, text, *_ in read_lines(path, stats):
        if not text.strip():
            continue
        obj = json_object(text)
        if isinstance(obj, str):
            stats.reject(number, "malformed_json", text, obj)
            continue
        yield number, obj
