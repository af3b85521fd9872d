"""``chemgauge matchers``: the identity policies, what each forgives, and verdicts on pairs."""

from __future__ import annotations

import typer
from rich.table import Table

from chemgauge.chem import MATCHERS, get_matcher
from chemgauge.cli.summary import print_table

# Known pairs that pin each policy's claim; the same pairs are asserted in the tests.
KNOWN_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("(R)- vs (S)-alanine", "C[C@@H](N)C(=O)O", "C[C@H](N)C(=O)O"),
    ("(R)- vs (S)-2-chlorobutane", "CC[C@@H](C)Cl", "CC[C@H](C)Cl"),
    ("(R)-2-chlorobutane vs no stereo", "CC[C@@H](C)Cl", "CCC(C)Cl"),
    ("E- vs Z-2-butene", "C/C=C/C", "C/C=C\\C"),
    ("2-hydroxypyridine vs 2-pyridone", "Oc1ccccn1", "O=c1cccc[nH]1"),
    ("acetone vs propen-2-ol", "CC(C)=O", "CC(O)=C"),
    ("glycine zwitterion vs neutral", "[NH3+]CC(=O)[O-]", "NCC(=O)O"),
    ("sodium acetate vs acetic acid", "CC(=O)[O-].[Na+]", "CC(=O)O"),
    ("13C-ethanol vs ethanol", "[13CH3]CO", "CCO"),
    ("acylium CC#[O+] vs C[C+]=O", "CC#[O+]", "C[C+]=O"),
    ("CH3Hg+ bonded vs disconnected", "C[Hg+]", "[CH3].[Hg+]"),
    ("aromatic vs Kekule benzene", "c1ccccc1", "C1=CC=CC=C1"),
    ("[CH3][OH] vs CO", "[CH3][OH]", "CO"),
    ("empty vs empty", "", ""),
)


def matchers(
    pair: tuple[str, str] | None = typer.Option(
        None, "--pair", help="Compare two SMILES under every policy."
    ),
    known: bool = typer.Option(False, "--known", help="Verdicts on the known test pairs."),
) -> None:
    """List the identity policies and what each forgives; optionally judge pairs."""
    table = Table(title="chemgauge identity policies")
    table.add_column("policy", style="bold")
    table.add_column("what it forgives")
    for name in MATCHERS.names():
        table.add_row(name, get_matcher(name).claim)
    print_table(table)
    pairs: list[tuple[str, str, str]] = []
    if pair is not None:
        pairs.append(("your pair", pair[0], pair[1]))
    if known:
        pairs.extend(KNOWN_PAIRS)
    if pairs:
        verdicts = Table(title="same structure?")
        verdicts.add_column("pair")
        for name in MATCHERS.names():
            verdicts.add_column(name, justify="center")
        for label, a, b in pairs:
            cells = ["yes" if get_matcher(n).match(a, b) else "-" for n in MATCHERS.names()]
            verdicts.add_row(label, *cells)
        print_table(verdicts)
