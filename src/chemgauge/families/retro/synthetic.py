"""A seeded generator of raw retro outputs for real targets (tests and benchmarks).

For each target: the true reactant set at a random rank or absent, stereo-free spellings of
the truth (so ``exact`` and ``stereo_ignored`` disagree), decoys taken from other targets,
about 10% invalid strings and about 10% duplicates re-spelled. Every spelling is random
SMILES; draws come from ``numpy.random.Generator`` seeded by (seed, target line), so the
same targets and settings always give the same outputs (decoys depend on the target pool).
Outputs are a function of the product, as a model's are: a product that recurs gets the
outputs of its first occurrence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from chemgauge.chem.spelling import Speller, corrupt_smiles, stereo_free_spelling
from chemgauge.errors import SmilesError
from chemgauge.eval.executors import ExecutorConfig, ItemFailure, make_executor
from chemgauge.families.retro.data import RetroTarget

__all__ = ["SyntheticSettings", "generate_outputs"]


@dataclass(frozen=True, slots=True)
class SyntheticSettings:
    """Shape of the generated outputs (recorded with benchmark results)."""

    seed: int = 20240607
    outputs_per_target: int = 50
    invalid_rate: float = 0.10
    duplicate_rate: float = 0.10
    truth_absent_rate: float = 0.25
    stereo_free_rate: float = 0.5
    mean_truth_rank: float = 4.0


def _spell(components: Sequence[str], rng: np.random.Generator, speller: Speller) -> str:
    parts = [speller.spell(c, int(rng.integers(0, 2**31 - 1))) for c in components]
    order = rng.permutation(len(parts))
    return ".".join(parts[i] for i in order)


def generate_outputs(
    targets: Sequence[RetroTarget],
    settings: SyntheticSettings | None = None,
    *,
    executor: ExecutorConfig | None = None,
) -> list[list[str]]:
    """Raw ranked outputs for each target, in target order (identical on any executor)."""
    s = settings or SyntheticSettings()
    pool = [t.reactants for t in targets]
    # a model's outputs are a function of the product: a product that recurs (USPTO-50k has
    # such lines) gets the outputs generated for its first occurrence
    first: dict[str, int] = {}
    for index, target in enumerate(targets):
        first.setdefault(target.product, index)
    items = [
        (index, target.line, target.reactants)
        for index, target in enumerate(targets)
        if first[target.product] == index
    ]
    runner = make_executor(executor or ExecutorConfig(kind="serial", jobs=1))
    result: list[list[str]] = []
    try:
        for out in runner.map(partial(_generate_chunk, pool, s), items, chunk_size=128):
            if isinstance(out, ItemFailure):
                raise RuntimeError(f"output generation failed: {out.detail}")
            result.append(out)
    finally:
        runner.close()
    by_first = dict(zip((item[0] for item in items), result, strict=True))
    return [by_first[first[target.product]] for target in targets]


def _generate_chunk(
    pool: list[tuple[str, ...]],
    s: SyntheticSettings,
    items: list[tuple[int, int, tuple[str, ...]]],
) -> list[list[str]]:
    speller = Speller()
    return [_generate_one(pool, s, index, line, truth, speller) for index, line, truth in items]


def _generate_one(
    pool: list[tuple[str, ...]],
    s: SyntheticSettings,
    index: int,
    line: int,
    truth: tuple[str, ...],
    speller: Speller,
) -> list[str]:
    n = s.outputs_per_target
    rng = np.random.default_rng([s.seed, line])
    outputs: list[str | None] = [None] * n
    if rng.random() >= s.truth_absent_rate:
        rank = min(n - 1, int(rng.exponential(s.mean_truth_rank)))
        outputs[rank] = _spell(truth, rng, speller)
        flat = [stereo_free_spelling(c) for c in truth]
        if any(f is not None for f in flat) and rng.random() < s.stereo_free_rate:
            comps = [f or c for f, c in zip(flat, truth, strict=True)]
            before = [r for r in range(rank) if outputs[r] is None]
            if before:
                outputs[int(rng.choice(before))] = _spell(comps, rng, speller)
    for rank in range(n):
        if outputs[rank] is not None:
            continue
        draw = rng.random()
        if draw < s.invalid_rate:
            other = pool[int(rng.integers(0, len(pool)))]
            outputs[rank] = corrupt_smiles(_spell(other, rng, speller), int(rng.integers(0, 3)))
        elif draw < s.invalid_rate + s.duplicate_rate and rank > 0:
            source = outputs[int(rng.integers(0, rank))] or ""
            try:
                outputs[rank] = _spell(source.split("."), rng, speller)
            except SmilesError:  # an invalid earlier output: repeat it verbatim
                outputs[rank] = source
        else:
            j = int(rng.integers(0, len(pool) - 1)) if len(pool) > 1 else 0
            j = j + 1 if len(pool) > 1 and j >= index else j
            outputs[rank] = _spell(pool[j], rng, speller)
    return [o for o in outputs if o is not None]
