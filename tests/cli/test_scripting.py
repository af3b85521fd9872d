"""The command as scripts and newcomers meet it: -h, plain help, --json that parses, Markdown
tables when piped (never cut), negative counts refused, `chemgauge list` and `examples`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.table import Table

from chemgauge.cli import summary
from chemgauge.cli.examples import copy_examples
from chemgauge.cli.listing import entries
from chemgauge.errors import ConfigError

BIN = Path(sys.executable).parent


def _chemgauge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        ["chemgauge", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_short_help_plain_text_and_no_type_tags() -> None:
    for command in ([], ["canon"], ["forward", "benchmark"], ["p2s", "build"], ["verify"]):
        done = _chemgauge(*command, "-h")
        assert done.returncode == 0, done.stderr
        text = done.stdout
        assert "Usage:" in text and "-h, --help" in text
        for tag in ("<bool>", "<str>", "<path>", "<int>", "list[", "╭", "│"):
            assert tag not in text, (command, tag, text)
        assert command == [] or "docs/files.md" in text  # where the formats are described
    # Command lists give each command's whole first paragraph, never cut with '...'.
    for group in ([], ["forward"], ["p2s"]):
        listing = _chemgauge(*group, "-h").stdout
        assert "..." not in listing.split("Commands:")[1], listing
    # Paragraphs are rewrapped, not cut at the docstring's own line breaks.
    canon_help = _chemgauge("canon", "-h").stdout
    assert "the key, followed by a tab" in " ".join(canon_help.split())


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["verify", ".", "--show", "-1"], "--show"),
        (["report", ".", "--max-failures", "-1"], "--max-failures"),
        (["compare", ".", ".", "--max-items", "-1"], "--max-items"),
        (["ocsr", "run", "--manifest", "m.json", "--max-requests", "-1"], "--max-requests"),
        (["ocsr", "run", "--manifest", "m.json", "--repeats", "0"], "--repeats"),
        (["p2s", "build", "s.smi", "--candidates", "1"], "--candidates"),
    ],
)
def test_negative_counts_are_refused(args: list[str], option: str, tmp_path: Path) -> None:
    done = _chemgauge(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert f"Invalid value for '{option}'" in done.stderr, done.stderr


def test_piped_tables_are_markdown_and_never_cut(capsys: pytest.CaptureFixture[str]) -> None:
    long_cell = "p=0.0000123456789 " * 20
    table = summary.summary_table(
        "a title [with brackets]", ["metric", "value"], [["x|y", long_cell]]
    )
    summary.print_summary(table, notes=["a note"])
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "a title [with brackets]",
        "| metric | value |",
        "|---|---:|",
        f"| x\\|y | {long_cell} |",
        "a note",
    ]


def test_json_mode_prints_one_parsable_object(capsys: pytest.CaptureFixture[str]) -> None:
    table = Table(title="t")
    table.add_column("a")
    table.add_row("1")
    summary.set_json(True)
    try:
        summary.print_summary(table, notes=["n"])
    finally:
        summary.set_json(False)
    out = capsys.readouterr()
    assert out.err == ""
    assert json.loads(out.out) == {
        "tables": [{"title": "t", "columns": ["a"], "rows": [["1"]]}],
        "notes": ["n"],
    }


def test_family_summary_json_parses_and_keeps_full_numbers(tmp_path: Path) -> None:
    copy_examples(tmp_path)
    args = ["forward", "enumerate", "-i", "forward/reactants.smi", "-o", "runs/c.jsonl"]
    done = _chemgauge(*args, "--executor", "serial", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    [table] = document["tables"]
    assert table["title"].startswith("forward enumerate: 3 reactions")
    assert any("[" in cell for row in table["rows"] for cell in row)  # rate with its interval
    listing = json.loads(_chemgauge("list", "--json").stdout)
    assert listing["tables"][0]["columns"] == ["kind", "name", "what it is", "from"]


def _fresh_entries() -> list[tuple[str, str, str, str]]:
    """The listing as a fresh process sees it: other tests register stand-ins in-process."""
    code = "import json; from chemgauge.cli.listing import entries; print(json.dumps(entries()))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [tuple(row) for row in json.loads(done.stdout)]  # type: ignore[misc]


def test_list_names_every_registry_with_its_origin() -> None:
    rows = _fresh_entries()
    assert {row[:2] for row in rows} <= {row[:2] for row in entries()}
    kinds = {kind for kind, *_ in rows}
    assert {
        "identity policy",
        "retro system",
        "retro convention",
        "ocsr system",
        "p2s system",
        "property provider",
        "round-trip model",
        "names system",
        "family",
    } <= kinds
    names = {(kind, name) for kind, name, _, _ in rows}
    assert ("identity policy", "parity") in names and ("property provider", "xtb") in names
    assert all(line and line != "-" for _, _, line, _ in rows)
    assert {origin for *_, origin in rows} == {"built in"}
    done = _chemgauge("list", "ret")
    assert done.returncode == 0 and "| retro system | predictions |" in done.stdout
    assert "identity policy" not in done.stdout
    assert _chemgauge("list", "nothing").returncode == 2


def test_examples_copy_is_idempotent_and_never_overwrites(tmp_path: Path) -> None:
    written = copy_examples(tmp_path)
    assert (tmp_path / "names" / "pairs.tsv") in written
    assert (tmp_path / "retro" / "predictions.jsonl").is_file()
    assert copy_examples(tmp_path) == []  # identical files are left alone
    (tmp_path / "molecules.smi").write_text("changed\n")
    with pytest.raises(ConfigError, match="other content"):
        copy_examples(tmp_path)
    assert (tmp_path / "molecules.smi").read_text() == "changed\n"


def test_public_eval_names() -> None:
    from chemgauge.eval import split_bucket, wilson_interval

    assert 0 <= split_bucket("group") < 100
    assert wilson_interval(1, 2).estimate == 0.5


def test_stringio_stream_is_no_terminal() -> None:
    # print_table decides by the stream, so a captured or redirected stream gets Markdown.
    assert not io.StringIO().isatty()
