"""Hostile input files and the one rule every reader must follow with them.

The only allowed outcomes of reading a file are: it loads (bad lines counted with a reason),
or a :class:`chemgauge.errors.ChemgaugeError` whose message names the file. Any other
exception is a failure. Shared by the reliability tests and ``bench/reliability.py``.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from chemgauge.errors import ChemgaugeError

DIRECTORY = object()  # marker: the "file" is a folder
TEN_MB = 10 * 1024 * 1024


@functools.lru_cache(maxsize=16)
def hostile_contents(valid: bytes) -> dict[str, bytes | object]:
    """Named hostile variants of a valid file's bytes (the valid file included)."""
    lines = valid.splitlines(keepends=True)
    first, rest = (lines[0], b"".join(lines[1:])) if lines else (b"", b"")
    return {
        "valid": valid,
        "empty": b"",
        "blank_lines": b"\n \n\t\n\n",
        "directory": DIRECTORY,
        "crlf": valid.replace(b"\n", b"\r\n"),
        "bom": b"\xef\xbb\xbf" + valid,
        "lone_cr": valid.replace(b"\n", b"\r"),
        "no_final_newline": valid.rstrip(b"\n"),
        "invalid_utf8": first + b"\xff\xfe\xc3\x28 \x80\n" + rest,
        "invalid_utf8_first": b"\xff" + valid,
        "nul_bytes": valid.replace(b"\n", b"\x00\n", 1) + b"\x00\x00\x00\n",
        "ten_mb_line": first + b"C" * TEN_MB + b"\n" + rest,
        "ten_mb_json_string": first + b'{"x": "' + b"a" * TEN_MB + b'"}\n' + rest,
        "malformed_json": first + b'{"smiles": "CCO", \n{{{\n[1, 2\n}\n"unterminated\n' + rest,
        "non_object_json": first + b'1\n"text"\n[]\nnull\ntrue\n-0.0e5\n' + rest,
        "wrong_types": first
        + b'{"smiles": 5, "name": ["x"], "record_id": 7, "template_id": 3, "smirks": 4}\n'
        + b'{"smiles": null, "name": {"a": 1}, "record_id": null, "smirks": null}\n'
        + b'{"smiles": true, "name": false, "label": "1", "selected_candidate_index": "2"}\n'
        + rest,
        "missing_fields": first + b"{}\n" + b'{"unrelated": 1}\n' + rest,
        "deep_nesting": first + b"[" * 100_000 + b"\n" + b'{"a": ' * 50_000 + b"\n" + rest,
        "surrogate_escapes": first
        + b'{"smiles": "C\\ud800C", "name": "\\udfff", "record_id": "\\ud83d", '
        + b'"template_id": "\\ud800", "smirks": "\\udc00"}\n'
        + rest,
        "huge_numbers": first
        + b'{"smiles": 1e999999, "name": '
        + b"9" * 5000
        + b', "label": 1e400, "selected_candidate_index": 1e309}\n'
        + rest,
        "nan_infinity": first + b'{"smiles": NaN, "name": Infinity, "label": -Infinity}\n' + rest,
        "duplicate_keys": first
        + b'{"smiles": "C", "smiles": "CC", "name": "a", "name": "b"}\n'
        + rest,
        "many_columns": first + b"\t".join([b"C"] * 100_000) + b"\n" + rest,
        "csv_quote_games": first + b'"CCO\n\n", "never closed\n' + rest,
        "utf16": valid.decode("utf-8", "replace").encode("utf-16"),
        "control_chars": first + b"\x1b[31mC\x07C\x08\x7f\tname\n" + rest,
        "binary_noise": bytes(random.Random(7).randrange(256) for _ in range(4096)),
        "duplicate_content": valid + valid,
        "truncated": valid[: max(1, len(valid) * 2 // 3)],
    }


@dataclass(frozen=True, slots=True)
class Outcome:
    """What reading one file did: ``loaded``, ``refused`` (a chemgauge error) or ``uncaught``."""

    kind: str
    detail: str = ""


def materialize(path: Path, content: bytes | object) -> Path:
    """Write a variant at ``path`` (a folder for the directory marker)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if content is DIRECTORY:
        path.mkdir()
    else:
        assert isinstance(content, bytes)
        path.write_bytes(content)
    return path


def try_reader(read: Callable[[Path], object], path: Path, names: str | None = None) -> Outcome:
    """Run a reader under the rule: load, or a chemgauge error naming ``names`` (the file)."""
    try:
        read(path)
    except ChemgaugeError as exc:
        expected = str(path) if names is None else names
        if expected not in str(exc):
            return Outcome("uncaught", f"error does not name {expected}: {exc}"[:500])
        return Outcome("refused", str(exc)[:200])
    except Exception as exc:  # the point: anything else is a reliability failure
        return Outcome("uncaught", f"{type(exc).__name__}: {exc}"[:500])
    return Outcome("loaded")


def mutate(valid: bytes, seed: int, edits: int = 6) -> bytes:
    """Random byte-level edits of a valid file (insert, delete, flip, duplicate, truncate)."""
    rng = random.Random(seed)
    data = bytearray(valid)
    specials = [b"\x00", b"\xff", b"\r", b"\n", b'"', b"{", b"}", b"\t", b",", b"\\"]
    specials.append(b"\xef\xbb\xbf")
    for _ in range(edits):
        op = rng.randrange(5)
        at = rng.randrange(len(data) + 1)
        if op == 0:
            data[at:at] = rng.choice(specials)
        elif op == 1 and data:
            del data[at : at + rng.randrange(1, 8)]
        elif op == 2 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif op == 3 and data:
            end = min(len(data), at + rng.randrange(1, 40))
            data[at:at] = data[at:end]
        else:
            del data[at:]
    return bytes(data)
