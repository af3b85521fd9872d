"""What report, compare, verify and board need to know about the toy family."""

from collections.abc import Mapping
from typing import Any

from chemgauge.eval.provenance import sha256_json
from chemgauge.report.adapter import FamilyAdapter, Rate, Recomputed, Section
from chemgauge.report.runs import Run
from toy_family.runner import aggregate


class ToyAdapter(FamilyAdapter):
    """Adapter for runs written by ``chemgauge toy run``."""

    family = "toy"

    def item_key(self, row: Mapping[str, Any]) -> str:
        return str(row["word"])

    def hit_metrics(self, run: Run) -> tuple[str, ...]:
        return ("hit",)

    def hits(self, row: Mapping[str, Any], run: Run) -> Mapping[str, bool | None]:
        return {"hit": bool(row["hit"])}

    def comparison_protocol(self, run: Run) -> dict[str, Any]:
        return {"words_sha256": sha256_json(sorted(r["word"] for r in run.rows))}

    def recompute(self, run: Run) -> Recomputed:
        return Recomputed(aggregate(run.rows))

    def headline(self, run: Run) -> list[Rate]:
        return [Rate.of("accuracy", run.metrics["accuracy"])]

    def sections(self, run: Run, *, max_failures: int) -> list[Section]:
        return []

    def system_name(self, run: Run) -> str:
        return str(run.config["model"])
