"""The open structure-to-name generators chemgauge drives, each in a virtual environment of
its own (they pin their own RDKit, so they never go into chemgauge's environment).

``chemgauge names namers install NAME`` creates (or reuses) ``<cache>/namers/NAME-VERSION``
with the namer's pinned packages; a marker file there records what was installed and the
environment's hash (of ``pip freeze``), which a run's provenance carries.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from chemgauge.errors import BackendError, ConfigError, UnknownNameError
from chemgauge.families.names.engine.java import cache_root

__all__ = [
    "NAMER_SPECS",
    "NamerEnv",
    "NamerSpec",
    "find_env",
    "install_env",
    "namer_spec",
    "namers_root",
]

MARKER = "chemgauge-namer.json"
_PIP_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class NamerSpec:
    """A registered open namer: its PyPI package, pinned version and extra packages."""

    name: str
    package: str
    version: str
    extras: tuple[str, ...] = ()
    license: str = ""

    @property
    def requirements(self) -> tuple[str, ...]:
        """What pip installs into the namer's environment."""
        return (f"{self.package}=={self.version}", *self.extras)

    @property
    def folder(self) -> str:
        """The environment's folder name under the namers cache."""
        return f"{self.name}-{self.version}"


NAMER_SPECS: Mapping[str, NamerSpec] = {
    # Orthonym reads names back with OPSIN's jar, which the py2opsin wheel ships.
    "orthonym": NamerSpec("orthonym", "orthonym", "1.0.9", ("py2opsin==1.2.0",), "MIT"),
    "openclatura": NamerSpec("openclatura", "openclatura", "0.4.3", (), "MIT"),
    "nispo": NamerSpec("nispo", "nispo", "0.1.7", (), ""),
}


def namer_spec(name: str) -> NamerSpec:
    """The registered namer ``name`` (an unknown one fails with "did you mean")."""
    spec = NAMER_SPECS.get(name)
    if spec is None:
        import difflib

        close = difflib.get_close_matches(name, list(NAMER_SPECS), n=3, cutoff=0.5)
        raise UnknownNameError("namer", name, close, sorted(NAMER_SPECS))
    return spec


def namers_root() -> Path:
    """Where namer environments live: $CHEMGAUGE_NAMERS_DIR, else <cache>/namers."""
    explicit = os.environ.get("CHEMGAUGE_NAMERS_DIR")
    return Path(explicit) if explicit else cache_root() / "namers"


@dataclass(frozen=True)
class NamerEnv:
    """An installed namer environment: its Python and what it holds."""

    spec: NamerSpec
    path: Path
    packages: tuple[str, ...]  # pip freeze lines, sorted
    sha256: str

    @property
    def python(self) -> Path:
        """The environment's interpreter."""
        return self.path / "bin" / "python"

    def provenance(self) -> dict[str, object]:
        """Name, version and the environment's hash (what a report records)."""
        return {
            "namer": self.spec.name,
            "package": self.spec.package,
            "version": self.spec.version,
            "requirements": list(self.spec.requirements),
            "env_sha256": self.sha256,
            "python": self._python_version(),
        }

    def _python_version(self) -> str:
        version = self.path / "pyvenv.cfg"
        if version.is_file():
            for line in version.read_text(encoding="utf-8").splitlines():
                key, _, value = line.partition("=")
                if key.strip() in ("version", "version_info"):
                    return value.strip()
        return "unknown"


def _env_hash(packages: tuple[str, ...]) -> str:
    return hashlib.sha256("\n".join(packages).encode()).hexdigest()


def _read_marker(path: Path, spec: NamerSpec) -> NamerEnv | None:
    marker = path / MARKER
    if not marker.is_file() or not (path / "bin" / "python").exists():
        return None
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("requirements") != list(spec.requirements):
        return None
    packages = tuple(data.get("packages") or ())
    return NamerEnv(spec, path, packages, _env_hash(packages))


def find_env(name: str) -> NamerEnv:
    """The installed environment of namer ``name``; a missing one is a clear error."""
    spec = namer_spec(name)
    path = namers_root() / spec.folder
    env = _read_marker(path, spec)
    if env is None:
        raise ConfigError(
            f"namer {name!r} is not installed (no environment at {path}): run "
            f"`chemgauge names namers install {name}` (or `make namers`)"
        )
    return env


def _run(args: list[str], what: str) -> str:
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BackendError(f"{what} failed: {error}") from None
    if done.returncode != 0:
        raise BackendError(f"{what} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def install_env(name: str, *, python: str | None = None, force: bool = False) -> NamerEnv:
    """Create or reuse namer ``name``'s environment and return it (``force``: reinstall)."""
    spec = namer_spec(name)
    path = namers_root() / spec.folder
    if not force:
        found = _read_marker(path, spec)
        if found is not None:
            return found
    path.parent.mkdir(parents=True, exist_ok=True)
    (path / MARKER).unlink(missing_ok=True)
    base = python or getattr(sys, "_base_executable", None) or sys.executable
    _run([base, "-m", "venv", "--clear", str(path)], f"creating the {name} environment")
    py = str(path / "bin" / "python")
    _run(
        [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *spec.requirements],
        f"pip install {' '.join(spec.requirements)}",
    )
    freeze = _run([py, "-m", "pip", "freeze", "--all"], "pip freeze")
    packages = tuple(sorted(line.strip() for line in freeze.splitlines() if line.strip()))
    marker = {"requirements": list(spec.requirements), "packages": list(packages)}
    (path / MARKER).write_text(json.dumps(marker, indent=1, sort_keys=True), encoding="utf-8")
    return NamerEnv(spec, path, packages, _env_hash(packages))
