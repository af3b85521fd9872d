"""Real retro runs for board tests: 40 targets, models that hit chosen targets (a function-backed
model at the injected boundary; data, scoring, rows and reports are the real pipeline)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.engine.base import CallableRetroModel

#: Target i: the product C...CN (i carbons) from C...CBr and ammonia (and water for every
#: fourth, so the reactant-count breakdown has two buckets).
REACTIONS = tuple(f"{'C' * i}Br.N{'.O' if i % 4 == 0 else ''}>>{'C' * i}N" for i in range(1, 41))

#: Per target: 1 = the true reactants first, 2 = second (after a wrong answer), 0 = wrong only.
PATTERNS = {
    "strong": "1" * 36 + "0" * 4,
    "medium": "1" * 26 + "0" * 14,
    "medium-2": "1" * 20 + "0" * 4 + "1" * 4 + "0" * 12,
    "weak": "1" * 10 + "2" * 10 + "0" * 20,
}


def write_data(folder: Path, reactions: Sequence[str] = REACTIONS) -> Path:
    """A data folder with ``test.smi``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.smi").write_text("\n".join(reactions) + "\n")
    return folder


def make_retro_run(
    out: Path,
    pattern: str,
    data: Path,
    *,
    reactions: Sequence[str] = REACTIONS,
    name: str = "fixed",
    matchers: str = "exact",
    limit: int | None = None,
    num_top_results: int = 3,
) -> Path:
    """A retro run folder whose model answers each target as ``pattern`` says."""
    truth = {r.split(">>")[1]: r.split(">>")[0] for r in reactions}
    order = [r.split(">>")[1] for r in reactions]

    def predict(products: list[str]) -> list[list[str]]:
        answers = []
        for product in products:
            code = pattern[order.index(product)]
            wrong = "CO.N"
            answers.append({"1": [truth[product]], "2": [wrong, truth[product]]}.get(code, [wrong]))
        return answers

    options = {
        "data_dir": str(data),
        "model_class": name,
        "num_top_results": num_top_results,
        "matchers": matchers,
        "out": str(out),
        "executor": "serial",
    }
    if limit is not None:
        options["limit"] = limit
    run_retro_eval(RetroEvalConfig.from_options(options), model=CallableRetroModel(predict, name))
    return out


def make_retro_runs(root: Path, names: Sequence[str] = tuple(PATTERNS)) -> dict[str, Path]:
    """One run folder per pattern name, all over the same data file."""
    data = write_data(root / "data")
    return {n: make_retro_run(root / "runs" / n, PATTERNS[n], data, name=n) for n in names}
