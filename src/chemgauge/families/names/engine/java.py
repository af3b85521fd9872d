"""Locating OPSIN and Java: the py2opsin jar, its provenance, and the cached line-server build.

OPSIN ships inside the `py2opsin` package (a pinned dependency), so the jar, its
SHA-256 and both versions are recorded with every run. The line server
(`server/OpsinLineServer.java`) is compiled once with `javac` into a user
cache directory keyed by jar, source and compiler, so a new jar or JDK rebuilds it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import os
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from chemgauge.errors import BackendError, MissingDependencyError
from chemgauge.eval.lifeline import child_kwargs

SERVER_CLASS = "OpsinLineServer"
SERVER_SOURCE = "server/OpsinLineServer.java"
_JAR_GLOB = "opsin-cli-*-jar-with-dependencies.jar"
_OPSIN_POM = "META-INF/maven/uk.ac.cam.ch.opsin/opsin-core/pom.properties"
_JAVA_HINT = (
    "OPSIN needs a Java runtime (8 or newer): install one, e.g. "
    "`apt-get install default-jre-headless`, `brew install openjdk` or "
    "`conda install -c conda-forge openjdk`, or set OpsinConfig(java=...) to its path"
)
_JAVAC_HINT = (
    "the OPSIN line server is compiled once with `javac`, which comes with a full JDK: "
    "install one (e.g. `apt-get install default-jdk-headless` or "
    "`conda install -c conda-forge openjdk`), or use OpsinConfig(mode='cli')"
)
_TOOL_TIMEOUT_S = 120.0
_MAX_TOOL_OUTPUT = 4000


@dataclass(frozen=True)
class OpsinJar:
    """The OPSIN jar a run uses, with what a report needs to reproduce it."""

    path: Path
    sha256: str
    opsin_version: str
    py2opsin_version: str


@dataclass(frozen=True)
class JavaTools:
    """The `java` (and, when present, `javac`) a runner launches, with their versions."""

    java: str
    java_version: str
    javac: str | None


def locate_jar() -> OpsinJar:
    """Find the OPSIN jar bundled by py2opsin and describe it; raise if py2opsin is missing."""
    try:
        py2opsin_version = importlib.metadata.version("py2opsin")
        package_dir = Path(str(importlib.resources.files("py2opsin")))
    except (importlib.metadata.PackageNotFoundError, ModuleNotFoundError) as error:
        raise MissingDependencyError(
            "OPSIN comes from the py2opsin package, which is not installed: "
            "run `pip install py2opsin==1.2.0` (or `pip install chemgauge`)"
        ) from error
    jars = sorted(package_dir.glob(_JAR_GLOB))
    if len(jars) != 1:
        raise BackendError(
            f"expected exactly one {_JAR_GLOB} in {package_dir}, found {[j.name for j in jars]}"
        )
    return _describe_jar(jars[0], py2opsin_version)


@lru_cache(maxsize=8)
def _describe_jar(path: Path, py2opsin_version: str) -> OpsinJar:
    """Hash the jar and read OPSIN's version from its Maven metadata (once per path)."""
    return OpsinJar(
        path=path,
        sha256=_sha256_file(path),
        opsin_version=_opsin_version(path),
        py2opsin_version=py2opsin_version,
    )


def _sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _opsin_version(jar: Path) -> str:
    """OPSIN's version from the jar's opsin-core pom.properties; 'unknown' if absent."""
    with zipfile.ZipFile(jar) as archive:
        try:
            text = archive.read(_OPSIN_POM).decode("utf-8", "replace")
        except KeyError:
            return "unknown"
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "version":
            return value.strip()
    return "unknown"


@lru_cache(maxsize=8)
def find_java(java: str) -> JavaTools:
    """Resolve `java` (a name or path) and its version; raise naming what to install."""
    resolved = shutil.which(java)
    if resolved is None:
        raise BackendError(f"Java executable {java!r} not found. {_JAVA_HINT}")
    try:
        proc = subprocess.run(
            [resolved, "-version"],
            capture_output=True,
            timeout=_TOOL_TIMEOUT_S,
            check=False,
            **child_kwargs(),
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BackendError(f"cannot run {resolved!r} -version: {error}. {_JAVA_HINT}") from error
    text = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        raise BackendError(
            f"{resolved!r} -version failed ({proc.returncode}): {text[:_MAX_TOOL_OUTPUT]}"
        )
    return JavaTools(
        java=resolved,
        java_version=text.splitlines()[0] if text else "unknown",
        javac=_find_javac(resolved),
    )


def _find_javac(java: str) -> str | None:
    """Prefer the `javac` next to `java` (same JDK, so class versions agree), then PATH."""
    sibling = Path(os.path.realpath(java)).with_name("javac")
    if sibling.is_file() and os.access(sibling, os.X_OK):
        return str(sibling)
    return shutil.which("javac")


def cache_root() -> Path:
    """The user cache: $CHEMGAUGE_CACHE_DIR, else $XDG_CACHE_HOME (or ~/.cache) / chemgauge."""
    explicit = os.environ.get("CHEMGAUGE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "chemgauge"


def server_source() -> str:
    """The line server's Java source as shipped in the package."""
    resource = importlib.resources.files("chemgauge.families.names.engine").joinpath(SERVER_SOURCE)
    return resource.read_text(encoding="utf-8")


def server_source_sha256() -> str:
    """SHA-256 of the shipped line-server source (recorded in provenance)."""
    return hashlib.sha256(server_source().encode("utf-8")).hexdigest()


def build_server(jar: OpsinJar, tools: JavaTools) -> Path:
    """Return a directory holding the compiled line server, compiling it on first use.

    The directory name hashes the jar, the source and the compiler binary; a
    build goes to a temporary directory renamed into place, so concurrent first
    uses never see a half-written class.
    """
    if tools.javac is None:
        raise BackendError(f"javac not found. {_JAVAC_HINT}")
    source = server_source()
    parts = [jar.sha256, hashlib.sha256(source.encode()).hexdigest(), _javac_identity(tools.javac)]
    key = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]
    target = cache_root() / "opsin-server" / key
    if (target / f"{SERVER_CLASS}.class").is_file():
        return target
    try:
        _compile_into(target, source, jar, tools.javac)
    except OSError as error:
        raise BackendError(f"cannot build the OPSIN line server in {target}: {error}") from error
    return target


def _compile_into(target: Path, source: str, jar: OpsinJar, javac: str) -> None:
    """Compile the server in a private temporary directory, then rename it to `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        source_file = work / "src" / f"{SERVER_CLASS}.java"
        source_file.parent.mkdir()
        source_file.write_text(source, encoding="utf-8")
        classes = work / "classes"
        classes.mkdir()
        command = [javac, "-encoding", "UTF-8", "-cp", str(jar.path), "-d", str(classes)]
        _run_tool([*command, str(source_file)])
        try:
            os.replace(classes, target)
        except OSError:
            if not (target / f"{SERVER_CLASS}.class").is_file():  # lost a race: fine
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _javac_identity(javac: str) -> str:
    """The resolved javac binary with its size and mtime: a JDK change rebuilds the server.

    Cheaper than `javac -version`, which costs a JVM start on every first use.
    """
    real = os.path.realpath(javac)
    stat = os.stat(real)
    return f"{real}:{stat.st_size}:{stat.st_mtime_ns}"


def _run_tool(args: list[str]) -> str:
    """Run a JDK tool with a timeout; return its combined output or raise BackendError."""
    try:
        proc: subprocess.CompletedProcess[bytes] = subprocess.run(
            args, capture_output=True, timeout=_TOOL_TIMEOUT_S, check=False, **child_kwargs()
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BackendError(f"cannot run {args[0]!r}: {error}") from error
    output = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if proc.returncode != 0:
        raise BackendError(
            f"{args[0]!r} failed ({proc.returncode}): {output[-_MAX_TOOL_OUTPUT:].strip()}"
        )
    return output
