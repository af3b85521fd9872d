"""The child side of an open namer: runs inside the namer's own environment (stdlib only).

``python namer_worker.py NAME`` imports the namer, prints one greeting line (JSON: the
namer's version), then answers each input line (a JSON string: one SMILES) with one JSON
line: ``{"name": ...}`` for a name, ``{"abstained": LABEL}`` when the namer declined (its
empty result or failure label), ``{"raised": TYPE: MESSAGE}`` when it raised. Nothing else
is ever written to stdout. ``CHEMGAUGE_NAMER_EXIT_ON`` (a SMILES; tests only) makes the
process exit at once on that input, the way a crash in native code would.
"""

import json
import os
import sys
from collections.abc import Callable
from typing import Any

Namer = Callable[[str], tuple[str | None, Any]]


def _orthonym() -> tuple[str, Namer]:
    import orthonym  # type: ignore[import-not-found]
    from orthonym.errors import is_failure_name  # type: ignore[import-not-found]

    def name(smiles: str) -> tuple[str | None, Any]:
        result = orthonym.name_compound(smiles)
        return None if is_failure_name(result) else result, result

    return str(orthonym.__version__), name


def _openclatura() -> tuple[str, Namer]:
    import openclatura  # type: ignore[import-not-found]

    def name(smiles: str) -> tuple[str | None, Any]:
        result = openclatura.name_smiles(smiles)
        return (result if result and result.strip() else None), result

    return str(openclatura.__version__), name


def _nispo() -> tuple[str, Namer]:
    import nispo  # type: ignore[import-not-found]

    def name(smiles: str) -> tuple[str | None, Any]:
        result = nispo.smiles_to_iupac(smiles)
        return (result if result and result.strip() else None), result

    return str(nispo.__version__), name


LOADERS = {"orthonym": _orthonym, "openclatura": _openclatura, "nispo": _nispo}


def main() -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # a namer that prints cannot break the protocol
    version, name = LOADERS[sys.argv[1]]()
    exit_on = os.environ.get("CHEMGAUGE_NAMER_EXIT_ON")
    out.write(json.dumps({"ready": sys.argv[1], "version": version}) + "\n")
    out.flush()
    for line in sys.stdin:
        smiles = json.loads(line)
        if exit_on is not None and smiles == exit_on:
            os._exit(70)
        try:
            named, raw = name(smiles)
            answer: Any = {"name": named} if named is not None else {"abstained": raw or ""}
        except Exception as error:  # the namer's failure on this molecule
            answer = {"raised": f"{type(error).__name__}: {error}"[:500]}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
