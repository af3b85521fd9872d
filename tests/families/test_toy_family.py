"""A sixth family is one folder and one registration: the toy family in ``toy/`` is copied
elsewhere, registered, and then the command line, ``list``, ``examples``, the loader's schema
checks, ``verify``, ``report`` and ``board`` all treat it as they treat the built-ins."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chemgauge.cli.app import make_app
from chemgauge.cli.examples import copy_examples
from chemgauge.cli.listing import entries
from chemgauge.errors import InputFileError
from chemgauge.eval.metrics import write_metrics_schema
from chemgauge.families import FAMILIES, get_family
from chemgauge.report.loading import load_run
from chemgauge.report.verify import verify_run

TOY = Path(__file__).parent / "toy" / "toy_family"


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[Path]:
    """The toy folder copied to a fresh place on sys.path and its Family registered."""
    site = tmp_path / "site"
    shutil.copytree(TOY, site / "toy_family")
    sys.path.insert(0, str(site))
    from toy_family.family import FAMILY

    FAMILIES.register("toy", FAMILY)
    write_metrics_schema(FAMILY.metrics_model(), "toy metrics", FAMILY.metrics_schema_path())
    try:
        yield tmp_path
    finally:
        FAMILIES._entries.pop("toy")  # the registry is process-wide
        sys.path.remove(str(site))
        for name in [m for m in sys.modules if m.split(".")[0] == "toy_family"]:
            del sys.modules[name]


def test_a_registered_family_gets_every_shared_command(
    toy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(toy)
    copied = {p.relative_to(toy).as_posix() for p in copy_examples(toy)}
    assert "toy/words.txt" in copied
    assert ("family", "toy", "does a system upper-case each word?", "built in") in entries()
    assert ("toy system", "echo", "echoes", "built in") in entries()
    runner = CliRunner()
    for model in ("upper", "echo"):
        done = runner.invoke(
            make_app(), ["toy", "run", "toy/words.txt", "-m", model, "--out", f"runs/{model}"]
        )
        assert done.exit_code == 0, done.output
    assert (
        json.loads((toy / "runs/echo/report.json").read_text())["metrics"]["accuracy"]["count"] == 1
    )
    run = load_run(toy / "runs/echo")
    assert verify_run(run).ok
    assert runner.invoke(make_app(), ["report", "runs/upper", "--out", "r.html"]).exit_code == 0
    board = runner.invoke(make_app(), ["board", "runs", "--out", "board"])
    assert board.exit_code == 0, board.output
    table = (toy / "board/board.md").read_text()
    assert table.index("upper") < table.index("echo")  # 3/3 ranks above 1/3


def test_a_report_of_another_version_or_shape_is_refused(toy: Path) -> None:
    from toy_family.runner import run

    (toy / "words.txt").write_text("a b\n")
    run(toy / "words.txt", "upper", toy / "run")
    report = toy / "run/report.json"
    data = json.loads(report.read_text())
    report.write_text(json.dumps({**data, "family_schema_version": 2}))
    with pytest.raises(InputFileError, match="schema version 2; this chemgauge reads version 1"):
        load_run(toy / "run")
    data["metrics"]["accuracy"]["ci95"] = [0, 1]
    report.write_text(json.dumps(data))
    with pytest.raises(InputFileError, match=r"metrics\.accuracy\.ci95: Extra inputs"):
        load_run(toy / "run")
    assert get_family("toy").schema_version == 1
