"""The reference pipeline of item 5, run inside Orthonym's own environment: py2opsin's batch
call on every given name, then orthonym.metrics.coverage_metrics on the same pairs.

    <orthonym-env>/bin/python bench/names_reference_pipeline.py PAIRS.tsv WORK_DIR

PAIRS.tsv has the columns id, smiles, name (bench/names_speed.py writes it). py2opsin reads
all names in one call (one JVM, its temporary input file in WORK_DIR); each pair is then
classified with ``classify_row`` (the read-back looked up from the batch's answers) and the
rows are aggregated with ``aggregate``. Prints the aggregate as JSON.
"""

import json
import os
import sys
import warnings

from orthonym.metrics.coverage_metrics import aggregate, classify_row
from py2opsin import py2opsin


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    header = lines[0].split("\t")
    if header != ["id", "smiles", "name"]:
        sys.exit(f"{sys.argv[1]}:1: expected the columns id, smiles, name, got {header}")
    pairs = [line.split("\t")[1:3] for line in lines[1:]]
    warnings.simplefilter("ignore")  # py2opsin warns with all of OPSIN's stderr
    os.chdir(sys.argv[2])  # py2opsin writes its temporary file in the working folder
    answers = py2opsin([name for _, name in pairs], tmp_fpath="py2opsin_reference.txt")
    if not isinstance(answers, list) or len(answers) != len(pairs):
        sys.exit(f"py2opsin answered {len(answers or [])} of {len(pairs)} names")
    read_back = {name: smiles or None for (_, name), smiles in zip(pairs, answers, strict=True)}
    results = [classify_row(smiles, name, read_back.get) for smiles, name in pairs]
    print(json.dumps(aggregate(results), sort_keys=True))


if __name__ == "__main__":
    main()
