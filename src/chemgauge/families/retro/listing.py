"""The retro family's ``chemgauge list`` lines: models, ranking conventions, round-trip models."""

from __future__ import annotations

from chemgauge.families import ListEntry
from chemgauge.registry import describe_entries

__all__ = ["entries"]

_MODELS = {
    "predictions": "precomputed ranked outputs from a JSONL file (model_dir=)",
    "templates": "rdchiral template baseline extracted from the training fold",
    "neuralsym": "NeuralSym template classifier trained by 'retro train neuralsym' (model_dir=)",
    "similarity": "templates of the most similar training products, RetroSim-like (model_dir=)",
    "syntheseus": "a syntheseus backward model class",
}
_CONVENTIONS = {
    "syntheseus": "invalid outputs dropped, duplicates removed (syntheseus's ranking)",
    "raw_slots": "an invalid output keeps its rank slot",
}
_FORWARD = {"chemgauge": "chemgauge's template forward predictor (embedded rules)"}


def entries() -> list[ListEntry]:
    """Models (the syntheseus ones as ``syntheseus:<ModelClass>``), conventions and the
    forward models of the round trip."""
    from chemgauge.families.retro.engine.registry import RETRO_SYSTEMS, SYNTHESEUS
    from chemgauge.families.retro.roundtrip import ROUND_TRIP_MODELS

    rows = [
        (kind, f"{name}:<ModelClass>" if name == SYNTHESEUS else name, line, origin)
        for kind, name, line, origin in describe_entries(RETRO_SYSTEMS.kind, RETRO_SYSTEMS, _MODELS)
    ]
    rows.extend(("retro convention", n, line, "built in") for n, line in _CONVENTIONS.items())
    rows.extend(describe_entries(ROUND_TRIP_MODELS.kind, ROUND_TRIP_MODELS, _FORWARD))
    return rows
