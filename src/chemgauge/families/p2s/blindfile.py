"""Blinded task streams for systems run outside chemgauge (``p2s blind`` and
``p2s score --blind-key``).

``write_blind`` writes one ``<property>.jsonl`` per directory: every view's tasks interleaved
in a random order under fresh opaque ids (the order and ids of a blind ``p2s run``), and a
private key file mapping each opaque id to its view and record id. Hand the system only the
task streams; ``split_predictions`` turns its answers back into a run folder of per-view
prediction files that ``p2s score --out`` scores.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from chemgauge.errors import InputFileError
from chemgauge.eval.atomic import atomic_write_bytes, atomic_write_json
from chemgauge.families.p2s.runner import _blind_stream, _opaque_id
from chemgauge.families.p2s.spec import CONDITIONS
from chemgauge.families.p2s.viewindex import index_dataset

__all__ = ["BLIND_KEY_SCHEME", "split_predictions", "write_blind"]

BLIND_KEY_SCHEME = 1


def write_blind(
    data_dir: str | Path, out_dir: str | Path, key_path: str | Path, directories: Sequence[str]
) -> dict[str, int]:
    """Write the blinded streams to ``out_dir`` and the private key to ``key_path``; return
    the task count per directory."""
    dataset = index_dataset(data_dir)
    chosen = list(directories) or list(dataset)
    out = Path(out_dir)
    mapping: dict[str, list[str]] = {}
    counts = {}
    for directory in chosen:
        if directory not in dataset:
            raise InputFileError(f"no property directory {directory!r}", path=Path(data_dir))
        key = secrets.token_hex(16)
        stream = _blind_stream({c: dataset[directory][c] for c in CONDITIONS}, key)
        lines = []
        for condition, task in stream:
            opaque = _opaque_id(key, condition, task.record_id)
            mapping[f"{directory}/{opaque}"] = [condition, task.record_id]
            lines.append(orjson.dumps({**task.to_json(), "record_id": opaque}) + b"\n")
        atomic_write_bytes(out / f"{directory}.jsonl", b"".join(lines))
        counts[directory] = len(lines)
    atomic_write_json(
        Path(key_path),
        {"blind_key_scheme": BLIND_KEY_SCHEME, "note": "private: never give it to a system",
         "map": mapping},
    )  # fmt: skip
    return counts


def split_predictions(
    key_path: str | Path, predictions: dict[str, Path], run_dir: str | Path
) -> dict[str, Any]:
    """Map a system's answers (``directory -> prediction JSONL`` over its blinded stream)
    back to ``<run>/<directory>/<condition>.jsonl``; lines whose id the key does not know are
    counted and dropped (their tasks are then missing)."""
    key = orjson.loads(Path(key_path).read_bytes())
    mapping = key.get("map", {}) if isinstance(key, dict) else {}
    unknown = 0
    for directory, path in predictions.items():
        by_view: dict[str, list[bytes]] = {c: [] for c in CONDITIONS}
        for line in Path(path).read_bytes().splitlines():
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                unknown += 1
                continue
            found = (
                mapping.get(f"{directory}/{row.get('record_id')}")
                if isinstance(row, dict)
                else None
            )
            if found is None:
                unknown += 1
                continue
            condition, record_id = found
            by_view[condition].append(orjson.dumps({**row, "record_id": record_id}) + b"\n")
        for condition, rows in by_view.items():
            atomic_write_bytes(Path(run_dir) / directory / f"{condition}.jsonl", b"".join(rows))
    atomic_write_json(
        Path(run_dir) / "run_manifest.json",
        {"config": {"presentation": "blind", "model": {"name": Path(run_dir).name}}},
    )
    return {"unknown_lines": unknown}
