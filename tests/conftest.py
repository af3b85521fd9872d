"""Shared fixtures: paths to the real public data in ../shared/data (never copied here), and
the one way a test gives up on a missing dependency (skip locally, fail under CI)."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CHEMGAUGE_SHARED_DATA", REPO.parent / "shared" / "data"))


def _expected_sha256(relative: str) -> str | None:
    sums = SHARED_DATA / "SHA256SUMS"
    if not sums.exists():
        return None
    for line in sums.read_text().splitlines():
        digest, _, name = line.partition("  ")
        if name.strip().removeprefix("./") == relative:
            return digest
    return None


def in_ci() -> bool:
    """True when the ``CI`` environment variable is set to anything but empty/0/false/no."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(what: str, hint: str = "") -> NoReturn:
    """Give up on a test whose dependency is absent: a skip on a developer's machine, a failure
    naming the dependency under CI (where ``make test`` installs everything), so a check
    against an outside reference never drops out of a green CI run unseen."""
    message = f"{what} is missing" + (f" ({hint})" if hint else "")
    if in_ci():
        pytest.fail(f"CI={os.environ['CI']}: {message}; make test must provide it", pytrace=False)
    pytest.skip(message)


# Hypothesis profiles: under CI one fixed, derandomized run (a red CI run replays exactly);
# locally a fresh random draw each run; ``HYPOTHESIS_PROFILE=nightly`` searches ten times
# harder. Tests never assert timings, so no profile has a deadline.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", derandomize=False, deadline=None)
settings.register_profile("nightly", derandomize=False, deadline=None, max_examples=1000)
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if in_ci() else "dev")
settings.load_profile(HYPOTHESIS_PROFILE)


def require_program(name: str, hint: str = "scripts/system-deps.sh installs it") -> str:
    """The path of a system program on PATH, or :func:`missing`."""
    found = shutil.which(name)
    if found is None:
        missing(f"program {name!r}", hint)
    return found


def require_module(name: str, hint: str = "pip install -e '.[dev]'") -> ModuleType:
    """An importable optional module, or :func:`missing` (like ``pytest.importorskip``)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"Python module {name!r} ({exc})", hint)


def shared_path(relative: str) -> Path:
    """A file or folder under the shared data directory, or :func:`missing` naming it."""
    path = SHARED_DATA / relative
    if not path.exists():
        missing(f"shared data {path}", "set CHEMGAUGE_SHARED_DATA or place ../shared/data")
    return path


def shared_file(relative: str) -> Path:
    """Path to a shared data file (:func:`missing` if absent), failing if its hash changed."""
    path = shared_path(relative)
    expected = _expected_sha256(relative)
    if expected is not None:
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        assert actual == expected, f"{path} changed: sha256 {actual} != {expected}"
    return path


@pytest.fixture
def syntheseus_installed() -> ModuleType:
    """syntheseus (the outside reference of the retro parity tests), or :func:`missing`."""
    return require_module("syntheseus", "pip install 'chemgauge[syntheseus]'")


@pytest.fixture(scope="session")
def nci_smiles() -> list[str]:
    """The NCI first-5K SMILES set shipped inside the rdkit wheel."""
    import rdkit

    path = Path(rdkit.__file__).parent / "Data" / "NCI" / "first_5K.smi"
    return [line.split()[0] for line in path.read_text().splitlines() if line.strip()]


def assert_valid_report(path: Path) -> dict[str, Any]:
    """A written ``report.json``, checked against the shipped run-envelope JSON Schema (and
    laid out with the envelope first, the family's metrics last); returns it parsed."""
    import json

    import jsonschema

    from chemgauge.eval.envelope import SCHEMA_PATH, RunEnvelope
    from chemgauge.families import get_family

    data = json.loads(path.read_text())
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text()))
    assert list(data) == list(RunEnvelope.model_fields), f"{path}: not in the envelope's order"
    family = get_family(data["family"])
    assert data["family_schema_version"] == family.schema_version
    metrics_schema = family.metrics_schema_path()
    if family.metrics or metrics_schema.exists():
        jsonschema.validate(data["metrics"], json.loads(metrics_schema.read_text()))
    return data  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def family_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One run folder per built-in family, made by its command from the shipped examples with
    the one output option every command has (``--out``)."""
    import subprocess
    import sys

    work = tmp_path_factory.mktemp("family-runs")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    commands = {
        "examples": ["examples", "."],
        "forward": ["forward", "benchmark", "--out", "runs/forward", "--executor", "serial"],
        "retro": [
            "retro", "eval", "data_dir=retro/data", "model_class=predictions",
            "model_dir=retro/predictions.jsonl", "--out", "runs/retro",
        ],
        "names": ["names", "coverage", "--input", "names/pairs.tsv", "--out", "runs/names"],
        "ocsr-import": [
            "ocsr", "import", "--images", "ocsr/images", "--references", "ocsr/references",
            "--out", "ocsr/manifest.json", "--name", "example", "--attribution",
            "chemgauge", "--licence", "MIT",
        ],
        "ocsr": [
            "ocsr", "run", "--manifest", "ocsr/manifest.json", "--model", "osra", "--out",
            "runs/ocsr", "--run",
        ],
        "p2s": ["p2s", "run", "--model", "structure_only", "--out", "runs/p2s"],
    }  # fmt: skip
    for name, argv in commands.items():
        if name in ("names", "ocsr"):
            require_program("java" if name == "names" else "osra")
        done = subprocess.run(
            [str(bin_dir / "chemgauge"), *argv, "-q"] if name != "examples" else
            [str(bin_dir / "chemgauge"), *argv],
            cwd=work, env=env, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{name}: {' '.join(argv)}\n{done.stderr[-3000:]}"
    runs = {f: work / "runs" / f for f in ("forward", "retro", "names", "ocsr")}
    runs["p2s"] = work / "runs" / "p2s" / "structure_only"
    return runs


# -- the fast subset (`make check`) ---------------------------------------------------------
DURATIONS = Path(__file__).with_name("durations.json")
FAST_LIMIT_S = 0.3


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help="leave out tests marked slow or external and those measured at "
        f">= {FAST_LIMIT_S} s in tests/durations.json (make check)",
    )
    parser.addoption(
        "--record-durations",
        action="store_true",
        help="rewrite tests/durations.json with every test that took >= "
        f"{FAST_LIMIT_S} s (setup + call + teardown) in this run (make durations)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--fast"):
        return
    measured = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    keep, drop = [], []
    for item in items:
        slow = item.get_closest_marker("slow") or item.get_closest_marker("external")
        (drop if slow or measured.get(item.nodeid, 0.0) >= FAST_LIMIT_S else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


_durations: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config.getoption("--record-durations") and exitstatus == 0:
        slow = {k: round(v, 2) for k, v in sorted(_durations.items()) if v >= FAST_LIMIT_S}
        DURATIONS.write_text(json.dumps(slow, indent=0, sort_keys=True) + "\n")


@pytest.fixture(autouse=True)
def _fixed_p2s_build_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """A p2s build given no secret draws 256 random bits, and on a small build that draw
    decides whether some shortcut beats chance (the audit then refuses the release, as it
    should). In-process tests draw one fixed secret, so no test passes or fails by chance."""
    from types import SimpleNamespace

    import chemgauge.families.p2s.build as p2s_build

    monkeypatch.setattr(
        p2s_build, "secrets_module", SimpleNamespace(token_hex=lambda n: "5eed" * (n // 2))
    )
