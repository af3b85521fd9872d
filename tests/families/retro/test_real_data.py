"""Real USPTO-50k targets (slow): syntheseus parity, lazy keys on real outputs, templates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from tests.conftest import require_module, shared_file
from tests.families.retro.reading import top_hits

from chemgauge.chem import get_matcher
from chemgauge.chem.reactant_sets import ReactantSetScorer
from chemgauge.families.retro import RetroEvalConfig, run_retro_eval
from chemgauge.families.retro.data import RetroTarget, find_fold_file, load_targets
from chemgauge.families.retro.synthetic import SyntheticSettings, generate_outputs

pytestmark = pytest.mark.slow
N_TARGETS = 150


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data_dir = shared_file("uspto50k/test.csv").parent
    targets = load_targets(find_fold_file(data_dir, "test"), limit=N_TARGETS).targets
    outputs = generate_outputs(targets, SyntheticSettings(seed=7))
    folder = tmp_path_factory.mktemp("retro")
    preds = folder / "predictions.jsonl"
    lines = {
        t.product: orjson.dumps({"product": t.product, "predictions": o}) + b"\n"
        for t, o in zip(targets, outputs, strict=True)
    }
    preds.write_bytes(b"".join(lines.values()))
    return {"data_dir": data_dir, "targets": targets, "outputs": outputs, "preds": preds}


def test_generator_shape(generated: dict[str, Any]) -> None:
    outputs: list[list[str]] = generated["outputs"]
    assert all(len(o) == 50 for o in outputs)
    few = generated["targets"][:5]
    assert generate_outputs(few, SyntheticSettings(seed=7)) == generate_outputs(
        few, SyntheticSettings(seed=7)
    )
    assert generate_outputs(few, SyntheticSettings(seed=8)) != generate_outputs(
        few, SyntheticSettings(seed=7)
    )


def test_syntheseus_convention_equals_syntheseus_compute_metrics(
    generated: dict[str, Any], tmp_path: Path
) -> None:
    require_module("syntheseus")
    from tests.families.retro.syntheseus_parity import syntheseus_eval

    targets: list[RetroTarget] = generated["targets"]
    config = RetroEvalConfig(
        data_dir=str(generated["data_dir"]),
        model_class="predictions",
        model_dir=str(generated["preds"]),
        num_top_results=50,
        limit=N_TARGETS,
        out=str(tmp_path),
        executor="serial",
        include_results_modulo_stereo=True,
    )
    ours = run_retro_eval(config)
    by_product = {t.product: o for t, o in zip(targets, generated["outputs"], strict=True)}
    theirs = syntheseus_eval(generated["data_dir"], by_product, 50, stereo=True, limit=N_TARGETS)
    # the syntheseus-shaped file carries syntheseus's numbers to the last bit
    written = orjson.loads((tmp_path / "syntheseus_results.json").read_bytes())
    for name in ("top_k", "match_modulo_stereo_top_k"):
        assert written[name] == [float(x) for x in getattr(theirs, name)], name
    for name in (
        "num_samples",
        "mrr",
        "match_modulo_stereo_mrr",
        "min_num_predictions",
        "max_num_predictions",
        "mean_num_predictions",
        "median_num_predictions",
    ):
        assert written[name] == getattr(theirs, name), name
    accuracy = ours.report["metrics"]["accuracy"]["syntheseus"]
    assert theirs.num_samples == N_TARGETS
    assert [float(x) for x in theirs.top_k] == accuracy["exact"]["curve"]
    assert [float(x) for x in theirs.match_modulo_stereo_top_k] == accuracy["stereo_ignored"][
        "curve"
    ]
    # MRR: same hits; chemgauge sums with math.fsum, syntheseus left to right
    assert theirs.mrr == pytest.approx(accuracy["exact"]["mrr"]["value"], abs=1e-12)
    assert theirs.match_modulo_stereo_mrr == pytest.approx(
        accuracy["stereo_ignored"]["mrr"]["value"], abs=1e-12
    )
    for row, predictions in zip(ours.rows, theirs.predictions, strict=True):
        first = next(
            (i for i, r in enumerate(predictions) if r.metadata["ground_truth_match"]), None
        )
        assert first == row["hits"]["syntheseus"]["exact"], row["target"]
        assert len(predictions) == row["n_valid_unique"], row["target"]
    # the generated outputs exercise what separates the conventions
    outputs = ours.report["metrics"]["outputs"]
    assert outputs["invalid_rate"]["count"] > 0 and outputs["duplicate_rate"]["count"] > 0
    raw = top_hits(ours.report["metrics"]["accuracy"]["raw_slots"]["exact"], 5)
    assert raw < top_hits(accuracy["exact"], 5)
    assert top_hits(accuracy["stereo_ignored"], 1) > top_hits(accuracy["exact"], 1)


def test_lazy_keys_match_computing_every_key_on_real_outputs(generated: dict[str, Any]) -> None:
    scorer = ReactantSetScorer(["exact", "stereo_ignored"])
    keys = {p: get_matcher(p).key for p in ("exact", "stereo_ignored")}

    def set_key(smiles: str, policy: str) -> tuple[str, ...] | None:
        parts = [keys[policy](c) if c else None for c in smiles.split(".")]
        if any(k is None for k in parts):
            return None
        return tuple(sorted(x for k in parts if k is not None for x in k.split(".")))

    skipped = 0
    for target, outputs in list(zip(generated["targets"], generated["outputs"], strict=True))[:40]:
        result = scorer.compare(target.reactants, outputs, canonical_truth=True)
        skipped += 2 * len(outputs) - result.keys_computed
        for policy in ("exact", "stereo_ignored"):
            truth = set_key(".".join(target.reactants), policy)
            expected = [truth is not None and set_key(o, policy) == truth for o in outputs]
            assert list(result.correct[policy]) == expected, (target.target, policy)
        seen: dict[tuple[str, ...], int] = {}
        first = []
        for rank, o in enumerate(outputs):
            k = set_key(o, "exact")
            first.append(None if k is None else seen.setdefault(k, rank))
        assert list(result.first_seen) == first, target.target
    assert skipped > 0  # the shortcut did avoid work


def test_templates_baseline_on_real_reactions(tmp_path: Path) -> None:
    val = shared_file("uspto50k/val.csv")
    test = shared_file("uspto50k/test_with_class.csv")
    train_dir, data_dir = tmp_path / "model", tmp_path / "data"
    train_dir.mkdir()
    data_dir.mkdir()
    (train_dir / "train.csv").symlink_to(val)  # read in place, never copied
    (data_dir / "test.csv").symlink_to(test)
    config = RetroEvalConfig(
        data_dir=str(data_dir),
        model_class="templates",
        model_dir=str(train_dir),
        model_kwargs={"max_reactions": 150, "save_templates": str(tmp_path / "templates.jsonl")},
        limit=25,
        out=str(tmp_path / "out"),
        executor="serial",
        num_top_results=10,
    )
    run = run_retro_eval(config)
    model = run.report["metrics"]["model"]
    assert model["name"] == "templates" and model["reactions_seen"] == 150
    assert model["templates"] > 50
    assert model["extraction_failures"] < 15
    # the saved file reloads to the same templates
    reloaded = RetroEvalConfig(
        **{
            **config.to_dict(),
            "model_dir": str(tmp_path / "templates.jsonl"),
            "model_kwargs": {},
            "out": str(tmp_path / "out2"),
        }
    )
    again = run_retro_eval(reloaded)
    assert again.report["metrics"]["model"]["templates_sha256"] == model["templates_sha256"]
    assert again.rows == run.rows
    top10 = top_hits(run.report["metrics"]["accuracy"]["syntheseus"]["exact"], 10)
    assert 0 < top10 < 25
    assert "by_class" in run.report["metrics"]


def test_validity_screen_agrees_with_a_full_parse_on_real_outputs(
    generated: dict[str, Any],
) -> None:
    from tests.families.retro.screening import invalid_after_checking_screen

    components = {c for outputs in generated["outputs"] for o in outputs for c in o.split(".")}
    components.discard("")
    invalid = invalid_after_checking_screen(sorted(components))
    assert len(components) > 5000 and invalid > 100  # real outputs, corruptions included
