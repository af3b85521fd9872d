"""NeuralSym: a tiny model trained on real USPTO-50k products in seconds, twice, same bytes."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from tests.conftest import shared_file
from typer.testing import CliRunner

from chemgauge.cli.app import app
from chemgauge.errors import ConfigError
from chemgauge.families.retro.engine.base import RetroModelOptions
from chemgauge.families.retro.engine.neuralsym import (
    NeuralSymRetroModel,
    rank_templates,
    template_ranks,
)
from chemgauge.families.retro.engine.neuralsym_features import FeatureMap, select_features
from chemgauge.families.retro.engine.neuralsym_train import (
    TrainConfig,
    TrainInputs,
    read_labels,
    read_products,
    read_templates,
    train_neuralsym,
)
from chemgauge.families.retro.engine.registry import build_retro_model

TINY = TrainConfig(hidden=32, n_features=2048, batch_size=50, max_epochs=12, patience=12, lr=5e-3)
CLASSES = 6
PER_CLASS = 50


def _write_tiny(folder: Path) -> TrainInputs:
    """The six most common templates among the first 3,000 training products, 50 products
    each for training and 10 more each for validation (labels renumbered 0..5)."""
    products = read_products(shared_file("neuralsym/train_products.smi"))[:3000]
    labels = read_labels(shared_file("neuralsym/labels_train.txt"))[:3000]
    templates = read_templates(shared_file("neuralsym/training_templates.txt"))
    common = [t for t, _ in Counter(labels.tolist()).most_common(CLASSES)]
    train: list[tuple[str, int]] = []
    valid: list[tuple[str, int]] = []
    for new, old in enumerate(common):
        rows = [p for p, y in zip(products, labels, strict=True) if y == old]
        train += [(p, new) for p in rows[:PER_CLASS]]
        valid += [(p, new) for p in rows[PER_CLASS : PER_CLASS + 10]]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "products.smi").write_text("".join(f"{p}\n" for p, _ in train))
    (folder / "labels.txt").write_text("".join(f"{y}\n" for _, y in train))
    (folder / "valid.smi").write_text("".join(f"{p}\n" for p, _ in valid))
    (folder / "valid_labels.txt").write_text("".join(f"{y}\n" for _, y in valid))
    (folder / "templates.txt").write_text("".join(f"{templates[t]}: 1\n" for t in common))
    return TrainInputs(
        folder / "products.smi",
        folder / "labels.txt",
        folder / "templates.txt",
        folder / "valid.smi",
        folder / "valid_labels.txt",
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("neuralsym")
    inputs = _write_tiny(root / "data")
    first = train_neuralsym(inputs, root / "a", TINY)
    second = train_neuralsym(inputs, root / "b", TINY)
    return {"inputs": inputs, "a": root / "a", "b": root / "b", "manifests": (first, second)}


def test_same_seed_same_weight_bytes(tiny: dict[str, Any]) -> None:
    first, second = tiny["manifests"]
    assert first["weights_digest"] == second["weights_digest"]
    for name in ("head_w", "head_b", "out_w", "out_b", "features"):
        a = (tiny["a"] / f"{name}.npy").read_bytes()
        assert a == (tiny["b"] / f"{name}.npy").read_bytes()


def test_another_seed_other_weights(tiny: dict[str, Any], tmp_path: Path) -> None:
    other = train_neuralsym(tiny["inputs"], tmp_path, replace(TINY, seed=2, max_epochs=1))
    assert other["weights_digest"] != tiny["manifests"][0]["weights_digest"]


def test_manifest_records_data_hyperparameters_and_curve(tiny: dict[str, Any]) -> None:
    manifest = orjson.loads((tiny["a"] / "manifest.json").read_bytes())
    assert manifest["seed"] == TINY.seed
    assert manifest["hyperparameters"]["hidden"] == 32
    assert manifest["data"]["train_rows"] == len(read_labels(tiny["inputs"].labels))
    assert len(manifest["data"]["products"]["sha256"]) == 64
    assert manifest["curve"] and manifest["curve"][0]["epoch"] == 1
    assert manifest["templates"]["count"] == CLASSES
    assert 1 <= manifest["best_epoch"] <= TINY.max_epochs


def test_training_product_predicted_with_its_own_template_first(tiny: dict[str, Any]) -> None:
    model = NeuralSymRetroModel(tiny["a"])
    products = read_products(tiny["inputs"].products)
    labels = read_labels(tiny["inputs"].labels)
    picks = [0, PER_CLASS, 2 * PER_CLASS]  # one product of each of three templates
    ranked = rank_templates(model.logits([products[i] for i in picks]), 1)[:, 0]
    assert ranked.tolist() == [int(labels[i]) for i in picks]
    for i in picks:
        own = model._apply(products[i], np.array([labels[i]]), 50)
        assert own, "the product's own template applies to it"
        assert model.predict([products[i]], 10)[0].outputs[0] == own[0]


def test_template_ranks_follow_the_prediction_order_and_no_template_never_matches() -> None:
    logits = np.array([[0.1, 0.9, 0.9, 0.0], [2.0, 1.0, 0.5, 3.0], [1.0, 1.0, 1.0, 1.0]])
    order = rank_templates(logits, 4)
    labels = np.array([2, 0, 3])
    ranks = template_ranks(logits, labels)
    # the rank is the label's position in the order the templates are applied (ties by index)
    assert ranks.tolist() == [order[i].tolist().index(y) for i, y in enumerate(labels)]
    assert ranks.tolist() == [1, 1, 3]
    # one past the last template is the re-implementation's "no template" label: a miss
    assert template_ranks(logits, np.array([4, -1, 1])).tolist() == [-1, -1, 1]
    with pytest.raises(ValueError, match="3 logit rows for 2 labels"):
        template_ranks(logits, np.array([0, 1]))


def test_training_products_match_their_labelled_templates(tiny: dict[str, Any]) -> None:
    model = NeuralSymRetroModel(tiny["a"])
    products = read_products(tiny["inputs"].products)
    labels = read_labels(tiny["inputs"].labels)
    ranks = model.template_ranks(products, labels)
    top1 = rank_templates(model.logits(products), 1)[:, 0]
    assert ((ranks == 0) == (top1 == labels)).all()
    assert float(np.mean(ranks == 0)) > 0.5  # a trained model ranks most of its own labels first
    assert (model.template_ranks(products[:3], np.full(3, CLASSES)) == -1).all()


def test_registered_and_described(tiny: dict[str, Any]) -> None:
    model = build_retro_model("neuralsym", RetroModelOptions(model_dir=tiny["a"]))
    info = model.describe()
    assert info["weights_digest"] == tiny["manifests"][0]["weights_digest"]
    assert info["training_data"]["products"]["name"] == "products.smi"
    with pytest.raises(ConfigError, match="max_templates"):
        build_retro_model(
            "neuralsym", RetroModelOptions(model_dir=tiny["a"], model_kwargs={"beam": 3})
        )
    with pytest.raises(ConfigError, match="manifest"):
        build_retro_model("neuralsym", RetroModelOptions(model_dir=tiny["inputs"].products.parent))


def test_train_command_writes_a_model_folder(tiny: dict[str, Any], tmp_path: Path) -> None:
    inputs = tiny["inputs"]
    result = CliRunner().invoke(
        app,
        [
            "retro",
            "train",
            "neuralsym",
            "--products",
            str(inputs.products),
            "--labels",
            str(inputs.labels),
            "--templates",
            str(inputs.templates),
            "--valid-products",
            str(inputs.valid_products),
            "--valid-labels",
            str(inputs.valid_labels),
            "--max-epochs",
            "1",
            "--hidden",
            "8",
            "--n-features",
            "256",
            "--out",
            str(tmp_path / "model"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "best epoch 1" in result.output
    assert (tmp_path / "model" / "manifest.json").is_file()
    refused = CliRunner().invoke(app, ["retro", "train", "rnn", "--out", str(tmp_path / "x")])
    assert refused.exit_code != 0


def test_feature_selection_keeps_the_most_variable_columns() -> None:
    products = ["CCO", "CCN", "c1ccccc1O", "CC(=O)O"]
    kept = select_features(products, 5)
    assert len(kept) == 5 and list(kept) == sorted(kept)
    # a column every product has with the same count has zero variance and is never kept
    # while fewer than all columns are kept
    everywhere = select_features(["C", "C", "C"], 1)
    assert len(everywhere) == 1
    x = FeatureMap(kept).transform(products)
    assert x[0].tolist()[0] == 0 and x[0][-1] == len(x[1])
    assert float(x[2].max()) > 0


def test_similarity_baseline_puts_the_nearest_training_products_template_first(
    tiny: dict[str, Any], tmp_path: Path
) -> None:
    inputs = tiny["inputs"]
    for source, name in (
        (inputs.products, "train_products.smi"),
        (inputs.labels, "labels_train.txt"),
        (inputs.templates, "training_templates.txt"),
    ):
        (tmp_path / name).write_bytes(source.read_bytes())
    model = build_retro_model("similarity", RetroModelOptions(model_dir=tmp_path))
    products = read_products(inputs.products)
    labels = read_labels(inputs.labels)
    reference = NeuralSymRetroModel(tiny["a"])
    for i in (0, PER_CLASS):
        order = model.template_order(products[i])  # type: ignore[attr-defined]
        assert order[0] == labels[i] and len(order) == len(set(order))
        own = reference._apply(products[i], np.array([labels[i]]), 50)
        assert model.predict([products[i]], 5)[0].outputs[0] == own[0]
    assert model.describe()["training_products"] == len(products)
    with pytest.raises(ConfigError, match="lacks"):
        build_retro_model("similarity", RetroModelOptions(model_dir=tmp_path / "none"))


def test_retro_eval_records_the_model_manifest(tiny: dict[str, Any], tmp_path: Path) -> None:
    from chemgauge.families.retro import RetroEvalConfig, run_retro_eval

    model = NeuralSymRetroModel(tiny["a"])
    products = read_products(tiny["inputs"].products)[::PER_CLASS][:3]
    firsts = [o.outputs[0] for o in model.predict(products, 5)]
    data = tmp_path / "data"
    data.mkdir()
    (data / "test.smi").write_text(
        "".join(f"{r}>>{p}\n" for r, p in zip(firsts, products, strict=True))
    )
    config = RetroEvalConfig(
        data_dir=str(data),
        model_class="neuralsym",
        model_dir=str(tiny["a"]),
        num_top_results=5,
        out=str(tmp_path / "run"),
        quiet=True,
    )
    report = run_retro_eval(config).report
    block = report["metrics"]["model"]
    assert block["name"] == "neuralsym"
    assert block["weights_digest"] == tiny["manifests"][0]["weights_digest"]
    assert len(block["manifest_sha256"]) == 64
    assert report["metrics"]["accuracy"]["syntheseus"]["exact"]["top_k"][0]["value"] == 1.0
