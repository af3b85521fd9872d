"""NeuralSym reproduced: train (or load) chemgauge's numpy NeuralSym, predict top-50, score.

Two target sets: the 5,007 USPTO-50k test reactions (``../shared/data/uspto50k/test.csv``)
and the re-implementation's own 5,005 test reactions (``../shared/data/neuralsym/test.csv``,
written as an unmapped ``test.smi``). One prediction per distinct product, written as a
predictions file; chemgauge scores it under its two conventions (``raw_slots``, the default
first, and ``syntheseus``) and syntheseus's own ``compute_metrics`` scores the same outputs
(parity: syntheseus's top-1..50 curve equals chemgauge's ``syntheseus`` one). The table puts
top-1/3/5/10/50 beside the re-implementation's log and the paper's row.

    .venv/bin/python bench/retro_neuralsym.py --model runs/neuralsym --work /tmp/rns
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from result_files import add_record_options, figure, load_average, record_path, write_result

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
USPTO = SHARED / "uspto50k"
NEURALSYM = SHARED / "neuralsym"
KS = (1, 3, 5, 10, 50)
#: top-1/3/5/10/50 in %, each published row under the metric it was measured with.
#: The re-implementation's training log scores TEMPLATE matching (the network's ranked
#: template indices against labels_test.txt over all 5,005 rows; a reaction whose template is
#: not among the training templates, label 10198, never matches); its README gives its
#: REACTANT-matching accuracy (infer_all.py) as about 45.5% top-1 and 87.4% top-50.
TEMPLATE_PUBLISHED = {
    "re-implementation log (linminhtoo/neuralsym, 5,005 test), template matching": (
        40.28,
        56.70,
        62.06,
        67.43,
        75.08,
    ),
}
REACTANT_PUBLISHED = {
    "re-implementation README (infer_all.py, 5,005 test), reactant matching": (
        45.5,
        None,
        None,
        None,
        87.4,
    ),
    "Segler and Waller 2017 (as tabulated by Dai et al. 2019), reactant matching": (
        44.4,
        65.3,
        72.4,
        78.9,
        None,
    ),
}
TARGET_GAP = 2.0

_MODEL: Any = None


def _init(model_class: str, model_dir: str, kwargs: dict[str, Any]) -> None:
    global _MODEL
    from chemgauge.families.retro.engine.base import RetroModelOptions
    from chemgauge.families.retro.engine.registry import build_retro_model

    options = RetroModelOptions(model_dir=Path(model_dir), model_kwargs=kwargs)
    _MODEL = build_retro_model(model_class, options)


def _predict_chunk(products: list[str]) -> list[list[str]]:
    return [list(o.outputs) for o in _MODEL.predict(products, 50)]


def predict_products(
    model_class: str, model_dir: Path, products: list[str], jobs: int, kwargs: dict[str, Any]
) -> dict[str, list[str]]:
    """Top-50 raw outputs of a registered model for each product, in ``jobs`` processes."""
    chunks = [products[i : i + 16] for i in range(0, len(products), 16)]
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=_init, initargs=(model_class, str(model_dir), kwargs)
    ) as pool:
        outs = [o for chunk in pool.map(_predict_chunk, chunks) for o in chunk]
    return dict(zip(products, outs, strict=True))


def _predict(model_dir: Path, products: list[str], jobs: int, max_templates: int) -> dict:
    return predict_products(
        "neuralsym", model_dir, products, jobs, {"max_templates": max_templates}
    )


def _write_reimpl_fold(folder: Path) -> Path:
    """The re-implementation's test reactions as an unmapped ``test.smi`` fold file."""
    import csv

    folder.mkdir(parents=True, exist_ok=True)
    with (NEURALSYM / "test.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    text = "".join(f"{r['rcts_smi']}>>{r['prod_smi']}\n" for r in rows)
    (folder / "test.smi").write_text(text)
    return folder


def read_reimpl_test(
    folder: Path = NEURALSYM, limit: int | None = None
) -> tuple[list[str], list[int]]:
    """The re-implementation's test products and template labels, row for row.

    ``labels_test.txt`` line i is the label of ``test.csv`` row i: the check is that it
    equals the row's own template index (the last column; that file's ``temp_idx`` and
    ``template`` headers are swapped, so the index sits under ``template``).
    """
    import csv

    labels_path = folder / "labels_test.txt"
    labels = [int(line) for line in labels_path.read_text().splitlines()]
    with (folder / "test.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    if len(rows) != len(labels):
        raise SystemExit(f"{labels_path}: {len(labels)} labels for {len(rows)} test.csv rows")
    for number, (row, label) in enumerate(zip(rows, labels, strict=True), 1):
        if int(row["template"]) != label:
            raise SystemExit(
                f"{labels_path}:{number}: label {label} but test.csv row {number} "
                f"(rxn_idx {row['rxn_idx']}) has template index {row['template']}"
            )
    products = [row["prod_smi"] for row in rows]
    return (products, labels) if limit is None else (products[:limit], labels[:limit])


def template_match(model_dir: Path, limit: int | None) -> tuple[int, int, dict[int, float]]:
    """Template-matching top-k (fraction) on the re-implementation's test rows, as its log."""
    import numpy as np

    from chemgauge.families.retro.engine.neuralsym import NeuralSymRetroModel

    products, labels = read_reimpl_test(limit=limit)
    model = NeuralSymRetroModel(model_dir)
    ranks = model.template_ranks(products, np.asarray(labels))
    no_template = int(np.sum(ranks < 0))
    return len(ranks), no_template, {k: float(np.mean((ranks >= 0) & (ranks < k))) for k in KS}


def _chemgauge(data_dir: Path, preds: Path, out: Path) -> dict[str, Any]:
    from chemgauge.families.retro import RetroEvalConfig, run_retro_eval

    config = RetroEvalConfig(
        data_dir=str(data_dir),
        model_class="predictions",
        model_dir=str(preds),
        num_top_results=50,
        k=KS,
        conventions=("raw_slots", "syntheseus"),
        matchers=("exact",),
        out=str(out),
        restart=True,
        quiet=True,
    )
    run = run_retro_eval(config)
    accuracy = run.report["metrics"]["accuracy"]
    return {
        conv: {
            "n": accuracy[conv]["exact"]["n"],
            "top_k": {r["k"]: r for r in accuracy[conv]["exact"]["top_k"]},
            "curve": accuracy[conv]["exact"].get("curve"),
        }
        for conv in ("raw_slots", "syntheseus")
    }


def _syntheseus(data_dir: Path, raw: dict[str, list[str]]) -> list[float]:
    from syntheseus import Molecule
    from syntheseus.cli.eval_single_step import compute_metrics
    from syntheseus.interface.models import BackwardReactionModel
    from syntheseus.reaction_prediction.data.dataset import DataFold, DiskReactionDataset
    from syntheseus.reaction_prediction.data.reaction_sample import ReactionSample
    from syntheseus.reaction_prediction.utils.inference import (
        process_raw_smiles_outputs_backwards,
    )

    by_smiles = {Molecule(p).smiles: o for p, o in raw.items()}

    class FixedOutputs(BackwardReactionModel):  # type: ignore[misc]
        """The recorded NeuralSym outputs, parsed as syntheseus parses a model's."""

        def _get_reactions(self, inputs: list[Any], num_results: int) -> list[Any]:
            out = []
            for mol in inputs:
                outputs = by_smiles.get(mol.smiles, [])[:num_results]
                out.append(
                    process_raw_smiles_outputs_backwards(mol, outputs, [{} for _ in outputs])
                )
            return out

        def get_parameters(self) -> list[Any]:
            return []

    dataset = DiskReactionDataset(str(data_dir), sample_cls=ReactionSample)
    with contextlib.redirect_stdout(io.StringIO()):
        results = compute_metrics(
            FixedOutputs(remove_duplicates=True),
            dataset=dataset,
            num_dataset_truncation=None,
            num_top_results=50,
            fold=DataFold.TEST,
            include_predictions=False,
        )
    return [float(x) for x in results.top_k]


def _limited(data_dir: Path, limit: int | None, work: Path) -> Path:
    """``data_dir`` itself, or a copy of its test fold's first ``limit`` lines."""
    if limit is None:
        return data_dir
    from chemgauge.families.retro.data import find_fold_file

    source = find_fold_file(data_dir, "test").path
    lines = source.read_text().splitlines(keepends=True)
    keep = lines[: limit + 1] if source.suffix == ".csv" else lines[:limit]
    folder = work / f"limit-{data_dir.name}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / source.name).write_text("".join(keep))
    return folder


def _targets(data_dir: Path) -> list[str]:
    from chemgauge.families.retro.data import find_fold_file, load_targets

    targets = load_targets(find_fold_file(data_dir, "test")).targets
    return list(dict.fromkeys(t.product for t in targets))


def _table(rows: dict[str, tuple[float | None, ...]]) -> str:
    head = "| system | " + " | ".join(f"top-{k}" for k in KS) + " |"
    lines = [head, "|---|" + "---|" * len(KS)]
    for name, values in rows.items():
        cells = ["" if v is None else f"{v:.2f}" for v in values]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=ROOT / "runs" / "neuralsym")
    parser.add_argument("--work", type=Path, default=Path("/tmp/retro-neuralsym"))
    parser.add_argument("--jobs", type=int, default=2, help="prediction worker processes")
    parser.add_argument("--max-templates", type=int, default=200)
    parser.add_argument("--limit", type=int, default=None, help="first N test lines (no record)")
    parser.add_argument(
        "--template-only", action="store_true", help="template matching only (no prediction)"
    )
    add_record_options(parser)
    args = parser.parse_args()
    loads = [load_average()]
    manifest_path = args.model / "manifest.json"
    if not manifest_path.is_file():
        from chemgauge.families.retro.engine.neuralsym_train import TrainInputs, train_neuralsym

        print(f"training into {args.model}", file=sys.stderr)
        train_neuralsym(TrainInputs.defaults(NEURALSYM), args.model, log=print)
    manifest = json.loads(manifest_path.read_text())
    args.work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    n_rows, no_template, matched = template_match(args.model, args.limit)
    seconds_template = time.perf_counter() - start
    template_rows: dict[str, tuple[float | None, ...]] = {
        "chemgauge NeuralSym, re-implementation test (5,005), template matching": tuple(
            100 * matched[k] for k in KS
        ),
        **TEMPLATE_PUBLISHED,
    }
    template_figures = [
        figure(
            "retro",
            f"NeuralSym template-matching top-{k}, re-implementation test (5,005)",
            round(100 * matched[k], 2),
            "%",
            detail=f"n {n_rows}; {no_template} rows labelled with no training template "
            "(a miss at every k)",
        )
        for k in KS
    ]
    published = next(iter(TEMPLATE_PUBLISHED.values()))
    for k, ref in ((1, published[0]), (10, published[3])):
        template_figures.append(
            figure(
                "retro",
                f"NeuralSym template-matching top-{k} gap to the re-implementation's {ref}%, "
                "points",
                round(abs(100 * matched[k] - float(ref or 0)), 2),
                target=f"<= {TARGET_GAP}",
            )
        )
    template_table = _table(template_rows)
    print(template_table + "\n")
    path = record_path(args, "retro_neuralsym_template", full_size=args.limit is None)
    if path is not None and args.results is not None:  # beside the given result file
        path = path.with_name(f"{path.stem}_template.json")
    if path is not None:
        write_result(
            "retro_neuralsym_template",
            title="NeuralSym template matching, the re-implementation's own metric",
            method=(
                f"chemgauge's numpy NeuralSym (weights {manifest['weights_digest'][:12]}, seed "
                f"{manifest['seed']}) ranks the 10,198 training templates for each of the "
                f"re-implementation's {n_rows} test products (test.csv row order; line i of "
                "labels_test.txt checked equal to row i's template index); template-matching "
                "top-k is the share of all rows whose labelled template is among the first k "
                f"(ties by index; the {no_template} rows labelled 10198, no training template, "
                f"miss at every k; {seconds_template:.0f} s). This is the metric of the "
                "re-implementation's logged 40.28 / 67.43% top-1 / top-10, so the 2-point "
                "target applies here (set against reactant matching, the logged figures would "
                "compare two different metrics); the reactant-matching figures, beside the "
                "re-implementation's README (about 45.5 top-1, 87.4 top-50), are the NeuralSym "
                "bench's other table. The paper's row (44.4 / 65.3 / 72.4 / 78.9, Dai et al.'s "
                "tabulation) is reactant matching of Segler and Waller's own model on their own "
                "templates, features and split, so it is compared there, for reference and not "
                "as a target. Top-k %:\n\n" + template_table
            ),
            figures=template_figures,
            load=f"{min(loads)} to {load_average()}",
            path=path,
            script="retro_neuralsym.py",
        )
    if args.template_only:
        return
    figures: list[dict[str, Any]] = []
    sets = {"USPTO-50k test (5,007)": USPTO, "re-implementation test (5,005)": None}
    rows: dict[str, tuple[float | None, ...]] = {}
    parity: list[str] = []
    seconds_predict = 0.0
    for label, data_dir in sets.items():
        slug = "uspto" if data_dir == USPTO else "reimpl"
        if data_dir is None:
            data_dir = _write_reimpl_fold(args.work / "reimpl")
        data_dir = _limited(data_dir, args.limit, args.work)
        products = _targets(data_dir)
        preds = args.work / f"predictions-{slug}.jsonl"
        if preds.is_file() and args.limit is None:  # an earlier run's outputs, same model
            raw = {(o := json.loads(line))["product"]: o["predictions"] for line in preds.open()}
        else:
            start = time.perf_counter()
            raw = _predict(args.model, products, args.jobs, args.max_templates)
            seconds_predict += time.perf_counter() - start
            preds.write_text(
                "".join(json.dumps({"product": p, "predictions": o}) + "\n" for p, o in raw.items())
            )
        loads.append(load_average())
        scored = _chemgauge(data_dir, preds, args.work / f"eval-{slug}")
        theirs = _syntheseus(data_dir, raw)
        ours = [scored["syntheseus"]["top_k"][k]["value"] for k in KS]
        same = all(abs(theirs[k - 1] - v) == 0 for k, v in zip(KS, ours, strict=True))
        parity.append("yes" if same else f"no ({theirs[:1]} vs {ours[:1]})")
        for conv in ("raw_slots", "syntheseus"):
            values = tuple(100 * scored[conv]["top_k"][k]["value"] for k in KS)
            rows[f"chemgauge NeuralSym, {label}, {conv}"] = values
        rows[f"chemgauge NeuralSym, {label}, syntheseus's evaluator"] = tuple(
            100 * theirs[k - 1] for k in KS
        )
        top = scored["raw_slots"]["top_k"]
        for k in KS:
            lo, hi = top[k]["interval"]
            figures.append(
                figure(
                    "retro",
                    f"NeuralSym top-{k}, {label}",
                    round(100 * top[k]["value"], 2),
                    "%",
                    detail=f"95% CI {100 * lo:.1f} to {100 * hi:.1f}; n {scored['raw_slots']['n']}",
                )
            )
        if slug == "reimpl":
            readme = REACTANT_PUBLISHED[next(iter(REACTANT_PUBLISHED))]
            for k, ref in ((1, readme[0]), (50, readme[4])):
                gap = abs(100 * top[k]["value"] - float(ref or 0))
                figures.append(
                    figure(
                        "retro",
                        f"NeuralSym reactant-matching top-{k} gap to the re-implementation's "
                        f"README {ref}%, points",
                        round(gap, 2),
                        target=f"<= {TARGET_GAP}",
                    )
                )
        if slug == "uspto":
            paper = list(REACTANT_PUBLISHED.values())[1]
            diffs = [
                100 * top[k]["value"] - float(ref)
                for k, ref in zip(KS, paper, strict=True)
                if ref is not None
            ]
            figures.append(
                figure(
                    "retro",
                    "NeuralSym reactant-matching minus the paper's row, top-1/3/5/10, "
                    "USPTO-50k test (5,007), points",
                    " / ".join(f"{d:+.2f}" for d in diffs),
                    detail="the paper's own templates, features and split, as tabulated by "
                    "Dai et al. 2019; no target",
                )
            )
    rows.update(REACTANT_PUBLISHED)
    run = manifest["run"]
    figures += [
        figure(
            "retro",
            "NeuralSym syntheseus convention equals syntheseus's evaluator",
            "yes" if all(p == "yes" for p in parity) else "; ".join(parity),
            target="== yes",
        ),
        figure(
            "retro",
            "NeuralSym training time (1 BLAS thread)",
            round(run["seconds"] / 60, 1),
            "min",
            target="<= 15",
            detail=f"wall; CPU {run.get('cpu_seconds', 'n/a')} s; best epoch "
            f"{manifest['best_epoch']} of {len(manifest['curve'])}",
        ),
        figure(
            "retro",
            "NeuralSym training peak memory",
            round(run["peak_rss_mb"] / 1024, 2),
            "GB",
            target="<= 4",
        ),
        figure(
            "retro",
            "NeuralSym prediction, sets predicted in this run",
            round(seconds_predict / 60, 1),
            "min",
        ),
    ]
    table = _table(rows)
    (args.work / "table.md").write_text(template_table + "\n\n" + table + "\n")
    print(table)
    method = (
        "chemgauge's numpy NeuralSym (highway-ELU, 300 hidden, 32,681 ln(1+count) ECFP4 "
        "columns, 10,198 training templates; weights "
        f"{manifest['weights_digest'][:12]}, seed {manifest['seed']}, trained "
        f"{run['seconds'] / 60:.1f} min, peak {run['peak_rss_mb'] / 1024:.2f} GB, load "
        "during training as on this line's date) predicts top-50 for each distinct "
        f"product (at most {args.max_templates} templates applied with rdchiral, "
        f"{args.jobs} processes); chemgauge and syntheseus's compute_metrics score the same "
        "outputs. This table is reactant matching (the ranked reactant sets against the "
        "recorded reactants), the metric of the re-implementation's README (infer_all.py, "
        "about 45.5 top-1, 87.4 top-50) and of the paper's row; the re-implementation's "
        "logged 40.28 / 67.43 top-1 / top-10 are template matching, measured like for like "
        "in the NeuralSym template-matching bench (same script). Reactant matching "
        "(top-k %):\n\n" + table
    )
    path = record_path(args, "retro_neuralsym", full_size=args.limit is None)
    if path is not None:
        write_result(
            "retro_neuralsym",
            title="NeuralSym on USPTO-50k, reproduced with numpy",
            method=method,
            figures=figures,
            load=f"{min(loads)} to {max(loads)}",
            path=path,
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"bench peak RSS {peak:.0f} MB, pid {os.getpid()}", file=sys.stderr)


if __name__ == "__main__":
    main()
