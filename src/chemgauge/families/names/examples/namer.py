"""A tiny example namer for `chemgauge names coverage --namer-cmd`: reads one SMILES a line
on standard input and writes one name a line on standard output (an empty line abstains)."""

import sys

NAMES = {
    "CCO": "ethanol",
    "CC(=O)O": "acetic acid",
    "c1ccccc1": "benzene",
    "CC(C)O": "propan-1-ol",  # wrong on purpose: OPSIN reads it back as CCCO
}


def main() -> None:
    """Answer each input line as soon as it arrives (the harness streams)."""
    for line in sys.stdin:
        print(NAMES.get(line.strip(), ""), flush=True)


if __name__ == "__main__":
    main()
