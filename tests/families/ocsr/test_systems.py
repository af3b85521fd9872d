"""The OCSR back-ends are systems under test in one ``Systems`` registry: one factory shape,
"did you mean", the flag a missing option needs, and third-party back-ends through the
``chemgauge.ocsr_systems`` entry-point group (a real installed plugin, in a fresh process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chemgauge.errors import ConfigError, UnknownNameError
from chemgauge.families.ocsr.config import RecognizerOptions
from chemgauge.families.ocsr.engine.http import HttpRecognizer
from chemgauge.families.ocsr.engine.recognizers import (
    CommandRecognizer,
    OsraRecognizer,
    PythonRecognizer,
)
from chemgauge.families.ocsr.engine.registry import OCSR_SYSTEMS, build_recognizer
from chemgauge.families.ocsr.manifest import Manifest

SRC = Path(__file__).resolve().parents[3] / "src"


def test_the_four_back_ends_are_registered_as_ocsr_systems() -> None:
    assert (OCSR_SYSTEMS.kind, OCSR_SYSTEMS.group) == ("ocsr system", "chemgauge.ocsr_systems")
    assert OCSR_SYSTEMS.names()[:4] == ["osra", "command", "http", "python"]


def test_each_factory_builds_its_back_end_from_the_one_options_object() -> None:
    options = RecognizerOptions(
        command=("prog", "{image}"),
        format="smiles",
        url="http://127.0.0.1:9",
        endpoint_model="vision-1",
        reasoning_effort="low",
        callable="math:floor",
    )
    assert isinstance(build_recognizer("osra", options), OsraRecognizer)
    command = build_recognizer("command", options)
    assert isinstance(command, CommandRecognizer) and command.spec.fmt == "smiles"
    http = build_recognizer("http", options)
    assert isinstance(http, HttpRecognizer)
    assert (http.spec.model, http.spec.reasoning_effort) == ("vision-1", "low")
    python = build_recognizer("python", options)
    assert isinstance(python, PythonRecognizer) and python.target == "math:floor"


@pytest.mark.parametrize(
    ("model", "flag"),
    [("command", "--command-arg"), ("http", "--endpoint-model"), ("python", "--callable")],
)
def test_a_missing_option_names_its_flag(model: str, flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        build_recognizer(model)


def test_an_unknown_back_end_fails_with_did_you_mean() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'osra'") as caught:
        build_recognizer("osr")
    assert caught.value.kind == "ocsr system"


def test_a_factory_returning_no_recognizer_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(OCSR_SYSTEMS._entries, "not_a_recognizer", lambda options: object())
    with pytest.raises(ConfigError, match="returned object, not a Recognizer"):
        build_recognizer("not_a_recognizer")


PLUGIN = '''
from chemgauge.families.ocsr.engine.base import COMPLETED, Recognizer, RecognizerOutput


class Ethanol(Recognizer):
    """Reads every image as ethanol."""

    name = "toy"

    def _detect_version(self):
        return "toy 1.0"

    def _recognize(self, image, timeout):
        return RecognizerOutput(COMPLETED, "CCO")


def factory(options):
    """A third-party back-end: every image is ethanol."""
    return Ethanol()
'''


def _install_plugin(site: Path) -> None:
    """A distribution on ``site`` whose entry point adds the back-end ``toy``."""
    site.mkdir()
    (site / "toy_ocsr.py").write_text(PLUGIN)
    info = site / "toy_ocsr-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-ocsr\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[chemgauge.ocsr_systems]\ntoy = toy_ocsr:factory\n")


def test_a_plugin_back_end_runs_through_model_and_is_listed(
    small_cohort: Manifest, tmp_path: Path
) -> None:
    _install_plugin(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(SRC)])}
    out = tmp_path / "out"
    manifest = str(small_cohort.root / "manifest.json")
    argv = ["ocsr", "run", "--manifest", manifest, "-m", "toy", "-o", str(out), "--run", "-q"]
    done = subprocess.run(
        [sys.executable, "-m", "chemgauge", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["backend"] == {"backend": "toy", "version": "toy 1.0"}
    exact = report["metrics"]["finite_reference"]["policies"]["exact"]
    assert exact["completed_exact_over_planned"]["count"] == 1  # the one ethanol image
    listed = subprocess.run(
        [sys.executable, "-m", "chemgauge", "list", "ocsr"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| ocsr system | toy | A third-party back-end: every image is ethanol." in listed
    assert "plugin toy_ocsr:factory |" in listed
