"""The retro family's ``chemgauge list`` lines: models, ranking conventions, forward models."""

from __future__ import annotations

from chemgauge.families import ListEntry
from chemgauge.registry import describe_entries

__all__ = ["entries"]

_MODELS = {
    "predictions": "precomputed ranked outputs from a JSONL file (model_dir=)",
    "templates": "rdchiral template baseline extracted from the training fold",
}
_CONVENTIONS = {
    "syntheseus": "invalid outputs dropped, duplicates removed (syntheseus's ranking)",
    "raw_slots": "an invalid output keeps its rank slot",
}
_FORWARD = {"chemgauge": "chemgauge's template forward predictor (embedded rules)"}


def entries() -> list[ListEntry]:
    """Models (with the syntheseus model classes), conventions and round-trip forward models."""
    from chemgauge.families.retro.engine.registry import RETRO_MODELS
    from chemgauge.families.retro.roundtrip import FORWARD_MODELS

    rows = describe_entries("retro model", RETRO_MODELS, _MODELS)
    rows.append(("retro model", "syntheseus:<ModelClass>", "a syntheseus model class", "built in"))
    rows.extend(("retro convention", n, line, "built in") for n, line in _CONVENTIONS.items())
    rows.extend(describe_entries("forward model", FORWARD_MODELS, _FORWARD))
    return rows
