"""The forward leakage audit on real data: USPTO-50k val + test, exact and near-duplicate.

Converts ``val.csv`` and ``test_with_class.csv`` with ``corpus-from-uspto`` (patent ids as
group keys, so the harness's 70/15/15 split keeps a patent in one split), then prints, for
reactant sets and products, how many keys occur in more than one split exactly and how many
more once spectators are removed and stereo is ignored, with the frequent molecules found
and the first near-duplicate reactant sets. Run:
``PYTHONPATH=src python bench/forward_leakage_uspto.py [--data ../shared/data/uspto50k]``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from chemgauge.families.forward.corpus import load_corpus
from chemgauge.families.forward.leakage import LeakageAudit
from chemgauge.families.forward.uspto import write_uspto_corpus

DATA = Path(
    os.environ.get("CHEMGAUGE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA / "uspto50k")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        files = [args.data / "val.csv", args.data / "test_with_class.csv"]
        write_uspto_corpus(files, corpus)
        reactions = load_corpus(corpus).reactions
    with LeakageAudit() as audit:
        for reaction in reactions:
            audit.add_reaction(reaction)
        result = audit.result()
    near = result["near_duplicates"]
    print(f"{len(reactions)} valid reactions")
    for kind in ("reactant_sets", "products"):
        exact, close = result[kind]["shared_across_splits"], near[kind]["shared_across_splits"]
        print(f"{kind}: shared across splits exactly {exact}, as near-duplicates {close}")
    print(f"frequent molecules (spectators): {near['spectators']['frequent_molecules_total']}")
    for example in near["reactant_sets"]["examples"][:5]:
        print(json.dumps(example))


if __name__ == "__main__":
    main()
