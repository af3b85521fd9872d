"""Run inside Orthonym's own environment: orthonym.metrics.coverage_metrics on a chemgauge
run's names, with OPSIN's read-backs from the run's rows as the injected round trip.

    <orthonym-env>/bin/python bench/names_reference_check.py RUN/rows.jsonl

Prints the module's aggregate (JSON). Names chemgauge counts as abstained (or a namer's
timeout or crash) are passed as ``None``; every other name is passed as emitted, and its
read-back is what OPSIN answered chemgauge (``None`` when it answered none).
"""

import json
import sys

from orthonym.metrics.coverage_metrics import aggregate, classify_row


def main():
    with open(sys.argv[1], encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    read_back = {r["name"]: r["opsin_smiles"] for r in rows if r["emitted"]}
    results = [
        classify_row(r["smiles"], r["name"] if r["emitted"] else None, read_back.get) for r in rows
    ]
    print(json.dumps(aggregate(results), sort_keys=True))


if __name__ == "__main__":
    main()
