"""External back-ends that hang, crash, exit non-zero, print garbage or print gigabytes, and
output folders that cannot be written: each ends as a recorded status or a clear chemgauge
error, in bounded memory and time, and never leaves a half-written final file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.conftest import require_program
from typer.testing import CliRunner

from chemgauge.cli import app
from chemgauge.errors import BackendError, ChemgaugeError, OutputFileError
from chemgauge.eval import atomic
from chemgauge.eval import journal as journal_module
from chemgauge.eval.atomic import atomic_write_bytes
from chemgauge.eval.journal import ResumableJsonlWriter
from chemgauge.families.names.engine.namer import CommandNamer
from chemgauge.families.names.engine.runner import OpsinStatus

NAMER = """\
import os, sys, time
mode = sys.argv[1]
data = sys.stdin.read().splitlines()
if mode == "echo":
    for line in data:
        print(line)
elif mode == "hang":
    time.sleep(600)
elif mode == "crash":
    os.kill(os.getpid(), 9)
elif mode == "nonzero":
    sys.stderr.write("bad licence\\n" * 10000)
    sys.exit(3)
elif mode == "garbage":
    sys.stdout.buffer.write(b"\\xff\\xfe\\x00garbage\\n" * (len(data) + 3))
elif mode == "flood":
    chunk = b"x" * (1 << 20)
    while True:
        sys.stdout.buffer.write(chunk)
elif mode == "stderr_flood":
    chunk = "y" * (1 << 20)
    for _ in range(300):
        sys.stderr.write(chunk)
    for line in data:
        print("name")
elif mode == "no_read":
    sys.stdin.close()
    print("early")
"""


@pytest.fixture
def namer_script(tmp_path: Path) -> Path:
    script = tmp_path / "namer.py"
    script.write_text(NAMER)
    return script


def _namer(script: Path, mode: str, **kw: object) -> CommandNamer:
    return CommandNamer((sys.executable, str(script), mode), **kw)  # type: ignore[arg-type]


SMILES = ["CCO", "c1ccccc1", "CC(=O)O"]

# The peak from /proc/self/status (VmHWM: this address space's high-water mark, in kB), not
# ru_maxrss: after fork + exec that keeps the forking pytest process's peak.
_MEASURED = """
import json

def peak_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

before = peak_kb()
result = scenario()
print(json.dumps([peak_kb() - before, result]))
"""


def _child_peak_growth_kb(code: str, *args: str) -> tuple[int, object]:
    """Run ``code`` (its imports, then ``def scenario()`` returning JSON-able data) in a fresh
    Python; how far that child's peak RSS grew during ``scenario()``, and what it returned.
    A fresh process's peak moves with what the scenario holds, unlike this pytest process's
    (already grown by earlier tests, so an in-process delta reads 0 whatever happens)."""
    done = subprocess.run(
        [sys.executable, "-c", code + _MEASURED, *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    grown_kb, result = json.loads(done.stdout.splitlines()[-1])
    return int(grown_kb), result


def test_the_child_peak_measure_sees_what_a_scenario_holds() -> None:
    held, result = _child_peak_growth_kb(
        "def scenario():\n    block = b'x' * (256 << 20)\n    return len(block)\n"
    )
    assert result == 256 << 20 and held > 250_000  # above every bound asserted below
    idle, _ = _child_peak_growth_kb("def scenario():\n    return 0\n")
    assert idle < 20_000


def test_namer_echo_keeps_one_name_per_structure(namer_script: Path) -> None:
    assert _namer(namer_script, "echo", timeout_s=60).name(SMILES) == SMILES


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("hang", "timed out"),
        ("crash", "exited with -9"),
        ("nonzero", r"(?s)exited with 3: .*bad licence"),
        ("garbage", "returned 60003 lines for 60000 structures"),
        ("no_read", "returned 1 lines for 60000 structures"),
    ],
)
def test_misbehaving_namer_is_a_backend_error(namer_script: Path, mode: str, message: str) -> None:
    # A namer that answers (wrongly) must do so inside the timeout on a loaded machine too:
    # 30 times this machine's Python start-up now, at least 3 s.
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "print('')"], check=True, capture_output=True)
    namer = _namer(namer_script, mode, timeout_s=max(3.0, 30 * (time.perf_counter() - started)))
    with pytest.raises(BackendError, match=message):
        namer.name(SMILES * 20_000)  # 60k lines: more than a pipe buffer


_NAMER_IN_CHILD = """
import sys
from chemgauge.families.names.engine.namer import CommandNamer
from chemgauge.errors import BackendError

def scenario():
    namer = CommandNamer((sys.executable, sys.argv[1], sys.argv[2]), timeout_s=120.0,
                         max_output_bytes=8 << 20)
    try:
        return namer.name(["CCO", "c1ccccc1", "CC(=O)O"])
    except BackendError as exc:
        return str(exc)
"""


def test_namer_printing_gigabytes_is_stopped_at_the_cap(namer_script: Path) -> None:
    grown_kb, result = _child_peak_growth_kb(_NAMER_IN_CHILD, str(namer_script), "flood")
    assert "more than 8388608 bytes" in str(result)
    assert grown_kb < 200_000  # the cap, not gigabytes, is what was held


def test_namer_stderr_flood_keeps_only_a_tail(namer_script: Path) -> None:
    grown_kb, result = _child_peak_growth_kb(_NAMER_IN_CHILD, str(namer_script), "stderr_flood")
    assert result == ["name"] * 3
    assert grown_kb < 200_000  # 300 MB of stderr went by; a tail was kept


def test_missing_namer_is_named(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="not found"):
        CommandNamer((str(tmp_path / "no-such-namer"),)).name(SMILES)


FAKE_OPSIN = """\
import sys, time
if "-version" in sys.argv:
    sys.stderr.write('fake version "0"\\n')
    sys.exit(0)
print("#chemgauge-opsin-server\\t1\\tfake", flush=True)
seq = 0
out = sys.stdout.buffer
while line := sys.stdin.readline():
    name, seq = line.rstrip("\\n"), seq + 1
    if name == "flood":
        while True:
            out.write(b"z" * (1 << 20))
    if name == "binary":
        out.write(b"\\xff\\xfe\\x00\\x01\\n")
        out.flush()
        continue
    if name == "stderr":
        for _ in range(64):
            sys.stderr.write("w" * (1 << 20))
    out.write(f"{seq}\\tSUCCESS\\tC\\t\\t{name}\\n".encode())
    out.flush()
"""


@pytest.fixture
def fake_java(tmp_path: Path) -> str:
    require_program("javac")
    script = tmp_path / "java"
    script.write_text(f"#!{sys.executable}\n{FAKE_OPSIN}")
    script.chmod(0o755)
    return str(script)


@pytest.mark.external
def test_opsin_flood_garbage_and_stderr_become_statuses(fake_java: str) -> None:
    code = """
import sys
from chemgauge.families.names.engine.runner import OpsinConfig, OpsinRunner

def scenario():
    with OpsinRunner(OpsinConfig(java=sys.argv[1], mode="server", timeout_s=20)) as runner:
        results = runner.names_to_smiles(["a", "flood", "b", "binary", "c", "stderr", "d"])
    return [[r.name, r.status.value, r.smiles] for r in results]
"""
    grown_kb, results = _child_peak_growth_kb(code, fake_java)
    assert isinstance(results, list)
    by_name = {name: (status, smiles) for name, status, smiles in results}
    assert [r[0] for r in results] == ["a", "flood", "b", "binary", "c", "stderr", "d"]
    assert by_name["flood"][0] == by_name["binary"][0] == OpsinStatus.CRASHED.value
    for name in ("a", "b", "c", "stderr", "d"):
        assert by_name[name][1] == "C", by_name[name]
    assert grown_kb < 300_000  # the flood was cut off, not held


# -- output folders that cannot be written ----------------------------------------------------


@pytest.fixture
def unwritable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder no file can be created in: read-only for a normal user; as root (who ignores
    permission bits) creating files in it fails with the same EACCES the kernel would give."""
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:
        real_mkstemp, real_open = atomic.tempfile.mkstemp, open

        def mkstemp(*args: object, **kw: object) -> tuple[int, str]:
            if Path(str(kw.get("dir", ""))).resolve() == folder.resolve():
                raise PermissionError(13, "Permission denied")
            return real_mkstemp(*args, **kw)  # type: ignore[call-overload,no-any-return]

        monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)
        _ = real_open
    yield folder
    folder.chmod(0o755)


def test_atomic_write_to_readonly_folder_is_a_clear_error(unwritable: Path) -> None:
    with pytest.raises(OutputFileError, match="cannot write output"):
        atomic_write_bytes(unwritable / "rows.jsonl", b"x\n")
    assert list(unwritable.iterdir()) == []


def test_journal_in_readonly_folder_is_a_clear_error(unwritable: Path) -> None:
    with pytest.raises(OutputFileError, match=r"rows\.journal"):
        ResumableJsonlWriter(unwritable / "rows.journal", config_sha256="x", key_field="id")
    assert list(unwritable.iterdir()) == []


def test_canon_to_readonly_folder_exits_with_an_error(unwritable: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.smi"
    source.write_text("CCO\nc1ccccc1\n")
    out = unwritable / "out.txt"
    result = CliRunner().invoke(app, ["canon", str(source), "-o", str(out), "-q"])
    assert isinstance(result.exception, ChemgaugeError), result.exception
    assert "cannot write output" in str(result.exception)
    assert list(unwritable.iterdir()) == []


def test_full_disk_mid_journal_keeps_finished_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rows.journal"
    with ResumableJsonlWriter(path, config_sha256="x", key_field="id") as journal:
        journal.write({"id": "a", "v": 1})

        def full(fd: int, data: bytes) -> int:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(journal_module.os, "write", full)
        with pytest.raises(OutputFileError, match="No space left"):
            journal.write({"id": "b", "v": 2})
        monkeypatch.undo()
    again = ResumableJsonlWriter(path, config_sha256="x", key_field="id")
    assert set(again.existing) == {"a"}
    again.close()
