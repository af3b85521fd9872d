"""``chemgauge toy``: argument parsing only."""

from pathlib import Path

import typer

app = typer.Typer(help="Toy family: does a system upper-case each word?")


@app.command()
def run(
    words: Path = typer.Argument(..., help="A file of words."),
    model: str = typer.Option("upper", "--model", "-m", help="The system under test."),
    out: Path = typer.Option(Path("runs/toy"), "--out", "-o", help="The run folder."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
) -> None:
    """Score a system on every word."""
    from toy_family.runner import run as run_words

    report = run_words(words, model, out)
    if not quiet:
        typer.echo(f"accuracy {report['metrics']['accuracy']['value']}")
