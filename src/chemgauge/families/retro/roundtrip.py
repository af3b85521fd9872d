"""Round trip: does a forward model re-predict the target product from a proposed reactant set?

Named definition reported (:data:`ROUND_TRIP_DEFINITION`): ``round_trip_coverage@k`` is the
fraction of *all* targets for which at least one of the first ``k`` proposals, counted in the
``syntheseus`` convention (invalid outputs dropped, duplicates removed), is re-predicted by the
forward model to yield the target product (exact canonical match of one product molecule)
among its top ``round_trip_num_results`` candidates. This is syntheseus's back-translation
top-k. It is not rxn-metrics' round-trip accuracy (the share of all predictions that
round-trip), which is reported next to it as ``round_trip_proposal_rate``: round-tripping
proposals over proposals checked. A proposal for which the forward model has no candidate at
all is a failure and is counted separately (``no_candidates``): with a small rule set that
count says how much of a low number is forward-model coverage rather than retro quality.
"""

from __future__ import annotations

from collections.abc import Callable

from chemgauge.errors import SmilesError
from chemgauge.registry import Registry

__all__ = ["ROUND_TRIP_DEFINITION", "ROUND_TRIP_MODELS", "build_forward_function"]

ROUND_TRIP_DEFINITION = (
    "round_trip_coverage@k: share of all targets with at least one of the first k "
    "syntheseus-convention proposals whose forward re-prediction (top round_trip_num_results "
    "candidates) contains the target product (exact); = syntheseus back-translation top-k. "
    "round_trip_proposal_rate: round-tripping proposals / proposals checked."
)

ForwardFunction = Callable[[list[str]], list[list[str]]]
ForwardFactory = Callable[[], ForwardFunction]

#: Forward models usable for round trips (calculators of the harness, not systems under
#: test); plugins use entry-point group ``chemgauge.round_trip_models`` (a zero-argument
#: factory returning the function).
ROUND_TRIP_MODELS: Registry[ForwardFactory] = Registry(
    "round-trip model", group="chemgauge.round_trip_models"
)


def _chemgauge_engine() -> ForwardFunction:
    from chemgauge.families.forward.engine.predictor import ForwardConfig, predict_products_detailed
    from chemgauge.families.forward.engine.rules import load_embedded_rules

    rules = load_embedded_rules()
    config = ForwardConfig(max_results=10, balance=False)

    def forward(reactant_sets: list[str]) -> list[list[str]]:
        out: list[list[str]] = []
        for reactants in reactant_sets:
            try:
                report = predict_products_detailed([reactants], rules, config)
            except SmilesError:
                out.append([])
                continue
            out.append([c.smiles for c in report.candidates])
        return out

    return forward


ROUND_TRIP_MODELS.register("chemgauge", _chemgauge_engine)


def build_forward_function(name: str) -> ForwardFunction:
    """Build a forward function by name ("did you mean" on a typo)."""
    return ROUND_TRIP_MODELS.get(name)()
