"""JSON-object lines read through the one line reader, every rejection counted."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from chemgauge.eval.lines import read_lines
from chemgauge.eval.rejections import RejectionStats

__all__ = ["duplicate_key", "json_object", "read_jsonl"]


#: A JSON string followed by a colon: in valid JSON, exactly the object keys.
_KEY = re.compile(r'"(?:[^"\\]|\\.)*"\s*:')


def _count_keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_count_keys(v) for v in value.values())
    if isinstance(value, list):  # scalars hold no keys: a list of strings costs no calls
        return sum(_count_keys(v) for v in value if isinstance(v, (dict, list)))
    return 0


def duplicate_key(text: str, parsed: Any) -> str | None:
    """The first key an object of ``text`` repeats (JSON parsers keep the last silently),
    or ``None``. Cheap: only a line with more key tokens than the parsed objects hold keys is
    parsed again to name the key."""
    keys = _count_keys(parsed)
    if text.count(":") <= keys or len(_KEY.findall(text)) <= keys:
        return None
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and not repeated:
                repeated.append(key)
            seen.add(key)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return repeated[0] if repeated else None


def json_object(text: str) -> dict[str, Any] | str:
    """The JSON object on one line, or why it is not one (the detail of a ``malformed_json``
    rejection): not JSON, not an object, or an object with a key given twice."""
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    if not isinstance(obj, dict):
        return "line is not a JSON object"
    repeated = duplicate_key(text, obj)
    if repeated is not None:
        return f"key {repeated!r} appears twice (which one to keep is not yours to guess)"
    return obj


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
