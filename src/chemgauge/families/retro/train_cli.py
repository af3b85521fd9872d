"""``chemgauge retro train neuralsym``: train a NeuralSym model folder (arguments only)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import typer

from chemgauge.cli.progress import progress_bar
from chemgauge.errors import ConfigError

__all__ = ["TRAINABLE", "train"]

TRAINABLE = ("neuralsym",)


def train(
    model: str = typer.Argument(..., help="The model to train: neuralsym."),
    out: Path = typer.Option(..., "--out", "-o", help="Model folder to write."),
    data_dir: Path = typer.Option(
        Path("../shared/data/neuralsym"), help="Folder the defaults below are read from."
    ),
    products: Path | None = typer.Option(
        None, help="Training products (default train_products.smi)."
    ),
    labels: Path | None = typer.Option(
        None, help="Template index a line (default labels_train.txt)."
    ),
    templates: Path | None = typer.Option(
        None, help="SMARTS: count lines (default training_templates.txt)."
    ),
    valid_products: Path | None = typer.Option(
        None, help="Validation products (default valid.csv)."
    ),
    valid_labels: Path | None = typer.Option(
        None, help="Validation labels (default labels_valid.txt)."
    ),
    seed: int = typer.Option(1337, help="Seed of initialisation, shuffling and dropout."),
    max_epochs: int | None = typer.Option(None, help="Epochs at most (30)."),
    hidden: int | None = typer.Option(None, help="Hidden width (300)."),
    n_features: int | None = typer.Option(None, help="Fingerprint columns kept (32681)."),
    limit: int | None = typer.Option(None, help="Train on the first N products only."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or epoch lines."),
) -> None:
    """Train NeuralSym (seeded, deterministic, early stopping on the validation split) and
    write weights, templates.txt and manifest.json to --out."""
    from chemgauge.families.retro.engine.neuralsym_train import (
        TrainConfig,
        TrainInputs,
        read_labels,
        train_neuralsym,
    )

    if model not in TRAINABLE:
        raise ConfigError(
            f"retro train: unknown model {model!r} (trainable: {', '.join(TRAINABLE)})"
        )
    defaults = TrainInputs.defaults(data_dir)
    inputs = TrainInputs(
        products or defaults.products,
        labels or defaults.labels,
        templates or defaults.templates,
        valid_products or defaults.valid_products,
        valid_labels or defaults.valid_labels,
    )
    for field in fields(inputs):
        path = getattr(inputs, field.name)
        if path is not None and not path.is_file():
            raise ConfigError(f"retro train: {field.name} file {str(path)!r} does not exist")
    overrides = {"max_epochs": max_epochs, "hidden": hidden, "n_features": n_features}
    config = TrainConfig(seed=seed, **{k: v for k, v in overrides.items() if v is not None})
    rows = len(read_labels(inputs.labels)) if limit is None else limit
    batches = -(-rows // config.batch_size) * config.max_epochs
    with progress_bar("retro train neuralsym (batches)", batches, quiet=quiet, min_total=1) as bar:
        manifest = train_neuralsym(
            inputs,
            out,
            config,
            limit=limit,
            progress=bar,
            log=None if quiet else (lambda line: typer.echo(line, err=True)),
        )
    if not quiet:
        run = manifest["run"]
        typer.echo(
            f"neuralsym: best epoch {manifest['best_epoch']} (valid top-1 "
            f"{100 * manifest['best_valid_top1']:.2f}%), {run['seconds']} s, peak "
            f"{run['peak_rss_mb']} MB; weights {manifest['weights_digest'][:16]} in {out}"
        )
